import { describe, expect, it } from 'vitest';
import { TickwiseError } from '@tickwise/time';
import { ceiling, constantCost, costAt, costCurve, parseCostCsv, scaleCost } from '../src/index';

describe('costAt: piecewise-linear in rows, end values held outside', () => {
  const curve = costCurve([{ rows: 2048, ms: 0.5 }, { rows: 512, ms: 0.3 }, { rows: 8192, ms: 0.5 }]);

  it('sorts points and interpolates between them', () => {
    expect(curve.kind === 'curve' && curve.points.map((p) => p.rows)).toEqual([512, 2048, 8192]);
    expect(costAt(curve, 512)).toEqual({ ms: 0.3, rows: 512, extrapolated: null });
    expect(costAt(curve, 1280).ms).toBeCloseTo(0.4, 12);
    expect(costAt(curve, 2048).ms).toBe(0.5);
    expect(costAt(curve, 5000).ms).toBe(0.5);
  });

  it('holds the end value outside the measured rows and flags it', () => {
    expect(costAt(curve, 256)).toEqual({ ms: 0.3, rows: 256, extrapolated: 'below' });
    expect(costAt(curve, 16384)).toEqual({ ms: 0.5, rows: 16384, extrapolated: 'above' });
  });

  it('a constant is the same everywhere and never extrapolated', () => {
    expect(costAt(constantCost(0.4), 1)).toEqual({ ms: 0.4, rows: 1, extrapolated: null });
    expect(costAt(constantCost(0.4, { p10_ms: 0.3, p90_ms: 0.5 }), 99, 'p90').ms).toBe(0.5);
  });

  it('scales p10/p90 with the value', () => {
    const c = scaleCost(costCurve([{ rows: 512, ms: 1, p10_ms: 0.8, p90_ms: 1.5 }]), 2);
    expect(costAt(c, 512, 'p10').ms).toBe(1.6);
    expect(costAt(c, 512, 'p90').ms).toBe(3);
  });

  it('refuses duplicate rows and non-positive costs', () => {
    expect(() => costCurve([{ rows: 512, ms: 1 }, { rows: 512, ms: 2 }])).toThrow(/two points at 512 rows/);
    expect(() => costCurve([{ rows: 512, ms: 0 }])).toThrow(/positive/);
    expect(() => costCurve([])).toThrow(/at least one/);
  });
});

describe('the model reads each engine at the rows it actually gets', () => {
  // A kernel-selection knee: the iGPU's fast kernel covers up to 2048 rows,
  // a slower one above 2304 (linear ramp between the two measured points).
  const knee = costCurve([{ rows: 1024, ms: 0.3 }, { rows: 2048, ms: 0.3 }, { rows: 2304, ms: 0.6 }, { rows: 8192, ms: 0.6 }]);

  it('finds the split that drops the iGPU below the knee', () => {
    const r = ceiling({ rows: 4096, gpu: knee, npu: constantCost(0.5) });
    expect(r.model).toBe('curve');
    expect(r.gpu_only_ms).toBeCloseTo(16 * 0.6, 12);
    // k = 8 leaves 2048 rows on the fast kernel: max(8 x 0.3, 8 x 0.5) = 4.0 ms
    expect(r.npu_groups).toBe(8);
    expect(r.split_ms).toBeCloseTo(4.0, 12);
    expect(r.speedup).toBeCloseTo(2.4, 12);
    expect(r.balance_groups).toBeGreaterThan(7);
    expect(r.balance_groups).toBeLessThan(8);
    // the single-number model at g(M) = 0.6 would say k = 9, 2.13x
    const flat = ceiling({ rows: 4096, gpu: constantCost(0.6), npu: constantCost(0.5) });
    expect(flat.npu_groups).toBe(9);
    expect(flat.speedup).toBeCloseTo(9.6 / 4.5, 12);
  });

  it('flags numbers read outside the measured rows', () => {
    const npu = costCurve([{ rows: 512, ms: 1.0 }, { rows: 2048, ms: 0.8 }]);
    const r = ceiling({ rows: 16384, gpu: knee, npu });
    const gpuOnly = r.extrapolation.find((x) => x.affects === 'gpu_only_ms');
    expect(gpuOnly).toMatchObject({ engine: 'gpu', side: 'above', rows: 16384, measured_min_rows: 1024, measured_max_rows: 8192 });
    expect(r.notes.join(' ')).toMatch(/outside the measured rows/);
    expect(r.by_k.some((s) => s.extrapolated.length > 0)).toBe(true);
  });

  it('says when a curve has a single point', () => {
    const r = ceiling({ rows: 8192, gpu: costCurve([{ rows: 512, ms: 0.4 }]), npu: constantCost(6) });
    expect(r.notes.join(' ')).toMatch(/one point \(512 rows\)/);
  });
});

describe('parseCostCsv', () => {
  it('reads rows,ms with p10/p90, comments and blank lines', () => {
    const c = parseCostCsv('# iGPU sweep\nrows,ms,p10_ms,p90_ms\n\n512,0.30,0.28,0.35\n2048,0.32,,\n8192,0.45,0.40,0.52\n', { file: 'g.csv', groupRows: 256 });
    expect(c.kind).toBe('curve');
    expect(c.kind === 'curve' && c.points).toEqual([
      { rows: 512, ms: 0.3, p10_ms: 0.28, p90_ms: 0.35 },
      { rows: 2048, ms: 0.32, p10_ms: undefined, p90_ms: undefined },
      { rows: 8192, ms: 0.45, p10_ms: 0.4, p90_ms: 0.52 },
    ]);
    expect(c.source?.line).toBe('g.csv (3 points, 512..8192 rows, ms per group)');
  });

  it('turns rows,total_ms into ms per group', () => {
    const c = parseCostCsv('rows,total_ms\n512,0.6\n8192,14.4\n', { file: 'g.csv', groupRows: 256 });
    expect(costAt(c, 512).ms).toBeCloseTo(0.3, 12);
    expect(costAt(c, 8192).ms).toBeCloseTo(0.45, 12);
  });

  it.each([
    ['rows,cost\n512,1\n', /lacks a rows column and a cost column/, 1],
    ['rows,ms\n512,abc\n', /ms "abc" is not a number/, 2],
    ['rows,ms\n512,1\n1024\n', /expected 2 fields, got 1/, 3],
    ['rows,ms\n512,-1\n', /positive/, 2],
    ['rows,ms\n512.5,1\n', /whole number of rows/, 2],
    ['rows,ms\n512,1\n512,2\n', /two points at 512 rows/, undefined],
    ['# nothing\n', /no header line/, undefined],
    ['rows,ms\n', /at least one/, undefined],
  ])('refuses %j with file and line', (text, message, line) => {
    try {
      parseCostCsv(text, { file: 'bad.csv', groupRows: 256 });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(TickwiseError);
      const err = e as TickwiseError;
      expect(err.message).toMatch(message);
      expect(err.file).toBe('bad.csv');
      expect(err.line).toBe(line);
    }
  });
});
