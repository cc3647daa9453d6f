/**
 * Busy, idle and gaps per device and per queue.
 *
 * ```
 * planAnalysis --> every device-wide scope at once, then every queue scope of the devices with several queues:
 *   gapBucketsSql (one window pass over the rows, partitioned by scope, aggregated per log2 bucket)
 *   + segmentSpansSql
 *   [+ betweenBucketsSql for the scopes whose submission ids go backwards in start order]
 *   --> per scope: span, busy (union), idle, gaps, gaps over the threshold, by class, log2 histogram
 * ```
 * A fixed number of statements however many devices (a few per device, each
 * reading the whole table, took 30 s for 1000 devices); for up to 4 devices
 * the window statements run per device (see `deviceBatches`).
 */
import type { RowOf, Store } from '@tickwise/store';
import { ns, type Ns } from '@tickwise/time';
import { planAnalysis } from './plan';
import { readOnce } from './read-memo';
import type { DevicePlan, SelectionOptions } from './selection';
import { BETWEEN_BUCKET_ROW_SHAPE, GAP_BUCKET_ROW_SHAPE, GAP_ROW_SHAPE, QUEUE_SHAPE, SEGMENT_SPAN_SHAPE } from './shapes';
import { betweenBucketsSql, gapBucketsSql, gapListSql, idleBreakdownSql, segmentSpansSql, type GapScopeKind } from './sql/gaps';
import { deviceKey, groupBy, rowsOfBatches, type DeviceBatch } from './group';
import { devicesOnlySql } from './sql/selection';
import { correlatedWorkSql, DEFAULT_WORK, hostWorkCountSql, LAUNCH_CALL_PREDICATE, WorkSet, workRowsSql } from './sql/work';

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
  /** Always class gaps by submission spans (the general method; for tests). */
  readonly classifyBySpans?: boolean | undefined;
  /** Which device work counts as busy (default kernels). */
  readonly work?: WorkSet | undefined;
  /** Idle intervals shorter than this, launched in time, are kernel waits (default 30 ns, HTA's). */
  readonly kernelWaitNs?: bigint | undefined;
}

/** HTA's `consecutive_kernel_delay` default: 30 ns. */
export const DEFAULT_KERNEL_WAIT_NS = 30n;

/** Idle of one class of {@link IdleBreakdown}. */
export interface IdleClass {
  /** Gaps (> 0) of this class. */
  readonly gaps: number;
  readonly idle_ns: bigint;
  /** Every interval of this class summed, zero and negative ones too (HTA's sum). */
  readonly interval_ns: bigint;
}

/**
 * Idle on a queue (stream) by what the next row waited for (HTA's idle-time
 * breakdown): host wait (its launch call came after the previous row on the
 * queue ended), kernel wait (launched in time, gap under the kernel-wait
 * threshold), other. Device-wide scopes sum their queues' breakdowns.
 */
export interface IdleBreakdown {
  readonly host_wait: IdleClass;
  readonly kernel_wait: IdleClass;
  readonly other: IdleClass;
  /** Rows after a predecessor on their queue that have a launch call (correlation). */
  readonly linked: number;
  readonly rows: number;
  readonly kernel_wait_threshold_ns: bigint;
  /**
   * The same classes as HTA gives them: HTA links a row to runtime launch
   * calls only (not driver calls such as cuLaunchKernelEx), so rows launched
   * by a driver call are never host waits there.
   */
  readonly hta: { readonly host_wait: IdleClass; readonly kernel_wait: IdleClass; readonly other: IdleClass };
  /** Rows linked to a driver launch call (cuLaunchKernelEx...), which HTA misses. */
  readonly driver_linked: number;
}

const BREAKDOWN_ROW_SHAPE = { capture_id: 'number', device: 'number', queue: 'number?', class: 'string', hta_class: 'string', driver: 'number', gaps: 'number', idle_ns: 'bigint', interval_ns: 'bigint', linked: 'number', rows: 'number' } as const;
type BreakdownRow = { capture_id: number; device: number; queue: number | null; class: string; hta_class: string; driver: number; gaps: number; idle_ns: bigint; interval_ns: bigint; linked: number; rows: number };

