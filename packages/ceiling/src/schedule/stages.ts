import { TickwiseError } from '@tickwise/time';
import { costAt, type EngineCost } from '../cost-curve';
import { DEFAULT_GROUP_ROWS } from '../split-model';
import { checkGraph, type EngineSpec, type Handoff, type RowSplit, type StageGraph, type Task } from './graph';
import { scheduleMessages as msg } from './messages';

/**
 * The stages of one Llama-style prefill, in the order a layer runs them.
 * `embed` runs once per micro-batch before layer 0; `head` (final norm + LM
 * head of the last row) once per prefill, after the last layer of the last
 * micro-batch; the rest once per layer and micro-batch.
 */
export const STAGE_KINDS = {
  embed: 'token embedding gather (once per micro-batch, before layer 0)',
  attn_norm: 'RMS norm before attention',
  qkv: 'QKV projection GEMM',
  rope: 'rotary position embedding of Q and K',
  attention: "causal attention: the micro-batch's queries over its own and every earlier micro-batch's K/V",
  attn_output: 'attention output projection GEMM (+ residual)',
  ffn_norm: 'RMS norm before the MLP',
  ffn_gate: 'MLP gate projection GEMM',
  ffn_up: 'MLP up projection GEMM',
  ffn_act: 'SiLU(gate) x up',
  ffn_down: 'MLP down projection GEMM (+ residual)',
  head: 'final norm + LM head (once per prefill, last micro-batch)',
} as const;
/** A stage kind (key of {@link STAGE_KINDS}). */
export type StageKind = keyof typeof STAGE_KINDS;
/** Type guard for {@link StageKind}. */
export function isStageKind(x: string): x is StageKind {
  return Object.hasOwn(STAGE_KINDS, x);
}
/** Every stage kind, in layer order. */
export const STAGE_ORDER: readonly StageKind[] = Object.keys(STAGE_KINDS) as StageKind[];

/** How often a stage runs. */
export const STAGE_SCOPE: Record<StageKind, 'chunk' | 'layer' | 'prefill'> = {
  embed: 'chunk', attn_norm: 'layer', qkv: 'layer', rope: 'layer', attention: 'layer', attn_output: 'layer',
  ffn_norm: 'layer', ffn_gate: 'layer', ffn_up: 'layer', ffn_act: 'layer', ffn_down: 'layer', head: 'prefill',
};

