import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROMIUM, closeBrowser, hasChromium, visit } from './browser';
import { sampleStore, tickwise, tmp } from './sample-store';

/**
 * `tickwise report --schedule`: the schedule model's best schedule drawn as a
 * Gantt chart in the report (real Chromium: no errors, no requests, marks),
 * and its summary in the Markdown.
 */
const skip = !hasChromium();
if (skip) console.warn(`skipping the schedule-section browser test: no Chromium at ${CHROMIUM}`);

describe('report --schedule', () => {
  afterAll(async () => closeBrowser());

  it.skipIf(skip)('draws the best schedule as a Gantt chart with marks, no console errors, no network', async () => {
    const db = sampleStore({ npu: true });
    const file = join(tmp(), 'report.html');
    tickwise(['report', db, '--schedule', '--schedule-microbatch', '512', '--rows', '8192', '--out', file]);
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('Schedule model: micro-batch pipelining');
    const v = await visit(file, 'report-schedule');
    expect(v.errors).toEqual([]);
    expect(v.requests).toEqual([]);
    expect(v.chartErrors).toEqual([]);
    const gantt = v.charts.find((c) => c.id === 'schedule');
    expect(gantt, v.charts.map((c) => c.id).join(',')).toBeDefined();
    expect(gantt!.marks).toBeGreaterThan(100); // one bar per scheduled stage (1125 stages)
    expect(v.text).toMatch(/best: pipelined/);
  });

  it('puts the model summary in the Markdown report', () => {
    const db = sampleStore({ npu: true });
    const md = tickwise(['report', db, '--schedule', '--schedule-microbatch', '512', '--format', 'md']);
    expect(md).toContain('### Schedule model');
    expect(md).toMatch(/all-iGPU\s+\d/);
  });
});
