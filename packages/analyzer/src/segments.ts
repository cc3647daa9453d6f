/**
 * Segmentation of a capture into its repetitions (prefills): a warm-up or
 * cold first pass, then timed repetitions, each the same kernel sequence,
 * separated by long host gaps.
 *
 * ```
 * every device at once: rows in start order per device (dev, pos, kernel, gap before, launch time) [one temp table]
 * per device, a search asking one question at a time; the questions all devices have asked are
 * answered together, one statement per kind (summary of a cut, periodicity, longest gaps, marker cuts)
 *   candidate cuts, in order, the way a person looks for repetitions:
 *     1. profiler step annotations (ProfilerStep#N)       } a host marker at t cuts before the
 *     2. host device-synchronize calls                     } first kernel launched at or after t
 *     3. host stream-synchronize calls                     }
 *     4. periodicity: smallest m >= 2 blocks of P >= 2 rows cut at gaps, each boundary gap
 *        >= 2x any gap inside blocks 2..m, the first block allowed a few extra kernels
 *     5. submissions (IREE executes), when no coarser repetition was found
 *   a cut is used only when its segments are equal: segments 2..m the same kernel
 *   sequence (or, for host-marker cuts, the same kernels in another stream interleaving), segment 1 the same or a cold pass (segment 2's kernels plus at most
 *   max(3, 5 %) extra); an unequal cut is refused with its reason (listed), never used
 *   --reps N: the first equal cut into N segments (markers, the N-1 longest gaps, equal
 *   blocks); none: refused (exit 2) with the reason
 *   --else--> one segment
 * ```
 */
