import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { CHROMIUM, SCREENSHOT_DIR, closeBrowser, hasChromium, visit } from './browser';
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
    let section = { tables: 0, pre: 0, overflow: [] as string[], headers: [] as string[] };
    const v = await visit(file, 'report-schedule', {
      interact: async (page) => {
        section = await page.evaluate(() => {
          const el = document.getElementById('schedule')!;
          const overflow: string[] = [];
          for (const x of el.querySelectorAll<HTMLElement>('.text-block > div, h2, .covers')) if (x.scrollWidth > x.clientWidth + 1) overflow.push((x.textContent ?? '').slice(0, 60));
          for (const w of el.querySelectorAll<HTMLElement>('.table-wrap')) if (w.getBoundingClientRect().right > document.documentElement.clientWidth + 1) overflow.push('a table runs past the page');
          return { tables: el.querySelectorAll('table').length, pre: el.querySelectorAll('pre').length, overflow, headers: [...el.querySelectorAll('table thead tr')].map((r) => r.textContent ?? '') };
        });
        mkdirSync(SCREENSHOT_DIR, { recursive: true });
        await page.locator('#schedule').screenshot({ path: join(SCREENSHOT_DIR, 'report-schedule-section.png') });
      },
    });
    // issue 18.3: tables and wrapping lines, not a text dump that runs off the page
    expect(section.pre).toBe(0);
    expect(section.tables).toBeGreaterThanOrEqual(2);
    expect(section.headers[0]).toMatch(/^strategy\s*makespan\s*speedup/);
    expect(section.overflow).toEqual([]);
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
