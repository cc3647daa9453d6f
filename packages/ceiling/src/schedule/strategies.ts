import { TickwiseError } from '@tickwise/time';
import { bestSplit, splitProblem, type SplitPoint } from '../split-model';
import { capableEngines, costOn, handoffMs, restrictEngines, successors, type StageGraph } from './graph';
import { scheduleMessages as msg } from './messages';
import { scheduleFromBars, type Placement, type Schedule } from './schedule';

/**
 * All-iGPU: every task on the reference engine, one after another in the
 * graph's (topological) order. Its makespan is the sum of the tasks' costs
 * there: what the measured prefill takes without host gaps.
 */
export function allGpuSchedule(g: StageGraph): Schedule {
  const e = g.reference_engine;
  let t = 0;
  const bars: Placement[] = [];
  for (const task of g.tasks) {
    const c = costOn(task, e);
    if (c === null) throw new TickwiseError('invalid-input', msg.notOnReference(task.name, e));
    bars.push({ task: task.id, engine: e, start_ms: t, end_ms: t + c, rows: task.rows });
    t += c;
  }
  return scheduleFromBars(g, 'all_gpu', bars);
}

/** One GEMM's split in the per-GEMM strategy: ceiling's best split of that GEMM. */
export interface GemmSplit {
  readonly task: number;
  readonly kind: string;
  /** `bestSplit` of the GEMM with the graph's gpu->npu handoff as the sync overhead. */
  readonly split: SplitPoint;
}

/** The per-GEMM schedule and each GEMM's split. */
export interface PerGemmResult {
  readonly schedule: Schedule;
  readonly splits: readonly GemmSplit[];
}

/**
 * The per-GEMM row split (HeteroMosaic's per-GEMM design; `tickwise
 * ceiling` for every GEMM): tasks run in the graph's order on the reference
 * engine; each GEMM carrying a {@link RowSplit} runs as ceiling's
 * `bestSplit` of M = its rows, g and t its per-group costs, and the
 * gpu->npu handoff as the join/sync overhead (the same inputs `ceiling()`
 * takes, so the same answer). Nothing else overlaps: a split GEMM's two
 * parts start together and the next task waits for both plus the sync.
 */
export function perGemmSchedule(g: StageGraph): PerGemmResult {
  const e = g.reference_engine;
  let t = 0;
  const bars: Placement[] = [];
  const splits: GemmSplit[] = [];
  const finish: number[] = [];
  for (const task of g.tasks) {
    if (task.split) {
      const s = task.split;
      const p = splitProblem({ rows: s.rows, group_rows: s.group_rows, gpu: s.gpu, npu: s.npu, sync_overhead_ms: handoffMs(g.handoff, s.gpu_engine, s.npu_engine) });
      const best = bestSplit(p);
      splits.push({ task: task.id, kind: task.kind, split: best });
      if (best.gpu_rows > 0) bars.push({ task: task.id, engine: s.gpu_engine, start_ms: t, end_ms: t + best.gpu_ms, rows: best.gpu_rows });
      if (best.npu_rows > 0) bars.push({ task: task.id, engine: s.npu_engine, start_ms: t, end_ms: t + best.npu_ms, rows: best.npu_rows });
      t += best.split_ms;
    } else {
      const c = costOn(task, e);
      if (c === null) throw new TickwiseError('invalid-input', msg.notOnReference(task.name, e));
      bars.push({ task: task.id, engine: e, start_ms: t, end_ms: t + c, rows: task.rows });
      t += c;
    }
    finish.push(t);
  }
  const base = scheduleFromBars(g, 'per_gemm_split', bars);
  return { schedule: { ...base, finish_ms: finish, makespan_ms: t }, splits };
}

/** Mean handoff over all ordered engine pairs (0 on the diagonal): HEFT's average communication cost. */
function meanHandoff(g: StageGraph, engines: readonly string[]): number {
  if (engines.length < 2) return 0;
  let sum = 0;
  for (const a of engines) for (const b of engines) sum += handoffMs(g.handoff, a, b);
  return sum / (engines.length * engines.length);
}

