/**
 * Segmentation into prefills, as SQL (pure). The runtime first materializes
 * one device's selected rows in start order with their position and the
 * idle gap before each (`segmentRowsSql`), then asks questions of that table:
 * the longest gaps, whether the kernel sequence repeats with a period, and
 * the summary of each segment once boundaries are chosen.
 */
import { EARLIER_ROWS } from './intervals';
import { sqlInt } from './quote';

/**
 * Rows of one device in start order: `pos` (0-based), `kernel`, `start_ns`,
 * `end_ns`, `submission_id`, and `gap_ns` = idle before the row (> 0 only
 * where a busy block starts).
 */
export function segmentRowsSql(selection: string): string {
  return `SELECT (row_number() OVER w0 - 1)::BIGINT AS pos, coalesce(kernel, '') AS kernel, start_ns, end_ns, submission_id,
      start_ns - max(end_ns) OVER w AS gap_ns
    FROM (${selection})
    WINDOW w0 AS (ORDER BY start_ns, end_ns), w AS (${EARLIER_ROWS})`;
}

/** The `limit` longest gaps of a segment-rows table, longest first. */
export function longestGapsSql(table: string, limit: number): string {
  return `SELECT pos, gap_ns FROM ${table} WHERE gap_ns > 0 ORDER BY gap_ns DESC, pos LIMIT ${sqlInt(limit)}`;
}

/**
 * Whether the kernel sequence is made of identical blocks of `period` rows:
 * one row, `blocks` and `distinct_blocks` (1 when every block is the same
 * sequence; compared by a position-keyed hash of each block).
 */
export function periodicSql(table: string, period: number): string {
  const p = sqlInt(period);
  return `SELECT count(*)::BIGINT AS blocks, count(DISTINCT h)::BIGINT AS distinct_blocks FROM (
      SELECT pos // ${p} AS block, count(*) AS n, sum(hash(kernel, pos % ${p}))::HUGEINT AS h FROM ${table} GROUP BY 1)`;
}

function segmentOf(boundaries: readonly bigint[]): { seg: string; first: string } {
  if (boundaries.length === 0) return { seg: '0', first: '0' };
  const seg = `CASE ${boundaries.map((b, i) => `WHEN pos < ${sqlInt(b)} THEN ${i}`).join(' ')} ELSE ${boundaries.length} END`;
  const first = `CASE ${boundaries.map((b, i) => `WHEN pos < ${sqlInt(b)} THEN ${i === 0 ? 0 : sqlInt(boundaries[i - 1]!)}`).join(' ')} ELSE ${sqlInt(boundaries[boundaries.length - 1]!)} END`;
  return { seg, first };
}

/**
 * One row per segment when the rows are cut before the given positions
 * (ascending): index, dispatch count, first start, last end, the gap before
 * it, its submission range, and a position-keyed hash of its kernel sequence.
 */
export function segmentSummarySql(table: string, boundaries: readonly bigint[]): string {
  const { seg, first } = segmentOf(boundaries);
  return `SELECT segment::INTEGER AS segment, count(*)::BIGINT AS dispatch_count, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
      arg_min(gap_ns, pos) AS gap_before_ns, min(submission_id)::VARCHAR AS first_submission_id, max(submission_id)::VARCHAR AS last_submission_id,
      sum(hash(kernel, pos - first_pos))::HUGEINT::VARCHAR AS sequence_hash
    FROM (SELECT *, ${seg} AS segment, ${first} AS first_pos FROM ${table})
    GROUP BY segment ORDER BY segment`;
}
