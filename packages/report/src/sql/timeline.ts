/**
 * Busy intervals of every device for the timeline charts, as SQL over a
 * selection (pure: no DuckDB here). A big capture has millions of
 * dispatches; a chart must stay small, so, per (capture, device):
 *
 * ```
 * dispatches (start order: row number, running max of earlier ends pm)
 *   --rows with start > pm (or first)--> busy blocks: maximal intervals with >= 1 dispatch in flight;
 *        a block ends at the next block start's pm, its gap before is start - pm
 *   --if more than maxIntervals blocks--> merge across the shortest gaps:
 *        T = the maxIntervals-th longest gap (the (blocks - maxIntervals)-th shortest);
 *        every gap <= T is closed, so at most maxIntervals intervals remain
 *   --> intervals (start_ns, end_ns, busy_ns, dispatches, blocks)
 * ```
 * A merged interval keeps its true busy time (busy_ns <= end_ns - start_ns):
 * the chart shades it by busy share, so merging never invents busy time.
 * Merged gaps are at most T long; T is returned with every row. One query
 * for all devices (one sort of the selection, partitioned), not one per
 * device each reading the whole table.
 */
import { partitionBy } from '@tickwise/analyzer';

/** Columns of {@link timelineIntervalsSql}'s rows. */
export const TIMELINE_INTERVAL_SHAPE = {
  capture_id: 'number',
  device: 'number',
  start_ns: 'bigint',
  end_ns: 'bigint',
  busy_ns: 'bigint',
  dispatches: 'number',
  blocks: 'number',
  merged_gap_max_ns: 'bigint?',
  raw_blocks: 'number',
} as const;

/**
 * SQL of the timeline intervals of every (capture_id, device) of
 * `selection` (rows with capture_id, device, start_ns, end_ns), at most
 * `maxIntervals` (>= 1) per device, ordered by capture, device and start.
 */
export function timelineIntervalsSql(selection: string, maxIntervals: number, oneDevice = false): string {
  const part = partitionBy(oneDevice);
  if (!Number.isSafeInteger(maxIntervals) || maxIntervals < 1) throw new RangeError(`maxIntervals must be a whole number >= 1, got ${maxIntervals}`);
  return `WITH w AS (
    SELECT capture_id, device, start_ns, end_ns, row_number() OVER o AS rn,
      max(end_ns) OVER (o ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm,
      count(*) OVER (${part}) AS n, max(end_ns) OVER (${part}) AS last_end
    FROM (${selection})
    WINDOW o AS (${part}ORDER BY start_ns, end_ns)
  ),
  blocks AS (
    SELECT capture_id, device, rn, start_ns, start_ns - pm AS gap_ns,
      coalesce(lead(pm) OVER b, last_end) AS end_ns, coalesce(lead(rn) OVER b, n + 1) - rn AS dispatches
    FROM w WHERE pm IS NULL OR start_ns > pm
    WINDOW b AS (${part}ORDER BY rn)
  ),
  t AS (
    SELECT capture_id, device, count(*) AS raw_blocks, max(gap_ns, ${maxIntervals})[${maxIntervals}] AS merge_ns FROM blocks GROUP BY capture_id, device
  ),
  m AS (
    SELECT b.*, t.merge_ns, t.raw_blocks,
      sum(CASE WHEN b.gap_ns IS NULL OR t.merge_ns IS NULL OR b.gap_ns > t.merge_ns THEN 1 ELSE 0 END)
        OVER (${oneDevice ? '' : 'PARTITION BY b.capture_id, b.device '}ORDER BY b.rn ROWS UNBOUNDED PRECEDING) AS interval_id
    FROM blocks b JOIN t ON t.capture_id = b.capture_id AND t.device = b.device
  )
  SELECT capture_id, device, min(start_ns) AS start_ns, max(end_ns) AS end_ns, sum(end_ns - start_ns)::BIGINT AS busy_ns,
    sum(dispatches)::BIGINT AS dispatches, count(*)::BIGINT AS blocks,
    any_value(merge_ns) AS merged_gap_max_ns, any_value(raw_blocks)::BIGINT AS raw_blocks
  FROM m GROUP BY capture_id, device, interval_id ORDER BY capture_id, device, start_ns`;
}