import type { Store } from '@tickwise/store';
import { isTickwiseError, TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { memoKey, readOnce } from './read-memo';
import { planSources, whereLabel, type DevicePlan, type Plan, type SelectionOptions } from './selection';
import { LONG_GAP_SHAPE, PERIODIC_SHAPE, SEGMENT_SUMMARY_SHAPE } from './shapes';
import {
  firstTwoSegmentsKernelsSql, HOST_MARKER_KINDS, longestGapsSql, MarkerKind, markerCountsSql, markerCutsSql, periodicSql, segmentKernelSetSql,
  segmentRowCountsSql, segmentRowsSql, segmentSummarySql, type HostMarkerKind,
} from './sql/segments';
import { type SegmentRange, type SelectionSpec } from './sql/selection';
import { correlatedWorkSql } from './sql/work';

/** How a device's segments were found. */
export const SegmentMethod = {
  reps: 'the user gave --reps N and the kernel sequence repeats N times, cut at long gaps',
  profiler_steps: `found: ${MarkerKind.profiler_steps}`,
  device_sync: `found: ${MarkerKind.device_sync}`,
  stream_sync: `found: ${MarkerKind.stream_sync}`,
  submissions: `found: ${MarkerKind.submissions}`,
  detected: 'found: identical kernel sequences separated by gaps at least twice as long as any inside the later blocks',
  none: 'no repetition found: one segment',
} as const;
/** Key of {@link SegmentMethod}. */
export type SegmentMethod = keyof typeof SegmentMethod;

/** A cut that was considered and not used, and why. */
export interface RefusedCut {
  readonly method: SegmentMethod;
  readonly segments: number;
  readonly reason: string;
}

/** One segment (repetition) of one device. */
export interface Segment {
  readonly capture_id: number;
  readonly device: number;
  /** 0-based; 0 is the first (often cold) pass. */
  readonly segment: number;
  /** `first` for segment 0 when there are several, else `steady`; `only` when just one. */
  readonly role: 'first' | 'steady' | 'only';
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly span_ns: bigint;
  readonly dispatch_count: number;
  /** Idle gap before it (null for the first). */
  readonly gap_before_ns: bigint | null;
  readonly first_submission_id: string | null;
  readonly last_submission_id: string | null;
  /** Same kernel sequence as segment 0. */
  readonly same_sequence_as_first: boolean;
}

/** The segmentation of one device. */
export interface DeviceSegmentation {
  readonly capture_id: number;
  readonly device: number;
  readonly label: string;
  readonly method: SegmentMethod;
  /** Dispatches per repetition when the blocks are equal, else null. */
  readonly period_dispatches: number | null;
  /** Every segment has the same kernel sequence. */
  readonly sequences_identical: boolean;
  /** The first segment is a cold pass: the later ones' kernels plus this many extra. */
  readonly cold_pass_extra_dispatches: number;
  /** Cuts considered and refused (unequal segments), with the reason. */
  readonly refused: readonly RefusedCut[];
  /** Count and min/median/max span of the segments. */
  readonly summary: { readonly count: number; readonly min_span_ns: bigint | null; readonly median_span_ns: bigint | null; readonly max_span_ns: bigint | null };
  readonly segments: readonly Segment[];
}

/** Segments of every selected device, and the ranges `--segment` chose. */
export interface ResolvedSegments {
  readonly segment: string;
  readonly devices: readonly DeviceSegmentation[];
  /** Selected ranges (all segments of every device for `all`). */
  readonly ranges: readonly SegmentRange[];
}

/** A parsed `--segment`. */
export type SegmentChoice = { kind: 'all' | 'first' | 'last' | 'steady' } | { kind: 'index'; index: number };

/** Parses `--segment` (all, first, last, steady, or an index). */
export function parseSegmentChoice(text: string | undefined): SegmentChoice {
  const t = (text ?? 'all').trim();
  if (t === 'all' || t === 'first' || t === 'last' || t === 'steady') return { kind: t };
  if (/^\d+$/.test(t)) return { kind: 'index', index: Number(t) };
  throw new TickwiseError('usage', analyzerMessages.badSegment(t));
}

function checkReps(reps: number | undefined): void {
  if (reps !== undefined && !(Number.isSafeInteger(reps) && reps >= 1)) throw new TickwiseError('usage', analyzerMessages.badReps(String(reps)));
}

let tableSeq = 0;
const MAX_BLOCKS = 1024;
const LONGEST_GAPS = 4096;
/** A boundary gap must be this many times longer than any gap inside a later block. */
const BOUNDARY_MARGIN = 2n;

/** Extra kernels a cold first pass may have over a later one: max(3, 5 % of a repetition). */
export function coldPassTolerance(periodDispatches: number): number {
  return Math.max(3, Math.ceil(periodDispatches * 0.05));
}

type SummaryRow = { segment: number; dispatch_count: number; start_ns: bigint; end_ns: bigint; gap_before_ns: bigint | null; first_submission_id: string | null; last_submission_id: string | null; sequence_hash: string };
type MarkerCounts = Record<HostMarkerKind, number>;

/** A device's longest gaps, longest first (ties: the earlier first), in typed arrays, with a lookup by position. */
class GapList {
  readonly length: number;
  /** Position and gap of the i-th longest. */
  private readonly posAt: Float64Array;
  private readonly gapAt: BigInt64Array;
  /** The same, sorted by position (for {@link at}). */
  private readonly byPos: Float64Array;
  private readonly byPosGap: BigInt64Array;

  constructor(rows: readonly { pos: number; gap_ns: bigint }[]) {
    this.length = rows.length;
    this.posAt = Float64Array.from(rows, (r) => r.pos);
    this.gapAt = BigInt64Array.from(rows, (r) => r.gap_ns);
    const order = Array.from(rows.keys()).sort((a, b) => rows[a]!.pos - rows[b]!.pos);
    this.byPos = Float64Array.from(order, (i) => rows[i]!.pos);
    this.byPosGap = BigInt64Array.from(order, (i) => rows[i]!.gap_ns);
  }

  pos(i: number): number {
    return this.posAt[i]!;
  }

  gap(i: number): bigint {
    return this.gapAt[i]!;
  }

  /** The gap before position `p`, when it is one of these. */
  at(p: number): bigint | undefined {
    let lo = 0;
    let hi = this.byPos.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.byPos[mid]! < p) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.byPos.length && this.byPos[lo] === p ? this.byPosGap[lo] : undefined;
  }
}

/** The questions a device's segmentation asks of its rows, and their answers' types. */
interface Questions {
  summary: { arg: readonly bigint[]; answer: SummaryRow[] };
  kernelSets: { arg: readonly bigint[]; answer: { segment: number; h: string }[] };
  firstTwo: { arg: readonly bigint[]; answer: { kernel: string; a: number; b: number }[] };
  periodic: { arg: number; answer: boolean };
  gaps: { arg: number; answer: GapList };
  cuts: { arg: MarkerKind; answer: bigint[] };
  submissionCount: { arg: null; answer: number };
}
type Kind = keyof Questions;
type Pending<K extends Kind = Kind> = { kind: K; dev: number; arg: Questions[K]['arg']; resolve: (v: Questions[K]['answer']) => void; reject: (e: unknown) => void };

