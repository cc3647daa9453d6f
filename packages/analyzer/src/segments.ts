/**
 * Segmentation of a capture into its repetitions (prefills): a warm-up or
 * cold first pass, then timed repetitions, each the same kernel sequence,
 * separated by long host gaps.
 *
 * ```
 * per device: rows in start order (pos, kernel, gap before)        [temp table]
 *   --reps N given--> cut at the N-1 longest gaps; if those blocks differ, N equal
 *                identical blocks as below; else the longest-gap cut, flagged as differing
 *   --detect-->  smallest m >= 2 such that the rows split into m blocks of equal
 *                length P >= 2 at gaps, every block is the same kernel sequence, and
 *                every boundary gap is at least twice as long as any gap inside blocks
 *                2..m (the first block may hold a slow cold pass)
 *   --else--> one segment
 * ```
 */
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { planSources, whereLabel, type DevicePlan, type SelectionOptions } from './selection';
import { COUNT_SHAPE, LONG_GAP_SHAPE, PERIODIC_SHAPE, SEGMENT_SUMMARY_SHAPE } from './shapes';
import { longestGapsSql, periodicSql, segmentRowsSql, segmentSummarySql } from './sql/segments';
import { selectionSql, type SegmentRange, type SelectionSpec } from './sql/selection';

/** How a device's segments were found. */
export const SegmentMethod = {
  reps: 'the user gave --reps N and the kernel sequence repeats N times, cut at long gaps',
  reps_longest_gaps: 'the user gave --reps N; cut at the N-1 longest idle gaps, but the blocks are not the same kernel sequence',
  detected: 'found: identical kernel sequences separated by gaps at least twice as long as any inside the later blocks',
  none: 'no repetition found: one segment',
} as const;
/** Key of {@link SegmentMethod}. */
export type SegmentMethod = keyof typeof SegmentMethod;

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

async function segmentDevice(store: Store, spec: SelectionSpec, dev: DevicePlan, reps: number | undefined): Promise<DeviceSegmentation> {
  const table = `tw_segment_rows_${process.pid}_${++tableSeq}`;
  const where = whereLabel(dev);
  await store.run(`CREATE OR REPLACE TEMP TABLE ${table} AS ${segmentRowsSql(selectionSql({ sources: spec.sources, segments: null }, { capture_id: dev.capture_id, device: dev.device, queue: null }))}`);
  try {
    const n = (await store.query(COUNT_SHAPE, `SELECT count(*) AS n FROM ${table}`))[0]!.n;
    let boundaries: bigint[] = [];
    let method: SegmentMethod = 'none';
    let period: number | null = null;
    const periodic = async (p: number) => (await store.query(PERIODIC_SHAPE, periodicSql(table, p)))[0]!.distinct_blocks === 1;
    const multiples = (p: number, m: number) => Array.from({ length: m - 1 }, (_, i) => BigInt(p * (i + 1)));
    let gapAt: Map<number, bigint> | null = null;
    /** m blocks of p rows: cut at gaps, identical kernel sequences, boundary gaps >= 2x every gap inside blocks 2..m. */
    const equalBlocks = async (p: number, m: number): Promise<boolean> => {
      gapAt ??= new Map((await store.query(LONG_GAP_SHAPE, longestGapsSql(table, LONGEST_GAPS))).map((g) => [g.pos, g.gap_ns]));
      let minBoundary: bigint | null = null;
      for (let i = 1; i < m; i++) {
        const g = gapAt.get(p * i);
        if (g === undefined) return false;
        if (minBoundary === null || g < minBoundary) minBoundary = g;
      }
      if (minBoundary === null) return false;
      for (const [pos, g] of gapAt) if (pos > p && pos % p !== 0 && g * BOUNDARY_MARGIN > minBoundary) return false;
      return periodic(p);
    };
    if (n === 0) {
      method = 'none';
    } else if (reps !== undefined) {
      if (reps > 1) {
        const gaps = await store.query(LONG_GAP_SHAPE, longestGapsSql(table, reps - 1));
        if (gaps.length < reps - 1) throw new TickwiseError('usage', analyzerMessages.tooFewGaps(where, reps, gaps.length));
        const longest = gaps.map((g) => BigInt(g.pos)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        const p = n / reps;
        const atLongest = Number.isInteger(p) && longest.every((b, i) => b === BigInt(p * (i + 1))) && (await periodic(p));
        if (atLongest) {
          boundaries = longest;
          method = 'reps';
          period = p;
        } else if (Number.isInteger(p) && p >= 2 && (await equalBlocks(p, reps))) {
          boundaries = multiples(p, reps);
          method = 'reps';
          period = p;
        } else {
          boundaries = longest;
          method = 'reps_longest_gaps';
        }
      }
    } else {
      for (let m = 2; m <= Math.min(n, MAX_BLOCKS); m++) {
        if (n % m !== 0) continue;
        const p = n / m;
        if (p < 2) break;
        if (!(await equalBlocks(p, m))) continue;
        boundaries = multiples(p, m);
        method = 'detected';
        period = p;
        break;
      }
    }
    const rows = n === 0 ? [] : await store.query(SEGMENT_SUMMARY_SHAPE, segmentSummarySql(table, boundaries));
    const first = rows[0];
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
      same_sequence_as_first: r.sequence_hash === first!.sequence_hash && r.dispatch_count === first!.dispatch_count,
    }));
    return {
      capture_id: dev.capture_id,
      device: dev.device,
      label: dev.label,
      method,
      period_dispatches: period,
      sequences_identical: segments.every((s) => s.same_sequence_as_first),
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
  for (const d of plan.devices) devices.push(await segmentDevice(store, plan.spec, d, opts.reps));
  return { segment: opts.segment ?? 'all', devices, ranges: devices.flatMap((d) => rangesOf(d, choice)) };
}

/** `tickwise segments`: every device's segments (see {@link resolveSegments}). */
export async function segments(store: Store, opts: SelectionOptions = {}): Promise<{ excluded_dispatches: number; devices: readonly DeviceSegmentation[] }> {
  const plan = await planSources(store, opts);
  const r = await resolveSegments(store, { ...opts, segment: 'all' });
  return { excluded_dispatches: plan.excluded_dispatches, devices: r.devices };
}