function breakdownOf(rows: readonly BreakdownRow[], thresholdNs: bigint): IdleBreakdown | null {
  const linked = rows.reduce((a, r) => a + r.linked, 0);
  if (linked === 0) return null;
  const cls = (c: string, key: 'class' | 'hta_class' = 'class'): IdleClass => {
    const xs = rows.filter((r) => r[key] === c);
    return { gaps: xs.reduce((a, r) => a + r.gaps, 0), idle_ns: xs.reduce((a, r) => a + r.idle_ns, 0n), interval_ns: xs.reduce((a, r) => a + r.interval_ns, 0n) };
  };
  return { host_wait: cls('host_wait'), kernel_wait: cls('kernel_wait'), other: cls('other'), linked, rows: rows.reduce((a, r) => a + r.rows, 0), kernel_wait_threshold_ns: thresholdNs,
    hta: { host_wait: cls('host_wait', 'hta_class'), kernel_wait: cls('kernel_wait', 'hta_class'), other: cls('other', 'hta_class') },
    driver_linked: rows.reduce((a, r) => a + r.driver, 0) };
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
  /** How gaps were classed (see {@link GapClassification}). */
  readonly gap_classification: GapClassification;
  /** Dispatches with no submission id (each counted as its own submission). */
  readonly dispatches_without_submission: number;
  /** False when no row carries a submission id: the between/within classes say nothing then. */
  readonly has_submissions: boolean;
  /** Idle by launch correlation (null: the source links no row to a launch call). */
  readonly idle_breakdown: IdleBreakdown | null;
  readonly histogram: readonly GapBucket[];
}

/** Result of {@link gaps}. */
export interface GapsResult {
  readonly threshold_ns: bigint;
  /** The device work counted as busy, and what that means. */
  readonly work: WorkSet;
  readonly work_meaning: string;
  readonly work_default: WorkSet;
  /** Copies/memsets of the selected devices that `work = kernels` leaves out. */
  readonly work_left_out: { readonly rows: number; readonly sum_dur_ns: bigint };
  readonly scopes: readonly GapScope[];
  readonly threshold_rule: string;
  readonly histogram_buckets: string;
  readonly segment: string;
  readonly excluded_dispatches: number;
}

function fraction(a: bigint, b: bigint): number | null {
  return b > 0n ? Number(a) / Number(b) : null;
}

/** How gaps were classed by submission. */
export const GapClassification = {
  adjacent: 'submission ids never go backwards in start order: a gap is within a submission when the rows on both sides share one',
  spans: 'gaps between submissions are the gaps of the union of submission spans',
} as const;
/** Key of {@link GapClassification}. */
export type GapClassification = keyof typeof GapClassification;

const sum = (xs: readonly bigint[]) => xs.reduce((a, b) => a + b, 0n);
const count = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

type BucketRow = RowOf<typeof GAP_BUCKET_ROW_SHAPE>;
type SpanRow = RowOf<typeof SEGMENT_SPAN_SHAPE>;
type BetweenRow = RowOf<typeof BETWEEN_BUCKET_ROW_SHAPE>;

/** Whether a scope's gaps need the general between-submissions pass (its ids go backwards, or several queues share it). */
function needsSpans(rows: readonly BucketRow[], singleQueue: boolean, forceSpans: boolean): boolean {
  return forceSpans || !singleQueue || count(rows.map((r) => r.rows_out_of_order)) > 0;
}

