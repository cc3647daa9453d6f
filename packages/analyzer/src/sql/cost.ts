/**
 * Per-row-group cost inputs, as SQL over a selection (pure): the duration
 * statistics of the dispatches whose kernel matches a glob, overall and per
 * segment, and the summed time of a set of GEMM kernels (for the FLOP
 * reading).
 */
import { sqlString } from './quote';

/** `kernel GLOB 'pattern'` (case-sensitive, `*`, `?`, `[...]`). */
export function kernelGlobSql(glob: string): string {
  return `kernel GLOB ${sqlString(glob)}`;
}

/** Per (capture, device, kernel) of matching dispatches: count and summed time. */
export function matchedKernelsSql(selection: string): string {
  return `SELECT capture_id, device, kernel, count(*)::BIGINT AS dispatch_count, sum(dur_ns)::BIGINT AS total_ns
    FROM (${selection}) GROUP BY ALL ORDER BY capture_id, device, total_ns DESC, kernel`;
}

/** Duration statistics of the selection: one row (see `DURATION_STATS_SHAPE`). */
export function durationStatsSql(selection: string): string {
  return `SELECT count(*)::BIGINT AS dispatch_count, coalesce(sum(dur_ns), 0)::BIGINT AS total_ns, avg(dur_ns) AS mean_ns,
      quantile_cont(dur_ns, 0.5) AS median_ns, quantile_cont(dur_ns, 0.1) AS p10_ns, quantile_cont(dur_ns, 0.9) AS p90_ns,
      min(dur_ns) AS min_ns, max(dur_ns) AS max_ns
    FROM (${selection})`;
}

/** The same statistics per segment (see `SEGMENT_STATS_SHAPE`). */
export function durationStatsBySegmentSql(selection: string): string {
  return `SELECT segment, count(*)::BIGINT AS dispatch_count, sum(dur_ns)::BIGINT AS total_ns, avg(dur_ns) AS mean_ns,
      quantile_cont(dur_ns, 0.5) AS median_ns
    FROM (${selection}) GROUP BY segment ORDER BY segment`;
}
