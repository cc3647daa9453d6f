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

/**
 * SQL: true for a row (columns `capture_id`, `device`, `time_source`) of one
 * of `sources` in its time-source family: per family, the devices' (capture,
 * device) pairs as one IN list, which DuckDB hashes. An OR of a term per
 * device made every row test every device: 2,000 devices, 1 M rows: 2.7 s
 * against 35-70 ms a query; 12,000 one-dispatch devices (a Kineto trace
 * whose every kernel has its own device id): 5.1 s against milliseconds.
 * No sources: false.
 */
export function sourcesPredicate(sources: readonly DeviceSource[]): string {
  const terms: string[] = [];
  for (const family of ['device', 'host'] as const) {
    const pairs = sources.filter((s) => s.family === family).map((s) => `(${sqlInt(s.capture_id)}, ${sqlInt(s.device)})`);
    if (pairs.length > 0) terms.push(`(time_source IN (${list(family === 'device' ? DEVICE_TIMED : HOST_TIMED)}) AND (capture_id, device) IN (${pairs.join(', ')}))`);
  }
  return terms.length === 0 ? 'false' : terms.length === 1 ? terms[0]! : `(${terms.join(' OR ')})`;
}

/** The sources of `spec` a scope narrows to (every source without a scope). */
export function scopedSources(spec: SelectionSpec, scope?: Scope): readonly DeviceSource[] {
  return scope ? spec.sources.filter((s) => s.capture_id === scope.capture_id && s.device === scope.device) : spec.sources;
}

/** The segment ranges of `segments` on one of `sources` (a set of keys: not a scan of the sources per range). */
export function sourcesSegments(segments: readonly SegmentRange[], sources: readonly DeviceSource[]): SegmentRange[] {
  const keys = new Set(sources.map((s) => `${s.capture_id}/${s.device}`));
  return segments.filter((g) => keys.has(`${g.capture_id}/${g.device}`));
}

/**
 * The selected ranges as the CASE of one WHEN per range in list order would
 * label start times: per (capture, device), non-empty, disjoint, ascending
 * `from_ns`, each time labelled with the segment of the first listed range
 * holding it. Ranges from the segmentation are disjoint already (sorted,
 * empty ones dropped); overlapping ones are cut at every endpoint.
 */
export function disjointSegments(segments: readonly SegmentRange[]): SegmentRange[] {
  const groups = new Map<string, { range: SegmentRange; order: number }[]>();
  segments.forEach((range, order) => {
    if (range.until_ns !== null && range.until_ns <= range.from_ns) return;
    const key = `${range.capture_id}/${range.device}`;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = []));
    g.push({ range, order });
  });
  const out: SegmentRange[] = [];
  for (const g of groups.values()) {
    g.sort((a, b) => (a.range.from_ns < b.range.from_ns ? -1 : a.range.from_ns > b.range.from_ns ? 1 : a.order - b.order));
    const disjoint = g.every((x, i) => i === 0 || (g[i - 1]!.range.until_ns !== null && g[i - 1]!.range.until_ns! <= x.range.from_ns));
    if (disjoint) {
      for (const x of g) out.push(x.range);
      continue;
    }
    // Sweep the elementary intervals between endpoints; the active range listed first wins (a heap on list order, expired ranges popped lazily).
    const { capture_id, device } = g[0]!.range;
    const points = [...new Set(g.flatMap((x) => (x.range.until_ns === null ? [x.range.from_ns] : [x.range.from_ns, x.range.until_ns])))].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const heap: { range: SegmentRange; order: number }[] = [];
    const push = (x: { range: SegmentRange; order: number }) => {
      let i = heap.push(x) - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (heap[p]!.order <= heap[i]!.order) break;
        [heap[p], heap[i]] = [heap[i]!, heap[p]!];
        i = p;
      }
    };
    const pop = () => {
      const last = heap.pop()!;
      if (heap.length === 0) return;
      heap[0] = last;
      for (let i = 0; ;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < heap.length && heap[l]!.order < heap[m]!.order) m = l;
        if (r < heap.length && heap[r]!.order < heap[m]!.order) m = r;
        if (m === i) break;
        [heap[m], heap[i]] = [heap[i]!, heap[m]!];
        i = m;
      }
    };
    let next = 0;
    /** Index in `out` of the range emitted for the previous elementary interval (-1: none), to merge a run of one winner. */
    let prev = -1;
    for (let i = 0; i < points.length; i++) {
      const at = points[i]!;
      const until = i + 1 < points.length ? points[i + 1]! : null;
      while (next < g.length && g[next]!.range.from_ns <= at) push(g[next++]!);
      while (heap.length > 0 && heap[0]!.range.until_ns !== null && heap[0]!.range.until_ns! <= at) pop();
      const win = heap[0]?.range;
      if (win === undefined) {
        prev = -1;
      } else if (prev >= 0 && out[prev]!.segment === win.segment) {
        out[prev] = { ...out[prev]!, until_ns: until };
      } else {
        prev = out.push({ capture_id, device, segment: win.segment, from_ns: at, until_ns: until }) - 1;
      }
    }
  }
  return out;
}

/**
 * The segment label of a row with `capture_id`, `device`, `start_ns` columns
 * (0 without segmentation; NULL outside the selected ranges): per (capture,
 * device), a balanced tree of CASEs over the disjoint ranges' starts, so a
 * row costs log2(ranges) comparisons, not one per range.
 */