/**
 * HEFT's upward rank: a task's mean cost over the engines it can run on,
 * plus the largest (mean handoff + rank) over its successors: the length of
 * the longest path from it to the end, on average.
 */
export function upwardRank(g: StageGraph): number[] {
  const succ = successors(g);
  const ids = g.engines.map((e) => e.id);
  const comm = meanHandoff(g, ids);
  const rank = g.tasks.map(() => 0);
  for (let i = g.tasks.length - 1; i >= 0; i--) {
    const t = g.tasks[i]!;
    const costs = ids.map((e) => costOn(t, e)).filter((c): c is number => c !== null);
    const mean = costs.reduce((a, c) => a + c, 0) / costs.length;
    let tail = 0;
    for (const s of succ[i]!) tail = Math.max(tail, comm + rank[s]!);
    rank[i] = mean + tail;
  }
  return rank;
}

/** Busy intervals of one engine, sorted, for insertion-based placement. */
class Timeline {
  readonly starts: number[] = [];
  readonly ends: number[] = [];
  /** Earliest start >= ready where `dur` fits between bars (or after the last). */
  fit(ready: number, dur: number): number {
    const n = this.starts.length;
    // first bar ending after `ready` (ends are sorted since bars do not overlap)
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.ends[mid]! <= ready) lo = mid + 1;
      else hi = mid;
    }
    let t = ready;
    for (let i = lo; i < n; i++) {
      if (t + dur <= this.starts[i]!) return t;
      t = Math.max(t, this.ends[i]!);
    }
    return t;
  }
  insert(start: number, end: number): void {
    let i = this.starts.length;
    while (i > 0 && this.starts[i - 1]! > start) i--;
    this.starts.splice(i, 0, start);
    this.ends.splice(i, 0, end);
  }
}

/**
 * HEFT (Topcuoglu, Hariri, Wu 2002) on the stage graph: tasks in decreasing
 * upward rank; each goes to the engine where it finishes earliest, counting
 * the handoff from predecessors on other engines and filling idle slots
 * (insertion). Ties go to the engine listed first (the reference engine).
 */
export function heftSchedule(g: StageGraph): Schedule {
  const rank = upwardRank(g);
  const order = g.tasks.map((t) => t.id).sort((a, b) => rank[b]! - rank[a]! || a - b);
  const lines = new Map(g.engines.map((e) => [e.id, new Timeline()]));
  const engineOf: string[] = [];
  const finish: number[] = g.tasks.map(() => 0);
  const done = g.tasks.map(() => false);
  const bars: Placement[] = [];
  for (const id of order) {
    const t = g.tasks[id]!;
    let best: { e: string; start: number; end: number } | null = null;
    for (const e of capableEngines(g, t)) {
      const c = costOn(t, e)!;
      let ready = 0;
      for (const p of t.preds) {
        // rank order is topological for positive costs; with zero costs the id tie-break keeps it so
        if (!done[p]) throw new Error(`HEFT order placed ${t.name} before its predecessor ${g.tasks[p]!.name}`);
        ready = Math.max(ready, finish[p]! + handoffMs(g.handoff, engineOf[p]!, e));
      }
      const start = lines.get(e)!.fit(ready, c);
      if (best === null || start + c < best.end) best = { e, start, end: start + c };
    }
    lines.get(best!.e)!.insert(best!.start, best!.end);
    engineOf[id] = best!.e;
    finish[id] = best!.end;
    done[id] = true;
    bars.push({ task: id, engine: best!.e, start_ms: best!.start, end_ms: best!.end, rows: t.rows });
  }
  return scheduleFromBars(g, 'pipelined', bars);
}

