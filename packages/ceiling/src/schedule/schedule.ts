import { costOn, handoffMs, type StageGraph } from './graph';

/** The strategies the model compares. */
export const STRATEGIES = {
  all_gpu: 'all-iGPU: every stage on the reference engine, one after another',
  per_gemm_split: 'per-GEMM row split: stages in order on the iGPU, each weight GEMM split by rows with the NPU as ceiling() does',
  pipelined: 'micro-batch pipelining: per-stage engine choice by a critical-path list scheduler (HEFT: upward rank, earliest finish incl. handoff)',
  pipelined_search: 'micro-batch pipelining: HEFT, then a local search that moves stages (by kind and micro-batch, then one by one) between engines while the list-scheduled makespan drops',
  optimal: 'exhaustive branch-and-bound: the optimal per-stage engine choice and order (small graphs only)',
} as const;
/** A strategy id (key of {@link STRATEGIES}). */
export type StrategyId = keyof typeof STRATEGIES;
/** Type guard for {@link StrategyId}. */
export function isStrategyId(x: string): x is StrategyId {
  return Object.hasOwn(STRATEGIES, x);
}
/** Short names for tables. */
export const STRATEGY_NAMES: Record<StrategyId, string> = {
  all_gpu: 'all-iGPU',
  per_gemm_split: 'per-GEMM split',
  pipelined: 'pipelined (HEFT)',
  pipelined_search: 'pipelined (HEFT + search)',
  optimal: 'optimal (B&B)',
};

/** One bar of a schedule: a task (or part of a split task) on one engine. */
export interface Placement {
  readonly task: number;
  readonly engine: string;
  readonly start_ms: number;
  readonly end_ms: number;
  /** Rows of the task this bar runs (all of them unless split). */
  readonly rows: number;
}

/** A schedule of one stage graph. */
export interface Schedule {
  readonly strategy: StrategyId;
  /** Last finish (incl. a split's sync). */
  readonly makespan_ms: number;
  /** Bars, by start then engine order. */
  readonly placements: readonly Placement[];
  /** Finish time of each task (a split task finishes after its sync). */
  readonly finish_ms: readonly number[];
  /** Start time of each task (its earliest bar). */
  readonly start_ms: readonly number[];
}

/** Busy time and utilisation of one engine in a schedule. */
export interface EngineUse {
  readonly engine: string;
  readonly busy_ms: number;
  /** busy / makespan. */
  readonly utilisation: number;
  readonly tasks: number;
}

/** Per-engine busy time (bars on one engine never overlap in these schedules). */
export function engineUse(g: StageGraph, s: Schedule): EngineUse[] {
  return g.engines.map((e) => {
    const bars = s.placements.filter((p) => p.engine === e.id);
    const busy = bars.reduce((a, p) => a + (p.end_ms - p.start_ms), 0);
    return { engine: e.id, busy_ms: busy, utilisation: s.makespan_ms > 0 ? busy / s.makespan_ms : 0, tasks: new Set(bars.map((b) => b.task)).size };
  });
}

/** Why a step of the critical path starts when it does. */
export const CRITICAL_LINKS = {
  start: 'starts at time 0',
  dependency: 'waits for a predecessor on the same engine',
  handoff: 'waits for a predecessor on another engine, plus the handoff',
  engine: 'waits for the engine to finish its previous bar',
  split_sync: 'a split GEMM: waits for both parts and the sync',
} as const;
/** Key of {@link CRITICAL_LINKS}. */
export type CriticalLink = keyof typeof CRITICAL_LINKS;

/** One step of a critical path. */
export interface CriticalStep {
  readonly task: number;
  readonly name: string;
  readonly kind: string;
  readonly engine: string;
  readonly start_ms: number;
  readonly end_ms: number;
  /** Why it could not start earlier. */
  readonly link: CriticalLink;
  /** Handoff waited before it (ms), when link is `handoff`. */
  readonly handoff_ms: number;
}