const groupByDev = <R extends { dev: number }>(rows: readonly R[]): Map<number, R[]> => {
  const m = new Map<number, R[]>();
  for (const r of rows) {
    let xs = m.get(r.dev);
    if (xs === undefined) m.set(r.dev, (xs = []));
    xs.push(r);
  }
  return m;
};
const strip = <R extends { dev: number }>(r: R): Omit<R, 'dev'> => {
  const { dev: _dev, ...rest } = r;
  return rest;
};

/**
 * The selected rows of the devices being segmented, in one table, and the
 * questions their segmentations ask, answered in batches. Each device's
 * search runs on its own (an async function asking one question at a time);
 * the questions every device has asked by the time all of them wait are
 * answered together, one statement per kind of question. A thousand devices
 * take as many statements as one.
 */
class SegmentBatch {
  private pending: Pending[] = [];
  private scheduled = false;

  private constructor(
    private readonly store: Store,
    private readonly table: string,
    readonly devices: readonly DevicePlan[],
    readonly rowCounts: readonly number[],
    private readonly markerCounts: ReadonlyMap<number, MarkerCounts>,
  ) {}

  static async create(store: Store, spec: SelectionSpec, devices: readonly DevicePlan[]): Promise<SegmentBatch> {
    const table = `tw_segment_rows_${process.pid}_${++tableSeq}`;
    const key = (c: number, d: number) => `${c}/${d}`;
    const mine = new Set(devices.map((d) => key(d.capture_id, d.device)));
    const sources = spec.sources.filter((s) => mine.has(key(s.capture_id, s.device)));
    await store.run(`CREATE OR REPLACE TEMP TABLE ${table} AS ${segmentRowsSql(correlatedWorkSql({ sources, segments: null }, devices.length === 1 ? { capture_id: devices[0]!.capture_id, device: devices[0]!.device, queue: null } : undefined, 'kernels'), devices, true)}`);
    try {
      const counts = new Map((await store.query({ dev: 'number', n: 'number' }, segmentRowCountsSql(table))).map((r) => [r.dev, r.n]));
      const captures = [...new Set(devices.map((d) => d.capture_id))];
      const markers = new Map<number, MarkerCounts>();
      for (const c of captures) markers.set(c, { profiler_steps: 0, device_sync: 0, stream_sync: 0 });
      if (devices.some((_, i) => (counts.get(i) ?? 0) > 0)) {
        const mc = await store.query({ capture_id: 'number', profiler_steps: 'number', device_sync: 'number', stream_sync: 'number' }, markerCountsSql(captures));
        for (const r of mc) markers.set(r.capture_id, r);
      }
      return new SegmentBatch(store, table, devices, devices.map((_, i) => counts.get(i) ?? 0), markers);
    } catch (e) {
      await store.run(`DROP TABLE IF EXISTS ${table}`);
      throw e;
    }
  }

  /** The host markers of each kind in a device's capture. */
  markersOf(dev: number): MarkerCounts {
    return this.markerCounts.get(this.devices[dev]!.capture_id)!;
  }

  /** Asks a question about one device; answered with the other devices' questions of the same round. */
  ask<K extends Kind>(kind: K, dev: number, arg: Questions[K]['arg']): Promise<Questions[K]['answer']> {
    return new Promise((resolve, reject) => {
      this.pending.push({ kind, dev, arg, resolve, reject } as unknown as Pending);
      if (!this.scheduled) {
        this.scheduled = true;
        // after every device that can go on has asked its next question (continuations run before this)
        setImmediate(() => void this.flush());
      }
    });
  }

  private async flush(): Promise<void> {
    const asked = this.pending;
    this.pending = [];
    const answers = new Map<Pending, unknown>();
    let failure: { e: unknown } | null = null;
    try {
      const byKind = new Map<string, Pending[]>();
      for (const p of asked) {
        const k = p.kind === 'cuts' ? `cuts:${String(p.arg)}` : p.kind;
        let xs = byKind.get(k);
        if (xs === undefined) byKind.set(k, (xs = []));
        xs.push(p);
      }
      for (const ps of byKind.values()) {
        const got = await this.answer(ps[0]!.kind, ps);
        for (const p of ps) answers.set(p, got.get(p.dev));
      }
    } catch (e) {
      failure = { e };
    }
    this.scheduled = false;
    for (const p of asked) {
      if (failure) p.reject(failure.e);
      else p.resolve(answers.get(p) as never);
    }
  }

