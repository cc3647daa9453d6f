import { TickwiseError } from '@tickwise/time';
import type { MeasuredPrefill, PartSampler, SamplePart } from './measured';
import { prefillSpecFromMeasured } from './measured';
import { scheduleMessages as msg } from './messages';
import { quantileSorted, seededRng, type Rng } from './rng';
import type { StrategyId } from './schedule';
import { prefillGraph } from './stages';
import { allGpuSchedule, listSchedule, perGemmSchedule, pipelinedSchedule, type ProgressFn } from './strategies';

/** Options of {@link bootstrapStrategies}. */
export interface BootstrapOptions {
  /** Replicates (e.g. 200). */
  readonly replicates: number;
  /** PRNG seed: equal seeds give equal intervals. */
  readonly seed: number;
  /** Interval coverage (default 0.9: the 5th to the 95th percentile). */
  readonly coverage?: number | undefined;
  /**
   * The searched pipelined schedule's engine per task (from the point
   * estimate): list-scheduled with each replicate's costs, not searched
   * again (the search is too slow to repeat hundreds of times). Absent: that
   * strategy gets no interval.
   */
  readonly search_assignment?: readonly string[] | undefined;
  /** The priorities (upward ranks) the point estimate's search list-scheduled with; kept too, so a replicate changes costs only. */
  readonly search_rank?: readonly number[] | undefined;
  /** Called after each replicate (for a progress line). */
  readonly on_progress?: ProgressFn | undefined;
}

/** Median and interval of one quantity over the replicates. */
export interface Interval {
  readonly median: number;
  readonly low: number;
  readonly high: number;
}

/** One strategy's spread. */
export interface StrategySpread {
  readonly strategy: StrategyId;
  readonly makespan_ms: Interval;
  /** all-iGPU makespan / this makespan, per replicate. */
  readonly speedup: Interval;
}

/** The bootstrap's result: intervals and what they rest on. */
export interface BootstrapResult {
  readonly replicates: number;
  readonly seed: number;
  /** e.g. 0.9. */
  readonly coverage: number;
  /** Repetitions (segments) behind the costs, per capture. */
  readonly repetitions: readonly { readonly capture: string; readonly segments: number }[];
  /** Dispatches behind the costs (all measured parts). */
  readonly dispatches: number;
  readonly strategies: readonly StrategySpread[];
  /** How the replicates were drawn. */
  readonly method: string;
  readonly notes: readonly string[];
}

/** One measurement: the dispatches of one kernel in one capture (several stages may share it). */
const partKey = (p: SamplePart) => `${p.capture}\u0000${p.kernel}`;

/** All measured parts of a prefill, each measurement once. */
function partsOf(m: MeasuredPrefill): SamplePart[] {
  const seen = new Map<string, SamplePart>();
  for (const s of m.stages) for (const c of Object.values(s.cost)) if (c && c.form === 'dispatches') for (const p of c.parts) if (!seen.has(partKey(p))) seen.set(partKey(p), p);
  return [...seen.values()];
}

/**
 * A sampler for one replicate: per capture, its segments (repetitions)
 * drawn with replacement; then per measured kernel, within each drawn
 * segment and each micro-batch position, its dispatches drawn with
 * replacement (as many as there were). Stratifying by position keeps
 * attention's positions balanced.
 */
function replicateSampler(parts: readonly SamplePart[], rng: Rng): PartSampler {
  const segmentsOf = new Map<string, number[]>();
  for (const p of parts) {
    const set = new Set(segmentsOf.get(p.capture) ?? []);
    for (const s of p.segment) set.add(s);
    segmentsOf.set(p.capture, [...set].sort((a, b) => a - b));
  }
  const drawnSegments = new Map<string, number[]>();
  for (const [cap, segs] of segmentsOf) drawnSegments.set(cap, segs.map(() => segs[rng.int(segs.length)]!));
  // one draw per measurement: stages sharing a kernel (the two norms, the NPU tile standing in for every GEMM) see the same draw
  const cache = new Map<string, { dur_ns: number[]; position: number[] }>();
  return (p) => {
    const hit = cache.get(partKey(p));
    if (hit) return hit;
    // indices by (segment, position)
    const cells = new Map<string, number[]>();
    for (let i = 0; i < p.dur_ns.length; i++) {
      const k = `${p.segment[i]}/${p.position[i]}`;
      const list = cells.get(k);
      if (list) list.push(i);
      else cells.set(k, [i]);
    }
    const positions = [...new Set(p.position)].sort((a, b) => a - b);
    const dur_ns: number[] = [];
    const position: number[] = [];
    for (const seg of drawnSegments.get(p.capture) ?? []) {
      for (const pos of positions) {
        const idx = cells.get(`${seg}/${pos}`);
        if (!idx) continue;
        for (let j = 0; j < idx.length; j++) {
          const i = idx[rng.int(idx.length)]!;
          dur_ns.push(p.dur_ns[i]!);
          position.push(pos);
        }
      }
    }
    const out = { dur_ns, position };
    cache.set(partKey(p), out);
    return out;
  };
}

