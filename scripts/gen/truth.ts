/**
 * Ground truth from the generator's own true values (never from re-reading the
 * file): busy time as the union of dispatch intervals, idle, maximal idle gaps,
 * overlap, per-kernel counts and durations, per segment (prefill).
 *
 * All times are true host ns: `offset_ns + tick * ns_per_tick` (the TRUE clock,
 * not the declared frequency and not any fit). Intervals are half-open
 * [start, end): two dispatches that touch leave no gap.
 */
import type { DeviceClockTruth, KernelDef, TrueSubmission } from './timeline';

/** Gap thresholds the truth reports counts for (strictly longer than). */
export const GAP_THRESHOLDS_NS = [1_000, 10_000, 100_000, 200_000, 1_000_000, 10_000_000] as const;

/** Gap statistics of one interval set. */
export interface GapTruth {
  /** Maximal idle intervals between the first start and the last end. */
  count: number;
  /** Sum of their lengths (= idle_ns). */
  idle_ns: number;
  max_gap_ns: number;
  /** For each threshold: gaps strictly longer than it, and the idle they hold. */
  longer_than: { threshold_ns: number; count: number; idle_ns: number }[];
}

/** Busy/idle/gap/overlap numbers of one set of dispatches. */
export interface TimelineTruth {
  dispatches: number;
  start_ns: number;
  end_ns: number;
  span_ns: number;
  /** Union of dispatch intervals. */
  busy_ns: number;
  /** Plain sum of dispatch durations (>= busy_ns; the difference is overlap). */
  sum_dur_ns: number;
  idle_ns: number;
  busy_fraction: number;
  /** Time with >= 2 dispatches in flight. */
  overlap_ns: number;
  /** Time with >= 2 dispatches of different submissions in flight. */
  overlap_cross_submission_ns: number;
  max_in_flight: number;
  gaps: GapTruth;
}

/** Sweeps intervals given in non-decreasing start order. */
export class IntervalSweep {
  private active: { end: number; sub: number }[] = [];
  private cursor = 0;
  private emptySince = -1;
  private lastStart = Number.NEGATIVE_INFINITY;
  private count = 0;
  private first = 0;
  private last = 0;
  private busy = 0;
  private sum = 0;
  private multi = 0;
  private cross = 0;
  private maxInFlight = 0;
  private gapCount = 0;
  private gapIdle = 0;
  private maxGap = 0;
  private readonly gapOver = GAP_THRESHOLDS_NS.map(() => ({ count: 0, idle: 0 }));

  /** Adds [start, end) of submission `sub`; starts must not decrease. */
  add(start: number, end: number, sub: number): void {
    if (start < this.lastStart) throw new Error(`intervals out of start order: ${start} after ${this.lastStart}`);
    if (end < start) throw new Error(`interval ends before it starts: [${start}, ${end})`);
    this.lastStart = start;
    if (this.count === 0) {
      this.first = start;
      this.cursor = start;
    } else {
      this.advance(start);
      if (this.active.length === 0 && start > this.emptySince) this.gap(start - this.emptySince);
    }
    this.active.push({ end, sub });
    if (this.active.length > this.maxInFlight) this.maxInFlight = this.active.length;
    this.count++;
    this.sum += end - start;
    if (end > this.last) this.last = end;
  }

  /** The numbers, once every interval was added. */
  result(): TimelineTruth {
    this.advance(Number.POSITIVE_INFINITY);
    const span = this.count === 0 ? 0 : this.last - this.first;
    return {
      dispatches: this.count,
      start_ns: this.first,
      end_ns: this.last,
      span_ns: span,
      busy_ns: this.busy,
      sum_dur_ns: this.sum,
      idle_ns: span - this.busy,
      busy_fraction: round(span === 0 ? 0 : this.busy / span, 6),
      overlap_ns: this.multi,
      overlap_cross_submission_ns: this.cross,
      max_in_flight: this.maxInFlight,
      gaps: {
        count: this.gapCount,
        idle_ns: this.gapIdle,
        max_gap_ns: this.maxGap,
        longer_than: GAP_THRESHOLDS_NS.map((threshold_ns, i) => ({
          threshold_ns,
          count: this.gapOver[i]!.count,
          idle_ns: this.gapOver[i]!.idle,
        })),
      },
    };
  }

  private gap(len: number): void {
    this.gapCount++;
    this.gapIdle += len;
    if (len > this.maxGap) this.maxGap = len;
    GAP_THRESHOLDS_NS.forEach((t, i) => {
      if (len > t) {
        this.gapOver[i]!.count++;
        this.gapOver[i]!.idle += len;
      }
    });
  }

  /** Accounts time from the cursor up to t, retiring intervals that end on the way. */
  private advance(t: number): void {
    while (this.active.length > 0) {
      let nextEnd = Number.POSITIVE_INFINITY;
      for (const a of this.active) if (a.end < nextEnd) nextEnd = a.end;
      const segEnd = Math.min(nextEnd, t);
      const len = segEnd - this.cursor;
      if (len > 0) {
        const n = this.active.length;
        this.busy += len;
        if (n >= 2) {
          this.multi += len;
          const s0 = this.active[0]!.sub;
          if (this.active.some((a) => a.sub !== s0)) this.cross += len;
        }
      }
      this.cursor = segEnd;
      if (nextEnd > t) return;
      this.active = this.active.filter((a) => a.end !== nextEnd);
      if (this.active.length === 0) this.emptySince = nextEnd;
    }
    if (t !== Number.POSITIVE_INFINITY) this.cursor = t;
  }
}

