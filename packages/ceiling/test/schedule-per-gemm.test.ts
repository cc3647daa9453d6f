import { describe, expect, it } from 'vitest';
import {
  allGpuSchedule,
  ceiling,
  constantCost,
  costCurve,
  perGemmSchedule,
  prefillGraph,
  validateSchedule,
  type EngineCost,
  type PrefillSpec,
} from '../src/index';
import { G, sampleLikeSpec, seededRng } from './schedule-fixtures';

/**
 * The per-GEMM strategy is `ceiling()` applied to each GEMM: on a graph of
 * one GEMM it must give ceiling's numbers to the last bit, and on the full
 * prefill each GEMM's split must be ceiling's split of that GEMM.
 */
function oneGemm(rows: number, group_rows: number, gpu: EngineCost, npu: EngineCost, handoff: number): PrefillSpec {
  return {
    layers: 1,
    prompt_rows: rows,
    microbatch_rows: rows,
    group_rows,
    engines: [{ id: 'gpu', name: 'iGPU' }, { id: 'npu', name: 'NPU' }],
    reference_engine: 'gpu',
    stages: [{ kind: 'ffn_gate', cost: { gpu: { model: 'rows', per_group: gpu, whole_tiles: false }, npu: { model: 'rows', per_group: npu, whole_tiles: true } } }],
    handoff: { default_ms: handoff },
  };
}

describe('per-GEMM split = tickwise ceiling, exactly', () => {
  it("domain.md's worked example: 12.0 ms against 12.8 ms, k = 2", () => {
    const spec = oneGemm(8192, 256, constantCost(0.4), constantCost(6.0), 0);
    const g = prefillGraph(spec);
    const c = ceiling({ rows: 8192, gpu: constantCost(0.4), npu: constantCost(6.0) });
    const r = perGemmSchedule(g);
    expect(r.schedule.makespan_ms).toBe(c.split_ms);
    expect(allGpuSchedule(g).makespan_ms).toBe(c.gpu_only_ms);
    expect(r.splits[0]!.split.npu_groups).toBe(2);
    expect(r.splits[0]!.split.speedup).toBe(c.speedup);
    expect(validateSchedule(g, r.schedule)).toEqual([]);
  });

  it('3000 seeded cases (constants and curves, partial groups, handoff as sync): makespan, k, both engines and speedup equal ceiling()', () => {
    const rng = seededRng(11);
    const logU = (lo: number, hi: number) => lo * Math.pow(hi / lo, rng.next());
    for (let i = 0; i < 3000; i++) {
      const group_rows = [64, 128, 256, 256, 512][rng.int(5)]!;
      const rows = rng.next() < 0.5 ? group_rows * (1 + rng.int(64)) : 1 + rng.int(20_000);
      const curve = rng.next() < 0.3;
      const gpu = curve
        ? costCurve([{ rows: 512, ms: logU(0.01, 5) }, { rows: 4096, ms: logU(0.01, 5) }, { rows: 16384, ms: logU(0.01, 5) }])
        : constantCost(logU(0.005, 10));
      const npu = curve ? costCurve([{ rows: 256, ms: logU(0.01, 50) }, { rows: 8192, ms: logU(0.01, 50) }]) : constantCost(logU(0.005, 200));
      const sync = rng.next() < 0.3 ? 0 : logU(1e-4, 5);
      const g = prefillGraph(oneGemm(rows, group_rows, gpu, npu, sync));
      const c = ceiling({ rows, group_rows, gpu, npu, sync_overhead_ms: sync });
      const r = perGemmSchedule(g);
      const s = r.splits[0]!.split;
      const what = JSON.stringify({ rows, group_rows, curve, sync });
      expect(r.schedule.makespan_ms, what).toBe(c.split_ms);
      expect(s.npu_groups, what).toBe(c.npu_groups);
      expect(s.gpu_ms, what).toBe(c.gpu_ms_at_split);
      expect(s.npu_ms, what).toBe(c.npu_ms_at_split);
      expect(s.speedup, what).toBe(c.speedup);
      expect(allGpuSchedule(g).makespan_ms, what).toBe(c.gpu_only_ms);
    }
  });

  it('on the whole sample-shaped prefill every GEMM splits as ceiling() splits it, and the makespan is the sum', () => {
    for (const tile of [6, 1.5, 0.6]) {
      const base = sampleLikeSpec();
      const spec: PrefillSpec = {
        ...base,
        stages: base.stages.map((s) => (s.cost['npu'] && s.cost['npu'].model === 'rows' ? { ...s, cost: { ...s.cost, npu: { ...s.cost['npu'], per_group: constantCost(s.cost['npu'].per_group.kind === 'constant' ? (s.cost['npu'].per_group.ms * tile) / 6 : 1) } } } : s)),
      };
      const g = prefillGraph(spec);
      const r = perGemmSchedule(g);
      expect(validateSchedule(g, r.schedule)).toEqual([]);
      expect(r.splits).toHaveLength(5 * 28 * 4);
      let sum = 0;
      for (const t of g.tasks) {
        const sp = r.splits.find((x) => x.task === t.id);
        if (!sp) {
          sum += t.cost_ms['gpu']!;
          continue;
        }
        const s = t.split!;
        const c = ceiling({ rows: s.rows, group_rows: s.group_rows, gpu: s.gpu, npu: s.npu, sync_overhead_ms: 0.127 });
        expect(sp.split.split_ms).toBe(c.split_ms);
        expect(sp.split.npu_groups).toBe(c.npu_groups);
        sum += c.split_ms;
      }
      expect(r.schedule.makespan_ms).toBeCloseTo(sum, 9);
      // a 512-row GEMM is 2 groups: today's 6 ms tile never pays; a 0.6 ms tile does
      const ks = new Set(r.splits.map((x) => x.split.npu_groups));
      if (tile === 6) expect([...ks]).toEqual([0]);
      if (tile === 0.6) expect(ks.has(1)).toBe(true);
    }
  });

  it('G and M carry over: a partial last micro-batch splits at its own rows', () => {
    const spec = { ...oneGemm(1000, G, constantCost(0.5), constantCost(0.6), 0), prompt_rows: 1000, microbatch_rows: 768 };
    const g = prefillGraph(spec);
    const r = perGemmSchedule(g);
    expect(r.splits.map((s) => s.split.gpu_rows + s.split.npu_rows)).toEqual([768, 232]);
    expect(r.splits[1]!.split.npu_groups).toBe(0);
    const c = ceiling({ rows: 768, gpu: constantCost(0.5), npu: constantCost(0.6) });
    expect(r.splits[0]!.split.split_ms).toBe(c.split_ms);
  });
});
