/**
 * Segmentation into prefills, as SQL (pure). The runtime first materializes
 * the selected rows of every device it segments, in start order per device,
 * with the device's index in the batch (`dev`), their position and the idle
 * gap before each (`segmentRowsSql`), then asks questions of that table. Each
 * question is asked for many devices in one statement: a list of requests,
 * one per device, each with its own arguments (the boundaries of a cut, a
 * period, a row limit). One statement per device made 1,000 devices of 100
 * dispatches take 20 s, almost all of it statement overhead.
 */
import { EARLIER_ROWS, START_ORDER } from './intervals';
import { sqlInt } from './quote';

/** A device of a segment-rows table: its index there (`dev`) and its source. */
export interface SegmentDevice {
  readonly capture_id: number;
  readonly device: number;
}

/** One request of a batched question: the device's index in the segment-rows table. */
export interface DevRequest {
  readonly dev: number;
}

/** A request about a cut: rows cut before each of `boundaries` (ascending positions). */
export interface CutRequest extends DevRequest {
  readonly boundaries: readonly bigint[];
}

const ints = (xs: readonly (number | bigint)[]) => `[${xs.map((x) => sqlInt(x)).join(', ')}]`;

/** `PARTITION BY dev ` unless the statement reads one device (a single partition sorts on one thread; unpartitioned, in parallel). */
const byDev = (reqs: readonly DevRequest[]) => (reqs.length === 1 ? '' : 'PARTITION BY dev ');

/** The requests' rows of `table` (all of it when `whole`: every device of the table is asked). */
function rowsOf(table: string, reqs: readonly DevRequest[], whole: boolean): string {
  return whole ? table : `(SELECT * FROM ${table} WHERE dev IN (SELECT unnest(${ints(reqs.map((r) => r.dev))}::INTEGER[])))`;
}

/**
 * Rows of the given devices (`devices[i]` is `dev` i) in start order per
 * device: `dev`, `pos` (0-based), `kernel`, `start_ns`, `end_ns`,
 * `submission_id`, `gap_ns` = idle before the row (> 0 only where a busy
 * block starts), and `launch_ns` (its launch call's start, when `withLaunch`
 * and the selection has that column; else NULL). `selection` must hold only
 * rows of these devices' sources.
 */
export function segmentRowsSql(selection: string, devices: readonly SegmentDevice[], withLaunch = false): string {
  const one = devices.length === 1;
  const map = `SELECT unnest(${ints(devices.map((d) => d.capture_id))}::BIGINT[]) AS capture_id, unnest(${ints(devices.map((d) => d.device))}::BIGINT[]) AS device,
      unnest(range(${devices.length}))::INTEGER AS dev`;
  const rows = one ? `SELECT *, 0 AS dev FROM (${selection})` : `SELECT s.*, m.dev FROM (${selection}) s JOIN (${map}) m ON m.capture_id = s.capture_id AND m.device = s.device`;
  const part = one ? '' : 'PARTITION BY dev ';
  return `SELECT dev::INTEGER AS dev, (row_number() OVER w0 - 1)::BIGINT AS pos, coalesce(kernel, '') AS kernel, start_ns, end_ns, submission_id,
      start_ns - max(end_ns) OVER w AS gap_ns, ${withLaunch ? 'launch_ns' : 'NULL::BIGINT AS launch_ns'}
    FROM (${rows})
    WINDOW w0 AS (${part}${START_ORDER}), w AS (${part}${EARLIER_ROWS})`;
}

/** Rows per device of a segment-rows table: `dev`, `n`. */
export function segmentRowCountsSql(table: string): string {
  return `SELECT dev, count(*)::BIGINT AS n FROM ${table} GROUP BY dev ORDER BY dev`;
}

/**
 * The `limit` longest gaps of each requested device, longest first (ties:
 * the earlier first): `dev`, `pos`, `gap_ns`.
 */
export function longestGapsSql(table: string, reqs: readonly (DevRequest & { readonly limit: number })[], whole = false): string {
  if (reqs.length === 1) {
    // one device: a top-N, not a sort of every gap
    return `SELECT dev, pos, gap_ns FROM ${table} WHERE dev = ${sqlInt(reqs[0]!.dev)} AND gap_ns > 0 ORDER BY gap_ns DESC, pos LIMIT ${sqlInt(reqs[0]!.limit)}`;
  }
  const r = `SELECT unnest(${ints(reqs.map((x) => x.dev))}::INTEGER[]) AS dev, unnest(${ints(reqs.map((x) => x.limit))}::BIGINT[]) AS lim`;
  return `SELECT dev, pos, gap_ns FROM (
      SELECT t.dev, t.pos, t.gap_ns, r.lim, row_number() OVER (PARTITION BY t.dev ORDER BY t.gap_ns DESC, t.pos) AS k
      FROM ${rowsOf(table, reqs, whole)} t JOIN (${r}) r ON r.dev = t.dev WHERE t.gap_ns > 0)
    WHERE k <= lim ORDER BY dev, k`;
}

