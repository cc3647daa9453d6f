/**
 * Interval algebra over sorted rows, as SQL fragments. Every dispatch is a
 * half-open interval [start_ns, end_ns): two dispatches that touch leave no
 * gap. The one primitive is the running maximum of earlier ends in start
 * order (`prev_end_max_ns`); from it:
 *
 * ```
 * gap before row j      = start_j - prev_end_max_j            (when > 0)
 * union length          = sum_j max(0, end_j - max(start_j, prev_end_max_j))
 * >= 2 in flight        = union of [start_j, min(end_j, prev_end_max_j))
 *                         over rows with prev_end_max_j > start_j
 * ```
 * (a point covered twice is covered by some row j and by an earlier-starting
 * row still running, whose end is at most prev_end_max_j). One sort, one
 * pass: window functions, no self-joins.
 */

/** The start-order window every interval pass uses (ties broken by end). */
export const START_ORDER = 'ORDER BY start_ns, end_ns';

/** Frame of "all earlier rows" in start order. */
export const EARLIER_ROWS = `${START_ORDER} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING`;

/** `max(end_ns)` over earlier rows, optionally within a partition. */
export function prevEndMax(partition?: string): string {
  return `max(end_ns) OVER (${partition ? `PARTITION BY ${partition} ` : ''}${EARLIER_ROWS})`;
}

/**
 * The `PARTITION BY` clause (with a trailing space; '' for none) of a
 * per-device window: the device columns and `more`. The device columns are
 * left out when the statement reads one device (`oneDevice`): DuckDB sorts
 * each partition on one thread, so a single partition of every row is one
 * thread's sort where an unpartitioned window sorts in parallel (gap
 * buckets of a 500k-row device: 180 vs 116 ms).
 */
export function partitionBy(oneDevice: boolean, ...more: string[]): string {
  const cols = partitionColumns(oneDevice, ...more);
  return cols === undefined ? '' : `PARTITION BY ${cols} `;
}

/** The column list of {@link partitionBy} (undefined for none), for {@link prevEndMax}. */
export function partitionColumns(oneDevice: boolean, ...more: string[]): string | undefined {
  const cols = [...(oneDevice ? [] : ['capture_id', 'device']), ...more];
  return cols.length ? cols.join(', ') : undefined;
}

/**
 * Length of the union of intervals `(start_ns, end_ns)` from a relation, as
 * a scalar subquery (0 for none).
 */
export function unionLengthSql(relation: string): string {
  return `(SELECT coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns)))), 0)::BIGINT
    FROM (SELECT start_ns, end_ns, ${prevEndMax()} AS pm FROM ${relation}))`;
}

/**
 * Power-of-two bucket of a positive length: k such that 2^k <= len < 2^(k+1)
 * (exact: a floating log2 is corrected by an integer shift test).
 */
export function log2BucketSql(col: string): string {
  const b = `floor(log2(${col}))::INTEGER`;
  return `(${b} - CASE WHEN (1::BIGINT << ${b}) > ${col} THEN 1 ELSE 0 END)`;
}
