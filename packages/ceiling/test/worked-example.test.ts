import { describe, expect, it } from 'vitest';
import { bestSplit, ceiling, constantCost, endToEndSpeedup, requiredTile, splitAt, splitProblem } from '../src/index';

// domain.md, "Split ceiling": g = 0.40 ms, t = 6.0 ms, M = 8192.
const example = () =>
  ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0), splittable_fraction: 0.6, target_speedup: 1.15 });

describe('the worked example of domain.md', () => {
  it('32 groups, 2 on the NPU, 12.0 ms against 12.8 ms, 1.067x, balance 2.0', () => {
    const r = example();
    expect(r.groups).toBe(32);
    expect(r.group_rows).toBe(256);
    expect(r.npu_groups).toBe(2);
    expect(r.gpu_groups).toBe(30);
    expect(r.gpu_only_ms.toFixed(1)).toBe('12.8');
    expect(r.split_ms.toFixed(1)).toBe('12.0');
    expect(r.gpu_ms_at_split.toFixed(1)).toBe('12.0');
    expect(r.npu_ms_at_split.toFixed(1)).toBe('12.0');
    expect(r.speedup.toFixed(3)).toBe('1.067');
    expect(r.balance_groups.toFixed(1)).toBe('2.0');
    expect(r.balance_groups).toBeCloseTo(2, 12);
  });

  it('k = 3 gives 18.0 ms', () => {
    const p = splitProblem({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0) });
    expect(splitAt(p, 3).split_ms).toBeCloseTo(18.0, 12);
    expect(bestSplit(p).npu_groups).toBe(2);
  });

  it('end-to-end 1.039x when the GEMMs are 60 % of the prefill', () => {
    const r = example();
    expect(r.end_to_end_speedup!.toFixed(3)).toBe('1.039');
    expect(endToEndSpeedup(0.6, 12.8 / 12)).toBeCloseTo(1 / (0.4 + 0.6 / (12.8 / 12)), 14);
  });

  it('a 1.15x target needs k >= 5 and a tile of at most 2.23 ms (2.7x faster), or the iGPU at 0.348 ms', () => {
    const r = example();
    expect(r.required_npu_groups).toBe(5);
    expect(r.required_npu_tile_ms!.toFixed(2)).toBe('2.23');
    expect(r.required!.target_ms.toFixed(2)).toBe('11.13');
    expect(r.required_npu_tile_factor!.toFixed(1)).toBe('2.7');
    expect(r.required_gpu_group_ms!.toFixed(3)).toBe('0.348');
  });

  it('the required tile does reach the target, and a hair slower does not', () => {
    const p = splitProblem({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0) });
    const q = requiredTile(p, 1.15);
    const at = (t: number) => bestSplit(splitProblem({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(t) })).speedup;
    expect(at(q.npu_tile_ms!)).toBeGreaterThanOrEqual(1.15 - 1e-12);
    expect(at(q.npu_tile_ms! * 1.001)).toBeLessThan(1.15);
  });

  it('carries every JSON key the issue asks for', () => {
    const r = example();
    for (const key of ['groups', 'group_rows', 'npu_groups', 'gpu_only_ms', 'split_ms', 'gpu_ms_at_split', 'npu_ms_at_split', 'speedup',
      'balance_groups', 'end_to_end_speedup', 'required_npu_tile_ms']) {
      expect(r, key).toHaveProperty(key);
      expect(typeof (r as unknown as Record<string, unknown>)[key], key).toBe('number');
    }
  });

  it('tabulates every k near the optimum', () => {
    const r = example();
    expect(r.by_k.map((s) => s.npu_groups)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(r.by_k.map((s) => Number(s.speedup.toFixed(3)))).toEqual([1, 1.032, 1.067, 0.711, 0.533, 0.427, 0.356]);
  });
});