/**
 * Whether each requested device's kernel sequence is made of identical
 * blocks of its `period` rows: `dev`, `blocks` and `distinct_blocks` (1 when
 * every block is the same sequence; compared by a position-keyed hash of
 * each block).
 */
export function periodicSql(table: string, reqs: readonly (DevRequest & { readonly period: number })[], whole = false): string {
  const r = `SELECT unnest(${ints(reqs.map((x) => x.dev))}::INTEGER[]) AS dev, unnest(${ints(reqs.map((x) => x.period))}::BIGINT[]) AS p`;
  return `SELECT dev, count(*)::BIGINT AS blocks, count(DISTINCT h)::BIGINT AS distinct_blocks FROM (
      SELECT t.dev, t.pos // r.p AS block, sum(hash(t.kernel, t.pos % r.p))::HUGEINT AS h
      FROM ${rowsOf(table, reqs, whole)} t JOIN (${r}) r ON r.dev = t.dev GROUP BY 1, 2)
    GROUP BY dev ORDER BY dev`;
}

/**
 * The requested devices' rows with `segment` (0 before the first boundary, i
 * from boundary i on) and `first_pos` (where that segment starts). An ASOF
 * join against the boundary lists: O(rows + boundaries), where a CASE with
 * one branch per boundary cost rows x boundaries (86 s for 1 M rows cut at
 * 25 000 submissions).
 */
function withSegments(table: string, reqs: readonly CutRequest[], whole: boolean): string {
  // segments numbered by range(), not by a literal list (parsing a list of 250k numbers took 0.6 s)
  const lists = reqs.map((r) => `(${sqlInt(r.dev)}, ${ints(r.boundaries)}::BIGINT[])`).join(', ');
  const b = `SELECT dev, unnest(b) AS first_pos, unnest(range(1, len(b) + 1)) AS segment FROM (VALUES ${lists}) v(dev, b)`;
  // one device: no device key in the join (an ASOF join partitioned by a key was 1.6x slower for 250k boundaries)
  const one = reqs.length === 1;
  return `(SELECT t.*, coalesce(b.segment, 0) AS segment, coalesce(b.first_pos, 0)::BIGINT AS first_pos FROM ${rowsOf(table, reqs, whole)} t
      ASOF LEFT JOIN (${b}) b ON ${one ? '' : 'b.dev = t.dev AND '}t.pos >= b.first_pos)`;
}

/**
 * One row per segment of each requested device when its rows are cut before
 * the request's boundaries: `dev`, index, dispatch count, first start, last
 * end, the gap before it, its submission range, and a position-keyed hash of
 * its kernel sequence. Ordered by device and segment.
 */
export function segmentSummarySql(table: string, reqs: readonly CutRequest[], whole = false): string {
  // one device: grouped by segment alone (by device and segment was 1.4x slower for 250k segments)
  const [dev, by] = reqs.length === 1 ? [`${sqlInt(reqs[0]!.dev)}::INTEGER AS dev`, ''] : ['dev', 'dev, '];
  return `SELECT ${dev}, segment::INTEGER AS segment, count(*)::BIGINT AS dispatch_count, min(start_ns) AS start_ns, max(end_ns) AS end_ns,
      arg_min(gap_ns, pos) AS gap_before_ns, min(submission_id)::VARCHAR AS first_submission_id, max(submission_id)::VARCHAR AS last_submission_id,
      sum(hash(kernel, pos - first_pos))::HUGEINT::VARCHAR AS sequence_hash
    FROM ${withSegments(table, reqs, whole)}
    GROUP BY ${by}segment ORDER BY ${by}segment`;
}

/** Per device and segment (cut at the request's boundaries): an order-free hash of its kernels (`h`), to compare repetitions whose streams interleave differently. */
export function segmentKernelSetSql(table: string, reqs: readonly CutRequest[], whole = false): string {
  return `SELECT dev, segment::INTEGER AS segment, sum(hash(kernel))::HUGEINT::VARCHAR AS h FROM ${withSegments(table, reqs, whole)} GROUP BY 1, 2 ORDER BY 1, 2`;
}

/**
 * Per device and kernel name: rows in segment 0 (`a`) and segment 1 (`b`)
 * when cut at the request's boundaries (at least one), for the cold-pass
 * test (segment 0 = segment 1 plus a few extra kernels).
 */
