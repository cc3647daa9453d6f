/**
 * Segmentation of a capture into its repetitions (prefills): a warm-up or
 * cold first pass, then timed repetitions, each the same kernel sequence,
 * separated by long host gaps.
 *
 * ```
 * per device: rows in start order (pos, kernel, gap before, launch time) [temp table]
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
import { TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { memoKey, readOnce } from './read-memo';
import { planSources, whereLabel, type DevicePlan, type SelectionOptions } from './selection';
import { COUNT_SHAPE, LONG_GAP_SHAPE, PERIODIC_SHAPE, SEGMENT_SUMMARY_SHAPE } from './shapes';
import { segmentKernelSetSql, firstTwoSegmentsKernelsSql, longestGapsSql, MarkerKind, markerCountsSql, markerCutsSql, periodicSql, segmentRowsSql, segmentSummarySql } from './sql/segments';
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

/** Segments 1..m-1 hold the same kernels (order aside: streams interleave differently from one repetition to the next). */
async function sameKernelSets(store: Store, table: string, boundaries: readonly bigint[]): Promise<boolean> {
  const hs = await store.query({ segment: 'number', h: 'string' }, segmentKernelSetSql(table, boundaries));
  return hs.slice(1).every((r) => r.h === hs[1]!.h);
}

type SummaryRow = { segment: number; dispatch_count: number; sequence_hash: string };

/** Why the segments of a cut are not equal (null: equal), and the cold pass's extra kernels. */
async function judgeCut(store: Store, table: string, boundaries: readonly bigint[]): Promise<{ reason: string | null; extra: number; period: number | null }> {
  const rows = (await store.query(SEGMENT_SUMMARY_SHAPE, segmentSummarySql(table, boundaries))) as unknown as SummaryRow[];
  if (rows.length < 2) return { reason: 'fewer than 2 segments', extra: 0, period: null };
  const later = rows.slice(1);
  const sizes = rows.map((r) => r.dispatch_count);
  const sizeText = () => {
    const uniq = [...new Set(sizes)];
    return uniq.length <= 6 ? sizes.slice(0, 8).join(', ') + (sizes.length > 8 ? ', ...' : '') : `${Math.min(...sizes)} to ${Math.max(...sizes)}`;
  };
  if (later.some((r) => r.dispatch_count !== later[0]!.dispatch_count)) return { reason: `segments of ${sizeText()} dispatches differ`, extra: 0, period: null };
  if (later.some((r) => r.sequence_hash !== later[0]!.sequence_hash) && !(await sameKernelSets(store, table, boundaries))) return { reason: `segments 1..${rows.length - 1} have ${later[0]!.dispatch_count} dispatches each but different kernel sequences`, extra: 0, period: null };
  const p = later[0]!.dispatch_count;
  const first = rows[0]!;
  if (first.dispatch_count === p && first.sequence_hash === later[0]!.sequence_hash) return { reason: null, extra: 0, period: p };
  if (first.dispatch_count === p) {
    const hs = await store.query({ segment: 'number', h: 'string' }, segmentKernelSetSql(table, boundaries));
    if (hs.every((r) => r.h === hs[1]!.h)) return { reason: null, extra: 0, period: p };
  }
  const extra = first.dispatch_count - p;
  const tol = coldPassTolerance(p);
  if (extra <= 0 || extra > tol) return { reason: `segment 0 has ${first.dispatch_count} dispatches, the others ${p} (a cold pass may add at most ${tol})`, extra: 0, period: null };
  const k = await store.query({ kernel: 'string', a: 'number', b: 'number' }, firstTwoSegmentsKernelsSql(table, boundaries));
  const missing = k.filter((r) => r.a < r.b);
  if (missing.length > 0) return { reason: `segment 0 lacks kernels segment 1 has (${missing.slice(0, 2).map((r) => r.kernel).join(', ')})`, extra: 0, period: null };
  return { reason: null, extra, period: p };
}