  /** One statement answering every device's question of a kind (`ps`: one per device). */
  private async answer(kind: Kind, ps: readonly Pending[]): Promise<Map<number, unknown>> {
    const t = this.table;
    const whole = ps.length === this.devices.length;
    const cut = () => ps.map((p) => ({ dev: p.dev, boundaries: p.arg as readonly bigint[] }));
    const per = <R extends { dev: number }, A>(rows: readonly R[], f: (rs: R[]) => A, none: A): Map<number, A> => {
      const g = groupByDev(rows);
      return new Map(ps.map((p) => [p.dev, g.has(p.dev) ? f(g.get(p.dev)!) : none]));
    };
    switch (kind) {
      case 'summary':
        return per(await this.store.query({ dev: 'number', ...SEGMENT_SUMMARY_SHAPE }, segmentSummarySql(t, cut(), whole)), (rs) => rs.map(strip), []);
      case 'kernelSets':
        return per(await this.store.query({ dev: 'number', segment: 'number', h: 'string' }, segmentKernelSetSql(t, cut(), whole)), (rs) => rs.map(strip), []);
      case 'firstTwo':
        return per(await this.store.query({ dev: 'number', kernel: 'string', a: 'number', b: 'number' }, firstTwoSegmentsKernelsSql(t, cut(), whole)), (rs) => rs.map(strip), []);
      case 'periodic':
        return per(await this.store.query({ dev: 'number', ...PERIODIC_SHAPE }, periodicSql(t, ps.map((p) => ({ dev: p.dev, period: p.arg as number })), whole)), (rs) => rs[0]!.distinct_blocks === 1, false);
      case 'gaps':
        return per(await this.store.query({ dev: 'number', ...LONG_GAP_SHAPE }, longestGapsSql(t, ps.map((p) => ({ dev: p.dev, limit: p.arg as number })), whole)), (rs) => new GapList(rs), new GapList([]));
      case 'cuts': {
        const reqs = ps.map((p) => ({ dev: p.dev, capture_id: this.devices[p.dev]!.capture_id }));
        return per(await this.store.query({ dev: 'number', pos: 'number' }, markerCutsSql(t, ps[0]!.arg as MarkerKind, reqs, whole)), (rs) => rs.map((r) => BigInt(r.pos)), []);
      }
      case 'submissionCount': {
        const reqs = ps.map((p) => ({ dev: p.dev, capture_id: this.devices[p.dev]!.capture_id }));
        // counted before they are read: a capture submitted dispatch by dispatch has as many cuts as rows
        return per(await this.store.query({ dev: 'number', n: 'number' }, `SELECT dev, count(*)::BIGINT AS n FROM (${markerCutsSql(t, 'submissions', reqs, whole)}) GROUP BY dev`), (rs) => rs[0]!.n, 0);
      }
    }
  }

  async drop(): Promise<void> {
    await this.store.run(`DROP TABLE IF EXISTS ${this.table}`);
  }
}

/** One device's side of a {@link SegmentBatch}. */
class DeviceRows {
  constructor(private readonly batch: SegmentBatch, private readonly dev: number) {}
  get n(): number {
    return this.batch.rowCounts[this.dev]!;
  }
  get markers(): MarkerCounts {
    return this.batch.markersOf(this.dev);
  }
  ask<K extends Kind>(kind: K, arg: Questions[K]['arg']): Promise<Questions[K]['answer']> {
    return this.batch.ask(kind, this.dev, arg);
  }
}

/** Segments 1..m-1 hold the same kernels (order aside: streams interleave differently from one repetition to the next). */
async function sameKernelSets(q: DeviceRows, boundaries: readonly bigint[]): Promise<boolean> {
  const hs = await q.ask('kernelSets', boundaries);
  return hs.slice(1).every((r) => r.h === hs[1]!.h);
}

