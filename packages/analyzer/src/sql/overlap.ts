/**
 * Overlap, as SQL over a selection (pure).
 *
 * Within each device (`overlapDeviceSql`, every device of the selection in
 * one statement, each step partitioned by (capture, device)):
 * ```
 * rows in start order --running max of earlier ends (pm), next start--> one aggregate pass:
 *   busy              = union length
 *   overlapping rows  = pm > start OR next_start < end   (collected: the only rows that share time)
 * then, over the overlapping rows only:
 *   multi_inflight    = union of [start, min(end, pm)) where pm > start
 *   per-submission islands --same trick--> cross_submission_inflight
 *   +1/-1 events --running sum--> max_in_flight
 * ```
 * Across devices (`pairOverlapsSql`), every pair in one query: each
 * device's busy time as disjoint pieces (row j's part after every earlier
 * row's end, [max(start_j, pm_j), end_j)), then one range join of the pieces
 * of different devices, summing their intersections: |busy_a n busy_b|.
 */
import { EARLIER_ROWS, partitionBy, partitionColumns, prevEndMax } from './intervals';
import { SUBMISSION_KEY } from './selection';

const DEV = 'capture_id, device';

/** Union length per device of a relation of (capture_id, device, start_ns, end_ns) rows: rows `capture_id`, `device`, `len`. */
function unionLengthByDevice(relation: string, oneDevice: boolean): string {
  return `SELECT ${DEV}, sum(greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns))))::BIGINT AS len
    FROM (SELECT ${DEV}, start_ns, end_ns, ${prevEndMax(partitionColumns(oneDevice))} AS pm FROM ${relation}) GROUP BY ${DEV}`;
}

/**
 * SQL of each device's overlap numbers: one row per (capture_id, device)
 * with rows in the selection (see `OVERLAP_DEVICE_SHAPE`); a device with
 * none has no row. `oneDevice`: the selection is one device's (see `partitionBy`).
 */
export function overlapDeviceSql(selection: string, oneDevice = false): string {
  const contribution = 'greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns)))';
  return `WITH w AS (
    SELECT ${DEV}, start_ns, end_ns, queue, submission_id, rowid_key, max(end_ns) OVER w AS pm, lead(start_ns) OVER w AS next_start
    FROM (${selection}) WINDOW w AS (${partitionBy(oneDevice)}${EARLIER_ROWS})
  ),
  stats AS MATERIALIZED (
    SELECT ${DEV}, count(*) AS n, coalesce(sum(end_ns - start_ns), 0) AS sum_dur, coalesce(sum(${contribution}), 0) AS busy,
      list({'start_ns': start_ns, 'end_ns': end_ns, 'queue': queue, 'submission_id': submission_id, 'rowid_key': rowid_key, 'pm': pm})
        FILTER (WHERE pm > start_ns OR next_start < end_ns) AS ov_list
    FROM w GROUP BY ${DEV}
  ),
  ov AS MATERIALIZED (SELECT ${DEV}, unnest(ov_list, recursive := true) FROM stats),
  multi AS (SELECT ${DEV}, start_ns, least(end_ns, pm) AS end_ns FROM ov WHERE pm > start_ns),
  si AS (
    SELECT ${DEV}, queue, submission_id, rowid_key, start_ns, end_ns,
      max(end_ns) OVER (${partitionBy(oneDevice, SUBMISSION_KEY)}${EARLIER_ROWS}) AS spm
    FROM ov
  ),
  sil AS (
    SELECT ${DEV}, queue, submission_id, rowid_key, start_ns, end_ns,
      sum(CASE WHEN spm IS NULL OR spm < start_ns THEN 1 ELSE 0 END) OVER (${partitionBy(oneDevice, SUBMISSION_KEY)}ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
    FROM si
  ),
  isl AS (SELECT ${DEV}, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sil GROUP BY ${DEV}, ${SUBMISSION_KEY}, island),
  iw AS (SELECT ${DEV}, start_ns, end_ns, ${prevEndMax(partitionColumns(oneDevice))} AS pm FROM isl),
  cross_sub AS (SELECT ${DEV}, start_ns, least(end_ns, pm) AS end_ns FROM iw WHERE pm > start_ns),
  ev AS (SELECT ${DEV}, start_ns AS t, 1 AS d FROM ov UNION ALL SELECT ${DEV}, end_ns AS t, -1 AS d FROM ov),
  inflight AS (SELECT ${DEV}, max(c) AS m FROM (SELECT ${DEV}, sum(d) OVER (${partitionBy(oneDevice)}ORDER BY t, d ROWS UNBOUNDED PRECEDING) AS c FROM ev) GROUP BY ${DEV})
  SELECT s.capture_id, s.device, s.n::BIGINT AS dispatches, s.sum_dur::BIGINT AS sum_dur_ns, s.busy::BIGINT AS busy_ns,
    coalesce(m.len, 0)::BIGINT AS multi_inflight_ns,
    coalesce(x.len, 0)::BIGINT AS cross_submission_inflight_ns,
    coalesce(len(s.ov_list), 0)::BIGINT AS overlapping_dispatches,
    greatest(1, coalesce(i.m, 1))::BIGINT AS max_in_flight
  FROM stats s
    LEFT JOIN (${unionLengthByDevice('multi', oneDevice)}) m ON m.capture_id = s.capture_id AND m.device = s.device
    LEFT JOIN (${unionLengthByDevice('cross_sub', oneDevice)}) x ON x.capture_id = s.capture_id AND x.device = s.device
    LEFT JOIN inflight i ON i.capture_id = s.capture_id AND i.device = s.device
  ORDER BY s.capture_id, s.device`;
}