export function segmentExpr(segments: readonly SegmentRange[] | null): string {
  if (segments === null) return '0';
  const ranges = disjointSegments(segments);
  if (ranges.length === 0) return 'NULL::INTEGER';
  const tree = (lo: number, hi: number): string => {
    if (hi - lo === 1) {
      const g = ranges[lo]!;
      const upper = g.until_ns === null ? '' : ` AND start_ns < ${sqlBigint(g.until_ns)}`;
      return `CASE WHEN start_ns >= ${sqlBigint(g.from_ns)}${upper} THEN ${sqlInt(g.segment)} END`;
    }
    const mid = (lo + hi) >> 1;
    return `CASE WHEN start_ns < ${sqlBigint(ranges[mid]!.from_ns)} THEN ${tree(lo, mid)} ELSE ${tree(mid, hi)} END`;
  };
  const whens: string[] = [];
  for (let lo = 0; lo < ranges.length;) {
    const { capture_id, device } = ranges[lo]!;
    let hi = lo + 1;
    while (hi < ranges.length && ranges[hi]!.capture_id === capture_id && ranges[hi]!.device === device) hi++;
    whens.push(`WHEN capture_id = ${sqlInt(capture_id)} AND device = ${sqlInt(device)} THEN ${tree(lo, hi)}`);
    lo = hi;
  }
  return `CASE ${whens.join(' ')} END`;
}

/**
 * Labels the rows of `rows` (a relation with `capture_id`, `device`,
 * `start_ns`) with their segment and keeps only those in a selected range:
 * `rows`' columns, then `segment`. An ASOF join of each row to the last
 * selected range of its (capture, device) starting at or before it, kept
 * when the row starts before that range's end: a sort-merge, ~(rows +
 * ranges) log, where a CASE with one branch per range cost rows x ranges
 * (1 M rows, 25,000 ranges: 28.5 s -> 0.3 s). The ranges are an inline list
 * (no temp table: read-only stores, and callers embed the SQL as a
 * subquery). `segments` null: every row, segment 0.
 */
export function segmentJoinSql(rows: string, segments: readonly SegmentRange[] | null): string {
  if (segments === null) return `SELECT *, 0 AS segment FROM (${rows})`;
  const ranges = disjointSegments(segments);
  if (ranges.length === 0) return `SELECT *, NULL::INTEGER AS segment FROM (${rows}) WHERE false`;
  const col = (f: (g: SegmentRange) => string, type: string) => `unnest([${ranges.map(f).join(', ')}]::${type}[])`;
  const list = `SELECT ${col((g) => sqlInt(g.capture_id), 'INTEGER')} AS g_capture_id, ${col((g) => sqlInt(g.device), 'INTEGER')} AS g_device,
      ${col((g) => sqlInt(g.from_ns), 'BIGINT')} AS g_from_ns, ${col((g) => (g.until_ns === null ? 'NULL' : sqlInt(g.until_ns)), 'BIGINT')} AS g_until_ns,
      ${col((g) => sqlInt(g.segment), 'INTEGER')} AS g_segment`;
  return `SELECT r.*, g.g_segment AS segment FROM (${rows}) r
    ASOF JOIN (${list}) g ON r.capture_id = g.g_capture_id AND r.device = g.g_device AND r.start_ns >= g.g_from_ns
    WHERE g.g_until_ns IS NULL OR r.start_ns < g.g_until_ns`;
}

/**
 * SQL of the selected dispatch rows, with columns
 * `capture_id, device, queue, submission_id, rowid_key, kernel, start_ns,
 * end_ns, dur_ns, time_source, segment`. A submission is identified by
 * (queue, submission_id); a dispatch without a submission id is its own
 * submission (`rowid_key` tells such rows apart: see {@link SUBMISSION_KEY}).
 * With segment ranges, each row is labelled by {@link segmentJoinSql}.
 */
export function selectionSql(spec: SelectionSpec, scope?: Scope, extraWhere?: string): string {
  const sources = scopedSources(spec, scope);
  const where = ['valid', 'start_ns IS NOT NULL', 'end_ns IS NOT NULL', sourcesPredicate(sources)];
  if (scope) {
    where.push(`capture_id = ${sqlInt(scope.capture_id)}`, `device = ${sqlInt(scope.device)}`);
    if (scope.queue !== null) where.push(`queue = ${sqlInt(scope.queue)}`);
  }
  if (extraWhere) where.push(`(${extraWhere})`);
  const rows = (segment: string) => `SELECT capture_id, device, queue, submission_id,
      rowid AS rowid_key,
      kernel, start_ns, end_ns, end_ns - start_ns AS dur_ns, time_source${segment}
    FROM dispatches
    WHERE ${where.join(' AND ')}`;
  if (spec.segments === null) return rows(',\n      0 AS segment');
  return segmentJoinSql(rows(''), sourcesSegments(spec.segments, sources));
}

/**
 * The rows of `selection` on the given devices only; `selection` itself when
 * they are all `total` devices it selects.
 */
export function devicesOnlySql(selection: string, devices: readonly { capture_id: number; device: number }[], total: number): string {
  if (devices.length === total) return selection;
  // one IN list of pairs (hashed by DuckDB), not a term per capture
  const pairs = devices.map((d) => `(${sqlInt(d.capture_id)}, ${sqlInt(d.device)})`);
  return `SELECT * FROM (${selection}) WHERE ${pairs.length ? `(capture_id, device) IN (${pairs.join(', ')})` : 'false'}`;
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