/** Why the segments of a cut are not equal (null: equal), the cold pass's extra kernels, and the segments. */
async function judgeCut(q: DeviceRows, boundaries: readonly bigint[]): Promise<{ reason: string | null; extra: number; period: number | null; rows: SummaryRow[] }> {
  const rows = await q.ask('summary', boundaries);
  const refuse = (reason: string) => ({ reason, extra: 0, period: null, rows });
  if (rows.length < 2) return refuse('fewer than 2 segments');
  const later = rows.slice(1);
  const sizes = rows.map((r) => r.dispatch_count);
  const sizeText = () => {
    const uniq = [...new Set(sizes)];
    // not Math.min(...sizes): a cut at 250k submissions overflowed the call stack
    return uniq.length <= 6 ? sizes.slice(0, 8).join(', ') + (sizes.length > 8 ? ', ...' : '') : `${uniq.reduce((a, b) => Math.min(a, b))} to ${uniq.reduce((a, b) => Math.max(a, b))}`;
  };
  if (later.some((r) => r.dispatch_count !== later[0]!.dispatch_count)) return refuse(`segments of ${sizeText()} dispatches differ`);
  if (later.some((r) => r.sequence_hash !== later[0]!.sequence_hash) && !(await sameKernelSets(q, boundaries))) return refuse(`segments 1..${rows.length - 1} have ${later[0]!.dispatch_count} dispatches each but different kernel sequences`);
  const p = later[0]!.dispatch_count;
  const first = rows[0]!;
  if (first.dispatch_count === p && first.sequence_hash === later[0]!.sequence_hash) return { reason: null, extra: 0, period: p, rows };
  if (first.dispatch_count === p) {
    const hs = await q.ask('kernelSets', boundaries);
    if (hs.every((r) => r.h === hs[1]!.h)) return { reason: null, extra: 0, period: p, rows };
  }
  const extra = first.dispatch_count - p;
  const tol = coldPassTolerance(p);
  if (extra <= 0 || extra > tol) return refuse(`segment 0 has ${first.dispatch_count} dispatches, the others ${p} (a cold pass may add at most ${tol})`);
  const k = await q.ask('firstTwo', boundaries);
  const missing = k.filter((r) => r.a < r.b);
  if (missing.length > 0) return refuse(`segment 0 lacks kernels segment 1 has (${missing.slice(0, 2).map((r) => r.kernel).join(', ')})`);
  return { reason: null, extra, period: p, rows };
}

/**
 * The gap rows the devices searched at once may ask for together: each
 * device counts for its rows, up to the 4,096 longest gaps it reads (those
 * of a round arrive as one result of row objects: 1,000 devices at once held
 * 4 M rows). One device is always searched, whatever its count.
 */
const GAP_ROWS_AT_ONCE = 1 << 16;

/** Runs the functions given to it while their weights sum to at most `cap` (one at least), the others in the order they came. */
function limiter(cap: number): <T>(weight: number, f: () => Promise<T>) => Promise<T> {
  let used = 0;
  let running = 0;
  const waiting: { weight: number; go: () => void }[] = [];
  const next = () => {
    while (waiting.length > 0 && (running === 0 || used + waiting[0]!.weight <= cap)) {
      const w = waiting.shift()!;
      used += w.weight;
      running++;
      w.go();
    }
  };
  return async (weight, f) => {
    await new Promise<void>((go) => {
      waiting.push({ weight, go });
      next();
    });
    try {
      return await f();
    } finally {
      used -= weight;
      running--;
      next();
    }
  };
}

/**
 * The segmentations of devices, each found once per read-only store (one
 * report or verb asks for the same device's segments once per analysis: a
 * dozen times on a large store, seconds each). A writable store is never
 * memoized. The devices not found yet are segmented together (one
 * {@link SegmentBatch}); when several fail, the first device's error is thrown.
 */