/** Count and durations of one kernel (one key). */
export interface KernelTruth {
  key: string;
  kind: string;
  executable_id: number;
  count: number;
  total_ns: number;
  mean_ns: number;
  min_ns: number;
  max_ns: number;
  /** Per segment: count, total_ns, mean_ns. */
  per_segment: { segment: number; count: number; total_ns: number; mean_ns: number }[];
}

/** One segment (a prefill): its dispatches' timeline numbers and submissions. */
export interface SegmentTruth extends TimelineTruth {
  segment: number;
  label: string;
  submissions: number;
  first_submission_id: number;
  last_submission_id: number;
}

/** Optional per-dispatch columns (small captures only). */
export interface DispatchColumns {
  event_id: number[];
  submission_id: number[];
  key_index: number[];
  start_ns: number[];
  end_ns: number[];
}

/** Accumulates the truth of one capture from its submissions, in time order. */
export class TruthAccumulator {
  private readonly overall = new IntervalSweep();
  private readonly segments = new Map<number, { sweep: IntervalSweep; subs: number; first: number; last: number }>();
  private readonly kernels = new Map<KernelDef, { count: number; total: number; min: number; max: number; seg: Map<number, { count: number; total: number }> }>();
  private submissions = 0;
  /** Per-dispatch columns, when asked for. */
  readonly columns: DispatchColumns | null;
  private readonly keyIndex = new Map<KernelDef, number>();

  constructor(
    private readonly clock: DeviceClockTruth,
    private readonly kernelOrder: readonly KernelDef[],
    keepColumns: boolean,
  ) {
    this.columns = keepColumns ? { event_id: [], submission_id: [], key_index: [], start_ns: [], end_ns: [] } : null;
    kernelOrder.forEach((k, i) => this.keyIndex.set(k, i));
  }

  /** Adds one submission's dispatches. */
  add(sub: TrueSubmission): void {
    this.submissions++;
    let seg = this.segments.get(sub.segment);
    if (!seg) {
      seg = { sweep: new IntervalSweep(), subs: 0, first: sub.submission_id, last: sub.submission_id };
      this.segments.set(sub.segment, seg);
    }
    seg.subs++;
    seg.last = sub.submission_id;
    const { offset_ns, ns_per_tick } = this.clock;
    for (const d of sub.dispatches) {
      const start = offset_ns + d.start_tick * ns_per_tick;
      const end = offset_ns + d.end_tick * ns_per_tick;
      this.overall.add(start, end, sub.submission_id);
      seg.sweep.add(start, end, sub.submission_id);
      const dur = end - start;
      let ks = this.kernels.get(d.kernel);
      if (!ks) {
        ks = { count: 0, total: 0, min: Number.POSITIVE_INFINITY, max: 0, seg: new Map() };
        this.kernels.set(d.kernel, ks);
      }
      ks.count++;
      ks.total += dur;
      if (dur < ks.min) ks.min = dur;
      if (dur > ks.max) ks.max = dur;
      const kseg = ks.seg.get(sub.segment) ?? { count: 0, total: 0 };
      kseg.count++;
      kseg.total += dur;
      ks.seg.set(sub.segment, kseg);
      if (this.columns) {
        this.columns.event_id.push(d.event_id);
        this.columns.submission_id.push(sub.submission_id);
        this.columns.key_index.push(this.keyIndex.get(d.kernel) ?? -1);
        this.columns.start_ns.push(start);
        this.columns.end_ns.push(end);
      }
    }
  }

  /** Total submissions added. */
  get submissionCount(): number {
    return this.submissions;
  }

  /** Overall, per-segment and per-kernel numbers. */
  result(segmentLabel: (segment: number) => string): {
    overall: TimelineTruth;
    segments: SegmentTruth[];
    kernels: KernelTruth[];
  } {
    const segments: SegmentTruth[] = [...this.segments.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([segment, s]) => ({
        segment,
        label: segmentLabel(segment),
        submissions: s.subs,
        first_submission_id: s.first,
        last_submission_id: s.last,
        ...s.sweep.result(),
      }));
    const kernels: KernelTruth[] = [];
    for (const k of this.kernelOrder) {
      const ks = this.kernels.get(k);
      if (!ks) continue;
      kernels.push({
        key: k.key,
        kind: k.kind,
        executable_id: k.executable_id,
        count: ks.count,
        total_ns: ks.total,
        mean_ns: round(ks.total / ks.count, 3),
        min_ns: ks.min,
        max_ns: ks.max,
        per_segment: [...ks.seg.entries()]
          .sort((a, b) => a[0] - b[0])
          .map(([segment, v]) => ({ segment, count: v.count, total_ns: v.total, mean_ns: round(v.total / v.count, 3) })),
      });
    }
    return { overall: this.overall.result(), segments, kernels };
  }
}

/** Rounds to `digits` decimals (display numbers in the truth file). */
export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
