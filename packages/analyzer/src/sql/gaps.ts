/**
 * Busy, idle and gaps of each scope (each device, or each queue of each
 * device: `by`), as SQL over a selection of any number of devices (see
 * `selection.ts`), one statement for all scopes. Pure.
 *
 * ```
 * selected rows --start order: running max end, previous row's submission-->
 *   gap before row j = start_j - max(earlier ends), when > 0
 *   one row per log2 bucket of gap length (+ one for rows without a gap):
 *     counts, idle, over the threshold, classed by submission
 * segment spans: one GROUP BY segment
 * ```
 * A gap is "within a submission" when some submission has dispatches on
 * both sides of it (a dependency bubble on the device), else "between
 * submissions" (the device waited for the host). When submission ids never
 * go backwards in start order, every submission is one contiguous run of
 * rows, so a gap is within one exactly when the rows on both sides share a
 * submission: the fast path (`gapBucketsSql`, which also counts the rows
 * that break that order). Otherwise `betweenBucketsSql` finds the gaps
 * between submissions in general: the gaps of the union of submission spans
 * (same gaps, same lengths). With segments, each segment is its own
 * timeline: the idle between segments is not counted.
 */
import { EARLIER_ROWS, log2BucketSql, partitionBy, partitionColumns, prevEndMax } from './intervals';
import { sqlBigint } from './quote';
import { SUBMISSION_KEY } from './selection';

/**
 * The scopes a statement reports: every device (`queue` NULL in its rows:
 * the device-wide union of its queues) or every queue of every device.
 */
export type GapScopeKind = 'device' | 'queue';

/** Partition columns of a scope kind, and the `queue` column its rows carry. */
function scopeColumns(by: GapScopeKind): { more: string[]; queue: string } {
  return by === 'queue' ? { more: ['queue'], queue: 'queue' } : { more: [], queue: 'NULL::INTEGER AS queue' };
}

/**
 * One row per log2 bucket of gap length (`bucket` NULL: the rows with no gap
 * before them), see `GAP_BUCKET_ROW_SHAPE`. `rows_out_of_order` counts rows
 * whose submission id is lower than the previous row's, or missing; when it
 * is 0 the ids never go backwards (a sequence is non-decreasing when every
 * adjacent pair is), so each submission is one run of rows and the
 * `between_*` columns are exact.
 */
export function gapBucketsSql(selection: string, thresholdNs: bigint, by: GapScopeKind = 'device', oneDevice = false): string {
  const t = sqlBigint(thresholdNs);
  const { more, queue } = scopeColumns(by);
  return `WITH w AS (
    SELECT capture_id, device, ${queue}, segment, submission_id,
      start_ns - max(end_ns) OVER w AS gap_ns,
      lag(segment) OVER w AS prev_segment,
      lag(submission_id) OVER w AS prev_sub
    FROM (${selection}) WINDOW w AS (${partitionBy(oneDevice, ...more)}${EARLIER_ROWS})
  ),
  c AS (
    SELECT *,
      CASE WHEN gap_ns > 0 AND prev_segment = segment THEN ${log2BucketSql('gap_ns')} END AS bucket,
      NOT (submission_id IS NOT NULL AND submission_id = prev_sub) AS new_sub
    FROM w
  )
  SELECT capture_id, device, queue, bucket,
    count(*)::BIGINT AS rows,
    count(*) FILTER (WHERE submission_id IS NULL OR (prev_segment = segment AND submission_id < prev_sub))::BIGINT AS rows_out_of_order,
    count(*) FILTER (WHERE submission_id IS NULL)::BIGINT AS no_sub,
    coalesce(sum(gap_ns) FILTER (WHERE bucket IS NOT NULL), 0)::BIGINT AS idle_ns,
    max(gap_ns) FILTER (WHERE bucket IS NOT NULL) AS max_gap_ns,
    count(*) FILTER (WHERE bucket IS NOT NULL AND gap_ns > ${t})::BIGINT AS over_count,
    coalesce(sum(gap_ns) FILTER (WHERE bucket IS NOT NULL AND gap_ns > ${t}), 0)::BIGINT AS over_idle_ns,
    count(*) FILTER (WHERE bucket IS NOT NULL AND new_sub)::BIGINT AS between_count,
    coalesce(sum(gap_ns) FILTER (WHERE bucket IS NOT NULL AND new_sub), 0)::BIGINT AS between_idle_ns,
    count(*) FILTER (WHERE bucket IS NOT NULL AND new_sub AND gap_ns > ${t})::BIGINT AS between_over_count,
    coalesce(sum(gap_ns) FILTER (WHERE bucket IS NOT NULL AND new_sub AND gap_ns > ${t}), 0)::BIGINT AS between_over_idle_ns
  FROM c GROUP BY capture_id, device, queue, bucket ORDER BY capture_id, device, queue, bucket NULLS FIRST`;
}

/**
 * Gaps between submissions in general (any order of submission ids): the
 * gaps of the union of submission spans, per log2 bucket (see
 * `BETWEEN_BUCKET_ROW_SHAPE`).
 */
