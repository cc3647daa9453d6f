import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ceiling, ceilingMarkdown, ceilingSpec, constantCost, costCurve, type CeilingInput } from '../src/index';

/**
 * Golden tests of the Markdown block and the Vega-Lite spec. Numbers are
 * normalised (six significant digits) before comparing. To regenerate after a
 * reviewed change: `scripts/regen-goldens` (every golden of the project), then
 * read the diff.
 */
const GOLDEN = join(import.meta.dirname, 'golden');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

function normalise(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(6));
  if (Array.isArray(v)) return v.map(normalise);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]));
  return v;
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

const CASES: Record<string, CeilingInput> = {
  // domain.md's worked example
  'worked-example': {
    rows: 8192,
    gpu: constantCost(0.4, { source: { from: 'number', line: '--gpu-group-ms 0.40' } }),
    npu: constantCost(6.0, { source: { from: 'number', line: '--npu-tile-ms 6.0' } }),
    splittable_fraction: 0.6,
    splittable_fraction_source: { from: 'number', line: '--splittable-fraction 0.6' },
    target_speedup: 1.15,
  },
  // a knee in the iGPU curve, p10/p90 spread, sync overhead, a partial group and extrapolation
  'knee-curve': {
    rows: 4100,
    gpu: costCurve(
      [
        { rows: 1024, ms: 0.3, p10_ms: 0.28, p90_ms: 0.34 },
        { rows: 2048, ms: 0.3, p10_ms: 0.28, p90_ms: 0.34 },
        { rows: 2304, ms: 0.6, p10_ms: 0.55, p90_ms: 0.7 },
        { rows: 4096, ms: 0.6, p10_ms: 0.55, p90_ms: 0.7 },
      ],
      { source: { from: 'csv', line: 'gpu-sweep.csv (4 points, 1024..4096 rows, ms per group)' } },
    ),
    npu: costCurve([{ rows: 512, ms: 0.55, p10_ms: 0.5, p90_ms: 0.65 }, { rows: 2048, ms: 0.5, p10_ms: 0.45, p90_ms: 0.6 }], {
      source: { from: 'csv', line: 'npu-sweep.csv (2 points, 512..2048 rows, ms per group)' },
    }),
    sync_overhead_ms: 0.05,
    splittable_fraction: 0.55,
    target_speedup: 2.5,
  },
};

describe('golden Markdown and Vega-Lite spec', () => {
  for (const [name, input] of Object.entries(CASES)) {
    it(`${name}: Markdown block`, () => {
      golden(`${name}.md`, ceilingMarkdown(ceiling(input)));
    });
    it(`${name}: Vega-Lite spec`, () => {
      const spec = ceilingSpec(ceiling(input));
      golden(`${name}.vl.json`, JSON.stringify(normalise(spec), null, 2) + '\n');
    });
  }

  it('the spec marks the optimum and the required tile', () => {
    const r = ceiling(CASES['worked-example']!);
    const text = JSON.stringify(ceilingSpec(r));
    expect(text).toContain('"label":"best k = 2: 1.067x"');
    expect(text).toContain('"tile":"for 1.150x","tile_ms":2.22609');
    expect(text).toContain('"$schema":"https://vega.github.io/schema/vega-lite/v5.json"');
  });
});
