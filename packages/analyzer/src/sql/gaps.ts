/**
 * Busy, idle and gaps of one scope (a device, or one queue of it), as one
 * SQL statement over a selection (see `selection.ts`). Pure.
 *
 * ```
 * selected rows --start order, running max end--> gaps (idle between busy blocks)
 *               --GROUP BY submission--> submission spans --same pass--> gaps no submission covers
 *                                                                        = gaps BETWEEN submissions
 * gaps within a submission = all gaps - gaps between submissions (same lengths: exact)
 * ```
 * A gap between two dispatches is "within a submission" when some
 * submission has dispatches on both sides of it (a dependency bubble on the
 * device), else "between submissions" (the device waited for the host).
 * With segments, each segment is its own timeline: spans and gaps are summed
 * over segments and the idle between segments is not counted.
 */
import { EARLIER_ROWS, log2BucketSql, prevEndMax } from './intervals';
import { sqlBigint } from './quote';

/** SQL of the gap summary of one scope: one row (see `GAP_SCOPE_SHAPE`). */
export function gapScopeSql(selection: string, thresholdNs: bigint): string {
  const t = sqlBigint(thresholdNs);
  return `WITH sel AS (${selection}),
  w AS (
    SELECT segment, start_ns - max(end_ns) OVER w AS gap_ns, lag(segment) OVER w AS prev_segment
    FROM sel WINDOW w AS (${EARLIER_ROWS})
  ),
  g AS MATERIALIZED (SELECT gap_ns FROM w WHERE gap_ns > 0 AND prev_segment = segment),
  subs AS (SELECT segment, queue, sub_key, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sel GROUP BY segment, queue, sub_key),
  bw AS (SELECT start_ns - ${prevEndMax('segment')} AS gap_ns FROM subs),
  bg AS MATERIALIZED (SELECT gap_ns FROM bw WHERE gap_ns > 0),
  segs AS (
    SELECT segment, count(*) AS n, min(start_ns) AS first_ns, max(end_ns) AS last_ns, sum(dur_ns) AS sum_dur,
      count(*) FILTER (WHERE submission_id IS NULL) AS no_sub
    FROM sel GROUP BY segment
  ),
  ha AS (SELECT ${log2BucketSql('gap_ns')} AS bucket, count(*) AS n, sum(gap_ns) AS idle FROM g GROUP BY 1),
  hb AS (SELECT ${log2BucketSql('gap_ns')} AS bucket, count(*) AS n, sum(gap_ns) AS idle FROM bg GROUP BY 1)
  SELECT
    (SELECT coalesce(sum(n), 0) FROM segs)::BIGINT AS dispatches,
    (SELECT count(*) FROM segs)::BIGINT AS segments,
    (SELECT min(first_ns) FROM segs) AS first_start_ns,
    (SELECT max(last_ns) FROM segs) AS last_end_ns,
    (SELECT coalesce(sum(last_ns - first_ns), 0) FROM segs)::BIGINT AS span_ns,
    (SELECT coalesce(sum(sum_dur), 0) FROM segs)::BIGINT AS sum_dur_ns,
    (SELECT coalesce(sum(no_sub), 0) FROM segs)::BIGINT AS dispatches_without_submission,
    (SELECT count(*) FROM g)::BIGINT AS gap_count,
    (SELECT coalesce(sum(gap_ns), 0) FROM g)::BIGINT AS gap_idle_ns,
    (SELECT max(gap_ns) FROM g) AS max_gap_ns,
    (SELECT count(*) FROM g WHERE gap_ns > ${t})::BIGINT AS over_count,
    (SELECT coalesce(sum(gap_ns), 0) FROM g WHERE gap_ns > ${t})::BIGINT AS over_idle_ns,
    (SELECT count(*) FROM bg)::BIGINT AS between_count,
    (SELECT coalesce(sum(gap_ns), 0) FROM bg)::BIGINT AS between_idle_ns,
    (SELECT count(*) FROM bg WHERE gap_ns > ${t})::BIGINT AS between_over_count,
    (SELECT coalesce(sum(gap_ns), 0) FROM bg WHERE gap_ns > ${t})::BIGINT AS between_over_idle_ns,
    (SELECT list({'bucket': ha.bucket, 'lo_ns': 1::BIGINT << ha.bucket, 'hi_ns': 1::BIGINT << (ha.bucket + 1),
        'count': ha.n, 'idle_ns': ha.idle::BIGINT, 'between_count': coalesce(hb.n, 0), 'between_idle_ns': coalesce(hb.idle, 0)::BIGINT}
        ORDER BY ha.bucket)
      FROM ha LEFT JOIN hb USING (bucket)) AS histogram`;
}

/**
 * SQL listing every gap of one scope (start, end, length, class), in time
 * order; for `--list` style output and for tests. Same definitions as
 * {@link gapScopeSql}.
 */
export function gapListSql(selection: string): string {
  return `WITH sel AS (${selection}),
  w AS (
    SELECT segment, start_ns, start_ns - max(end_ns) OVER w AS gap_ns, lag(segment) OVER w AS prev_segment
    FROM sel WINDOW w AS (${EARLIER_ROWS})
  ),
  subs AS (SELECT segment, queue, sub_key, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sel GROUP BY segment, queue, sub_key),
  bg AS (SELECT segment, start_ns FROM (SELECT segment, start_ns, start_ns - ${prevEndMax('segment')} AS gap_ns FROM subs) WHERE gap_ns > 0)
  SELECT w.segment, w.start_ns - w.gap_ns AS start_ns, w.start_ns AS end_ns, w.gap_ns,
    (bg.start_ns IS NOT NULL) AS between_submissions
  FROM w LEFT JOIN bg ON bg.segment = w.segment AND bg.start_ns = w.start_ns
  WHERE w.gap_ns > 0 AND w.prev_segment = w.segment
  ORDER BY w.start_ns`;
}