async function segmentDevicesOnce(store: Store, spec: SelectionSpec, devices: readonly DevicePlan[], reps: number | undefined): Promise<PromiseSettledResult<DeviceSegmentation>[]> {
  const unfound: DevicePlan[] = [];
  // TICKWISE_SEGMENT_GAP_ROWS: another bound (the tests search a few devices at a time with it)
  const atOnce = limiter(Number(process.env['TICKWISE_SEGMENT_GAP_ROWS'] ?? '') || GAP_ROWS_AT_ONCE);
  let start!: (b: SegmentBatch) => void;
  let fail!: (e: unknown) => void;
  const ready = new Promise<SegmentBatch>((res, rej) => {
    start = res;
    fail = rej;
  });
  const found = devices.map((dev) => {
    // keyed by this device's own source only: its rows are read scoped to it, so the other devices
    // a plan selected do not change the answer (the report asks once for all devices, then per device)
    const own = spec.sources.filter((s) => s.capture_id === dev.capture_id && s.device === dev.device);
    const key = memoKey('segments', dev.capture_id, dev.device, dev.family, dev.time_source, reps ?? null, own);
    return readOnce(store, key, async () => {
      const i = unfound.push(dev) - 1;
      const batch = await ready;
      const rows = new DeviceRows(batch, i);
      return atOnce(Math.min(rows.n, LONGEST_GAPS), () => segmentDevice(rows, dev, reps));
    });
  });
  let batch: SegmentBatch | null = null;
  if (unfound.length > 0) {
    try {
      batch = await SegmentBatch.create(store, spec, unfound);
      start(batch);
    } catch (e) {
      fail(e);
    }
  }
  const settled = await Promise.allSettled(found);
  if (batch) await batch.drop();
  return settled;
}

/** The segmentations, or the first device's error. */
function allOrFirstError(settled: readonly PromiseSettledResult<DeviceSegmentation>[]): DeviceSegmentation[] {
  const failed = settled.find((s) => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<DeviceSegmentation>).value);
}

