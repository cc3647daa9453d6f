import { describe, expect, it } from 'vitest';
import {
  allGpuSchedule,
  constantCost,
  exhaustiveSchedule,
  makespanLowerBound,
  perGemmSchedule,
  pipelinedSchedule,
  pipelinedSearchSchedule,
  prefillGraph,
  restrictEngines,
  type PrefillSpec,
  type StageGraph,
} from '../src/index';
import { npuTiles, randomGraph, sampleLikeSpec, seededRng } from './schedule-fixtures';

const EPS = 1e-9;
const optimum = (g: StageGraph) => {
  const ex = exhaustiveSchedule(g);
  expect(ex.proven_optimal).toBe(true);
  return ex.schedule.makespan_ms;
};
/** The best makespan the model reports: the shortest of its strategies (with the optimum where the graph is small). */
const best = (g: StageGraph, withOptimum: boolean) =>
  Math.min(
    allGpuSchedule(g).makespan_ms,
    g.tasks.some((t) => t.split) ? perGemmSchedule(g).schedule.makespan_ms : Infinity,
    pipelinedSchedule(g).schedule.makespan_ms,
    pipelinedSearchSchedule(g).schedule.makespan_ms,
    withOptimum ? optimum(g) : Infinity,
  );
const withHandoff = (g: StageGraph, ms: number): StageGraph => ({ ...g, handoff: { default_ms: ms } });

describe('adding an engine never lengthens the best makespan (seeded)', () => {
  it('optimum and every heuristic, on 40 random graphs going from 2 to 3 engines', () => {
    const rng = seededRng(101);
    for (let c = 0; c < 40; c++) {
      const big = randomGraph(rng, 5 + rng.int(4), ['gpu', 'npu', 'cpu'], rng.next() < 0.3 ? 0 : rng.next());
      const small = restrictEngines(big, ['gpu', 'npu']);
      const what = `case ${c}`;
      expect(optimum(big), what).toBeLessThanOrEqual(optimum(small) + EPS);
      expect(pipelinedSchedule(big).schedule.makespan_ms, what).toBeLessThanOrEqual(pipelinedSchedule(small).schedule.makespan_ms + EPS);
      expect(pipelinedSearchSchedule(big).schedule.makespan_ms, what).toBeLessThanOrEqual(pipelinedSearchSchedule(small).schedule.makespan_ms + EPS);
      expect(best(big, true), what).toBeLessThanOrEqual(best(small, true) + EPS);
    }
  });

  it('from the iGPU alone to iGPU + NPU on prefill graphs: no strategy and no best gets longer', () => {
    const rng = seededRng(102);
    for (let c = 0; c < 12; c++) {
      const tile = 0.3 + 8 * rng.next();
      const base = sampleLikeSpec({ layers: 1 + rng.int(3), prompt_rows: 512 * (1 + rng.int(3)), handoff: { default_ms: 0.5 * rng.next() } });
      const spec: PrefillSpec = { ...base, stages: base.stages.map((s) => (s.cost['npu'] ? { ...s, cost: { ...s.cost, npu: npuTiles(tile * (0.5 + rng.next())) } } : s)) };
      const two = prefillGraph(spec);
      const one = restrictEngines(two, ['gpu']);
      const what = `case ${c}`;
      expect(perGemmSchedule(two).schedule.makespan_ms, what).toBeLessThanOrEqual(allGpuSchedule(one).makespan_ms + EPS);
      expect(pipelinedSchedule(two).schedule.makespan_ms, what).toBeLessThanOrEqual(pipelinedSchedule(one).schedule.makespan_ms + EPS);
      expect(pipelinedSearchSchedule(two).schedule.makespan_ms, what).toBeLessThanOrEqual(pipelinedSearchSchedule(one).schedule.makespan_ms + EPS);
      expect(best(two, false), what).toBeLessThanOrEqual(best(one, false) + EPS);
    }
  });
});

