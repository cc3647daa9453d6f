/**
 * Per-kernel statistics of one device, as SQL over a selection (pure).
 * Durations are `end_ns - start_ns` of the selected rows; a kernel's share
 * is its summed time over the device's BUSY time (the union of all its
 * dispatches), so shares of kernels that overlap each other can add up to
 * more than 1, and never hide idle time the way shares of summed time do.
 */
import { unionLengthSql } from './intervals';

/** SQL of per-kernel rows of one device (see `KERNEL_ROW_SHAPE`), by total time, largest first. */
export function kernelStatsSql(selection: string): string {
  return `WITH sel AS (${selection}),
  busy AS (SELECT ${unionLengthSql('sel')} AS busy_ns),
  k AS (
    SELECT coalesce(kernel, 'unknown') AS kernel, count(*) AS n, sum(dur_ns) AS total, avg(dur_ns) AS mean,
      quantile_cont(dur_ns, [0.5, 0.1, 0.9]) AS q, min(dur_ns) AS lo, max(dur_ns) AS hi
    FROM sel GROUP BY 1
  )
  SELECT k.kernel, k.n::BIGINT AS count, k.total::BIGINT AS total_ns,
    CASE WHEN busy.busy_ns > 0 THEN k.total / busy.busy_ns END AS share_of_busy,
    k.mean AS mean_ns, k.q[1] AS median_ns, k.q[2] AS p10_ns, k.q[3] AS p90_ns,
    k.lo AS min_ns, k.hi AS max_ns, busy.busy_ns
  FROM k, busy
  ORDER BY k.total DESC, k.kernel`;
}
