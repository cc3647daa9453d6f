/**
 * Overlap, as SQL over a selection (pure).
 *
 * Within one device (`overlapDeviceSql`):
 * ```
 * rows in start order --running max of earlier ends (pm), next start-->
 *   busy            = union length
 *   overlapping rows = pm > start OR next_start < end    (the only rows that can share time)
 *   multi_inflight  = union of [start, min(end, pm)) where pm > start
 *   per-submission islands of the overlapping rows --same trick--> cross_submission_inflight
 *   +1/-1 events of the overlapping rows --running sum--> max_in_flight
 * ```
 * Across two devices (`pairUnionSql`): overlap = busy_a + busy_b - busy(a u b).
 */
import { EARLIER_ROWS, unionLengthSql } from './intervals';

/** SQL of one device's overlap numbers: one row (see `OVERLAP_DEVICE_SHAPE`). */
export function overlapDeviceSql(selection: string): string {
  return `WITH sel AS (${selection}),
  w AS (
    SELECT start_ns, end_ns, queue, sub_key, max(end_ns) OVER w AS pm, lead(start_ns) OVER w AS next_start
    FROM sel WINDOW w AS (${EARLIER_ROWS})
  ),
  stats AS (
    SELECT count(*) AS n, coalesce(sum(end_ns - start_ns), 0) AS sum_dur,
      coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns)))), 0) AS busy
    FROM w
  ),
  ov AS MATERIALIZED (SELECT start_ns, end_ns, queue, sub_key, pm FROM w WHERE pm > start_ns OR next_start < end_ns),
  multi AS (SELECT start_ns, least(end_ns, pm) AS end_ns FROM ov WHERE pm > start_ns),
  si AS (
    SELECT queue, sub_key, start_ns, end_ns,
      max(end_ns) OVER (PARTITION BY queue, sub_key ${EARLIER_ROWS}) AS spm
    FROM ov
  ),
  sil AS (
    SELECT queue, sub_key, start_ns, end_ns,
      sum(CASE WHEN spm IS NULL OR spm < start_ns THEN 1 ELSE 0 END) OVER (PARTITION BY queue, sub_key ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
    FROM si
  ),
  isl AS (SELECT min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sil GROUP BY queue, sub_key, island),
  iw AS (SELECT start_ns, end_ns, max(end_ns) OVER (${EARLIER_ROWS}) AS pm FROM isl),
  cross_sub AS (SELECT start_ns, least(end_ns, pm) AS end_ns FROM iw WHERE pm > start_ns),
  ev AS (SELECT start_ns AS t, 1 AS d FROM ov UNION ALL SELECT end_ns AS t, -1 AS d FROM ov),
  inflight AS (SELECT max(c) AS m FROM (SELECT sum(d) OVER (ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS c FROM ev))
  SELECT stats.n::BIGINT AS dispatches, stats.sum_dur::BIGINT AS sum_dur_ns, stats.busy::BIGINT AS busy_ns,
    ${unionLengthSql('multi')} AS multi_inflight_ns,
    ${unionLengthSql('cross_sub')} AS cross_submission_inflight_ns,
    (SELECT count(*) FROM ov)::BIGINT AS overlapping_dispatches,
    CASE WHEN stats.n = 0 THEN 0 ELSE greatest(1, coalesce((SELECT m FROM inflight), 1)) END::BIGINT AS max_in_flight
  FROM stats`;
}

/** SQL of the union length of two selections together: one row, `union_ns`. */
export function pairUnionSql(selectionA: string, selectionB: string): string {
  return `WITH u AS (SELECT start_ns, end_ns FROM (${selectionA}) UNION ALL SELECT start_ns, end_ns FROM (${selectionB}))
  SELECT ${unionLengthSql('u')} AS union_ns`;
}
