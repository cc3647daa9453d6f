/**
 * Per-kernel statistics of one device, as SQL over a selection (pure).
 * Durations are `end_ns - start_ns` of the selected rows; a kernel's share
 * is its summed time over the device's BUSY time (the union of all its
 * dispatches, `busyUnionSql`), so shares of kernels that overlap each other
 * can add up to more than 1, and never hide idle time the way shares of
 * summed time do. Two statements, each reading the selection once (a
 * selection read twice in one statement is materialized whole).
 */
import { unionLengthSql } from './intervals';

/** SQL of per-kernel rows of one device (see `KERNEL_ROW_SHAPE`), by total time, largest first. */
export function kernelStatsSql(selection: string): string {
  return `SELECT kernel, count, total_ns, mean_ns, q[1] AS median_ns, q[2] AS p10_ns, q[3] AS p90_ns, min_ns, max_ns FROM (
      SELECT coalesce(kernel, 'unknown') AS kernel, count(*)::BIGINT AS count, sum(dur_ns)::BIGINT AS total_ns,
        avg(dur_ns) AS mean_ns, quantile_cont(dur_ns, [0.5, 0.1, 0.9]) AS q, min(dur_ns) AS min_ns, max(dur_ns) AS max_ns
      FROM (${selection}) GROUP BY 1)
    ORDER BY total_ns DESC, kernel`;
}

/** SQL of the busy time (union of dispatch intervals) of a selection: one row, `busy_ns`. */
export function busyUnionSql(selection: string): string {
  return `SELECT ${unionLengthSql(`(${selection})`)} AS busy_ns`;
}
