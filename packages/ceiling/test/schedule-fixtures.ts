/**
 * Shared inputs of the schedule tests: the sample capture's stage costs as
 * plain numbers (per 512-row dispatch, from its generator's model), and
 * seeded random graphs small enough for exhaustive search.
 */
import { constantCost, seededRng, type PrefillSpec, type Rng, type StageCostModel, type StageGraph, type StageSpec, type Task } from '../src/index';

export const G = 256;
const U = 512;

/** iGPU: mean ms per 512-row dispatch -> a `rows` cost per 256-row group. */
export const gpuRows = (msPerDispatch: number): StageCostModel => ({ model: 'rows', per_group: constantCost((msPerDispatch * G) / U), whole_tiles: false });
/** NPU: ms per 256-row tile, whole tiles. */
export const npuTiles = (msPerTile: number): StageCostModel => ({ model: 'rows', per_group: constantCost(msPerTile), whole_tiles: true });

/** The sample's stages (28 layers, 2048 rows), the NPU at 6 ms per ffn-shaped tile, scaled by FLOPs to the other GEMMs. */
export function sampleLikeSpec(over: Partial<PrefillSpec> = {}): PrefillSpec {
  const stages: StageSpec[] = [
    { kind: 'embed', cost: { gpu: gpuRows(0.009) } },
    { kind: 'attn_norm', cost: { gpu: gpuRows(0.016) } },
    { kind: 'qkv', cost: { gpu: gpuRows(1.161), npu: npuTiles(6 * 5120 / 8192) } },
    { kind: 'rope', cost: { gpu: gpuRows(0.011) } },
    // generator: 40 us + 4 x 24 x 128 x m x (p + m/2) FLOP at 10 TFLOP/s
    { kind: 'attention', cost: { gpu: { model: 'attention', per_dispatch_ms: 0.04, ms_per_row_pair: (4 * 24 * 128) / 1e10 } } },
    { kind: 'attn_output', cost: { gpu: gpuRows(0.722), npu: npuTiles(6 * 3072 / 8192) } },
    { kind: 'ffn_norm', cost: { gpu: gpuRows(0.016) } },
    { kind: 'ffn_gate', cost: { gpu: gpuRows(1.731), npu: npuTiles(6) } },
    { kind: 'ffn_up', cost: { gpu: gpuRows(1.725), npu: npuTiles(6) } },
    { kind: 'ffn_act', cost: { gpu: gpuRows(0.022) } },
    { kind: 'ffn_down', cost: { gpu: gpuRows(1.854), npu: npuTiles(6) } },
    { kind: 'head', cost: { gpu: { model: 'fixed', ms: 3.37 } } },
  ];
  return {
    layers: 28,
    prompt_rows: 2048,
    microbatch_rows: 512,
    group_rows: G,
    engines: [{ id: 'gpu', name: 'iGPU' }, { id: 'npu', name: 'NPU' }],
    reference_engine: 'gpu',
    stages,
    handoff: { default_ms: 0.127 },
    ...over,
  };
}

/** A seeded random DAG: n tasks, each with up to 3 predecessors among the earlier ones, costs on every engine (some tasks on the first only). */
export function randomGraph(rng: Rng, n: number, engines: readonly string[], handoffMs: number): StageGraph {
  const tasks: Task[] = [];
  for (let i = 0; i < n; i++) {
    const preds = new Set<number>();
    const k = i === 0 ? 0 : rng.int(Math.min(3, i) + 1);
    for (let j = 0; j < k; j++) preds.add(rng.int(i));
    const base = 0.2 + 4 * rng.next();
    const cost_ms: Record<string, number | null> = {};
    engines.forEach((e, ei) => {
      // the first engine runs everything; the others are 0.5x..4x as slow, and skip a quarter of the tasks
      cost_ms[e] = ei === 0 ? base : rng.next() < 0.25 ? null : base * (0.5 + 3.5 * rng.next());
    });
    tasks.push({ id: i, name: `t${i}`, kind: `k${i % 3}`, layer: null, chunk: null, rows: 1, cost_ms, preds: [...preds].sort((a, b) => a - b) });
  }
  return { engines: engines.map((id) => ({ id, name: id })), reference_engine: engines[0]!, tasks, handoff: { default_ms: handoffMs } };
}

export { seededRng };