function interval(values: readonly number[], coverage: number): Interval {
  const sorted = [...values].sort((a, b) => a - b);
  const tail = (1 - coverage) / 2;
  return { median: quantileSorted(sorted, 0.5), low: quantileSorted(sorted, tail), high: quantileSorted(sorted, 1 - tail) };
}

/**
 * Error bars: the model re-run over bootstrap replicates of the measured
 * costs (see {@link replicateSampler}): all-iGPU, per-GEMM split and
 * pipelined each time, speedups against that replicate's all-iGPU. Reports
 * the median and the central `coverage` interval (percentile method).
 * What it covers: the spread of the measured dispatches and repetitions.
 * What it does not: errors of the model itself (host gaps, contention).
 */
export function bootstrapStrategies(m: MeasuredPrefill, opts: BootstrapOptions): BootstrapResult {
  if (!(Number.isSafeInteger(opts.replicates) && opts.replicates >= 1)) throw new TickwiseError('invalid-input', msg.badReplicates(opts.replicates));
  const coverage = opts.coverage ?? 0.9;
  const rng = seededRng(opts.seed);
  const parts = partsOf(m);
  const ids: StrategyId[] = ['all_gpu', 'per_gemm_split', 'pipelined', ...(opts.search_assignment ? (['pipelined_search'] as const) : [])];
  const makespans = new Map<StrategyId, number[]>(ids.map((s) => [s, []]));
  const speedups = new Map<StrategyId, number[]>(ids.map((s) => [s, []]));
  for (let r = 0; r < opts.replicates; r++) {
    const { spec } = prefillSpecFromMeasured(m, replicateSampler(parts, rng));
    const g = prefillGraph(spec);
    const base = allGpuSchedule(g).makespan_ms;
    const heft = pipelinedSchedule(g).schedule.makespan_ms;
    const got: Record<StrategyId, number> = {
      all_gpu: base,
      per_gemm_split: perGemmSchedule(g).schedule.makespan_ms,
      pipelined: heft,
      pipelined_search: opts.search_assignment ? Math.min(heft, listSchedule(g, opts.search_assignment, opts.search_rank).makespan_ms) : NaN,
      optimal: NaN,
    };
    for (const s of ids) {
      makespans.get(s)!.push(got[s]);
      speedups.get(s)!.push(base / got[s]);
    }
    opts.on_progress?.('bootstrap', r + 1, opts.replicates);
  }
  const caps = new Map<string, Set<number>>();
  for (const p of parts) {
    const set = caps.get(p.capture) ?? new Set<number>();
    for (const s of p.segment) set.add(s);
    caps.set(p.capture, set);
  }
  const repetitions = [...caps].map(([capture, s]) => ({ capture, segments: s.size }));
  const notes: string[] = [];
  for (const r of repetitions) {
    if (r.segments < 2) notes.push(`${r.capture}: one repetition only, so the interval reflects the spread of its dispatches, not run-to-run variation`);
  }
  if (parts.length === 0) notes.push('no measured dispatches: every cost was given, so the interval is a point');
  return {
    replicates: opts.replicates,
    seed: opts.seed,
    coverage,
    repetitions,
    dispatches: parts.reduce((a, p) => a + p.dur_ns.length, 0),
    strategies: ids.map((s) => ({ strategy: s, makespan_ms: interval(makespans.get(s)!, coverage), speedup: interval(speedups.get(s)!, coverage) })),
    method: 'percentile bootstrap: per capture its repetitions drawn with replacement, then per kernel the dispatches of each drawn repetition and micro-batch position drawn with replacement; costs refitted and every strategy re-run per replicate' +
      (opts.search_assignment ? " (the searched pipelined schedule keeps the point estimate's engine and priority per stage, list-scheduled with the replicate's costs, or HEFT's when shorter)" : ''),
    notes,
  };
}