describe('raising a handoff cost never shortens the best makespan (seeded)', () => {
  it('the optimum, on 40 random graphs with 2-3 engines', () => {
    const rng = seededRng(103);
    for (let c = 0; c < 40; c++) {
      const g = randomGraph(rng, 5 + rng.int(4), rng.next() < 0.5 ? ['gpu', 'npu'] : ['gpu', 'npu', 'cpu'], 0);
      const hs = [0, 0.05, 0.2, 0.7, 2, 10].map((h) => h * (0.5 + rng.next()));
      let prev = -Infinity;
      for (const h of hs.sort((a, b) => a - b)) {
        const o = optimum(withHandoff(g, h));
        expect(o, `case ${c} handoff ${h}`).toBeGreaterThanOrEqual(prev - EPS);
        prev = o;
      }
    }
  });

  it('the optimum on prefill-shaped graphs, and the per-GEMM split (ceiling with the handoff as sync) everywhere', () => {
    const rng = seededRng(104);
    for (let c = 0; c < 6; c++) {
      const tile = 0.2 + 2 * rng.next();
      const base = sampleLikeSpec({ layers: 1, prompt_rows: 512 * (1 + rng.int(2)) });
      const kinds = new Set(['qkv', 'attention', 'attn_output', 'ffn_gate', 'ffn_down']);
      const spec: PrefillSpec = {
        ...base,
        stages: base.stages.filter((s) => kinds.has(s.kind)).map((s) => (s.cost['npu'] ? { ...s, cost: { ...s.cost, npu: npuTiles(tile * (0.5 + rng.next())) } } : s)),
      };
      let prevOpt = -Infinity;
      let prevSplit = -Infinity;
      for (const h of [0, 0.01, 0.1, 0.4, 1.5, 6]) {
        const g = prefillGraph({ ...spec, handoff: { default_ms: h } });
        const o = optimum(g);
        const p = perGemmSchedule(g).schedule.makespan_ms;
        expect(o, `case ${c} handoff ${h}`).toBeGreaterThanOrEqual(prevOpt - EPS);
        expect(p, `case ${c} handoff ${h}`).toBeGreaterThanOrEqual(prevSplit - EPS);
        prevOpt = o;
        prevSplit = p;
      }
    }
  });
});

describe('bounds every schedule respects (seeded)', () => {
  it('optimum <= every heuristic <= all-iGPU, and >= the longest least-cost path and the least-cost work spread over the engines', () => {
    const rng = seededRng(105);
    for (let c = 0; c < 40; c++) {
      const g = randomGraph(rng, 5 + rng.int(5), ['gpu', 'npu'], rng.next());
      const o = optimum(g);
      const all = allGpuSchedule(g).makespan_ms;
      const min = g.tasks.map((t) => Math.min(...Object.values(t.cost_ms).filter((x): x is number => x !== null)));
      const longest = new Array<number>(g.tasks.length).fill(0);
      for (const t of g.tasks) longest[t.id] = min[t.id]! + Math.max(0, ...t.preds.map((p) => longest[p]!));
      expect(o).toBeGreaterThanOrEqual(Math.max(...longest) - EPS);
      expect(o).toBeGreaterThanOrEqual(min.reduce((a, x) => a + x, 0) / 2 - EPS);
      const lb = makespanLowerBound(g);
      expect(lb.path_ms).toBeCloseTo(Math.max(...longest), 9);
      expect(o).toBeGreaterThanOrEqual(lb.bound_ms - EPS);
      expect(o).toBeLessThanOrEqual(pipelinedSearchSchedule(g).schedule.makespan_ms + EPS);
      expect(pipelinedSchedule(g).schedule.makespan_ms).toBeLessThanOrEqual(all + EPS);
    }
  });

  it('makespanLowerBound holds with three engines too, and is tight on a graph of independent equal stages', () => {
    const rng = seededRng(106);
    for (let c = 0; c < 30; c++) {
      const g = randomGraph(rng, 5 + rng.int(4), ['gpu', 'npu', 'cpu'], rng.next());
      expect(optimum(g)).toBeGreaterThanOrEqual(makespanLowerBound(g).bound_ms - EPS);
    }
    const tasks = Array.from({ length: 6 }, (_, i) => ({ id: i, name: `t${i}`, kind: 'k', layer: null, chunk: null, rows: 1, cost_ms: { gpu: 1, npu: 2 }, preds: [] }));
    const g: StageGraph = { engines: [{ id: 'gpu', name: 'gpu' }, { id: 'npu', name: 'npu' }], reference_engine: 'gpu', tasks, handoff: { default_ms: 0 } };
    // 4 on the iGPU and 2 on the NPU: 4 ms, and the fractional bound says 6 / (1 + 1/2) = 4
    expect(optimum(g)).toBeCloseTo(4, 9);
    expect(makespanLowerBound(g).bound_ms).toBeCloseTo(4, 9);
  });

  it('constant costs: a faster NPU never makes the searched schedule or the split longer than the all-iGPU one', () => {
    const g = prefillGraph({ ...sampleLikeSpec(), stages: sampleLikeSpec().stages.map((s) => (s.cost['npu'] ? { ...s, cost: { ...s.cost, npu: { model: 'rows' as const, per_group: constantCost(0.2), whole_tiles: true } } } : s)) });
    const all = allGpuSchedule(g).makespan_ms;
    expect(perGemmSchedule(g).schedule.makespan_ms).toBeLessThan(all);
    expect(pipelinedSearchSchedule(g).schedule.makespan_ms).toBeLessThan(all);
  });
});
