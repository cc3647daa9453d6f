/**
 * Overlap, as SQL over a selection (pure).
 *
 * Within one device (`overlapDeviceSql`):
 * ```
 * rows in start order --running max of earlier ends (pm), next start--> one aggregate pass:
 *   busy              = union length (and its part inside each given time window)
 *   overlapping rows  = pm > start OR next_start < end   (collected: the only rows that share time)
 * then, over the overlapping rows only:
 *   multi_inflight    = union of [start, min(end, pm)) where pm > start
 *   per-submission islands --same trick--> cross_submission_inflight
 *   +1/-1 events --running sum--> max_in_flight
 * ```
 * Across two devices (`pairUnionSql`): inside the window W where both have
 * dispatches, overlap = busy_a(W) + busy_b(W) - busy(a u b)(W); rows outside
 * W cannot overlap the other device, so only rows inside W are read.
 */
import { EARLIER_ROWS, unionLengthSql } from './intervals';
import { sqlBigint } from './quote';
import { SUBMISSION_KEY } from './selection';

/** A half-open time window [lo_ns, hi_ns). */
export interface TimeWindow {
  readonly lo_ns: bigint;
  readonly hi_ns: bigint;
}

/**
 * SQL of one device's overlap numbers: one row (see `OVERLAP_DEVICE_SHAPE`),
 * plus `busy_in_w0_ns`, `busy_in_w1_ns`, ... for the given windows.
 */
export function overlapDeviceSql(selection: string, windows: readonly TimeWindow[] = []): string {
  const contribution = 'greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns)))';
  const inWindow = windows.map((w, i) => {
    const lo = sqlBigint(w.lo_ns);
    const hi = sqlBigint(w.hi_ns);
    return `coalesce(sum(greatest(0, least(end_ns, ${hi}) - greatest(start_ns, coalesce(pm, start_ns), ${lo}))), 0)::BIGINT AS busy_in_w${i}_ns`;
  });
  return `WITH w AS (
    SELECT start_ns, end_ns, queue, submission_id, rowid_key, max(end_ns) OVER w AS pm, lead(start_ns) OVER w AS next_start
    FROM (${selection}) WINDOW w AS (${EARLIER_ROWS})
  ),
  stats AS MATERIALIZED (
    SELECT count(*) AS n, coalesce(sum(end_ns - start_ns), 0) AS sum_dur, coalesce(sum(${contribution}), 0) AS busy,
      ${inWindow.map((x) => x + ',').join('\n      ')}
      list({'start_ns': start_ns, 'end_ns': end_ns, 'queue': queue, 'submission_id': submission_id, 'rowid_key': rowid_key, 'pm': pm})
        FILTER (WHERE pm > start_ns OR next_start < end_ns) AS ov_list
    FROM w
  ),
  ov AS MATERIALIZED (SELECT unnest(ov_list, recursive := true) FROM stats),
  multi AS (SELECT start_ns, least(end_ns, pm) AS end_ns FROM ov WHERE pm > start_ns),
  si AS (
    SELECT queue, submission_id, rowid_key, start_ns, end_ns,
      max(end_ns) OVER (PARTITION BY ${SUBMISSION_KEY} ${EARLIER_ROWS}) AS spm
    FROM ov
  ),
  sil AS (
    SELECT queue, submission_id, rowid_key, start_ns, end_ns,
      sum(CASE WHEN spm IS NULL OR spm < start_ns THEN 1 ELSE 0 END) OVER (PARTITION BY ${SUBMISSION_KEY} ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
    FROM si
  ),
  isl AS (SELECT min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sil GROUP BY ${SUBMISSION_KEY}, island),
  iw AS (SELECT start_ns, end_ns, max(end_ns) OVER (${EARLIER_ROWS}) AS pm FROM isl),
  cross_sub AS (SELECT start_ns, least(end_ns, pm) AS end_ns FROM iw WHERE pm > start_ns),
  ev AS (SELECT start_ns AS t, 1 AS d FROM ov UNION ALL SELECT end_ns AS t, -1 AS d FROM ov),
  inflight AS (SELECT max(c) AS m FROM (SELECT sum(d) OVER (ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS c FROM ev))
  SELECT stats.n::BIGINT AS dispatches, stats.sum_dur::BIGINT AS sum_dur_ns, stats.busy::BIGINT AS busy_ns,
    ${windows.map((_, i) => `stats.busy_in_w${i}_ns,`).join(' ')}
    ${unionLengthSql('multi')} AS multi_inflight_ns,
    ${unionLengthSql('cross_sub')} AS cross_submission_inflight_ns,
    coalesce(len(stats.ov_list), 0)::BIGINT AS overlapping_dispatches,
    CASE WHEN stats.n = 0 THEN 0 ELSE greatest(1, coalesce((SELECT m FROM inflight), 1)) END::BIGINT AS max_in_flight
  FROM stats`;
}

/** The first start and last end of a selection: one row, `first_ns`, `last_ns` (NULL when empty). */
export function selectionSpanSql(selection: string): string {
  return `SELECT min(start_ns) AS first_ns, max(end_ns) AS last_ns FROM (${selection})`;
}

/**
 * SQL of the union length, inside window `w`, of two selections together
 * (rows clipped to `w`): one row, `union_ns`.
 */
export function pairUnionSql(selectionA: string, selectionB: string, w: TimeWindow): string {
  const lo = sqlBigint(w.lo_ns);
  const hi = sqlBigint(w.hi_ns);
  const clip = (sel: string) => `SELECT greatest(start_ns, ${lo}) AS start_ns, least(end_ns, ${hi}) AS end_ns FROM (${sel}) WHERE end_ns > ${lo} AND start_ns < ${hi}`;
  return `WITH u AS (${clip(selectionA)} UNION ALL ${clip(selectionB)})
  SELECT ${unionLengthSql('u')} AS union_ns`;
}
