/**
 * The analyses as SQL views and macros, for `tickwise sql` users (pure: the
 * statements only). Same definitions as the library functions, written
 * generically (PARTITION BY capture and device) rather than one device at a
 * time, so they are slower on large stores but combine with any query.
 *
 * ```
 * dispatches --one time source per device, valid, timed--> dispatch_spans
 *   --union per device--> busy_intervals --> device_busy (span, busy, idle, gaps)
 *   --idle between busy blocks, classed by submission--> gaps_v --> gaps_over(threshold_ns)
 *   --per kernel, share of busy--> kernel_stats --> kernel_cost(kernel_glob, rows_per_dispatch, group_rows)
 * ```
 */
import { EARLIER_ROWS, log2BucketSql } from './intervals';
import { SUBMISSION_KEY, genericSelectionSql } from './selection';

/** Names of the views {@link viewStatements} creates, in creation order. */
export const VIEW_NAMES = ['dispatch_spans', 'busy_intervals', 'device_busy', 'gaps_v', 'kernel_stats'] as const;
/** Names of the macros it creates. */
export const MACRO_NAMES = ['ns_to_ms', 'gaps_over', 'kernel_cost'] as const;

const PART = 'PARTITION BY capture_id, device';

/** CREATE statements for every view and macro (TEMP ones when `temp`). */
export function viewStatements(temp: boolean): string[] {
  const t = temp ? 'TEMP ' : '';
  return [
    `CREATE OR REPLACE ${t}VIEW dispatch_spans AS ${genericSelectionSql()}`,
    `CREATE OR REPLACE ${t}VIEW busy_intervals AS
      SELECT capture_id, device, island::BIGINT AS island, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
        max(end_ns) - min(start_ns) AS dur_ns, count(*)::BIGINT AS dispatches
      FROM (
        SELECT capture_id, device, start_ns, end_ns,
          sum(CASE WHEN pm IS NULL OR pm < start_ns THEN 1 ELSE 0 END) OVER (${PART} ORDER BY start_ns, end_ns ROWS UNBOUNDED PRECEDING) AS island
        FROM (SELECT capture_id, device, start_ns, end_ns, max(end_ns) OVER (${PART} ${EARLIER_ROWS}) AS pm FROM dispatch_spans)
      )
      GROUP BY capture_id, device, island`,
    `CREATE OR REPLACE ${t}VIEW device_busy AS
      SELECT capture_id, device, sum(dispatches)::BIGINT AS dispatches, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
        max(end_ns) - min(start_ns) AS span_ns, sum(dur_ns)::BIGINT AS busy_ns,
        (max(end_ns) - min(start_ns) - sum(dur_ns))::BIGINT AS idle_ns,
        CASE WHEN max(end_ns) > min(start_ns) THEN (max(end_ns) - min(start_ns) - sum(dur_ns)) / (max(end_ns) - min(start_ns)) END AS idle_fraction,
        (count(*) - 1)::BIGINT AS gap_count
      FROM busy_intervals GROUP BY capture_id, device`,
    `CREATE OR REPLACE ${t}VIEW gaps_v AS
      WITH w AS (
        SELECT capture_id, device, start_ns, start_ns - max(end_ns) OVER (${PART} ${EARLIER_ROWS}) AS gap_ns FROM dispatch_spans
      ),
      subs AS (
        SELECT capture_id, device, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM dispatch_spans
        GROUP BY capture_id, device, ${SUBMISSION_KEY}
      ),
      bg AS (
        SELECT capture_id, device, start_ns FROM (
          SELECT capture_id, device, start_ns, start_ns - max(end_ns) OVER (${PART} ${EARLIER_ROWS}) AS gap_ns FROM subs)
        WHERE gap_ns > 0
      )
      SELECT w.capture_id, w.device, w.start_ns - w.gap_ns AS start_ns, w.start_ns AS end_ns, w.gap_ns,
        (bg.start_ns IS NOT NULL) AS between_submissions, ${log2BucketSql('w.gap_ns')} AS log2_bucket
      FROM w LEFT JOIN bg ON bg.capture_id = w.capture_id AND bg.device = w.device AND bg.start_ns = w.start_ns
      WHERE w.gap_ns > 0`,
    `CREATE OR REPLACE ${t}VIEW kernel_stats AS
      SELECT s.capture_id, s.device, coalesce(s.kernel, 'unknown') AS kernel, count(*)::BIGINT AS count, sum(s.dur_ns)::BIGINT AS total_ns,
        sum(s.dur_ns) / any_value(b.busy_ns) AS share_of_busy, avg(s.dur_ns) AS mean_ns, quantile_cont(s.dur_ns, 0.5) AS median_ns,
        quantile_cont(s.dur_ns, 0.1) AS p10_ns, quantile_cont(s.dur_ns, 0.9) AS p90_ns, min(s.dur_ns) AS min_ns, max(s.dur_ns) AS max_ns
      FROM dispatch_spans s JOIN device_busy b ON b.capture_id = s.capture_id AND b.device = s.device
      GROUP BY s.capture_id, s.device, coalesce(s.kernel, 'unknown')`,
    `CREATE OR REPLACE ${t}MACRO ns_to_ms(x) AS x / 1e6`,
    `CREATE OR REPLACE ${t}MACRO gaps_over(threshold_ns) AS TABLE
      SELECT g.capture_id, g.device, count(*) FILTER (WHERE g.gap_ns > threshold_ns)::BIGINT AS count,
        coalesce(sum(g.gap_ns) FILTER (WHERE g.gap_ns > threshold_ns), 0)::BIGINT AS idle_ns,
        coalesce(sum(g.gap_ns) FILTER (WHERE g.gap_ns > threshold_ns), 0) / sum(g.gap_ns) AS share_of_idle
      FROM gaps_v g GROUP BY g.capture_id, g.device`,
    `CREATE OR REPLACE ${t}MACRO kernel_cost(kernel_glob, rows_per_dispatch, group_rows) AS TABLE
      SELECT capture_id, device, count(*)::BIGINT AS dispatch_count, avg(dur_ns) AS mean_dispatch_ns, quantile_cont(dur_ns, 0.5) AS median_dispatch_ns,
        avg(dur_ns) * group_rows / rows_per_dispatch / 1e6 AS group_ms,
        quantile_cont(dur_ns, 0.5) * group_rows / rows_per_dispatch / 1e6 AS group_ms_median
      FROM dispatch_spans WHERE kernel GLOB kernel_glob GROUP BY capture_id, device`,
  ];
}