/** Non-empty engine subsets that contain the reference engine and leave every task somewhere to run. */
export function feasibleEngineSets(g: StageGraph): string[][] {
  const ids = g.engines.map((e) => e.id);
  const others = ids.filter((e) => e !== g.reference_engine);
  const sets: string[][] = [];
  for (let mask = 0; mask < 1 << others.length; mask++) {
    const keep = [g.reference_engine, ...others.filter((_, i) => mask & (1 << i))];
    if (g.tasks.every((t) => keep.some((e) => costOn(t, e) !== null))) sets.push(ids.filter((e) => keep.includes(e)));
  }
  return sets;
}

/**
 * The pipelined strategy: HEFT on the full engine set and on every feasible
 * subset that keeps the reference engine, keeping the shortest. A heuristic
 * can be misled by an extra engine; trying the subsets means adding an
 * engine never lengthens the answer (the old schedules stay candidates).
 */
export function pipelinedSchedule(g: StageGraph): { schedule: Schedule; engines_used: readonly string[] } {
  let best: { schedule: Schedule; engines_used: string[] } | null = null;
  for (const set of feasibleEngineSets(g)) {
    const s = heftSchedule(set.length === g.engines.length ? g : restrictEngines(g, set));
    if (best === null || s.makespan_ms < best.schedule.makespan_ms * (1 - 1e-12)) best = { schedule: s, engines_used: set };
  }
  return best!;
}

/**
 * List scheduling with the engines fixed: tasks in decreasing upward rank,
 * each on its given engine at the earliest time its inputs (plus handoff)
 * and an idle slot of that engine allow. HEFT's placement rule without its
 * engine choice: what a move of the local search is judged by.
 */
export function listSchedule(g: StageGraph, engineOf: readonly string[], rank: readonly number[] = upwardRank(g)): Schedule {
  const order = g.tasks.map((t) => t.id).sort((a, b) => rank[b]! - rank[a]! || a - b);
  const lines = new Map(g.engines.map((e) => [e.id, new Timeline()]));
  const finish: number[] = g.tasks.map(() => 0);
  const bars: Placement[] = [];
  for (const id of order) {
    const t = g.tasks[id]!;
    const e = engineOf[id]!;
    const c = costOn(t, e);
    if (c === null) throw new TickwiseError('invalid-input', msg.taskNowhere(`${t.name} on ${e}`));
    let ready = 0;
    for (const p of t.preds) ready = Math.max(ready, finish[p]! + handoffMs(g.handoff, engineOf[p]!, e));
    const start = lines.get(e)!.fit(ready, c);
    lines.get(e)!.insert(start, start + c);
    finish[id] = start + c;
    bars.push({ task: id, engine: e, start_ms: start, end_ms: start + c, rows: t.rows });
  }
  return scheduleFromBars(g, 'pipelined_search', bars);
}

/** Options of {@link improveAssignment}. */
export interface ImproveOptions {
  /** Most list schedules to evaluate (default 1500). */
  readonly max_evaluations?: number | undefined;
  /** Called now and then with the evaluations done (for a progress line). */
  readonly on_progress?: ProgressFn | undefined;
}

/** A progress callback: what is running, how far, out of how much. */
export type ProgressFn = (phase: string, done: number, total: number) => void;

/**
 * Local search over the engine assignment, from a starting schedule: moves
 * whole groups of stages to another engine (one stage kind of one
 * micro-batch across every layer; one stage kind everywhere; then single
 * stages), each judged by {@link listSchedule} and kept when the makespan
 * drops; passes repeat until none helps or the budget is spent. A move only
 * changes the engine; the order stays HEFT's rank order.
 */