describe('sync overhead and partial groups', () => {
  it('sync is paid only when the NPU takes a group', () => {
    const p = splitProblem({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0), sync_overhead_ms: 0.05 });
    expect(splitAt(p, 0).split_ms).toBeCloseTo(12.8, 12);
    expect(splitAt(p, 2).split_ms).toBeCloseTo(12.05, 12);
  });

  it('a large sync makes k = 0 best (speedup exactly 1) and the target unreachable', () => {
    const r = ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0), sync_overhead_ms: 1, target_speedup: 1.15 });
    expect(r.npu_groups).toBe(0);
    expect(r.speedup).toBe(1);
    // budget 11.13 - 1 = 10.13 ms: the iGPU's share fits from k = 7 (25 x 0.4 = 10.0)
    expect(r.required_npu_groups).toBe(7);
    expect(r.required_npu_tile_ms).toBeCloseTo((12.8 / 1.15 - 1) / 7, 12);
    const r2 = ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0), sync_overhead_ms: 12, target_speedup: 1.15 });
    expect(r2.required!.feasible).toBe(false);
    expect(r2.required_npu_tile_ms).toBeNull();
  });

  it('M not a multiple of G: the partial group stays on the iGPU, costed per row', () => {
    const r = ceiling({ rows: 8200, gpu: constantCost(0.4), npu: constantCost(6.0) });
    expect(r.groups).toBe(33);
    expect(r.full_groups).toBe(32);
    expect(r.remainder_rows).toBe(8);
    expect(r.gpu_only_ms).toBeCloseTo((8200 / 256) * 0.4, 12);
    expect(r.balance_groups).toBeCloseTo(((8200 / 256) * 0.4) / 6.4, 12);
    expect(r.notes.join(' ')).toMatch(/partial group stays on the iGPU/);
    const p = splitProblem({ rows: 8200, gpu: constantCost(0.4), npu: constantCost(0.01) });
    // A very fast NPU takes every whole group; the 8 leftover rows stay on the iGPU.
    expect(bestSplit(p).npu_groups).toBe(32);
    expect(bestSplit(p).gpu_rows).toBe(8);
  });

  it('fewer rows than one group: no split, speedup 1, said so', () => {
    const r = ceiling({ rows: 100, gpu: constantCost(0.4), npu: constantCost(0.1), target_speedup: 1.1 });
    expect(r.npu_groups).toBe(0);
    expect(r.speedup).toBe(1);
    expect(r.required!.feasible).toBe(false);
    expect(r.notes.join(' ')).toMatch(/less than one 256-row group/);
  });

  it('refuses nonsense inputs with a message', () => {
    expect(() => ceiling({ rows: 0, gpu: constantCost(0.4), npu: constantCost(6) })).toThrow(/whole number of rows/);
    expect(() => constantCost(-1)).toThrow(/positive/);
    expect(() => ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6), splittable_fraction: 1.5 })).toThrow(/\[0, 1\]/);
    expect(() => ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6), target_speedup: 0.9 })).toThrow(/above 1/);
    expect(() => constantCost(0.4, { p10_ms: 0.5 })).toThrow(/p10 <= value <= p90/);
  });
});

describe('speedup range and sensitivity', () => {
  it('p10/p90 give a range around the mean result', () => {
    const r = ceiling({
      rows: 8192,
      gpu: constantCost(0.4, { p10_ms: 0.36, p90_ms: 0.46 }),
      npu: constantCost(6.0, { p10_ms: 4.0, p90_ms: 7.5 }),
      splittable_fraction: 0.6,
    });
    const g = r.speedup_range!;
    expect(g.low.speedup).toBeLessThanOrEqual(r.speedup);
    expect(g.high.speedup).toBeGreaterThanOrEqual(r.speedup);
    // the most favourable corner: slow iGPU, fast NPU
    expect([g.high.gpu_stat, g.high.npu_stat]).toEqual(['p90', 'p10']);
    // n g = 32 x 0.46 = 14.72; k = 3: max(29 x 0.46, 3 x 4) = 13.34; k = 4: max(12.88, 16) = 16
    expect(g.high.npu_groups).toBe(3);
    expect(g.high.speedup).toBeCloseTo(14.72 / 13.34, 12);
    expect(g.high.end_to_end_speedup).toBeCloseTo(1 / (0.4 + 0.6 / (14.72 / 13.34)), 12);
    // the least favourable: fast iGPU (p10); k = 1: max(31 x 0.36, 7.5) = 11.16 against 11.52
    expect(g.low.gpu_stat).toBe('p10');
    expect(g.low.speedup).toBeCloseTo(32 / 31, 12);
  });

  it('no range without a measured spread', () => {
    expect(ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6) }).speedup_range).toBeNull();
  });

  it('varies each input by -25, -10, +10, +25 %', () => {
    const r = ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6), sync_overhead_ms: 0.05, splittable_fraction: 0.6 });
    const inputs = [...new Set(r.sensitivity.map((s) => s.input))];
    expect(inputs).toEqual(['gpu_group_ms', 'npu_tile_ms', 'rows', 'sync_overhead_ms', 'splittable_fraction']);
    for (const i of inputs) expect(r.sensitivity.filter((s) => s.input === i).map((s) => s.change_pct)).toEqual([-25, -10, 10, 25]);
    const npuFaster = r.sensitivity.find((s) => s.input === 'npu_tile_ms' && s.change_pct === -25)!;
    expect(npuFaster.value).toBeCloseTo(4.5, 12);
    // t = 4.5: k = 2 -> max(12, 9) + 0.05 = 12.05, k = 3 -> max(11.6, 13.5) -> 13.55
    expect(npuFaster.speedup).toBeCloseTo(12.8 / 12.05, 12);
    const noSync = ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6) });
    expect(noSync.sensitivity.some((s) => s.input === 'sync_overhead_ms' || s.input === 'splittable_fraction')).toBe(false);
  });
});