async function segmentDevice(q: DeviceRows, dev: DevicePlan, reps: number | undefined): Promise<DeviceSegmentation> {
  const where = whereLabel(dev);
  const n = q.n;
  let boundaries: bigint[] = [];
  let method: SegmentMethod = 'none';
  let period: number | null = null;
  let coldExtra = 0;
  let summary: SummaryRow[] | null = null;
  const refused: RefusedCut[] = [];
  const multiples = (p: number, m: number, offset = 0) => Array.from({ length: m - 1 }, (_, i) => BigInt(p * (i + 1) + offset));
  let longest: GapList | null = null;
  /** m blocks of p rows (the first `offset` rows longer): cut at gaps, boundary gaps >= 2x every gap inside blocks 2..m. */
  const gapsFit = async (p: number, m: number, offset: number): Promise<boolean> => {
    const gaps = (longest ??= await q.ask('gaps', LONGEST_GAPS));
    let minBoundary: bigint | null = null;
    for (let i = 1; i < m; i++) {
      const g = gaps.at(p * i + offset);
      if (g === undefined) return false;
      if (minBoundary === null || g < minBoundary) minBoundary = g;
    }
    if (minBoundary === null) return false;
    // longest first: only the gaps down to half the shortest boundary can spoil the cut
    for (let k = 0; k < gaps.length; k++) {
      if (gaps.gap(k) * BOUNDARY_MARGIN <= minBoundary) break;
      const pos = gaps.pos(k);
      if (pos > p + offset && (pos - offset) % p !== 0) return false;
    }
    return true;
  };
  const accept = (m: SegmentMethod, b: bigint[], j: { period: number | null; extra: number; rows: SummaryRow[] }) => {
    boundaries = b;
    method = m;
    period = j.period;
    coldExtra = j.extra;
    summary = j.rows;
  };
  /** Marker cuts, in order; the first equal one (with `want` segments, when given) is used. */
  const tryMarkers = async (want: number | undefined, kinds: readonly MarkerKind[]): Promise<boolean> => {
    for (const kind of kinds) {
      if (kind !== 'submissions' && q.markers[kind] === 0) continue;
      if (kind === 'submissions') {
        const count = await q.ask('submissionCount', null);
        if (count === 0 || (want !== undefined && count + 1 !== want)) continue;
        // fewer than two dispatches per submission on average: no sequence to repeat (and judging 10^5 cuts would cost seconds)
        if ((count + 1) * 2 > n) {
          refused.push({ method: kind, segments: count + 1, reason: 'one dispatch per submission: not a repeated sequence' });
          continue;
        }
      }
      const cuts = await q.ask('cuts', kind);
      if (cuts.length === 0) continue;
      if (want !== undefined && cuts.length + 1 !== want) continue;
      const j = await judgeCut(q, cuts);
      // one dispatch per submission is not a repetition of a sequence (a single pass submitted dispatch by dispatch)
      if (kind === 'submissions' && j.reason === null && (j.period ?? 0) < 2) {
        refused.push({ method: kind, segments: cuts.length + 1, reason: 'one dispatch per submission: not a repeated sequence' });
        continue;
      }
      if (j.reason === null) {
        accept(kind, cuts, j);
        return true;
      }
      refused.push({ method: kind, segments: cuts.length + 1, reason: j.reason });
    }
    return false;
  };
  /** Periodic blocks (smallest m first), the first block allowed a cold pass's extra rows. */
  const tryPeriodic = async (ms: number[]): Promise<boolean> => {
    for (const m of ms) {
      for (let offset = 0; offset <= coldPassTolerance(Math.floor(n / m)); offset++) {
        if ((n - offset) % m !== 0) continue;
        const p = (n - offset) / m;
        if (p < 2) continue;
        if (offset === 0 ? !(await gapsFit(p, m, 0)) || !(await q.ask('periodic', p)) : !(await gapsFit(p, m, offset))) continue;
        const b = multiples(p, m, offset);
        const j = await judgeCut(q, b);
        if (j.reason === null) {
          accept(reps === undefined ? 'detected' : 'reps', b, j);
          return true;
        }
      }
    }
    return false;
  };
  if (n === 0) {
    method = 'none';
  } else if (reps !== undefined) {
    if (reps > 1 && !(await tryMarkers(reps, Object.keys(MarkerKind) as MarkerKind[]))) {
      const gaps = await q.ask('gaps', reps - 1);
      if (gaps.length < reps - 1) throw new TickwiseError('usage', analyzerMessages.tooFewGaps(where, reps, gaps.length));
      const longest = Array.from({ length: gaps.length }, (_, k) => BigInt(gaps.pos(k))).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      const j = await judgeCut(q, longest);
      if (j.reason === null) accept('reps', longest, j);
      else if (!(await tryPeriodic([reps]))) {
        const why = [`the ${reps - 1} longest idle gaps: ${j.reason}`, ...refused.map((r) => `${r.method}: ${r.reason}`)].join('; ');
        throw new TickwiseError('unequal-segments', `${where}: --reps ${reps}: no cut into ${reps} equal repetitions, so none is used (${why}); run tickwise segments without --reps to see what is found`);
      }
    }
  } else if (!(await tryMarkers(undefined, HOST_MARKER_KINDS))) {
    const ms: number[] = [];
    for (let m = 2; m <= Math.min(n, MAX_BLOCKS); m++) ms.push(m);
    // periodicity before submissions: the coarsest repetition first (a prefill of several submissions)
    if (!(await tryPeriodic(ms))) await tryMarkers(undefined, ['submissions']);
  }
  // the accepted cut's segments were read when it was judged; one segment otherwise
  const rows: SummaryRow[] = n === 0 ? [] : summary ?? (await q.ask('summary', boundaries));
  const ref = rows[1] ?? rows[0];
  const segments: Segment[] = rows.map((r, i) => ({
    capture_id: dev.capture_id,
    device: dev.device,
    segment: r.segment,
    role: rows.length === 1 ? 'only' : i === 0 ? 'first' : 'steady',
    start_ns: r.start_ns,
    end_ns: r.end_ns,
    span_ns: r.end_ns - r.start_ns,
    dispatch_count: r.dispatch_count,
    gap_before_ns: i === 0 ? null : r.gap_before_ns,
    first_submission_id: r.first_submission_id,
    last_submission_id: r.last_submission_id,
    same_sequence_as_first: r.sequence_hash === rows[0]!.sequence_hash && r.dispatch_count === rows[0]!.dispatch_count,
  }));
  const spans = segments.map((x) => x.span_ns).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    capture_id: dev.capture_id,
    device: dev.device,
    label: dev.label,
    method,
    period_dispatches: period,
    sequences_identical: segments.every((x) => x.same_sequence_as_first) && rows.every((r) => r.sequence_hash === ref!.sequence_hash),
    cold_pass_extra_dispatches: coldExtra,
    refused,
    summary: { count: spans.length, min_span_ns: spans[0] ?? null, median_span_ns: spans.length ? spans[Math.floor((spans.length - 1) / 2)]! : null, max_span_ns: spans[spans.length - 1] ?? null },
    segments,
  };
}

