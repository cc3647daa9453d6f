import { costOn, handoffMs, successors, type StageGraph } from './graph';
import { scheduleFromBars, type Placement, type Schedule } from './schedule';

/** Options of {@link exhaustiveSchedule}. */
export interface ExhaustiveOptions {
  /** Stop after this many search nodes (default 2 000 000); the answer is then the best found, not proven. */
  readonly max_nodes?: number | undefined;
  /** A known schedule to start from (its makespan is the first upper bound). */
  readonly incumbent?: Schedule | undefined;
}

/** The optimum (or the best found within the budget). */
export interface ExhaustiveResult {
  readonly schedule: Schedule;
  /** True when the search finished: no schedule is shorter. */
  readonly proven_optimal: boolean;
  /** Search nodes visited. */
  readonly nodes: number;
  readonly max_nodes: number;
}

/**
 * Branch and bound over every schedule of a small graph: which engine runs
 * each task and in which order.
 *
 * A schedule is built by repeatedly taking a task whose predecessors are
 * placed, choosing an engine, and starting it as early as that engine and
 * its inputs (plus handoff across engines) allow. Every semi-active
 * schedule (none of its bars can move earlier alone) arises this way, and
 * one of them is optimal; so it is enough to generate each one once, in the
 * order of (start time, task id), which the search enforces.
 *
 * Partial schedules that are not active are cut: when a task could fit
 * into an idle gap its engine left earlier (its inputs ready in time), it
 * could move left without delaying anything, and some optimal schedule is
 * active, so nothing is lost.
 *
 * Bounds, each a valid lower bound on any completion:
 * - the latest finish so far;
 * - per engine: its free time (or the last start) plus the remaining
 *   stages that can run only there;
 * - for each unplaced task: the last start (starts never decrease) or its
 *   placed predecessors' finish, plus its bottom level (its least cost plus
 *   the longest least-cost path below it, handoff taken as 0);
 * - load: the remaining least-cost work poured into the engines' free time
 *   after max(engine free, last start) (water-filling);
 * - with two engines, load at each engine's own speed: the best fractional
 *   assignment of the remaining stages (most time saved per time spent on
 *   the second engine first) must fit before the incumbent's makespan.
 */