/** A critical path and its totals. */
export interface CriticalPath {
  /** From the first step to the last. */
  readonly steps: readonly CriticalStep[];
  readonly length_ms: number;
  /** ms of the path per stage kind. */
  readonly by_kind: readonly { readonly kind: string; readonly ms: number; readonly steps: number }[];
  /** ms of the path per engine. */
  readonly by_engine: readonly { readonly engine: string; readonly ms: number }[];
  /** Handoff time on the path. */
  readonly handoff_ms: number;
}

const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * The critical path of a schedule: from the bar that ends last, walk back
 * through whatever made each bar start when it did (a predecessor's finish,
 * plus the handoff across engines; or the engine's previous bar), to time 0.
 */
export function criticalPath(g: StageGraph, s: Schedule): CriticalPath {
  const barsOf = new Map<number, (typeof s.placements)[number][]>();
  const byEngine = new Map<string, (typeof s.placements)[number][]>();
  for (const p of s.placements) {
    barsOf.set(p.task, [...(barsOf.get(p.task) ?? []), p]);
    byEngine.set(p.engine, [...(byEngine.get(p.engine) ?? []), p]);
  }
  const engineOf = (t: number) => {
    const bars = barsOf.get(t) ?? [];
    return bars.length === 1 ? bars[0]!.engine : bars.length > 1 ? bars.map((b) => b.engine).join('+') : '';
  };
  let last = 0;
  for (let t = 1; t < g.tasks.length; t++) if (s.finish_ms[t]! > s.finish_ms[last]! || (near(s.finish_ms[t]!, s.finish_ms[last]!) && t > last)) last = t;
  const steps: CriticalStep[] = [];
  let cur: number | null = g.tasks.length ? last : null;
  let guard = 0;
  while (cur !== null && guard++ <= g.tasks.length) {
    const t = g.tasks[cur]!;
    const start = s.start_ms[cur]!;
    const bars = barsOf.get(cur) ?? [];
    const engine = engineOf(cur);
    let link: CriticalLink = 'start';
    let next: number | null = null;
    let waited = 0;
    if (start > 0 && !near(start, 0)) {
      for (const p of t.preds) {
        const pe = engineOf(p);
        const h = bars.length === 1 && barsOf.get(p)?.length === 1 ? handoffMs(g.handoff, pe, engine) : 0;
        if (near(s.finish_ms[p]! + h, start)) {
          next = p;
          link = h > 0 ? 'handoff' : 'dependency';
          waited = h;
          break;
        }
      }
      if (next === null) {
        for (const b of bars) {
          const prev = (byEngine.get(b.engine) ?? []).filter((x) => x.task !== cur && near(x.end_ms, start));
          if (prev.length) {
            next = prev[0]!.task;
            link = 'engine';
            break;
          }
        }
      }
      if (next === null) {
        // a split's sync ends after its bars; take the latest-finishing predecessor as the reason
        let best: number | null = null;
        for (const p of t.preds) if (best === null || s.finish_ms[p]! > s.finish_ms[best]!) best = p;
        next = best;
        link = 'dependency';
      }
    }
    steps.push({ task: cur, name: t.name, kind: t.kind, engine, start_ms: start, end_ms: s.finish_ms[cur]!, link: bars.length > 1 && link === 'dependency' ? 'split_sync' : link, handoff_ms: waited });
    cur = next;
  }
  steps.reverse();
  const kinds = new Map<string, { ms: number; steps: number }>();
  const engines = new Map<string, number>();
  for (const st of steps) {
    const d = st.end_ms - st.start_ms;
    const k = kinds.get(st.kind) ?? { ms: 0, steps: 0 };
    kinds.set(st.kind, { ms: k.ms + d, steps: k.steps + 1 });
    engines.set(st.engine, (engines.get(st.engine) ?? 0) + d);
  }
  return {
    steps,
    length_ms: steps.length ? steps[steps.length - 1]!.end_ms : 0,
    by_kind: [...kinds].map(([kind, v]) => ({ kind, ...v })).sort((a, b) => b.ms - a.ms),
    by_engine: [...engines].map(([engine, ms]) => ({ engine, ms })).sort((a, b) => b.ms - a.ms),
    handoff_ms: steps.reduce((a, x) => a + x.handoff_ms, 0),
  };
}

/**
 * Checks a schedule against its graph: every task placed, bars on one engine
 * do not overlap, each bar lasts the task's cost there (split parts aside),
 * and every task starts after its predecessors finish (plus the handoff
 * between engines). Returns the problems found (empty when valid).
 */
export function validateSchedule(g: StageGraph, s: Schedule): string[] {
  const problems: string[] = [];
  const tol = (x: number) => 1e-9 * Math.max(1, Math.abs(x));
  const bars = new Map<number, Placement[]>();
  for (const p of s.placements) bars.set(p.task, [...(bars.get(p.task) ?? []), p]);
  for (const t of g.tasks) {
    const b = bars.get(t.id);
    if (!b || b.length === 0) {
      problems.push(`${t.name}: not placed`);
      continue;
    }
    if (b.length === 1) {
      const c = costOn(t, b[0]!.engine);
      if (c === null) problems.push(`${t.name}: placed on ${b[0]!.engine}, where it cannot run`);
      else if (Math.abs(b[0]!.end_ms - b[0]!.start_ms - c) > tol(c)) problems.push(`${t.name}: bar of ${b[0]!.end_ms - b[0]!.start_ms} ms, cost ${c} ms`);
    }
    for (const p of t.preds) {
      for (const x of b) {
        const pe = bars.get(p) ?? [];
        const h = pe.length === 1 && b.length === 1 ? handoffMs(g.handoff, pe[0]!.engine, x.engine) : 0;
        if (x.start_ms + tol(x.start_ms) < s.finish_ms[p]! + h) problems.push(`${t.name} starts at ${x.start_ms} before ${g.tasks[p]!.name} is ready (${s.finish_ms[p]! + h})`);
      }
    }
  }
  const byEngine = new Map<string, Placement[]>();
  for (const p of s.placements) byEngine.set(p.engine, [...(byEngine.get(p.engine) ?? []), p]);
  for (const [e, list] of byEngine) {
    const sorted = [...list].sort((a, b) => a.start_ms - b.start_ms);
    for (let i = 1; i < sorted.length; i++) {
      if (sorted[i]!.start_ms + tol(sorted[i]!.start_ms) < sorted[i - 1]!.end_ms) problems.push(`${e}: ${g.tasks[sorted[i - 1]!.task]!.name} and ${g.tasks[sorted[i]!.task]!.name} overlap`);
    }
  }
  const last = Math.max(0, ...s.finish_ms);
  if (Math.abs(last - s.makespan_ms) > tol(last)) problems.push(`makespan ${s.makespan_ms} != last finish ${last}`);
  return problems;
}

/** Builds a {@link Schedule} from whole-task placements (one bar per task). */
export function scheduleFromBars(g: StageGraph, strategy: StrategyId, bars: readonly Placement[]): Schedule {
  const start = g.tasks.map(() => Infinity);
  const finish = g.tasks.map(() => 0);
  for (const b of bars) {
    start[b.task] = Math.min(start[b.task]!, b.start_ms);
    finish[b.task] = Math.max(finish[b.task]!, b.end_ms);
  }
  const order = new Map(g.engines.map((e, i) => [e.id, i]));
  const placements = [...bars].sort((a, b) => a.start_ms - b.start_ms || order.get(a.engine)! - order.get(b.engine)! || a.task - b.task);
  return { strategy, makespan_ms: Math.max(0, ...finish), placements, finish_ms: finish, start_ms: start.map((x) => (x === Infinity ? 0 : x)) };
}