/** One scope's numbers from its rows of the three statements (`general`: its betweenBucketsSql rows, when it needs them). */
function scopeGaps(rows: readonly BucketRow[], spans: readonly SpanRow[], general: readonly BetweenRow[] | null, dev: DevicePlan, queue: number | null, breakdown: IdleBreakdown | null): GapScope {
  const buckets = rows.filter((r) => r.bucket !== null);
  let classification: GapClassification = 'adjacent';
  let between = new Map<number, { between_count: number; between_idle_ns: bigint; between_over_count: number; between_over_idle_ns: bigint }>(buckets.map((b) => [b.bucket!, b]));
  if (general !== null) {
    classification = 'spans';
    between = new Map(general.map((b) => [b.bucket, b]));
  }
  const b = [...between.values()];
  const span = sum(spans.map((s) => s.last_ns - s.first_ns));
  const idle = sum(buckets.map((r) => r.idle_ns));
  const gapCount = count(buckets.map((r) => r.rows));
  const overCount = count(buckets.map((r) => r.over_count));
  const overIdle = sum(buckets.map((r) => r.over_idle_ns));
  const bc = { count: count(b.map((x) => x.between_count)), idle: sum(b.map((x) => x.between_idle_ns)), over: count(b.map((x) => x.between_over_count)), overIdle: sum(b.map((x) => x.between_over_idle_ns)) };
  const maxGap = buckets.reduce<bigint | null>((m, r) => (r.max_gap_ns !== null && (m === null || r.max_gap_ns > m) ? r.max_gap_ns : m), null);
  return {
    capture_id: dev.capture_id,
    device: dev.device,
    queue,
    span_ns: span,
    busy_ns: span - idle,
    idle_ns: idle,
    idle_fraction: fraction(idle, span),
    gap_count: gapCount,
    gaps_over_threshold: { count: overCount, idle_ns: overIdle, share_of_idle: fraction(overIdle, idle) },
    kind: dev.kind,
    time_source: dev.time_source,
    dispatches: count(spans.map((s) => s.dispatches)),
    segments: spans.length,
    first_start_ns: spans.length ? spans.reduce((m, s) => (s.first_ns < m ? s.first_ns : m), spans[0]!.first_ns) : null,
    last_end_ns: spans.length ? spans.reduce((m, s) => (s.last_ns > m ? s.last_ns : m), spans[0]!.last_ns) : null,
    sum_dur_ns: sum(spans.map((s) => s.sum_dur_ns)),
    max_gap_ns: maxGap,
    between_submissions: { count: bc.count, idle_ns: bc.idle, over_threshold_count: bc.over, over_threshold_idle_ns: bc.overIdle },
    within_submission: { count: gapCount - bc.count, idle_ns: idle - bc.idle, over_threshold_count: overCount - bc.over, over_threshold_idle_ns: overIdle - bc.overIdle },
    gap_classification: classification,
    dispatches_without_submission: count(rows.map((r) => r.no_sub)),
    has_submissions: count(rows.map((r) => r.no_sub)) < count(spans.map((s) => s.dispatches)),
    idle_breakdown: breakdown,
    histogram: buckets.map((h) => {
      const bt = between.get(h.bucket!)?.between_count ?? 0;
      return {
        lo_ns: 1n << BigInt(h.bucket!),
        hi_ns: 1n << BigInt(h.bucket! + 1),
        count: h.rows,
        idle_ns: h.idle_ns,
        between_submissions_count: bt,
        within_submission_count: h.rows - bt,
      };
    }),
  };
}

/** Captures with at least one host launch call (a correlation source for the idle breakdown). */
function capturesWithLaunchCalls(store: Store): Promise<Set<number>> {
  return readOnce(store, 'captures-with-launch-calls', async () => new Set((await store.query({ capture_id: 'number' },
    `SELECT DISTINCT capture_id FROM host_events WHERE ${LAUNCH_CALL_PREDICATE} AND start_ns IS NOT NULL`)).map((r) => r.capture_id)));
}

/** Rows grouped by scope (see {@link scopeKey}). */
function byScope<R extends { capture_id: number; device: number; queue: number | null }>(rows: readonly R[]): Map<string, R[]> {
  return groupBy(rows, (r) => scopeKey(r.capture_id, r.device, r.queue));
}

/** `capture_id/device/queue`, the queue empty for a device-wide scope. */
function scopeKey(captureId: number, device: number, queue: number | null): string {
  return `${captureId}/${device}/${queue ?? ''}`;
}

/**
 * Busy time (union), span, idle and gaps per device, and per queue of each
 * device; gaps classed as between submissions or within one; a log2
 * histogram of gap lengths. With `--segment` other than `all`, each chosen
 * segment is its own timeline and the numbers add up over them.
 */