export function improveAssignment(g: StageGraph, start: Schedule, opts: ImproveOptions = {}): { schedule: Schedule; evaluations: number; moves: number; rank: readonly number[] } {
  const budget = opts.max_evaluations ?? 1500;
  const rank = upwardRank(g);
  const engineOf: string[] = g.tasks.map(() => g.reference_engine);
  for (const p of start.placements) engineOf[p.task] = p.engine;
  const movable = g.tasks.filter((t) => capableEngines(g, t).length > 1);
  if (movable.length === 0) return { schedule: { ...start, strategy: 'pipelined_search' }, evaluations: 0, moves: 0, rank };
  const groups = new Map<string, number[]>();
  const addTo = (k: string, id: number) => groups.set(k, [...(groups.get(k) ?? []), id]);
  for (const t of movable) addTo(`kind ${t.kind} chunk ${t.chunk}`, t.id);
  for (const t of movable) addTo(`kind ${t.kind}`, t.id);
  const groupList = [...groups.values()];
  let best = listSchedule(g, engineOf, rank);
  let evaluations = 1;
  let moves = 0;
  const tryMove = (ids: readonly number[], e: string): boolean => {
    if (ids.every((i) => engineOf[i] === e) || ids.some((i) => costOn(g.tasks[i]!, e) === null)) return false;
    const old = ids.map((i) => engineOf[i]!);
    for (const i of ids) engineOf[i] = e;
    const s = listSchedule(g, engineOf, rank);
    evaluations++;
    if (opts.on_progress && evaluations % 25 === 0) opts.on_progress('local search', evaluations, budget);
    if (s.makespan_ms < best.makespan_ms * (1 - 1e-12)) {
      best = s;
      moves++;
      return true;
    }
    ids.forEach((i, j) => (engineOf[i] = old[j]!));
    return false;
  };
  const engines = g.engines.map((e) => e.id);
  let improved = true;
  while (improved && evaluations < budget) {
    improved = false;
    for (const ids of groupList) {
      for (const e of engines) {
        if (evaluations >= budget) break;
        if (tryMove(ids, e)) improved = true;
      }
    }
    if (!improved) {
      // single stages, those on the critical path first
      const onPath = new Set(criticalPathTasks(g, best));
      const singles = [...movable].sort((a, b) => Number(onPath.has(b.id)) - Number(onPath.has(a.id)) || rank[b.id]! - rank[a.id]!);
      for (const t of singles) {
        for (const e of engines) {
          if (evaluations >= budget) break;
          if (tryMove([t.id], e)) improved = true;
        }
      }
    }
  }
  return { schedule: best, evaluations, moves, rank };
}

/** Tasks whose finish equals some successor's ready time chain back from the last finish (a cheap critical-path set). */
function criticalPathTasks(g: StageGraph, s: Schedule): number[] {
  let cur = 0;
  for (let t = 1; t < g.tasks.length; t++) if (s.finish_ms[t]! >= s.finish_ms[cur]!) cur = t;
  const out: number[] = [];
  const seen = new Set<number>();
  while (!seen.has(cur)) {
    seen.add(cur);
    out.push(cur);
    const t = g.tasks[cur]!;
    let next: number | null = null;
    for (const p of t.preds) if (next === null || s.finish_ms[p]! > s.finish_ms[next]!) next = p;
    if (next === null) break;
    cur = next;
  }
  return out;
}

/**
 * The searched pipelined strategy: on every feasible engine subset (as
 * {@link pipelinedSchedule}), HEFT then {@link improveAssignment}; the
 * shortest wins. Deterministic, so a graph with one more engine has the old
 * graph's answer among its candidates: adding an engine never lengthens it.
 */
export function pipelinedSearchSchedule(
  g: StageGraph,
  opts: ImproveOptions = {},
): { schedule: Schedule; engines_used: readonly string[]; evaluations: number; assignment: readonly string[]; rank: readonly number[] } {
  let best: { schedule: Schedule; engines_used: string[]; evaluations: number; rank: readonly number[] } | null = null;
  for (const set of feasibleEngineSets(g)) {
    const sub = set.length === g.engines.length ? g : restrictEngines(g, set);
    const r = improveAssignment(sub, heftSchedule(sub), opts);
    if (best === null || r.schedule.makespan_ms < best.schedule.makespan_ms * (1 - 1e-12)) best = { schedule: r.schedule, engines_used: set, evaluations: r.evaluations, rank: r.rank };
  }
  const assignment: string[] = g.tasks.map(() => g.reference_engine);
  for (const p of best!.schedule.placements) assignment[p.task] = p.engine;
  return { ...best!, assignment };
}
