/**
 * Per-kernel statistics of each device, as SQL over a selection (pure).
 * Durations are `end_ns - start_ns` of the selected rows; a kernel's share
 * is its summed time over the device's BUSY time (the union of all its
 * dispatches, `busyUnionSql`), so shares of kernels that overlap each other
 * can add up to more than 1, and never hide idle time the way shares of
 * summed time do. Two statements for all devices, each reading the
 * selection once (a selection read twice in one statement is materialized
 * whole), grouped or partitioned by (capture_id, device).
 */
import { partitionColumns, prevEndMax } from './intervals';

/** SQL of per-kernel rows of each device (see `KERNEL_ROW_SHAPE`): by capture and device, then total time, largest first. */
export function kernelStatsSql(selection: string): string {
  return `SELECT capture_id, device, kernel, count, total_ns, mean_ns, q[1] AS median_ns, q[2] AS p10_ns, q[3] AS p90_ns, min_ns, max_ns FROM (
      SELECT capture_id, device, coalesce(kernel, 'unknown') AS kernel, count(*)::BIGINT AS count, sum(dur_ns)::BIGINT AS total_ns,
        avg(dur_ns) AS mean_ns, quantile_cont(dur_ns, [0.5, 0.1, 0.9]) AS q, min(dur_ns) AS min_ns, max(dur_ns) AS max_ns
      FROM (${selection}) GROUP BY 1, 2, 3)
    ORDER BY capture_id, device, total_ns DESC, kernel`;
}

/** SQL of each device's busy time (union of its dispatch intervals): rows `capture_id`, `device`, `busy_ns`. */
export function busyUnionSql(selection: string, oneDevice = false): string {
  return `SELECT capture_id, device, coalesce(sum(greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns)))), 0)::BIGINT AS busy_ns
    FROM (SELECT capture_id, device, start_ns, end_ns, ${prevEndMax(partitionColumns(oneDevice))} AS pm FROM (${selection}))
    GROUP BY capture_id, device`;
}