/** The capture's host markers of each kind, counted once per read-only store (not once per device). */
function markerCounts(store: Store, captureId: number): Promise<Record<Exclude<MarkerKind, 'submissions'>, number>> {
  return readOnce(store, memoKey('marker-counts', captureId), async () =>
    (await store.query({ profiler_steps: 'number', device_sync: 'number', stream_sync: 'number' }, markerCountsSql(captureId)))[0]!);
}

/**
 * Segmentations already found in a read-only store (one report or verb asks
 * for the same device's segments once per analysis: a dozen times on a
 * large store, seconds each). A writable store is never memoized.
 */
function segmentDeviceOnce(store: Store, spec: SelectionSpec, dev: DevicePlan, reps: number | undefined): Promise<DeviceSegmentation> {
  // keyed by this device's own source only: its rows are read scoped to it, so the other devices
  // a plan selected do not change the answer (the report asks once for all devices, then per device)
  const own = spec.sources.filter((s) => s.capture_id === dev.capture_id && s.device === dev.device);
  const key = memoKey('segments', dev.capture_id, dev.device, dev.family, dev.time_source, reps ?? null, own);
  return readOnce(store, key, () => segmentDevice(store, spec, dev, reps));
}

async function segmentDevice(store: Store, spec: SelectionSpec, dev: DevicePlan, reps: number | undefined): Promise<DeviceSegmentation> {
  const table = `tw_segment_rows_${process.pid}_${++tableSeq}`;
  const where = whereLabel(dev);
  await store.run(`CREATE OR REPLACE TEMP TABLE ${table} AS ${segmentRowsSql(correlatedWorkSql({ sources: spec.sources, segments: null }, { capture_id: dev.capture_id, device: dev.device, queue: null }, 'kernels'), true)}`);
  try {
    const n = (await store.query(COUNT_SHAPE, `SELECT count(*) AS n FROM ${table}`))[0]!.n;
    let boundaries: bigint[] = [];
    let method: SegmentMethod = 'none';
    let period: number | null = null;
    let coldExtra = 0;
    const refused: RefusedCut[] = [];
    const multiples = (p: number, m: number, offset = 0) => Array.from({ length: m - 1 }, (_, i) => BigInt(p * (i + 1) + offset));
    let gapAt: Map<number, bigint> | null = null;
    /** m blocks of p rows (the first `offset` rows longer): cut at gaps, boundary gaps >= 2x every gap inside blocks 2..m. */
    const gapsFit = async (p: number, m: number, offset: number): Promise<boolean> => {
      gapAt ??= new Map((await store.query(LONG_GAP_SHAPE, longestGapsSql(table, LONGEST_GAPS))).map((g) => [g.pos, g.gap_ns]));
      let minBoundary: bigint | null = null;
      for (let i = 1; i < m; i++) {
        const g = gapAt.get(p * i + offset);
        if (g === undefined) return false;
        if (minBoundary === null || g < minBoundary) minBoundary = g;
      }
      if (minBoundary === null) return false;
      for (const [pos, g] of gapAt) if (pos > p + offset && (pos - offset) % p !== 0 && g * BOUNDARY_MARGIN > minBoundary) return false;
      return true;
    };
    const accept = (m: SegmentMethod, b: bigint[], j: { period: number | null; extra: number }) => {
      boundaries = b;
      method = m;
      period = j.period;
      coldExtra = j.extra;
    };
    let counts: Awaited<ReturnType<typeof markerCounts>> | null = null;
    /** Marker cuts, in order; the first equal one (with `want` segments, when given) is used. */
    const tryMarkers = async (want: number | undefined, kinds: readonly MarkerKind[]): Promise<boolean> => {
      for (const kind of kinds) {
        if (kind !== 'submissions' && (counts ??= await markerCounts(store, dev.capture_id))[kind] === 0) continue;
        const sql = markerCutsSql(table, kind, dev.capture_id);
        if (kind === 'submissions') {
          // counted before they are read: a capture submitted dispatch by dispatch has as many cuts as rows
          const count = (await store.query(COUNT_SHAPE, `SELECT count(*) AS n FROM (${sql})`))[0]!.n;
          if (count === 0 || (want !== undefined && count + 1 !== want)) continue;
          // fewer than two dispatches per submission on average: no sequence to repeat (and judging 10^5 cuts would cost seconds)
          if ((count + 1) * 2 > n) {
            refused.push({ method: kind, segments: count + 1, reason: 'one dispatch per submission: not a repeated sequence' });
            continue;
          }
        }
        const cuts = (await store.query({ pos: 'number' }, sql)).map((r) => BigInt(r.pos));
        if (cuts.length === 0) continue;
        if (want !== undefined && cuts.length + 1 !== want) continue;
        const j = await judgeCut(store, table, cuts);
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
          if (offset === 0 ? !(await gapsFit(p, m, 0)) || !(await periodicBlocks(p)) : !(await gapsFit(p, m, offset))) continue;
          const b = multiples(p, m, offset);
          const j = await judgeCut(store, table, b);
          if (j.reason === null) {
            accept(reps === undefined ? 'detected' : 'reps', b, j);
            return true;
          }
        }
      }
      return false;
    };
    const periodicBlocks = async (p: number) => (await store.query(PERIODIC_SHAPE, periodicSql(table, p)))[0]!.distinct_blocks === 1;
    if (n === 0) {
      method = 'none';
    } else if (reps !== undefined) {
      if (reps > 1 && !(await tryMarkers(reps, Object.keys(MarkerKind) as MarkerKind[]))) {
        const gaps = await store.query(LONG_GAP_SHAPE, longestGapsSql(table, reps - 1));
        if (gaps.length < reps - 1) throw new TickwiseError('usage', analyzerMessages.tooFewGaps(where, reps, gaps.length));
        const longest = gaps.map((g) => BigInt(g.pos)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const j = await judgeCut(store, table, longest);
        if (j.reason === null) accept('reps', longest, j);
        else if (!(await tryPeriodic([reps]))) {
          const why = [`the ${reps - 1} longest idle gaps: ${j.reason}`, ...refused.map((r) => `${r.method}: ${r.reason}`)].join('; ');
          throw new TickwiseError('unequal-segments', `${where}: --reps ${reps}: no cut into ${reps} equal repetitions, so none is used (${why}); run tickwise segments without --reps to see what is found`);
        }
      }
    } else if (!(await tryMarkers(undefined, ['profiler_steps', 'device_sync', 'stream_sync']))) {
      const ms: number[] = [];
      for (let m = 2; m <= Math.min(n, MAX_BLOCKS); m++) ms.push(m);
      // periodicity before submissions: the coarsest repetition first (a prefill of several submissions)
      if (!(await tryPeriodic(ms))) await tryMarkers(undefined, ['submissions']);
    }
    const rows = n === 0 ? [] : await store.query(SEGMENT_SUMMARY_SHAPE, segmentSummarySql(table, boundaries));
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
  } finally {
    await store.run(`DROP TABLE IF EXISTS ${table}`);
  }
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
  const devices: DeviceSegmentation[] = [];
  for (const d of plan.devices) devices.push(await segmentDeviceOnce(store, plan.spec, d, opts.reps));
  // steady where it can be: a device with one segment (no repetition) is read whole, and the segment says so;
  // only when no selected device repeats is `steady` refused
  const single = devices.filter((d) => d.segments.length < 2);
  if (choice.kind === 'steady' && single.length > 0 && single.length < devices.length) {
    const ranges = devices.flatMap((d) => rangesOf(d, d.segments.length < 2 ? { kind: 'all' } : choice));
    return { segment: analyzerMessages.steadyWhereItCan(single.map((d) => whereLabel(d))), devices, ranges };
  }
  return { segment: opts.segment ?? 'all', devices, ranges: devices.flatMap((d) => rangesOf(d, choice)) };
}

/** `tickwise segments`: every device's segments (see {@link resolveSegments}). */
export async function segments(store: Store, opts: SelectionOptions = {}): Promise<{ excluded_dispatches: number; devices: readonly DeviceSegmentation[] }> {
  const plan = await planSources(store, opts);
  const r = await resolveSegments(store, { ...opts, segment: 'all' });
  return { excluded_dispatches: plan.excluded_dispatches, devices: r.devices };
}