/**
 * SQL of each device's busy time as disjoint pieces: row j's part after
 * every earlier row's end, [max(start_j, pm_j), end_j), when not empty.
 * Rows `k` (the device's rank in (capture_id, device) order), `capture_id`,
 * `device`, `s`, `e`. From a selection of any number of devices.
 */
export function busyPiecesSql(selection: string): string {
  return `SELECT k, capture_id, device, greatest(start_ns, coalesce(pm, start_ns)) AS s, end_ns AS e FROM (
      SELECT k, capture_id, device, start_ns, end_ns, ${prevEndMax('k')} AS pm FROM (
        SELECT dense_rank() OVER (ORDER BY capture_id, device) AS k, capture_id, device, start_ns, end_ns FROM (${selection})))
    WHERE end_ns > greatest(start_ns, coalesce(pm, start_ns))`;
}

/**
 * SQL of the overlap of every pair of devices, from their busy pieces
 * (`pieces`: a table of {@link busyPiecesSql} rows): the time both are busy,
 * |busy_a n busy_b|, as rows `a_capture_id`, `a_device`, `b_capture_id`,
 * `b_device` (a before b in (capture_id, device) order), `overlap_ns`; a
 * pair that never overlaps has no row. A device's pieces are disjoint and
 * cover its busy time, so the sum of the pieces' intersections is the
 * pair's. One query for all pairs (a query per pair, each reading every
 * row, took 24 s for 64 devices of 500k kernels). The join has the two range
 * conditions only (each pair met in both orders, each piece with itself;
 * the order a < b is applied in the sum): with `a.k < b.k` as a third
 * condition DuckDB's range join ran over 5 minutes on 500k rows. `pieces`
 * should be a table, not a CTE: over a CTE DuckDB plans a piecewise merge
 * join, which compares every pair of rows the first condition passes.
 */
export function pairOverlapsSql(pieces: string): string {
  return `SELECT * FROM (
    SELECT a_capture_id, a_device, b_capture_id, b_device, sum(x)::BIGINT AS overlap_ns FROM (
      SELECT a.capture_id AS a_capture_id, a.device AS a_device, b.capture_id AS b_capture_id, b.device AS b_device,
        CASE WHEN a.k < b.k THEN least(a.e, b.e) - greatest(a.s, b.s) END AS x
      FROM ${pieces} a JOIN ${pieces} b ON a.s < b.e AND b.s < a.e)
    GROUP BY a_capture_id, a_device, b_capture_id, b_device)
  WHERE overlap_ns IS NOT NULL`;
}
