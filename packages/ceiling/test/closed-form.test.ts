import { describe, expect, it } from 'vitest';
import {
  MAX_ROWS, balanceGroups, bestSplit, bestSplitScan, ceiling, constantCost, costAt, costCurve, requiredTile, seededRng, splitAt, splitProblem,
  type EngineCost, type SplitProblem,
} from '../src/index';

/** The balance point as the model found it before the closed form: a scan over every whole k, then bisection. */
function balanceScan(p: SplitProblem): number {
  const n = p.rows / p.group_rows;
  const diff = (x: number) => {
    const gpuRows = p.rows - x * p.group_rows;
    const gpu = gpuRows > 0 ? (gpuRows / p.group_rows) * costAt(p.gpu, gpuRows).ms : 0;
    const npu = x > 0 ? x * costAt(p.npu, x * p.group_rows).ms : 0;
    return gpu - npu;
  };
  let lo = 0;
  let hi = n;
  for (let k = 1; k <= Math.ceil(n); k++) {
    const x = Math.min(k, n);
    if (diff(x) <= 0) {
      lo = k - 1;
      hi = x;
      break;
    }
  }
  for (let i = 0; i < 100 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (diff(mid) > 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** The fewest k whose iGPU share fits the budget, by trying every k. */
function fewestScan(p: SplitProblem, budget: number): number | null {
  for (let k = 1; k <= p.full_groups; k++) if (splitAt(p, k).gpu_ms <= budget * (1 + 1e-12)) return k;
  return null;
}

function randomCost(r: () => number, maxRows: number): EngineCost {
  const logUniform = (lo: number, hi: number) => lo * Math.pow(hi / lo, r());
  if (r() < 0.3) return constantCost(logUniform(0.005, 20));
  const n = 1 + Math.floor(r() * 5);
  const rows = new Set<number>();
  while (rows.size < n) rows.add(1 + Math.floor(r() * maxRows * 1.2));
  // knees and dips: each point's cost drawn on its own
  return costCurve([...rows].map((x) => ({ rows: x, ms: logUniform(0.005, 20) })));
}

describe('closed-form split model', () => {
  it('finds the same best k, wall time, balance point and required tile as trying every k (2000 seeded problems with curves)', () => {
    const rng = seededRng(20261203);
    const r = () => rng.next();
    for (let i = 0; i < 2000; i++) {
      const group_rows = [64, 128, 256, 512][Math.floor(r() * 4)]!;
      const rows = 1 + Math.floor(r() * 30_000);
      const p = splitProblem({ rows, group_rows, gpu: randomCost(r, rows), npu: randomCost(r, rows), sync_overhead_ms: r() < 0.3 ? 0 : r() * 2 });
      const scan = bestSplitScan(p);
      const fast = bestSplit(p);
      const what = JSON.stringify({ rows, group_rows, gpu: p.gpu, npu: p.npu, sync: p.sync_overhead_ms });
      expect(fast.split_ms, what).toBeCloseTo(scan.split_ms, 9);
      expect(fast.npu_groups, what).toBe(scan.npu_groups);
      expect(balanceGroups(p), what).toBeCloseTo(balanceScan(p), 6);
      const target = 1 + r() * 0.5;
      const req = requiredTile(p, target);
      const budget = splitAt(p, 0).gpu_ms / target - p.sync_overhead_ms;
      expect(req.npu_groups, what).toBe(budget > 0 ? fewestScan(p, budget) : null);
    }
  });

  it('answers for 10^12 rows: the worked example scaled up (g 0.40 ms, t 6.0 ms)', () => {
    const rows = 1_000_000_000_000;
    const r = ceiling({ rows, group_rows: 256, gpu: constantCost(0.4), npu: constantCost(6.0), target_speedup: 1.15 });
    // n = 3906250000 groups, k* = n g / (g + t) = 244140625 exactly: both engines take 1.46484375e9 ms there
    expect(r.groups).toBe(3_906_250_000);
    expect(r.balance_groups).toBeCloseTo(244_140_625, 3);
    expect(r.npu_groups).toBe(244_140_625);
    expect(r.split_ms).toBeCloseTo(1.46484375e9, 0);
    expect(r.speedup).toBeCloseTo(16 / 15, 12);
    // k = 5 of 32 per 8192 rows in the worked example: the same share here
    expect(r.required_npu_groups).toBe(Math.ceil(3_906_250_000 * (1 - 1 / 1.15)));
    expect(r.curve.length).toBeLessThanOrEqual(410);
    expect(r.curve.some((c) => c.npu_groups === r.npu_groups)).toBe(true);
    expect(r.sensitivity.length).toBeGreaterThan(0);
  });

  it('answers for 10^12 rows with cost curves (a knee in the iGPU curve)', () => {
    const gpu = costCurve([{ rows: 512, ms: 0.9 }, { rows: 8192, ms: 0.4 }, { rows: 1e11, ms: 0.38 }, { rows: 5e11, ms: 0.5 }]);
    const npu = costCurve([{ rows: 256, ms: 6 }, { rows: 1e10, ms: 5 }]);
    const p = splitProblem({ rows: 1e12, group_rows: 256, gpu, npu, sync_overhead_ms: 0.05 });
    const b = bestSplit(p);
    // the scan's answer near the optimum: no k within 1000 either side is better
    for (let d = -1000; d <= 1000; d++) {
      const k = b.npu_groups + d;
      if (k >= 0 && k <= p.full_groups) expect(splitAt(p, k).split_ms).toBeGreaterThanOrEqual(b.split_ms * (1 - 1e-12));
    }
    expect(b.npu_groups).toBeGreaterThan(0);
    expect(b.speedup).toBeGreaterThan(1);
  });

  it('refuses rows beyond 2^50 with a clear message', () => {
    expect(() => ceiling({ rows: MAX_ROWS * 4, gpu: constantCost(0.4), npu: constantCost(6) })).toThrow(/rows \(M\) 4503599627370496 is beyond the model's range: at most 1125899906842624 rows/);
    expect(() => ceiling({ rows: 1e300, gpu: constantCost(0.4), npu: constantCost(6) })).toThrow(/beyond the model's range/);
  });
});

describe('schedule graph bound', () => {
  it('refuses a graph beyond MAX_GRAPH_STAGES before building it, naming layers and micro-batches', async () => {
    const { MAX_GRAPH_STAGES, prefillGraph } = await import('../src/index');
    const spec = {
      layers: 28, prompt_rows: 2048, microbatch_rows: 1, group_rows: 256,
      engines: [{ id: 'gpu', name: 'iGPU' }], reference_engine: 'gpu',
      stages: [{ kind: 'attention' as const, cost: { gpu: { model: 'fixed' as const, ms: 1 } } }],
      handoff: { default_ms: 0 },
    };
    // 28 layers x 2048 micro-batches of one stage each
    expect(() => prefillGraph(spec as never)).toThrow(`the stage graph would have 57344 stages (28 layers x 2048 micro-batches); at most ${MAX_GRAPH_STAGES}`);
    expect(prefillGraph({ ...spec, microbatch_rows: 512 } as never).tasks.length).toBe(28 * 4);
  });
});
