/**
 * Each device's gap histogram on log2 buckets with the idle of each bucket
 * split by class, as SQL over a selection (pure). Same definitions as the
 * analyzer's gaps: a gap is a maximal idle interval of the union of the
 * dispatches; it lies between submissions when the union of submission spans
 * (first dispatch start to last dispatch end; a dispatch without a
 * submission id is its own submission) has a gap ending at the same instant.
 *
 * ```
 * selection --running max end--> gaps (end instant, length)
 *           --GROUP BY submission--> spans --running max end--> gaps between submissions (end instants)
 * gaps LEFT JOIN between-gaps ON end instant --> class; bucket k: 2^k <= gap_ns < 2^(k+1)
 * ```
 * Every step is per (capture, device, segment): one query for all devices.
 */
import { partitionBy } from '@tickwise/analyzer';

/** Columns of {@link gapHistogramSql}'s rows. */
export const GAP_HISTOGRAM_SHAPE = {
  capture_id: 'number',
  device: 'number',
  bucket: 'number',
  lo_ns: 'bigint',
  hi_ns: 'bigint',
  between: 'boolean',
  count: 'number',
  idle_ns: 'bigint',
} as const;

// within one device's segment: the idle between two segments is no gap of either (as the analyzer's gaps() counts)
const earlier = (oneDevice: boolean) => `${partitionBy(oneDevice, 'segment')}ORDER BY start_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING`;

/**
 * SQL of the histogram rows of every device of `selection` (rows with
 * capture_id, device, submission_id, start_ns, end_ns, segment; gaps within
 * a segment), ordered by capture, device, bucket, between first.
 */
export function gapHistogramSql(selection: string, oneDevice = false): string {
  const EARLIER = earlier(oneDevice);
  const bucket = `(floor(log2(gap_ns))::INTEGER - CASE WHEN (1::BIGINT << floor(log2(gap_ns))::INTEGER) > gap_ns THEN 1 ELSE 0 END)`;
  return `WITH sel AS (
    SELECT capture_id, device, submission_id, start_ns, end_ns, coalesce(segment, 0) AS segment, row_number() OVER () AS rn FROM (${selection})
  ),
  g AS (
    SELECT capture_id, device, start_ns AS at_ns, start_ns - max(end_ns) OVER (${EARLIER}) AS gap_ns FROM sel
  ),
  subs AS (
    SELECT capture_id, device, segment, min(start_ns) AS start_ns, max(end_ns) AS end_ns FROM sel
    GROUP BY capture_id, device, segment, coalesce(submission_id::HUGEINT, -1 - rn)
  ),
  bg AS (
    SELECT capture_id, device, start_ns AS at_ns
    FROM (SELECT capture_id, device, start_ns, start_ns - max(end_ns) OVER (${EARLIER}) AS gap_ns FROM subs) WHERE gap_ns > 0
  ),
  c AS (
    SELECT g.capture_id, g.device, g.gap_ns, ${bucket} AS bucket, bg.at_ns IS NOT NULL AS between
    FROM g LEFT JOIN (SELECT DISTINCT capture_id, device, at_ns FROM bg) bg ON bg.capture_id = g.capture_id AND bg.device = g.device AND bg.at_ns = g.at_ns
    WHERE g.gap_ns > 0
  )
  SELECT capture_id, device, bucket, (1::BIGINT << bucket) AS lo_ns, (1::BIGINT << (bucket + 1)) AS hi_ns, between,
    count(*)::BIGINT AS count, sum(gap_ns)::BIGINT AS idle_ns
  FROM c GROUP BY capture_id, device, bucket, between ORDER BY capture_id, device, bucket, between DESC`;
}
