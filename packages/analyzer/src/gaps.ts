/**
 * Busy, idle and gaps per device and per queue.
 *
 * ```
 * planAnalysis --> per (capture, device): device-wide scope, then each queue
 *   gapScopeSql (one window pass over the scope's rows, one GROUP BY per submission)
 *   --> span, busy (union), idle, gaps, gaps over the threshold, by class, log2 histogram
 * ```
 */
import { checkRows, type Store } from '@tickwise/store';
import { ns, type Ns } from '@tickwise/time';
import { planAnalysis } from './plan';
import type { DevicePlan, SelectionOptions } from './selection';
import { GAP_BUCKET_SHAPE, GAP_ROW_SHAPE, GAP_SCOPE_SHAPE, QUEUE_SHAPE } from './shapes';
import { gapListSql, gapScopeSql } from './sql/gaps';
import { selectionSql, type Scope } from './sql/selection';

/** Default `--min-gap`: 200 us. */
export const DEFAULT_GAP_THRESHOLD_NS: Ns = ns(200_000n);

/** How gaps are bucketed in histograms. */
export const GAP_HISTOGRAM_BUCKETS = 'powers of two: bucket k holds gaps with 2^k <= gap_ns < 2^(k+1)';
/** How the threshold compares. */
export const GAP_THRESHOLD_RULE = 'gap_ns > threshold_ns (strictly longer)';

/** Options of {@link gaps}. */
export interface GapsOptions extends SelectionOptions {
  /** Gaps strictly longer than this are reported separately (default 200 us). */
  readonly thresholdNs?: Ns | bigint | undefined;
}

/** Gaps of one class (between submissions, or within one). */
export interface GapClass {
  readonly count: number;
  readonly idle_ns: bigint;
  readonly over_threshold_count: number;
  readonly over_threshold_idle_ns: bigint;
}

/** One log2 histogram bucket. */
export interface GapBucket {
  readonly lo_ns: bigint;
  readonly hi_ns: bigint;
  readonly count: number;
  readonly idle_ns: bigint;
  readonly between_submissions_count: number;
  readonly within_submission_count: number;
}

/** Busy/idle/gaps of one scope. */
export interface GapScope {
  readonly capture_id: number;
  readonly device: number;
  /** null: the device-wide union over its queues. */
  readonly queue: number | null;
  readonly span_ns: bigint;
  readonly busy_ns: bigint;
  readonly idle_ns: bigint;
  readonly idle_fraction: number | null;
  readonly gap_count: number;
  readonly gaps_over_threshold: { readonly count: number; readonly idle_ns: bigint; readonly share_of_idle: number | null };
  readonly kind: string;
  readonly time_source: string;
  readonly dispatches: number;
  /** Segments this scope's numbers add up (1 without segmentation). */
  readonly segments: number;
  readonly first_start_ns: bigint | null;
  readonly last_end_ns: bigint | null;
  /** Plain sum of dispatch durations (>= busy_ns; the excess is overlap). */
  readonly sum_dur_ns: bigint;
  readonly max_gap_ns: bigint | null;
  readonly between_submissions: GapClass;
  readonly within_submission: GapClass;
  /** Dispatches with no submission id (each counted as its own submission). */
  readonly dispatches_without_submission: number;
  readonly histogram: readonly GapBucket[];
}

/** Result of {@link gaps}. */
export interface GapsResult {
  readonly threshold_ns: bigint;
  readonly scopes: readonly GapScope[];
  readonly threshold_rule: string;
  readonly histogram_buckets: string;
  readonly segment: string;
  readonly excluded_dispatches: number;
}

function fraction(a: bigint, b: bigint): number | null {
  return b > 0n ? Number(a) / Number(b) : null;
}

