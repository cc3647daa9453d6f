import { describe, expect, it } from 'vitest';
import {
  allGpuSchedule,
  chunksOf,
  criticalPath,
  engineUse,
  heftSchedule,
  perGemmSchedule,
  pipelinedSchedule,
  pipelinedSearchSchedule,
  prefillGraph,
  stageCostMs,
  upwardRank,
  validateSchedule,
  type PrefillSpec,
} from '../src/index';
import { gpuRows, sampleLikeSpec } from './schedule-fixtures';

const byName = (spec: PrefillSpec) => {
  const g = prefillGraph(spec);
  const id = new Map(g.tasks.map((t) => [t.name, t.id]));
  const preds = (name: string) => g.tasks[id.get(name)!]!.preds.map((p) => g.tasks[p]!.name).sort();
  return { g, id, preds };
};

describe('stage graph of one prefill', () => {
  it('has one task per stage, layer and micro-batch, plus embed per micro-batch and one head', () => {
    const { g } = byName(sampleLikeSpec());
    expect(g.tasks).toHaveLength(4 * (1 + 28 * 10) + 1);
    expect(g.tasks.filter((t) => t.kind === 'attention')).toHaveLength(112);
    expect(g.tasks.filter((t) => t.split)).toHaveLength(5 * 112);
  });

  it('wires the layer template, the layer chain and the K/V of earlier micro-batches', () => {
    const { preds } = byName(sampleLikeSpec());
    expect(preds('L0 c0 attn_norm')).toEqual(['c0 embed']);
    expect(preds('L5 c2 attn_norm')).toEqual(['L4 c2 ffn_down']);
    expect(preds('L5 c2 qkv')).toEqual(['L5 c2 attn_norm']);
    expect(preds('L5 c0 attention')).toEqual(['L5 c0 rope']);
    expect(preds('L5 c2 attention')).toEqual(['L5 c0 rope', 'L5 c1 rope', 'L5 c2 rope']);
    expect(preds('L5 c2 ffn_act')).toEqual(['L5 c2 ffn_gate', 'L5 c2 ffn_up']);
    expect(preds('head')).toEqual(['L27 c3 ffn_down']);
  });

  it('bridges stages left out: attention reads qkv when there is no rope; the layer output is what nothing else reads', () => {
    const base = sampleLikeSpec({ layers: 2, prompt_rows: 1024 });
    const spec = { ...base, stages: base.stages.filter((s) => ['qkv', 'attention', 'ffn_down'].includes(s.kind)) };
    const { preds, g } = byName(spec);
    expect(g.tasks).toHaveLength(2 * 2 * 3);
    expect(preds('L1 c1 attention')).toEqual(['L1 c0 qkv', 'L1 c1 qkv']);
    expect(preds('L1 c1 qkv')).toEqual(['L0 c1 ffn_down']);
    expect(preds('L1 c1 ffn_down')).toEqual(['L1 c1 attention']);
  });

  it('costs attention by position: per dispatch + rate x m x (p + m/2), the last micro-batch dearest', () => {
    const spec = sampleLikeSpec();
    const att = spec.stages.find((s) => s.kind === 'attention')!;
    const rate = (4 * 24 * 128) / 1e10;
    expect(stageCostMs(att, 'gpu', 512, 0, 256)).toBeCloseTo(0.04 + rate * 512 * 256, 12);
    expect(stageCostMs(att, 'gpu', 512, 1536, 256)).toBeCloseTo(0.04 + rate * 512 * (1536 + 256), 12);
    expect(stageCostMs(att, 'npu', 512, 0, 256)).toBeNull();
    // the NPU runs whole tiles: 300 rows cost two tiles
    const gate = spec.stages.find((s) => s.kind === 'ffn_gate')!;
    expect(stageCostMs(gate, 'npu', 300, 0, 256)).toBe(12);
    expect(stageCostMs(gate, 'gpu', 300, 0, 256)).toBeCloseTo((300 / 256) * (1.731 / 2), 12);
  });

  it('cuts the prompt into micro-batches, the last one short', () => {
    expect(chunksOf(2048, 512)).toEqual([0, 512, 1024, 1536].map((start) => ({ start, rows: 512 })));
    expect(chunksOf(1000, 384)).toEqual([{ start: 0, rows: 384 }, { start: 384, rows: 384 }, { start: 768, rows: 232 }]);
  });

  it('refuses a graph it cannot schedule, with a message', () => {
    const spec = sampleLikeSpec({ layers: 0 });
    expect(() => prefillGraph(spec)).toThrow(/layers must be a whole number/);
    const noGpu = sampleLikeSpec();
    const bad = { ...noGpu, stages: noGpu.stages.map((s) => (s.kind === 'rope' ? { kind: 'rope' as const, cost: { npu: gpuRows(0.01) } } : s)) };
    expect(() => allGpuSchedule(prefillGraph(bad))).toThrow(/cannot run on the reference engine gpu/);
    expect(() => prefillGraph({ ...spec, layers: 1, stages: [] })).toThrow(/at least one per-layer stage/);
  });
});

describe('every strategy gives a valid schedule of the sample-shaped prefill', () => {
  const g = prefillGraph(sampleLikeSpec());
  const all = allGpuSchedule(g);
  const strategies = {
    all_gpu: all,
    per_gemm_split: perGemmSchedule(g).schedule,
    heft: heftSchedule(g),
    pipelined: pipelinedSchedule(g).schedule,
    pipelined_search: pipelinedSearchSchedule(g).schedule,
  };
  for (const [name, s] of Object.entries(strategies)) {
    it(`${name}: placements respect dependencies, handoff and engine exclusivity`, () => {
      expect(validateSchedule(g, s)).toEqual([]);
      expect(s.makespan_ms).toBeLessThanOrEqual(all.makespan_ms * (1 + 1e-12));
      const cp = criticalPath(g, s);
      expect(cp.length_ms).toBeCloseTo(s.makespan_ms, 9);
      expect(cp.steps[0]!.start_ms).toBe(0);
      // the path's bars and handoffs tile it: no gap is left unexplained
      const covered = cp.steps.reduce((a, x) => a + (x.end_ms - x.start_ms) + x.handoff_ms, 0);
      expect(covered).toBeCloseTo(s.makespan_ms, 6);
    });
  }

  it('all-iGPU is the sum of the stage costs on the iGPU, one engine busy the whole time', () => {
    const sum = g.tasks.reduce((a, t) => a + t.cost_ms['gpu']!, 0);
    expect(all.makespan_ms).toBeCloseTo(sum, 9);
    const use = engineUse(g, all);
    expect(use.find((u) => u.engine === 'gpu')!.utilisation).toBeCloseTo(1, 12);
    expect(use.find((u) => u.engine === 'npu')!.busy_ms).toBe(0);
  });

  it('HEFT orders tasks by upward rank: every predecessor ranks higher', () => {
    const rank = upwardRank(g);
    for (const t of g.tasks) for (const p of t.preds) expect(rank[p]!).toBeGreaterThan(rank[t.id]!);
  });

  it('the searched schedule is no longer than HEFT, and on the sample shape uses the NPU', () => {
    const h = strategies.pipelined.makespan_ms;
    const s = strategies.pipelined_search;
    expect(s.makespan_ms).toBeLessThanOrEqual(h);
    expect(s.placements.some((p) => p.engine === 'npu')).toBe(true);
  });
});