function rangesOf(seg: DeviceSegmentation, choice: SegmentChoice): SegmentRange[] {
  const all = seg.segments;
  const where = whereLabel(seg);
  let picked: Segment[];
  switch (choice.kind) {
    case 'all':
      picked = [...all];
      break;
    case 'first':
      picked = all.slice(0, 1);
      break;
    case 'last':
      picked = all.slice(-1);
      break;
    case 'steady':
      if (all.length < 2) throw new TickwiseError('usage', analyzerMessages.noSteady(where));
      picked = all.slice(1);
      break;
    case 'index':
      if (choice.index >= all.length) throw new TickwiseError('usage', analyzerMessages.segmentOutOfRange(where, choice.index, all.length));
      picked = [all[choice.index]!];
      break;
  }
  return picked.map((s) => {
    const next = all[s.segment + 1];
    return { capture_id: s.capture_id, device: s.device, segment: s.segment, from_ns: s.start_ns, until_ns: next ? next.start_ns : null };
  });
}

/**
 * Finds the segments of every selected device and the ranges `--segment`
 * picks. `all` keeps every segment (with its label); `steady` refuses a
 * device with only one segment.
 */
export async function resolveSegments(
  store: Store,
  opts: SelectionOptions & { segment?: string | undefined; reps?: number | undefined },
): Promise<ResolvedSegments> {
  const choice = parseSegmentChoice(opts.segment);
  checkReps(opts.reps);
  const plan = await planSources(store, opts);
  const devices = allOrFirstError(await segmentDevicesOnce(store, plan.spec, plan.devices, opts.reps));
  // steady where it can be: a device with one segment (no repetition) is read whole, and the segment says so;
  // only when no selected device repeats is `steady` refused
  const single = devices.filter((d) => d.segments.length < 2);
  if (choice.kind === 'steady' && single.length > 0 && single.length < devices.length) {
    const ranges = devices.flatMap((d) => rangesOf(d, d.segments.length < 2 ? { kind: 'all' } : choice));
    return { segment: analyzerMessages.steadyWhereItCan(single.map((d) => whereLabel(d))), devices, ranges };
  }
  return { segment: opts.segment ?? 'all', devices, ranges: devices.flatMap((d) => rangesOf(d, choice)) };
}

/**
 * The segments of every device of these captures, found together (for
 * `check`, which reads every capture). A capture that cannot be segmented
 * (a device without a time base, nothing timed) is listed in `refused`, and
 * none of its devices in `devices`.
 */
export async function segmentCaptures(store: Store, captureIds: readonly number[]): Promise<{ devices: DeviceSegmentation[]; refused: number[] }> {
  const refused = new Set<number>();
  const wanted = new Set(captureIds);
  let plans: Omit<Plan, 'segment'>[];
  try {
    plans = [await planSources(store)];
  } catch (e) {
    if (!isTickwiseError(e)) throw e;
    // some capture cannot be planned: each on its own
    plans = [];
    for (const id of captureIds) {
      try {
        plans.push(await planSources(store, { captureId: id }));
      } catch (e2) {
        if (!isTickwiseError(e2)) throw e2;
        refused.add(id);
      }
    }
  }
  const devices = plans.flatMap((p) => p.devices).filter((d) => wanted.has(d.capture_id));
  const spec: SelectionSpec = { sources: plans.flatMap((p) => p.spec.sources).filter((s) => wanted.has(s.capture_id)), segments: null };
  const settled = await segmentDevicesOnce(store, spec, devices, undefined);
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') return;
    if (!isTickwiseError(s.reason)) throw s.reason;
    refused.add(devices[i]!.capture_id);
  });
  const found = settled.flatMap((s, i) => (s.status === 'fulfilled' && !refused.has(devices[i]!.capture_id) ? [s.value] : []));
  return { devices: found, refused: captureIds.filter((id) => refused.has(id)) };
}

/** `tickwise segments`: every device's segments (see {@link resolveSegments}). */
export async function segments(store: Store, opts: SelectionOptions = {}): Promise<{ excluded_dispatches: number; devices: readonly DeviceSegmentation[] }> {
  const plan = await planSources(store, opts);
  const r = await resolveSegments(store, { ...opts, segment: 'all' });
  return { excluded_dispatches: plan.excluded_dispatches, devices: r.devices };
}