async function scopeGaps(store: Store, sql: string, dev: DevicePlan, queue: number | null): Promise<GapScope> {
  const r = (await store.query(GAP_SCOPE_SHAPE, sql))[0]!;
  const hist = checkRows(GAP_BUCKET_SHAPE, (r.histogram as Record<string, unknown>[] | null) ?? [], sql);
  const idle = r.gap_idle_ns;
  const busy = r.span_ns - idle;
  return {
    capture_id: dev.capture_id,
    device: dev.device,
    queue,
    span_ns: r.span_ns,
    busy_ns: busy,
    idle_ns: idle,
    idle_fraction: fraction(idle, r.span_ns),
    gap_count: r.gap_count,
    gaps_over_threshold: { count: r.over_count, idle_ns: r.over_idle_ns, share_of_idle: fraction(r.over_idle_ns, idle) },
    kind: dev.kind,
    time_source: dev.time_source,
    dispatches: r.dispatches,
    segments: r.segments,
    first_start_ns: r.first_start_ns,
    last_end_ns: r.last_end_ns,
    sum_dur_ns: r.sum_dur_ns,
    max_gap_ns: r.max_gap_ns,
    between_submissions: {
      count: r.between_count,
      idle_ns: r.between_idle_ns,
      over_threshold_count: r.between_over_count,
      over_threshold_idle_ns: r.between_over_idle_ns,
    },
    within_submission: {
      count: r.gap_count - r.between_count,
      idle_ns: idle - r.between_idle_ns,
      over_threshold_count: r.over_count - r.between_over_count,
      over_threshold_idle_ns: r.over_idle_ns - r.between_over_idle_ns,
    },
    dispatches_without_submission: r.dispatches_without_submission,
    histogram: hist.map((h) => ({
      lo_ns: h.lo_ns,
      hi_ns: h.hi_ns,
      count: h.count,
      idle_ns: h.idle_ns,
      between_submissions_count: h.between_count,
      within_submission_count: h.count - h.between_count,
    })),
  };
}

/**
 * Busy time (union), span, idle and gaps per device, and per queue of each
 * device; gaps classed as between submissions or within one; a log2
 * histogram of gap lengths. With `--segment` other than `all`, each chosen
 * segment is its own timeline and the numbers add up over them.
 */
export async function gaps(store: Store, opts: GapsOptions = {}): Promise<GapsResult> {
  const threshold = opts.thresholdNs ?? DEFAULT_GAP_THRESHOLD_NS;
  const plan = await planAnalysis(store, opts);
  const scopes: GapScope[] = [];
  for (const dev of plan.devices) {
    const deviceScope: Scope = { capture_id: dev.capture_id, device: dev.device, queue: null };
    const wide = await scopeGaps(store, gapScopeSql(selectionSql(plan.spec, deviceScope), threshold), dev, null);
    scopes.push(wide);
    const queues = await store.query(QUEUE_SHAPE, `SELECT capture_id, device, queue, count(*)::BIGINT AS dispatches FROM (${selectionSql(plan.spec, deviceScope)}) GROUP BY ALL ORDER BY queue`);
    const named = queues.filter((q) => q.queue !== null);
    if (named.length === 1 && queues.length === 1) {
      scopes.push({ ...wide, queue: named[0]!.queue });
      continue;
    }
    for (const q of named) {
      const scope: Scope = { ...deviceScope, queue: q.queue };
      scopes.push(await scopeGaps(store, gapScopeSql(selectionSql(plan.spec, scope), threshold), dev, q.queue));
    }
  }
  return {
    threshold_ns: threshold,
    scopes,
    threshold_rule: GAP_THRESHOLD_RULE,
    histogram_buckets: GAP_HISTOGRAM_BUCKETS,
    segment: plan.segment,
    excluded_dispatches: plan.excluded_dispatches,
  };
}

/** One gap, for listings. */
export interface GapRow {
  readonly capture_id: number;
  readonly device: number;
  readonly segment: number;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly gap_ns: bigint;
  readonly between_submissions: boolean;
}

/** Every gap of every selected device (device-wide), in time order. */
export async function gapList(store: Store, opts: SelectionOptions = {}): Promise<GapRow[]> {
  const plan = await planAnalysis(store, opts);
  const out: GapRow[] = [];
  for (const dev of plan.devices) {
    const rows = await store.query(GAP_ROW_SHAPE, gapListSql(selectionSql(plan.spec, { capture_id: dev.capture_id, device: dev.device, queue: null })));
    for (const r of rows) out.push({ capture_id: dev.capture_id, device: dev.device, ...r });
  }
  return out;
}