export function betweenBucketsSql(selection: string, thresholdNs: bigint, by: GapScopeKind = 'device', oneDevice = false): string {
  const t = sqlBigint(thresholdNs);
  const { more, queue } = scopeColumns(by);
  return `WITH subs AS (
    SELECT capture_id, device, segment, ${SUBMISSION_KEY}, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM (${selection})
    GROUP BY capture_id, device, segment, ${SUBMISSION_KEY}
  ),
  bg AS (SELECT capture_id, device, queue, gap_ns FROM (
    SELECT capture_id, device, ${queue}, start_ns - ${prevEndMax(partitionColumns(oneDevice, ...more, 'segment'))} AS gap_ns FROM subs) WHERE gap_ns > 0)
  SELECT capture_id, device, queue, ${log2BucketSql('gap_ns')} AS bucket,
    count(*)::BIGINT AS between_count, sum(gap_ns)::BIGINT AS between_idle_ns,
    count(*) FILTER (WHERE gap_ns > ${t})::BIGINT AS between_over_count,
    coalesce(sum(gap_ns) FILTER (WHERE gap_ns > ${t}), 0)::BIGINT AS between_over_idle_ns
  FROM bg GROUP BY ALL ORDER BY capture_id, device, queue, bucket`;
}

/** Per segment of each scope: dispatches, first start, last end, summed durations (see `SEGMENT_SPAN_SHAPE`). */
export function segmentSpansSql(selection: string, by: GapScopeKind = 'device'): string {
  const { queue } = scopeColumns(by);
  return `SELECT capture_id, device, ${queue}, segment, count(*)::BIGINT AS dispatches, min(start_ns) AS first_ns, max(end_ns) AS last_ns, sum(dur_ns)::BIGINT AS sum_dur_ns
    FROM (${selection}) GROUP BY ALL ORDER BY capture_id, device, queue, segment`;
}

/**
 * SQL listing every gap of one scope (start, end, length, class), in time
 * order, by the general definition (submission spans); for listings and
 * tests.
 */
export function gapListSql(selection: string): string {
  return `WITH sel AS (${selection}),
  w AS (
    SELECT segment, start_ns, start_ns - max(end_ns) OVER w AS gap_ns, lag(segment) OVER w AS prev_segment
    FROM sel WINDOW w AS (${EARLIER_ROWS})
  ),
  subs AS (
    SELECT segment, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sel
    GROUP BY segment, ${SUBMISSION_KEY}
  ),
  bg AS (SELECT segment, start_ns FROM (SELECT segment, start_ns, start_ns - ${prevEndMax('segment')} AS gap_ns FROM subs) WHERE gap_ns > 0)
  SELECT w.segment, w.start_ns - w.gap_ns AS start_ns, w.start_ns AS end_ns, w.gap_ns,
    (bg.start_ns IS NOT NULL) AS between_submissions
  FROM w LEFT JOIN bg ON bg.segment = w.segment AND bg.start_ns = w.start_ns
  WHERE w.gap_ns > 0 AND w.prev_segment = w.segment
  ORDER BY w.start_ns`;
}

/**
 * Idle gaps on each queue (stream) classed by what the next row waited for,
 * as HTA's idle-time breakdown does, over a relation of `correlatedWorkSql`
 * rows. Per queue (and segment), rows in start order; the gap before row j
 * is `start_j - end_{j-1}` (the previous row on that queue):
 * ```
 * host wait   : launch_j > end_{j-1}            (launched after the queue drained: the host was late)
 * kernel wait : not host wait and gap < delay   (back-to-back launch overhead)
 * other       : the rest (launched in time, yet the queue idled: waits on other queues, events, syncs)
 * ```
 * Rows with no launch call are never host waits. One row per (capture,
 * device, queue, class, hta_class): gaps (> 0), their idle, and `interval_ns` (every
 * interval summed, negative and zero ones included, as HTA sums them);
 * `linked` counts rows with a launch call. `hta_class` is the class HTA
 * itself gives: it links runtime calls only, so a row launched by a driver
 * call (`launch_op = 'cuda_driver'`: cuLaunchKernelEx, cuLaunchKernel) has
 * no launch time there.
 */
export function idleBreakdownSql(correlated: string, kernelWaitNs: bigint, oneDevice = false): string {
  return `WITH w AS (
    SELECT capture_id, device, queue, segment, start_ns, launch_ns, launch_op,
      lag(end_ns) OVER (${partitionBy(oneDevice, 'queue', 'segment')}ORDER BY start_ns, end_ns) AS prev_end
    FROM (${correlated})
  ),
  c AS (
    SELECT capture_id, device, queue, launch_ns, launch_op, start_ns - prev_end AS interval_ns,
      CASE WHEN launch_ns > prev_end THEN 'host_wait'
           WHEN start_ns - prev_end < ${sqlBigint(kernelWaitNs)} THEN 'kernel_wait'
           ELSE 'other' END AS class,
      CASE WHEN launch_ns > prev_end AND launch_op IS DISTINCT FROM 'cuda_driver' THEN 'host_wait'
           WHEN start_ns - prev_end < ${sqlBigint(kernelWaitNs)} THEN 'kernel_wait'
           ELSE 'other' END AS hta_class
    FROM w WHERE prev_end IS NOT NULL
  )
  SELECT capture_id, device, queue, class, hta_class, count(*) FILTER (WHERE interval_ns > 0)::BIGINT AS gaps,
    coalesce(sum(interval_ns) FILTER (WHERE interval_ns > 0), 0)::BIGINT AS idle_ns,
    sum(interval_ns)::BIGINT AS interval_ns, count(launch_ns)::BIGINT AS linked, count(*) FILTER (WHERE launch_op = 'cuda_driver')::BIGINT AS driver,
    count(*)::BIGINT AS rows
  FROM c GROUP BY ALL ORDER BY capture_id, device, queue NULLS FIRST, class, hta_class`;
}