/** Weight GEMMs: the stages the per-GEMM strategy splits by rows. */
export const GEMM_STAGES: readonly StageKind[] = ['qkv', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down'];

/**
 * In-layer dependencies of the template (same layer, same micro-batch).
 * `attn_norm` also needs the previous layer's output (its `ffn_down`, or
 * `embed` for layer 0); `attention` also needs the K/V (`rope`, which needs
 * `qkv`) of every earlier micro-batch of the same layer.
 */
const TEMPLATE_DEPS: Record<StageKind, readonly StageKind[]> = {
  embed: [],
  attn_norm: [],
  qkv: ['attn_norm'],
  rope: ['qkv'],
  attention: ['rope'],
  attn_output: ['attention'],
  ffn_norm: ['attn_output'],
  ffn_gate: ['ffn_norm'],
  ffn_up: ['ffn_norm'],
  ffn_act: ['ffn_gate', 'ffn_up'],
  ffn_down: ['ffn_act'],
  head: [],
};

/**
 * A stage's cost on one engine as a function of the micro-batch's rows m and
 * the rows p before it in the prompt:
 *
 * - `rows`: `m / G x costAt(per_group, m)` (the iGPU side of `ceiling()`),
 *   or with `whole_tiles`, `ceil(m / G) x costAt(per_group, ceil(m / G) G)`
 *   (the NPU side: a partial tile costs a whole one).
 * - `attention`: `per_dispatch_ms + ms_per_row_pair x m x (p + m / 2)`:
 *   causal attention of m queries over p + m keys, half the last block masked.
 * - `fixed`: the same at every m (the head: one row's logits).
 * - `scaled`: `factor` x this stage's cost on engine `of` (a what-if, e.g. attention on the NPU).
 */
export type StageCostModel =
  | { readonly model: 'rows'; readonly per_group: EngineCost; readonly whole_tiles: boolean }
  | { readonly model: 'attention'; readonly per_dispatch_ms: number; readonly ms_per_row_pair: number }
  | { readonly model: 'fixed'; readonly ms: number }
  | { readonly model: 'scaled'; readonly of: string; readonly factor: number };

/** One stage of the template with its cost on each engine. */
export interface StageSpec {
  readonly kind: StageKind;
  /** By engine id; null or absent: cannot run there. */
  readonly cost: Readonly<Record<string, StageCostModel | null>>;
}

/** Everything that makes the stage graph of one prefill. */
export interface PrefillSpec {
  readonly layers: number;
  /** Rows (tokens) of the prompt. */
  readonly prompt_rows: number;
  /** Rows per micro-batch; the last one may be shorter. */
  readonly microbatch_rows: number;
  /** G (default 256). */
  readonly group_rows?: number | undefined;
  readonly engines: readonly EngineSpec[];
  /** The all-iGPU engine. */
  readonly reference_engine: string;
  /** Stages present (any subset of the template, in any order; the template orders them). */
  readonly stages: readonly StageSpec[];
  readonly handoff: Handoff;
}

/** A stage's cost on one engine for m rows after p rows (see {@link StageCostModel}). */
export function stageCostMs(spec: StageSpec, engine: string, m: number, p: number, group_rows: number, depth = 0): number | null {
  const c = spec.cost[engine];
  if (c === undefined || c === null) return null;
  switch (c.model) {
    case 'rows': {
      if (!c.whole_tiles) return (m / group_rows) * costAt(c.per_group, m).ms;
      const tiles = Math.ceil(m / group_rows);
      return tiles * costAt(c.per_group, tiles * group_rows).ms;
    }
    case 'attention':
      return c.per_dispatch_ms + c.ms_per_row_pair * m * (p + m / 2);
    case 'fixed':
      return c.ms;
    case 'scaled': {
      if (depth > 4 || c.of === engine) throw new TickwiseError('invalid-input', msg.scaledLoop(spec.kind, engine));
      const base = stageCostMs(spec, c.of, m, p, group_rows, depth + 1);
      return base === null ? null : base * c.factor;
    }
  }
}

/** Micro-batches of the prompt: start row and rows of each. */
export function chunksOf(prompt_rows: number, microbatch_rows: number): { start: number; rows: number }[] {
  const out: { start: number; rows: number }[] = [];
  for (let s = 0; s < prompt_rows; s += microbatch_rows) out.push({ start: s, rows: Math.min(microbatch_rows, prompt_rows - s) });
  return out;
}

/** The most stages a prefill graph may have: 80 layers x 16 micro-batches is about 12,800; 28 x 128 (36,000) already takes a minute. */
export const MAX_GRAPH_STAGES = 50_000;

function wholeRows(what: string, v: number): number {
  if (!(Number.isSafeInteger(v) && v >= 1)) throw new TickwiseError('invalid-input', msg.notWhole(what, v));
  return v;
}

/**
 * The stage graph of one prefill.
 *
 * ```
 *  per micro-batch c (rows [c mb, (c+1) mb)):  embed ─┐
 *  per layer l:  attn_norm ─> qkv ─> rope ─> attention ─> attn_output ─> ffn_norm ─┬> ffn_gate ─┬> ffn_act ─> ffn_down ─> (layer l+1)
 *                                     │         ^                                  └> ffn_up ───┘
 *                                     └─────────┘ rope of (l, c') for every c' < c: the K/V attention reads
 *  after the last layer of the last micro-batch: head
 * ```
 *
 * Stages missing from `spec.stages` are bridged: a stage depends on the
 * nearest present stages before it. GEMMs with a `rows` cost on the
 * reference engine and a `rows` cost (whole tiles) on another engine carry a
 * {@link RowSplit} for the per-GEMM strategy.
 */
export function prefillGraph(spec: PrefillSpec): StageGraph {
  const layers = wholeRows('layers', spec.layers);
  const prompt = wholeRows('prompt rows', spec.prompt_rows);
  const mb = wholeRows('micro-batch rows', spec.microbatch_rows);
  const G = wholeRows('group rows', spec.group_rows ?? DEFAULT_GROUP_ROWS);
  const byKind = new Map<StageKind, StageSpec>();
  for (const s of spec.stages) {
    if (byKind.has(s.kind)) throw new TickwiseError('invalid-input', msg.duplicateStage(s.kind));
    byKind.set(s.kind, s);
  }
  const present = (k: StageKind) => byKind.has(k);
  const layerKinds = STAGE_ORDER.filter((k) => STAGE_SCOPE[k] === 'layer' && present(k));
  if (layerKinds.length === 0) throw new TickwiseError('invalid-input', msg.noLayerStages());
  // nearest present stages a kind depends on, through absent ones
  const resolve = (k: StageKind): StageKind[] => {
    const out = new Set<StageKind>();
    for (const d of TEMPLATE_DEPS[k]) {
      if (present(d)) out.add(d);
      else for (const x of resolve(d)) out.add(x);
    }
    return [...out];
  };
  const depsIn = new Map(layerKinds.map((k) => [k, resolve(k)] as const));
  // stages whose output nothing else in the layer reads: the layer's output (ffn_down when present)
  const readers = new Set(layerKinds.flatMap((k) => depsIn.get(k)!));
  const outputs = layerKinds.filter((k) => !readers.has(k));
  // stages with no in-layer predecessor: the layer's inputs
  const inputs = layerKinds.filter((k) => depsIn.get(k)!.length === 0);
  // what attention reads of earlier micro-batches: the K/V producer (rope, else qkv, else attention's own inputs)
  const kvKinds: StageKind[] = present('attention') ? depsIn.get('attention')! : [];

  // bound the graph before building it: a typo in --layers/--tokens/--microbatch must not run for minutes
  const chunkCount = Math.ceil(prompt / mb);
  const stageCount = chunkCount * (layers * layerKinds.length + (present('embed') ? 1 : 0)) + (present('head') ? 1 : 0);
  if (stageCount > MAX_GRAPH_STAGES) throw new TickwiseError('invalid-input', msg.graphTooLarge(stageCount, layers, chunkCount, MAX_GRAPH_STAGES));
  const engineIds = spec.engines.map((e) => e.id);
  const reference = spec.reference_engine;
  const tasks: Task[] = [];
  const chunks = chunksOf(prompt, mb);
  const idOf = new Map<string, number>();
  const key = (kind: StageKind, l: number | null, c: number | null) => `${kind}/${l}/${c}`;
  const add = (s: StageSpec, l: number | null, c: number | null, m: number, p: number, preds: number[]) => {
    const cost_ms: Record<string, number | null> = {};
    for (const e of engineIds) cost_ms[e] = stageCostMs(s, e, m, p, G);
    let split: RowSplit | undefined;
    const gc = s.cost[reference];
    if (GEMM_STAGES.includes(s.kind) && gc && gc.model === 'rows' && !gc.whole_tiles) {
      const other = engineIds.find((e) => {
        const x = s.cost[e];
        return e !== reference && x && x.model === 'rows' && x.whole_tiles;
      });
      const nc = other === undefined ? undefined : s.cost[other];
      if (other !== undefined && nc && nc.model === 'rows') {
        split = { rows: m, group_rows: G, gpu_engine: reference, npu_engine: other, gpu: gc.per_group, npu: nc.per_group };
      }
    }
    const where = l === null ? (c === null ? '' : `c${c} `) : `L${l} c${c} `;
    const id = tasks.length;
    tasks.push({ id, name: `${where}${s.kind}`, kind: s.kind, layer: l, chunk: c, rows: m, cost_ms, preds: [...new Set(preds)].sort((a, b) => a - b), split });
    idOf.set(key(s.kind, l, c), id);
    return id;
  };

  // micro-batch-major order: topological, since attention of chunk c needs only chunks <= c
  const lastOut: number[][] = chunks.map(() => []);
  chunks.forEach((ch, c) => {
    const embed = byKind.get('embed');
    if (embed) lastOut[c] = [add(embed, null, c, ch.rows, ch.start, [])];
    for (let l = 0; l < layers; l++) {
      for (const k of layerKinds) {
        const preds: number[] = depsIn.get(k)!.map((d) => idOf.get(key(d, l, c))!);
        if (inputs.includes(k)) preds.push(...lastOut[c]!);
        if (k === 'attention') {
          for (let c2 = 0; c2 < c; c2++) for (const kv of kvKinds) preds.push(idOf.get(key(kv, l, c2))!);
        }
        add(byKind.get(k)!, l, c, ch.rows, ch.start, preds);
      }
      lastOut[c] = outputs.map((k) => idOf.get(key(k, l, c))!);
    }
  });
  const head = byKind.get('head');
  if (head) add(head, null, null, 1, prompt - 1, lastOut[chunks.length - 1]!);
  return checkGraph({ engines: spec.engines, reference_engine: reference, tasks, handoff: spec.handoff });
}
