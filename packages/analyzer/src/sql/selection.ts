/**
 * Which dispatch rows an analysis reads, as SQL (pure: no DuckDB here).
 *
 * One time source per (capture_id, device): device-timed rows when the
 * device has any, else host-timed rows. Rows with `valid = false` or a NULL
 * start/end are left out of time math (and counted elsewhere). An optional
 * list of segment ranges labels each row with its segment and drops rows
 * outside the chosen segments.
 */
import { sqlBigint, sqlInt } from './quote';

/** The columns that identify a submission in a selection (GROUP BY / PARTITION BY list). */
export const SUBMISSION_KEY = 'queue, submission_id, CASE WHEN submission_id IS NULL THEN rowid_key END';

/** Time sources that come from device ticks. */
export const DEVICE_TIMED = ['device_tick_fit', 'device_tick_declared', 'device_tick_assumed', 'device_tick_none'] as const;
/** Time sources that come from a host clock. */
export const HOST_TIMED = ['host_monotonic', 'host_boottime', 'host_other'] as const;

/** The family of time source chosen for one device. */
export const SourceFamily = { device: 'device', host: 'host' } as const;
/** Key of {@link SourceFamily}. */
export type SourceFamily = keyof typeof SourceFamily;

/** One (capture, device) and the family of rows to read for it. */
export interface DeviceSource {
  readonly capture_id: number;
  readonly device: number;
  readonly family: SourceFamily;
}

/**
 * A segment as a half-open range of dispatch START times on one device:
 * a dispatch belongs to it when `from_ns <= start_ns < until_ns` (`until_ns`
 * null: open-ended). Segments are cut at idle gaps, so no dispatch spans two.
 */
export interface SegmentRange {
  readonly capture_id: number;
  readonly device: number;
  readonly segment: number;
  readonly from_ns: bigint;
  readonly until_ns: bigint | null;
}

/** Everything that decides the selected rows. */
export interface SelectionSpec {
  readonly sources: readonly DeviceSource[];
  /** Null: every dispatch, all in segment 0 (no segmentation). */
  readonly segments: readonly SegmentRange[] | null;
}

/** A narrower scope of a selection: one device, optionally one queue. */
export interface Scope {
  readonly capture_id: number;
  readonly device: number;
  /** null: the device-wide union of all its queues. */
  readonly queue: number | null;
}

function list(xs: readonly string[]): string {
  return xs.map((x) => `'${x}'`).join(', ');
}

function sourcePredicate(s: DeviceSource): string {
  const fam = s.family === 'device' ? DEVICE_TIMED : HOST_TIMED;
  return `(capture_id = ${sqlInt(s.capture_id)} AND device = ${sqlInt(s.device)} AND time_source IN (${list(fam)}))`;
}

/** The segment label of a row with `capture_id`, `device`, `start_ns` columns (0 without segmentation). */
export function segmentExpr(segments: readonly SegmentRange[] | null): string {
  if (segments === null) return '0';
  if (segments.length === 0) return 'NULL::INTEGER';
  const whens = segments.map((g) => {
    const upper = g.until_ns === null ? '' : ` AND start_ns < ${sqlBigint(g.until_ns)}`;
    return `WHEN capture_id = ${sqlInt(g.capture_id)} AND device = ${sqlInt(g.device)} AND start_ns >= ${sqlBigint(g.from_ns)}${upper} THEN ${sqlInt(g.segment)}`;
  });
  return `CASE ${whens.join(' ')} END`;
}

/**
 * SQL of the selected dispatch rows, with columns
 * `capture_id, device, queue, submission_id, rowid_key, kernel, start_ns,
 * end_ns, dur_ns, time_source, segment`. A submission is identified by
 * (queue, submission_id); a dispatch without a submission id is its own
 * submission (`rowid_key` tells such rows apart: see {@link SUBMISSION_KEY}).
 */
export function selectionSql(spec: SelectionSpec, scope?: Scope, extraWhere?: string): string {
  const sources = scope ? spec.sources.filter((s) => s.capture_id === scope.capture_id && s.device === scope.device) : spec.sources;
  const where = [
    'valid',
    'start_ns IS NOT NULL',
    'end_ns IS NOT NULL',
    sources.length ? `(${sources.map(sourcePredicate).join(' OR ')})` : 'false',
  ];
  if (scope) {
    where.push(`capture_id = ${sqlInt(scope.capture_id)}`, `device = ${sqlInt(scope.device)}`);
    if (scope.queue !== null) where.push(`queue = ${sqlInt(scope.queue)}`);
  }
  if (extraWhere) where.push(`(${extraWhere})`);
  const inner = `SELECT capture_id, device, queue, submission_id,
      rowid AS rowid_key,
      kernel, start_ns, end_ns, end_ns - start_ns AS dur_ns, time_source,
      ${segmentExpr(spec.segments)} AS segment
    FROM dispatches
    WHERE ${where.join(' AND ')}`;
  return spec.segments === null ? inner : `SELECT * FROM (${inner}) WHERE segment IS NOT NULL`;
}

/**
 * Per (capture, device, time source): row counts, the rows usable for time
 * math and the excluded ones. The planner chooses a source family from it.
 */
export function sourceInventorySql(): string {
  return `SELECT d.capture_id, d.device, d.time_source,
      count(*) AS rows,
      count(*) FILTER (WHERE d.valid AND d.start_ns IS NOT NULL AND d.end_ns IS NOT NULL) AS usable,
      count(*) FILTER (WHERE NOT d.valid) AS invalid,
      count(*) FILTER (WHERE d.valid AND (d.start_ns IS NULL OR d.end_ns IS NULL)) AS no_time,
      count(DISTINCT d.queue) AS queues,
      min(d.queue) AS min_queue,
      count(*) FILTER (WHERE d.queue IS NULL) AS no_queue
    FROM dispatches d
    GROUP BY ALL ORDER BY ALL`;
}

/**
 * The source choice of {@link selectionSql} as one generic SQL relation
 * (for views): device-timed rows where a device has any, else host rows.
 */
export function genericSelectionSql(): string {
  return `SELECT d.capture_id, d.device, d.queue, d.submission_id,
      d.rowid AS rowid_key,
      d.kernel, d.start_ns, d.end_ns, d.end_ns - d.start_ns AS dur_ns, d.time_source, 0 AS segment, d.line
    FROM dispatches d
    JOIN (SELECT capture_id, device, bool_or(time_source IN (${list(DEVICE_TIMED)})) AS device_timed
          FROM dispatches GROUP BY capture_id, device) s
      ON s.capture_id = d.capture_id AND s.device = d.device
    WHERE d.valid AND d.start_ns IS NOT NULL AND d.end_ns IS NOT NULL
      AND (d.time_source IN (${list(DEVICE_TIMED)})) = s.device_timed`;
}
