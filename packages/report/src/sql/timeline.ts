/**
 * Busy intervals of one device for a timeline chart, as SQL over a selection
 * (pure: no DuckDB here). A big capture has millions of dispatches; a chart
 * must stay small, so:
 *
 * ```
 * dispatches (start order, running max of earlier ends)
 *   --union--> busy blocks: maximal intervals with >= 1 dispatch in flight
 *   --if more than maxIntervals blocks--> merge across the shortest gaps:
 *        T = the (blocks - maxIntervals)-th shortest gap; every gap <= T is
 *        closed, so at most maxIntervals intervals remain
 *   --> intervals (start_ns, end_ns, busy_ns, dispatches, blocks)
 * ```
 * A merged interval keeps its true busy time (busy_ns <= end_ns - start_ns):
 * the chart shades it by busy share, so merging never invents busy time.
 * Merged gaps are at most T long; T is returned with every row.
 */

/** Columns of {@link timelineIntervalsSql}'s rows. */
export const TIMELINE_INTERVAL_SHAPE = {
  start_ns: 'bigint',
  end_ns: 'bigint',
  busy_ns: 'bigint',
  dispatches: 'number',
  blocks: 'number',
  merged_gap_max_ns: 'bigint?',
  raw_blocks: 'number',
} as const;

/**
 * SQL of one device's timeline intervals from `selection` (rows with
 * start_ns, end_ns), at most `maxIntervals` of them (>= 1).
 */
export function timelineIntervalsSql(selection: string, maxIntervals: number): string {
  if (!Number.isSafeInteger(maxIntervals) || maxIntervals < 1) throw new RangeError(`maxIntervals must be a whole number >= 1, got ${maxIntervals}`);
  return `WITH sel AS (SELECT start_ns, end_ns FROM (${selection})),
  w AS (
    SELECT start_ns, end_ns,
      max(end_ns) OVER (ORDER BY start_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
    FROM sel
  ),
  b AS (
    SELECT start_ns, end_ns,
      sum(CASE WHEN pm IS NULL OR start_ns > pm THEN 1 ELSE 0 END) OVER (ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS block
    FROM w
  ),
  blocks AS (
    SELECT block, min(start_ns) AS start_ns, max(end_ns) AS end_ns, count(*) AS dispatches FROM b GROUP BY block
  ),
  g AS (SELECT *, start_ns - lag(end_ns) OVER (ORDER BY start_ns) AS gap_ns FROM blocks),
  n AS (SELECT count(*) AS raw_blocks FROM blocks),
  t AS (
    SELECT max(gap_ns) AS merge_ns FROM (
      SELECT gap_ns, row_number() OVER (ORDER BY gap_ns) AS r FROM g WHERE gap_ns IS NOT NULL
    ) WHERE r <= (SELECT raw_blocks FROM n) - ${maxIntervals}
  ),
  m AS (
    SELECT g.*, sum(CASE WHEN g.gap_ns IS NULL OR t.merge_ns IS NULL OR g.gap_ns > t.merge_ns THEN 1 ELSE 0 END)
        OVER (ORDER BY g.start_ns ROWS UNBOUNDED PRECEDING) AS interval_id
    FROM g, t
  )
  SELECT min(m.start_ns) AS start_ns, max(m.end_ns) AS end_ns, sum(m.end_ns - m.start_ns)::BIGINT AS busy_ns,
    sum(m.dispatches)::BIGINT AS dispatches, count(*)::BIGINT AS blocks,
    any_value(t.merge_ns) AS merged_gap_max_ns, any_value(n.raw_blocks)::BIGINT AS raw_blocks
  FROM m, t, n GROUP BY m.interval_id ORDER BY start_ns`;
}