export function firstTwoSegmentsKernelsSql(table: string, reqs: readonly CutRequest[], whole = false): string {
  const end = (r: CutRequest) => r.boundaries[1] ?? 2n ** 63n - 1n;
  const r = `SELECT unnest(${ints(reqs.map((x) => x.dev))}::INTEGER[]) AS dev, unnest(${ints(reqs.map((x) => x.boundaries[0]!))}::BIGINT[]) AS b0,
      unnest(${ints(reqs.map(end))}::BIGINT[]) AS b1`;
  return `SELECT t.dev, t.kernel, count(*) FILTER (WHERE t.pos < r.b0)::BIGINT AS a, count(*) FILTER (WHERE t.pos >= r.b0)::BIGINT AS b
    FROM ${rowsOf(table, reqs, whole)} t JOIN (${r}) r ON r.dev = t.dev WHERE t.pos < r.b1 GROUP BY 1, 2 ORDER BY 1, 2`;
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
/** The host-marker kinds (all but submissions). */
export type HostMarkerKind = Exclude<MarkerKind, 'submissions'>;
/** {@link HostMarkerKind}s, in the order they are tried. */
export const HOST_MARKER_KINDS: readonly HostMarkerKind[] = ['profiler_steps', 'device_sync', 'stream_sync'];

/** A host marker kind's events: `time` (when the marker cuts) and `is` (whether a host event is one). */
const HOST_MARKERS: Record<HostMarkerKind, { time: string; is: string }> = {
  profiler_steps: { time: 'start_ns', is: `regexp_matches(name, '^ProfilerStep#[0-9]+$')` },
  device_sync: { time: 'end_ns', is: `name IN ('cudaDeviceSynchronize', 'hipDeviceSynchronize', 'cuCtxSynchronize')` },
  stream_sync: { time: 'end_ns', is: `name IN ('cudaStreamSynchronize', 'hipStreamSynchronize', 'cuStreamSynchronize')` },
};

const captureIn = (captureIds: readonly number[]) => `capture_id IN (SELECT unnest(${ints(captureIds)}::BIGINT[]))`;

/**
 * How many distinct host-marker times of each kind each capture has: a row
 * per capture that has host events (`capture_id`, then a column per
 * {@link HostMarkerKind}). A kind with none cuts no device of the capture.
 */
export function markerCountsSql(captureIds: readonly number[]): string {
  const cols = HOST_MARKER_KINDS.map((k) => `count(DISTINCT ${HOST_MARKERS[k].time}) FILTER (WHERE ${HOST_MARKERS[k].is})::BIGINT AS ${k}`);
  return `SELECT capture_id, ${cols.join(', ')} FROM host_events WHERE ${captureIn(captureIds)} GROUP BY capture_id`;
}

/**
 * Cut positions (per device ascending, > 0, distinct) a marker kind gives
 * on a segment-rows table: for a host marker of the device's capture at time
 * t, the first row launched (launch call start, else device start) at or
 * after t; for submissions, the first row of each submission (none when a
 * row has no submission). Columns `dev`, `pos`.
 */
export function markerCutsSql(table: string, kind: MarkerKind, reqs: readonly (DevRequest & { readonly capture_id: number })[], whole = false): string {
  const rows = rowsOf(table, reqs, whole);
  if (kind === 'submissions') {
    return `SELECT dev, pos FROM (SELECT dev, min(pos) AS pos FROM ${rows} WHERE submission_id IS NOT NULL GROUP BY dev, submission_id)
      WHERE pos > 0 AND dev NOT IN (SELECT dev FROM ${rows} WHERE submission_id IS NULL) ORDER BY dev, pos`;
  }
  const m = HOST_MARKERS[kind];
  const r = `SELECT unnest(${ints(reqs.map((x) => x.dev))}::INTEGER[]) AS dev, unnest(${ints(reqs.map((x) => x.capture_id))}::BIGINT[]) AS capture_id`;
  // from_pos: the first position among rows launched at or after this row (a suffix minimum in launch order, ties
  // included); a marker takes it from the first row launched at or after it
  return `WITH m AS (SELECT DISTINCT r.dev, h.t FROM (SELECT DISTINCT capture_id, ${m.time} AS t FROM host_events
        WHERE ${captureIn([...new Set(reqs.map((x) => x.capture_id))])} AND ${m.is} AND ${m.time} IS NOT NULL) h JOIN (${r}) r ON r.capture_id = h.capture_id),
    x AS (SELECT dev, at_ns, min(pos) OVER (${byDev(reqs)}ORDER BY at_ns DESC) AS from_pos
      FROM (SELECT dev, pos, coalesce(launch_ns, start_ns) AS at_ns FROM ${rows}) WHERE at_ns IS NOT NULL)
    SELECT DISTINCT m.dev, x.from_pos AS pos FROM m ASOF JOIN x ON x.dev = m.dev AND m.t <= x.at_ns
    WHERE x.from_pos > 0 ORDER BY 1, 2`;
}