export function exhaustiveSchedule(g: StageGraph, opts: ExhaustiveOptions = {}): ExhaustiveResult {
  const maxNodes = opts.max_nodes ?? 2_000_000;
  const n = g.tasks.length;
  const engines = g.engines.map((e) => e.id);
  const E = engines.length;
  const succ = successors(g);
  const cost: (number | null)[][] = g.tasks.map((t) => engines.map((e) => costOn(t, e)));
  const minCost = cost.map((cs) => Math.min(...cs.filter((c): c is number => c !== null)));
  const hand: number[][] = engines.map((a) => engines.map((b) => handoffMs(g.handoff, a, b)));
  const bottom = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let tail = 0;
    for (const s of succ[i]!) tail = Math.max(tail, bottom[s]!);
    bottom[i] = minCost[i]! + tail;
  }

  let bestMs = Infinity;
  let bestBars: Placement[] | null = null;
  if (opts.incumbent && opts.incumbent.placements.length === n) {
    bestMs = opts.incumbent.makespan_ms;
    bestBars = [...opts.incumbent.placements];
  }

  const placed = new Uint8Array(n);
  const missing = g.tasks.map((t) => t.preds.length);
  const engineOf = new Int32Array(n).fill(-1);
  const startOf = new Float64Array(n);
  const finishOf = new Float64Array(n);
  const free = new Float64Array(E);
  let remainingMin = minCost.reduce((a, c) => a + c, 0);
  // work that can run on one engine only, per engine
  const onlyOn = cost.map((cs) => {
    const ok = cs.map((c, e) => (c === null ? -1 : e)).filter((e) => e >= 0);
    return ok.length === 1 ? ok[0]! : -1;
  });
  const remainingOnly = new Float64Array(E);
  for (let i = 0; i < n; i++) if (onlyOn[i]! >= 0) remainingOnly[onlyOn[i]!] += cost[i]![onlyOn[i]!]!;
  // bars per engine, in start order (starts never decrease, so appending keeps the order)
  const barStart: number[][] = engines.map(() => []);
  const barEnd: number[][] = engines.map(() => []);
  let nodes = 0;
  let aborted = false;
  const eps = (x: number) => 1e-12 * Math.max(1, Math.abs(x));
  // the incumbent less a rounding margin (Infinity while there is none)
  const bar = () => (Number.isFinite(bestMs) ? bestMs - eps(bestMs) : Infinity);

  const lowerBound = (lastStart: number, makespan: number): number => {
    let lb = makespan;
    for (let i = 0; i < n; i++) {
      if (placed[i]) continue;
      let est = lastStart;
      for (const p of g.tasks[i]!.preds) if (placed[p] && finishOf[p]! > est) est = finishOf[p]!;
      if (est + bottom[i]! > lb) lb = est + bottom[i]!;
    }
    for (let e = 0; e < E; e++) {
      if (remainingOnly[e]! > 0) lb = Math.max(lb, Math.max(free[e]!, lastStart) + remainingOnly[e]!);
    }
    // water-filling: the least M with sum over engines of max(0, M - avail_e) >= remaining work
    const avail = Array.from(free, (f) => Math.max(f, lastStart)).sort((a, b) => a - b);
    let work = remainingMin;
    let level = avail[0]!;
    for (let k = 1; k <= E && work > 0; k++) {
      const next = k < E ? avail[k]! : Infinity;
      const room = (next - level) * k;
      if (room >= work) {
        level += work / k;
        work = 0;
      } else {
        work -= room;
        level = next;
      }
    }
    return Math.max(lb, level);
  };

  // could task i (cost c on engine e) sit in an idle gap of e that ends by `start`?
  const fitsEarlier = (i: number, e: number, c: number, start: number): boolean => {
    let depReady = 0;
    for (const p of g.tasks[i]!.preds) depReady = Math.max(depReady, finishOf[p]! + hand[engineOf[p]!]![e]!);
    const bs = barStart[e]!;
    const be = barEnd[e]!;
    let prevEnd = 0;
    for (let k = 0; k < bs.length; k++) {
      const gapEnd = bs[k]!;
      if (gapEnd > start + eps(start)) break;
      if (Math.max(prevEnd, depReady) + c <= gapEnd - eps(gapEnd)) return true;
      prevEnd = be[k]!;
    }
    return false;
  };

  // two engines: stages both can run, by decreasing cost ratio (engine 0 / engine 1)
  const both = E === 2 ? g.tasks.map((t) => t.id).filter((i) => cost[i]![0] != null && cost[i]![1] != null)
    .sort((x, y) => cost[y]![0]! / cost[y]![1]! - cost[x]![0]! / cost[x]![1]! || x - y) : [];
  // can the remaining work, split fractionally at each engine's own speed, finish by `m`?
  const fitsBy = (m: number, lastStart: number): boolean => {
    const avail0 = Math.max(free[0]!, lastStart);
    const avail1 = Math.max(free[1]!, lastStart);
    let cap1 = m - avail1 - remainingOnly[1]!;
    if (cap1 < 0) {
      if (remainingOnly[1]! > 0) return false;
      cap1 = 0;
    }
    let work0 = remainingOnly[0]!;
    for (const i of both) {
      if (placed[i]) continue;
      const c1 = cost[i]![1]!;
      if (cap1 >= c1) cap1 -= c1;
      else {
        const frac = c1 > 0 ? cap1 / c1 : 1;
        work0 += (1 - frac) * cost[i]![0]!;
        cap1 = 0;
      }
    }
    return work0 === 0 || avail0 + work0 <= m;
  };

  const dfs = (count: number, lastStart: number, lastTask: number, makespan: number) => {
    if (aborted) return;
    if (++nodes > maxNodes) {
      aborted = true;
      return;
    }
    if (count === n) {
      if (makespan < bar()) {
        bestMs = makespan;
        bestBars = [];
        for (let i = 0; i < n; i++) bestBars.push({ task: i, engine: engines[engineOf[i]!]!, start_ms: startOf[i]!, end_ms: finishOf[i]!, rows: g.tasks[i]!.rows });
      }
      return;
    }
    if (lowerBound(lastStart, makespan) >= bar()) return;
    if (E === 2 && bestMs < Infinity && !fitsBy(bestMs - 2 * eps(bestMs), lastStart)) return;
    // candidates: (ready task, engine) with their start; explored shortest finish first
    const cands: { i: number; e: number; start: number; end: number }[] = [];
    for (let i = 0; i < n; i++) {
      if (placed[i] || missing[i]! > 0) continue;
      for (let e = 0; e < E; e++) {
        const c = cost[i]![e];
        if (c === null || c === undefined) continue;
        let ready = free[e]!;
        for (const p of g.tasks[i]!.preds) {
          const r = finishOf[p]! + hand[engineOf[p]!]![e]!;
          if (r > ready) ready = r;
        }
        // canonical order: starts never decrease; equal starts by increasing task id
        if (ready < lastStart - eps(lastStart) || (Math.abs(ready - lastStart) <= eps(lastStart) && i < lastTask)) continue;
        if (fitsEarlier(i, e, c, ready)) continue;
        cands.push({ i, e, start: ready, end: ready + c });
      }
    }
    cands.sort((a, b) => a.end - b.end || a.i - b.i || a.e - b.e);
    for (const c of cands) {
      // its finish plus the least-cost path below it
      if (c.end + bottom[c.i]! - minCost[c.i]! >= bar()) continue;
      const prevFree = free[c.e]!;
      placed[c.i] = 1;
      engineOf[c.i] = c.e;
      startOf[c.i] = c.start;
      finishOf[c.i] = c.end;
      free[c.e] = c.end;
      barStart[c.e]!.push(c.start);
      barEnd[c.e]!.push(c.end);
      remainingMin -= minCost[c.i]!;
      if (onlyOn[c.i]! >= 0) remainingOnly[onlyOn[c.i]!] -= cost[c.i]![onlyOn[c.i]!]!;
      for (const s of succ[c.i]!) missing[s]!--;
      dfs(count + 1, c.start, c.i, Math.max(makespan, c.end));
      for (const s of succ[c.i]!) missing[s]!++;
      remainingMin += minCost[c.i]!;
      if (onlyOn[c.i]! >= 0) remainingOnly[onlyOn[c.i]!] += cost[c.i]![onlyOn[c.i]!]!;
      barStart[c.e]!.pop();
      barEnd[c.e]!.pop();
      free[c.e] = prevFree;
      placed[c.i] = 0;
      engineOf[c.i] = -1;
      if (aborted) return;
    }
  };
  dfs(0, 0, -1, 0);
  if (bestBars === null) throw new Error('exhaustive search found no schedule (budget too small and no incumbent)');
  return { schedule: scheduleFromBars(g, 'optimal', bestBars), proven_optimal: !aborted, nodes: Math.min(nodes, maxNodes), max_nodes: maxNodes };
}

