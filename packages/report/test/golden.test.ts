import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { collectReport, reportMarkdown, reportSpecs, type ReportData } from '../src/index';
import { sampleStore } from './sample-store';

/**
 * Golden tests of the report's Vega-Lite specs and its Markdown summary, on
 * the shipped sample captures (timeline aggregated to 60 bars per device so
 * the files stay readable). Numbers are normalised to four significant
 * digits (floating sums in DuckDB may differ in the last bits between runs).
 * Regenerate after a reviewed change, then read the diff:
 *
 *   scripts/regen-goldens        (every golden of the project; UPDATE_GOLDEN=1 here)
 */
const GOLDEN = join(import.meta.dirname, 'golden');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

function sig4(x: number): number {
  return Number.isInteger(x) ? x : Number(x.toPrecision(4));
}

function normalise(v: unknown): unknown {
  if (typeof v === 'number') return sig4(v);
  if (Array.isArray(v)) return v.map(normalise);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]));
  return v;
}

/** Decimal numbers in text to four significant digits ("228.704 ms" -> "228.7 ms"). */
function normaliseText(text: string): string {
  return text.replace(/\d+\.\d+/g, (m) => String(sig4(Number(m))));
}

function golden(name: string, actual: string): void {
  const path = join(GOLDEN, name);
  if (UPDATE || !existsSync(path)) {
    writeFileSync(path, actual);
    if (!UPDATE) throw new Error(`wrote missing golden ${name}: review it and run again`);
    return;
  }
  expect(actual).toBe(readFileSync(path, 'utf8'));
}

describe('report goldens (sample captures)', () => {
  let store: Store;
  let data: ReportData;
  beforeAll(async () => {
    store = await Store.open(sampleStore(), { readOnly: true });
    data = await collectReport(store, { maxIntervals: 60, ceiling: { rows: 8192 } });
  });
  afterAll(async () => { await store.close(); });

  for (const id of ['timeline', 'gaps', 'kernels', 'ceiling']) {
    it(`${id}.vl.json`, () => {
      const spec = reportSpecs(data)[id];
      expect(spec).toBeDefined();
      golden(`${id}.vl.json`, JSON.stringify(normalise(spec), null, 1) + '\n');
    });
  }

  it('report.md', () => {
    golden('report.md', normaliseText(reportMarkdown(data)));
  });
});
