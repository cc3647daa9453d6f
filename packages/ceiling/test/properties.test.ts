import { describe, expect, it } from 'vitest';
import { balanceGroups, bestSplit, ceiling, constantCost, costCurve, requiredTile, splitProblem, type SplitProblem } from '../src/index';
import { seededRng } from '@tickwise/time';

/** mulberry32: a small seeded PRNG, so every run draws the same cases. */
/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

interface Case {
  rows: number;
  group_rows: number;
  g: number;
  t: number;
  sync: number;
}

const CASES = 3000;

function cases(seed: number): Case[] {
  const r = rng(seed);
  const logUniform = (lo: number, hi: number) => lo * Math.pow(hi / lo, r());
  const out: Case[] = [];
  for (let i = 0; i < CASES; i++) {
    const group_rows = [64, 128, 256, 256, 256, 512][Math.floor(r() * 6)]!;
    // half the cases divide evenly, half leave a partial group
    const rows = r() < 0.5 ? group_rows * (1 + Math.floor(r() * 128)) : 1 + Math.floor(r() * 40_000);
    out.push({
      rows,
      group_rows,
      g: logUniform(0.005, 10),
      t: logUniform(0.005, 200),
      sync: r() < 0.3 ? 0 : logUniform(1e-4, 5),
    });
  }
  return out;
}

const problem = (c: Case, over: Partial<Case> = {}): SplitProblem => {
  const x = { ...c, ...over };
  return splitProblem({ rows: x.rows, group_rows: x.group_rows, gpu: constantCost(x.g), npu: constantCost(x.t), sync_overhead_ms: x.sync });
};
const speedup = (c: Case, over: Partial<Case> = {}) => bestSplit(problem(c, over)).speedup;
const EPS = 1e-12;

describe('split model properties (seeded random inputs)', () => {
  it('speedup >= 1 always (k = 0 is allowed), and k stays within 0..floor(M/G)', () => {
    for (const c of cases(1)) {
      const b = bestSplit(problem(c));
      expect(b.speedup, JSON.stringify(c)).toBeGreaterThanOrEqual(1);
      expect(b.npu_groups).toBeGreaterThanOrEqual(0);
      expect(b.npu_groups).toBeLessThanOrEqual(Math.floor(c.rows / c.group_rows));
    }
  });

  it('monotone non-increasing in the NPU tile time', () => {
    const r = rng(2);
    for (const c of cases(2)) {
      const slower = c.t * (1 + r() * 3);
      expect(speedup(c, { t: slower }), JSON.stringify(c)).toBeLessThanOrEqual(speedup(c) * (1 + EPS));
    }
  });

  it('monotone non-decreasing in the iGPU group time', () => {
    const r = rng(3);
    for (const c of cases(3)) {
      const slower = c.g * (1 + r() * 3);
      expect(speedup(c, { g: slower }), JSON.stringify(c)).toBeGreaterThanOrEqual(speedup(c) * (1 - EPS));
    }
  });

  it('the best k lies next to the continuous balance point (floor or ceil of k*), or at a bound', () => {
    for (const c of cases(4)) {
      const p = problem(c);
      const kStar = balanceGroups(p);
      expect(kStar).toBeCloseTo((c.rows / c.group_rows) * c.g / (c.g + c.t), 9);
      const k = bestSplit(p).npu_groups;
      const full = Math.floor(c.rows / c.group_rows);
      const near = [Math.floor(kStar), Math.ceil(kStar)].map((x) => Math.min(x, full));
      // without sync it is always floor or ceil; sync can only push it to k = 0
      const allowed = c.sync === 0 ? near : [0, ...near];
      expect(allowed, `${JSON.stringify(c)} k*=${kStar} k=${k}`).toContain(k);
      const noSync = bestSplit(problem(c, { sync: 0 })).npu_groups;
      expect(near, `${JSON.stringify(c)} k*=${kStar} k=${noSync}`).toContain(noSync);
    }
  });

  it('sync overhead never raises the speedup', () => {
    const r = rng(5);
    for (const c of cases(5)) {
      const more = c.sync + r() * 3;
      expect(speedup(c, { sync: more }), JSON.stringify(c)).toBeLessThanOrEqual(speedup(c) * (1 + EPS));
      expect(speedup(c), JSON.stringify(c)).toBeLessThanOrEqual(speedup(c, { sync: 0 }) * (1 + EPS));
    }
  });

  it('the required tile reaches the target and a 0.1 % slower tile does not', () => {
    const r = rng(6);
    let feasible = 0;
    for (const c of cases(6)) {
      const target = 1 + 0.01 + r() * 0.8;
      const q = requiredTile(problem(c), target);
      if (!q.feasible) continue;
      feasible++;
      expect(speedup(c, { t: q.npu_tile_ms! }), JSON.stringify({ c, target })).toBeGreaterThanOrEqual(target * (1 - 1e-9));
      expect(speedup(c, { t: q.npu_tile_ms! * 1.001 }), JSON.stringify({ c, target })).toBeLessThan(target);
    }
    expect(feasible).toBeGreaterThan(CASES / 4);
  });

  it('a flat cost curve gives exactly what the constant model gives', () => {
    for (const c of cases(7).slice(0, 500)) {
      const flat = (ms: number) => costCurve([{ rows: 1, ms }, { rows: 1 << 20, ms }]);
      const a = ceiling({ rows: c.rows, group_rows: c.group_rows, gpu: constantCost(c.g), npu: constantCost(c.t), sync_overhead_ms: c.sync });
      const b = ceiling({ rows: c.rows, group_rows: c.group_rows, gpu: flat(c.g), npu: flat(c.t), sync_overhead_ms: c.sync });
      expect(b.npu_groups).toBe(a.npu_groups);
      expect(b.speedup).toBeCloseTo(a.speedup, 12);
      expect(b.balance_groups).toBeCloseTo(a.balance_groups, 6);
      expect(b.extrapolation).toEqual([]);
    }
  });

  it('the p10/p90 range contains the mean result', () => {
    const r = rng(8);
    for (const c of cases(8).slice(0, 500)) {
      const gpu = constantCost(c.g, { p10_ms: c.g * (1 - r() * 0.3), p90_ms: c.g * (1 + r() * 0.5) });
      const npu = constantCost(c.t, { p10_ms: c.t * (1 - r() * 0.3), p90_ms: c.t * (1 + r() * 0.5) });
      const x = ceiling({ rows: c.rows, group_rows: c.group_rows, gpu, npu, sync_overhead_ms: c.sync });
      expect(x.speedup_range!.low.speedup).toBeLessThanOrEqual(x.speedup * (1 + EPS));
      expect(x.speedup_range!.high.speedup).toBeGreaterThanOrEqual(x.speedup * (1 - EPS));
    }
  });
});

describe('ceiling Markdown: group counts read as English', () => {
  it('"1 group" for one, "N groups" otherwise', async () => {
    const { ceiling, ceilingMarkdown } = await import('../src/index');
    const one = ceilingMarkdown(ceiling({ rows: 512, group_rows: 256, gpu: constantCost(1), npu: constantCost(1.2) }));
    expect(one).toMatch(/2 groups of 256/);
    expect(one).toMatch(/\*\*1 group on the NPU\*\*/);
    expect(one).not.toMatch(/\b1 groups\b/);
  });
});