/** A lower bound on the makespan of every schedule of a graph, and its two parts. */
export interface MakespanBound {
  /** max(path_ms, load_ms): no schedule is shorter. */
  readonly bound_ms: number;
  /** The longest path with every stage at its least cost and free handoffs. */
  readonly path_ms: number;
  /**
   * The work at each engine's own speed: with two engines, the best
   * fractional split of the stages (most time saved per time spent on the
   * second engine first); with more, the least-cost work spread evenly.
   * Stages one engine alone can run count there in full.
   */
  readonly load_ms: number;
}

/**
 * A lower bound on the makespan, for graphs too big to search: how far the
 * best schedule found can still be from the optimum (the optimum lies
 * between the bound and the best found).
 */
export function makespanLowerBound(g: StageGraph): MakespanBound {
  const engines = g.engines.map((e) => e.id);
  const cost = g.tasks.map((t) => engines.map((e) => costOn(t, e)));
  const minCost = cost.map((cs) => Math.min(...cs.filter((c): c is number => c !== null)));
  const longest = new Array<number>(g.tasks.length).fill(0);
  for (const t of g.tasks) {
    let before = 0;
    for (const p of t.preds) before = Math.max(before, longest[p]!);
    longest[t.id] = before + minCost[t.id]!;
  }
  const path = Math.max(0, ...longest);
  const only = engines.map(() => 0);
  const shared: number[] = [];
  cost.forEach((cs, i) => {
    const ok = cs.map((c, e) => (c === null ? -1 : e)).filter((e) => e >= 0);
    if (ok.length === 1) only[ok[0]!] += cs[ok[0]!]!;
    else shared.push(i);
  });
  let load: number;
  if (engines.length === 2) {
    const order = [...shared].sort((x, y) => cost[y]![0]! / cost[y]![1]! - cost[x]![0]! / cost[x]![1]!);
    const fits = (m: number) => {
      let cap1 = m - only[1]!;
      if (cap1 < 0) return false;
      let work0 = only[0]!;
      for (const i of order) {
        const c1 = cost[i]![1]!;
        if (cap1 >= c1) cap1 -= c1;
        else {
          work0 += (1 - (c1 > 0 ? cap1 / c1 : 1)) * cost[i]![0]!;
          cap1 = 0;
        }
      }
      return work0 <= m;
    };
    let lo = Math.max(only[0]!, only[1]!);
    let hi = lo + shared.reduce((a, i) => a + cost[i]![0]!, 0) + 1;
    for (let k = 0; k < 200 && hi - lo > 1e-12 * Math.max(1, hi); k++) {
      const mid = (lo + hi) / 2;
      if (fits(mid)) hi = mid;
      else lo = mid;
    }
    load = hi;
  } else {
    load = Math.max(...only, minCost.reduce((a, c) => a + c, 0) / engines.length);
  }
  return { bound_ms: Math.max(path, load), path_ms: path, load_ms: load };
}
