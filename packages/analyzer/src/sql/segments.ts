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
 * `end_ns`, `submission_id`, `gap_ns` = idle before the row (> 0 only
 * where a busy block starts), and `launch_ns` (its launch call's start, when
 * `withLaunch` and the selection has that column; else NULL).
 */
export function segmentRowsSql(selection: string, withLaunch = false): string {
  return `SELECT (row_number() OVER w0 - 1)::BIGINT AS pos, coalesce(kernel, '') AS kernel, start_ns, end_ns, submission_id,
      start_ns - max(end_ns) OVER w AS gap_ns, ${withLaunch ? 'launch_ns' : 'NULL::BIGINT AS launch_ns'}
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

/**
 * The rows of `table` with `segment` (0 before the first boundary, i from
 * boundary i on) and `first_pos` (where that segment starts). An ASOF join
 * against the boundary list: O(rows + boundaries), where a CASE with one
 * branch per boundary cost rows x boundaries (86 s for 1 M rows cut at 25 000
 * submissions).
 */
function withSegments(table: string, boundaries: readonly bigint[]): string {
  if (boundaries.length === 0) return `(SELECT *, 0 AS segment, 0::BIGINT AS first_pos FROM ${table})`;
  const list = boundaries.map((b) => sqlInt(b)).join(', ');
  return `(SELECT t.*, coalesce(b.segment, 0) AS segment, coalesce(b.first_pos, 0)::BIGINT AS first_pos FROM ${table} t
      ASOF LEFT JOIN (SELECT unnest([${list}]::BIGINT[]) AS first_pos, unnest(range(1, ${boundaries.length + 1})) AS segment) b ON t.pos >= b.first_pos)`;
}

/**
 * One row per segment when the rows are cut before the given positions
 * (ascending): index, dispatch count, first start, last end, the gap before
 * it, its submission range, and a position-keyed hash of its kernel sequence.
 */
export function segmentSummarySql(table: string, boundaries: readonly bigint[]): string {
  return `SELECT segment::INTEGER AS segment, count(*)::BIGINT AS dispatch_count, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
      arg_min(gap_ns, pos) AS gap_before_ns, min(submission_id)::VARCHAR AS first_submission_id, max(submission_id)::VARCHAR AS last_submission_id,
      sum(hash(kernel, pos - first_pos))::HUGEINT::VARCHAR AS sequence_hash
    FROM ${withSegments(table, boundaries)}
    GROUP BY segment ORDER BY segment`;
}

/** Host markers a repetition can be cut at, in the order they are tried. */
export const MarkerKind = {
  profiler_steps: 'profiler step annotations (ProfilerStep#N): a repetition starts with the first kernel launched in a step',
  device_sync: 'host device-synchronize calls (cudaDeviceSynchronize, hipDeviceSynchronize, cuCtxSynchronize): a repetition starts with the first kernel launched after one returned',
  stream_sync: 'host stream-synchronize calls (cudaStreamSynchronize, hipStreamSynchronize, cuStreamSynchronize)',
  submissions: 'submissions (IREE executes, command buffers): a repetition starts with the first dispatch of a submission',
} as const;
/** Key of {@link MarkerKind}. */
export type MarkerKind = keyof typeof MarkerKind;

function markerTimesSql(kind: MarkerKind, captureId: number): string {
  const c = `capture_id = ${sqlInt(captureId)}`;
  switch (kind) {
    case 'profiler_steps':
      return `SELECT DISTINCT start_ns AS t FROM host_events WHERE ${c} AND regexp_matches(name, '^ProfilerStep#[0-9]+$') AND start_ns IS NOT NULL`;
    case 'device_sync':
      return `SELECT DISTINCT end_ns AS t FROM host_events WHERE ${c} AND name IN ('cudaDeviceSynchronize', 'hipDeviceSynchronize', 'cuCtxSynchronize') AND end_ns IS NOT NULL`;
    case 'stream_sync':
      return `SELECT DISTINCT end_ns AS t FROM host_events WHERE ${c} AND name IN ('cudaStreamSynchronize', 'hipStreamSynchronize', 'cuStreamSynchronize') AND end_ns IS NOT NULL`;
    case 'submissions':
      return '';
  }
}

/**
 * How many host markers of each kind a capture has: one row, a column per
 * host-marker kind (`profiler_steps`, `device_sync`, `stream_sync`). A kind
 * with none cuts no device of the capture.
 */
export function markerCountsSql(captureId: number): string {
  const hostKinds = (Object.keys(MarkerKind) as MarkerKind[]).filter((k) => k !== 'submissions');
  return `SELECT ${hostKinds.map((k) => `(SELECT count(*) FROM (${markerTimesSql(k, captureId)}))::BIGINT AS ${k}`).join(', ')}`;
}

/**
 * Cut positions (ascending, > 0, distinct) a marker kind gives on a
 * segment-rows table: for a host marker at time t, the first row launched
 * (launch call start, else device start) at or after t; for submissions,
 * the first row of each submission. One column, `pos`.
 */
export function markerCutsSql(table: string, kind: MarkerKind, captureId: number): string {
  if (kind === 'submissions') {
    return `SELECT DISTINCT pos FROM (SELECT min(pos) AS pos FROM ${table} WHERE submission_id IS NOT NULL GROUP BY submission_id)
      WHERE pos > 0 AND (SELECT count(*) FROM ${table} WHERE submission_id IS NULL) = 0 ORDER BY pos`;
  }
  return `WITH m AS (${markerTimesSql(kind, captureId)}),
    r AS (SELECT pos, coalesce(launch_ns, start_ns) AS at_ns FROM ${table})
    SELECT DISTINCT pos FROM (SELECT (SELECT min(pos) FROM r WHERE r.at_ns >= m.t) AS pos FROM m)
    WHERE pos IS NOT NULL AND pos > 0 ORDER BY pos`;
}

/**
 * Per kernel name: rows in segment 0 (`a`) and segment 1 (`b`) when cut at
 * `boundaries`, for the cold-pass test (segment 0 = segment 1 plus a few
 * extra kernels).
 */
export function firstTwoSegmentsKernelsSql(table: string, boundaries: readonly bigint[]): string {
  const b0 = sqlInt(boundaries[0]!);
  const b1 = boundaries.length > 1 ? sqlInt(boundaries[1]!) : `(SELECT count(*) FROM ${table})`;
  return `SELECT kernel, count(*) FILTER (WHERE pos < ${b0})::BIGINT AS a, count(*) FILTER (WHERE pos >= ${b0} AND pos < ${b1})::BIGINT AS b
    FROM ${table} WHERE pos < ${b1} GROUP BY kernel`;
}

/** Per segment (cut at `boundaries`): an order-free hash of its kernels (`h`), to compare repetitions whose streams interleave differently. */
export function segmentKernelSetSql(table: string, boundaries: readonly bigint[]): string {
  return `SELECT segment::INTEGER AS segment, sum(hash(kernel))::HUGEINT::VARCHAR AS h FROM ${withSegments(table, boundaries)} GROUP BY 1 ORDER BY 1`;
}