export async function gaps(store: Store, opts: GapsOptions = {}): Promise<GapsResult> {
  const threshold = opts.thresholdNs ?? DEFAULT_GAP_THRESHOLD_NS;
  const work = opts.work ?? DEFAULT_WORK;
  const kernelWait = opts.kernelWaitNs ?? DEFAULT_KERNEL_WAIT_NS;
  const forceSpans = opts.classifyBySpans === true;
  const plan = await planAnalysis(store, opts);
  const leftOut = (await store.query({ n: 'number', sum_dur_ns: 'bigint' }, hostWorkCountSql(plan.spec)))[0]!;
  const n = plan.devices.length;
  const all = workRowsSql(plan.spec, undefined, work);
  const queuesOf = groupBy(await store.query(QUEUE_SHAPE, `SELECT capture_id, device, queue, count(*)::BIGINT AS dispatches FROM (${all}) GROUP BY ALL ORDER BY capture_id, device, queue`), deviceKey);
  const queues = (d: DevicePlan) => queuesOf.get(deviceKey(d)) ?? [];

  // the idle breakdown of the devices whose capture has launch calls (no launch call, no correlation: null, no query)
  const launching = await capturesWithLaunchCalls(store);
  const linkedDevices = plan.devices.filter((d) => launching.has(d.capture_id));
  const bd = (await rowsOfBatches(linkedDevices, n, (b) => store.query(BREAKDOWN_ROW_SHAPE,
    idleBreakdownSql(b.select((sc) => correlatedWorkSql(plan.spec, sc, work), correlatedWorkSql(plan.spec, undefined, work)), kernelWait, b.oneDevice)))) as BreakdownRow[];
  const bdByDevice = groupBy(bd, deviceKey);
  const bdOf = (d: DevicePlan) => bdByDevice.get(deviceKey(d)) ?? [];

  // the window statements: one per device when there are few, else one for all (see deviceBatches)
  const selectionOf = (b: DeviceBatch) => b.select((sc) => workRowsSql(plan.spec, sc, work), all);
  /** Scopes of one kind over the given devices: three statements (or three per device, for a few). */
  const scopesOf = async (by: GapScopeKind, devices: readonly DevicePlan[], single: (d: DevicePlan) => boolean) => {
    if (devices.length === 0) return { rows: new Map<string, BucketRow[]>(), spans: new Map<string, SpanRow[]>(), general: new Map<string, BetweenRow[]>() };
    const rows = byScope(await rowsOfBatches(devices, n, (b) => store.query(GAP_BUCKET_ROW_SHAPE, gapBucketsSql(selectionOf(b), threshold, by, b.oneDevice))));
    const rowsByDevice = groupBy([...rows], ([, r]) => deviceKey(r[0]!));
    const spans = byScope(await store.query(SEGMENT_SPAN_SHAPE, segmentSpansSql(devicesOnlySql(all, devices, n), by)));
    const needing = devices.filter((d) => [...(rowsByDevice.get(deviceKey(d)) ?? [])].some(([, r]) => needsSpans(r, single(d), forceSpans)));
    const general = byScope(await rowsOfBatches(needing, n, (b) => store.query(BETWEEN_BUCKET_ROW_SHAPE, betweenBucketsSql(selectionOf(b), threshold, by, b.oneDevice))));
    return { rows, spans, general };
  };
  const one = (d: DevicePlan) => queues(d).length <= 1;
  const wide = await scopesOf('device', plan.devices, one);
  // queue scopes: the devices with several queues (a device with one named queue is that queue)
  const multi = plan.devices.filter((d) => !one(d) && queues(d).some((q) => q.queue !== null));
  const perQueue = await scopesOf('queue', multi, () => true);
  const scopeOf = (set: typeof wide, d: DevicePlan, queue: number | null, single: boolean, breakdown: IdleBreakdown | null): GapScope => {
    const key = scopeKey(d.capture_id, d.device, queue);
    const rows = set.rows.get(key) ?? [];
    return scopeGaps(rows, set.spans.get(key) ?? [], needsSpans(rows, single, forceSpans) ? set.general.get(key) ?? [] : null, d, queue, breakdown);
  };

  const scopes: GapScope[] = [];
  for (const dev of plan.devices) {
    const named = queues(dev).filter((q) => q.queue !== null);
    const b = bdOf(dev);
    const w = scopeOf(wide, dev, null, one(dev), breakdownOf(b, kernelWait));
    scopes.push(w);
    if (named.length === 1 && one(dev)) {
      scopes.push({ ...w, queue: named[0]!.queue });
      continue;
    }
    for (const q of named) scopes.push(scopeOf(perQueue, dev, q.queue, true, breakdownOf(b.filter((r) => r.queue === q.queue), kernelWait)));
  }
  return {
    threshold_ns: threshold,
    work,
    work_meaning: WorkSet[work],
    work_default: DEFAULT_WORK,
    work_left_out: work === 'kernels' ? { rows: leftOut.n, sum_dur_ns: leftOut.sum_dur_ns } : { rows: 0, sum_dur_ns: 0n },
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
export async function gapList(store: Store, opts: SelectionOptions & { readonly work?: WorkSet | undefined } = {}): Promise<GapRow[]> {
  const plan = await planAnalysis(store, opts);
  const out: GapRow[] = [];
  for (const dev of plan.devices) {
    const rows = await store.query(GAP_ROW_SHAPE, gapListSql(workRowsSql(plan.spec, { capture_id: dev.capture_id, device: dev.device, queue: null }, opts.work ?? DEFAULT_WORK)));
    for (const r of rows) out.push({ capture_id: dev.capture_id, device: dev.device, ...r });
  }
  return out;
}
