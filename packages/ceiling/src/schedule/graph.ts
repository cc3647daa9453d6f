import { TickwiseError } from '@tickwise/time';
import type { EngineCost } from '../cost-curve';
import { scheduleMessages as msg } from './messages';

/** One engine of the chip (iGPU, NPU, ...): an id used as a key, and a name for people. */
export interface EngineSpec {
  /** Key in cost maps: `gpu`, `npu`. */
  readonly id: string;
  /** For people: `iGPU`, `NPU`. */
  readonly name: string;
}

/**
 * A GEMM that the per-GEMM strategy may split by rows between two engines,
 * exactly as `ceiling()` models it (M rows in G-row groups; whole groups on
 * the second engine, the rest on the first).
 */
export interface RowSplit {
  /** M: rows of this GEMM instance (the micro-batch's rows). */
  readonly rows: number;
  /** G. */
  readonly group_rows: number;
  /** The engine that keeps the remainder (the reference engine, the iGPU). */
  readonly gpu_engine: string;
  /** The engine that takes whole groups (the NPU). */
  readonly npu_engine: string;
  /** Per-group cost on `gpu_engine` (ceiling's g). */
  readonly gpu: EngineCost;
  /** Per-tile cost on `npu_engine` (ceiling's t). */
  readonly npu: EngineCost;
}

/** One node of the stage graph: a stage of one layer and micro-batch (or of the whole prefill). */
export interface Task {
  /** Index in `StageGraph.tasks`; tasks are listed in a topological order (every predecessor has a lower id). */
  readonly id: number;
  /** `L3 c1 qkv`. */
  readonly name: string;
  /** Stage kind (`qkv`, `attention`, ...; free text in generated graphs). */
  readonly kind: string;
  /** Layer (null for once-per-chunk or once-per-prefill stages). */
  readonly layer: number | null;
  /** Micro-batch index (null for once-per-prefill stages). */
  readonly chunk: number | null;
  /** Rows the stage processes. */
  readonly rows: number;
  /** ms on each engine, by engine id; null (or absent): the stage cannot run there. */
  readonly cost_ms: Readonly<Record<string, number | null>>;
  /** Ids of the tasks that must finish first. */
  readonly preds: readonly number[];
  /** Present on GEMMs the per-GEMM strategy may split by rows. */
  readonly split?: RowSplit | undefined;
}

/**
 * What it costs to hand a result from one engine to another: the consumer
 * may start `ms` after the producer ends. Latency only: no engine is busy
 * during it. On the same engine it is 0 (an in-queue barrier).
 */
export interface Handoff {
  /** ms between any two different engines. */
  readonly default_ms: number;
  /** Per ordered pair, `gpu->npu`: overrides the default. */
  readonly pairs?: Readonly<Record<string, number>> | undefined;
}

/** A DAG of stages, the engines they may run on, and the handoff between engines. */
export interface StageGraph {
  readonly engines: readonly EngineSpec[];
  /** The engine of the all-iGPU baseline (every task must be able to run there). */
  readonly reference_engine: string;
  readonly tasks: readonly Task[];
  readonly handoff: Handoff;
}

/** ms from a producer on `from` to a consumer on `to` (0 on the same engine). */
export function handoffMs(h: Handoff, from: string, to: string): number {
  if (from === to) return 0;
  return h.pairs?.[`${from}->${to}`] ?? h.default_ms;
}

/** The cost of `task` on `engine`, or null when it cannot run there. */
export function costOn(task: Task, engine: string): number | null {
  const c = task.cost_ms[engine];
  return c === undefined ? null : c;
}

/** Engines `task` can run on, in the graph's engine order. */
export function capableEngines(g: StageGraph, task: Task): string[] {
  return g.engines.map((e) => e.id).filter((e) => costOn(task, e) !== null);
}

/** Successor lists of every task. */
export function successors(g: StageGraph): number[][] {
  const succ: number[][] = g.tasks.map(() => []);
  for (const t of g.tasks) for (const p of t.preds) succ[p]!.push(t.id);
  return succ;
}

/**
 * Validates a graph: ids equal positions, predecessors come earlier (so the
 * listing is topological and the graph acyclic), costs are finite and >= 0,
 * every task can run somewhere, the reference engine exists, handoffs >= 0.
 */
export function checkGraph(g: StageGraph): StageGraph {
  const ids = new Set(g.engines.map((e) => e.id));
  if (ids.size !== g.engines.length || ids.size === 0) throw new TickwiseError('invalid-input', msg.badEngines(g.engines.map((e) => e.id)));
  if (!ids.has(g.reference_engine)) throw new TickwiseError('invalid-input', msg.unknownEngine(g.reference_engine, [...ids]));
  const nonNegative = (what: string, v: number) => {
    if (!(Number.isFinite(v) && v >= 0)) throw new TickwiseError('invalid-input', msg.notNonNegativeMs(what, v));
  };
  nonNegative('handoff', g.handoff.default_ms);
  for (const [k, v] of Object.entries(g.handoff.pairs ?? {})) nonNegative(`handoff ${k}`, v);
  g.tasks.forEach((t, i) => {
    if (t.id !== i) throw new TickwiseError('invalid-input', msg.taskId(t.name, t.id, i));
    for (const p of t.preds) {
      if (!(Number.isInteger(p) && p >= 0 && p < i)) throw new TickwiseError('invalid-input', msg.predOrder(t.name, p));
    }
    let any = false;
    for (const [e, c] of Object.entries(t.cost_ms)) {
      if (!ids.has(e)) throw new TickwiseError('invalid-input', msg.unknownEngine(e, [...ids]));
      if (c === null) continue;
      nonNegative(`${t.name} on ${e}`, c);
      any = true;
    }
    if (!any) throw new TickwiseError('invalid-input', msg.taskNowhere(t.name));
  });
  return g;
}

/** The same graph with another engine set (costs on dropped engines removed). */
export function restrictEngines(g: StageGraph, keep: readonly string[]): StageGraph {
  const set = new Set(keep);
  return {
    ...g,
    engines: g.engines.filter((e) => set.has(e.id)),
    tasks: g.tasks.map((t) => {
      const cost_ms = Object.fromEntries(Object.entries(t.cost_ms).filter(([e]) => set.has(e)));
      const split = t.split && set.has(t.split.gpu_engine) && set.has(t.split.npu_engine) ? t.split : undefined;
      return { ...t, cost_ms, split };
    }),
  };
}
