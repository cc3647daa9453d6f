/**
 * Chrome trace JSON ("Trace Event Format") that Perfetto's UI opens, written
 * from the store by DuckDB (keys staged in temp tables, text built and
 * written in one COPY).
 *
 * ```
 * devices + captures ──> one process per (capture, device), GPU before NPU,
 *                        then one host process per capture with host events;
 *                        all on the one host timeline of the store
 * dispatches, submissions, device-bound host events (copies, memsets, sync markers)
 *     ──> per (process, queue): lanes (greedy interval partitioning; only
 *         the runs of overlapping rows go through LaneAssigner in JS)
 *     ──> one thread per queue lane
 * other host events ──> one thread per host thread_id of the host process
 *     (as the source wrote them: nested slices stay on their thread)
 * launch call (host) -> kernel (device), linked by correlation id
 *     ──> a flow ("s" at the launch, "f" bp:e at the kernel)
 * every event's JSON text is built by DuckDB (one VARCHAR per event) and
 * written by one COPY (head and metadata as its PREFIX), in no fixed order
 * ```
 *
 * Times: Chrome JSON counts microseconds; every `ts`/`dur` is the exact
 * decimal text of the store's integer nanoseconds (the SQL twin of
 * `nsToUsDecimal`), never a float, so parsing the text back gives the
 * nanoseconds exactly, and `ts + dur` is exactly the end. Zero-length
 * slices (a zero-length dispatch the producer wrote, an instant, a
 * zero-length sync marker) are written with dur 0, never dropped; their
 * args say `valid: false` when the store does. Raw ticks and ids ride in
 * `args`, as JSON numbers up to 2^53 and strings beyond.
 */
import { lstat, rename, rm, stat, writeFile } from 'node:fs/promises';
import { TickwiseError } from '@tickwise/time';
import { LAUNCH_CALL_PREDICATE } from '@tickwise/analyzer';
import { QueryError, sqlString, type Store } from '@tickwise/store';
import { jsonObject } from './json-text';
import { LaneAssigner } from './lanes';
import { reportMessages } from './messages';

/** What an export wrote. */
export interface PerfettoExportSummary {
  /** The file written. */
  readonly path: string;
  /** Dispatch slices written (category `dispatch`). */
  readonly dispatch_slices: number;
  /** Submission slices written (category `submission`). */
  readonly submission_slices: number;
  /** Host-event slices written (category = the host event's kind). */
  readonly host_slices: number;
  /** Launch -> kernel flows written (category `launch`). */
  readonly flows: number;
  /** Processes: one per (capture, device), one per capture with host events. */
  readonly processes: number;
  /** Threads: one per queue lane (plus submission lanes), one per host thread. */
  readonly threads: number;
  /** Rows left out because they end before they start. */
  readonly negative_duration_rows: number;
  /** Bytes written. */
  readonly bytes: number;
}

/** Options of {@link exportPerfettoJson}. */
export interface PerfettoExportOptions {
  /** Also write the submissions table as slices (default true). */
  readonly submissions?: boolean;
  /** Also write host_events as slices and launch -> kernel flows (default true). */
  readonly hostEvents?: boolean;
}

const HOST_TIMED = `('host_monotonic', 'host_boottime', 'host_other')`;
const DEVICE_ORDER = `CASE kind WHEN 'gpu' THEN 0 WHEN 'npu' THEN 1 WHEN 'cpu' THEN 2 ELSE 3 END`;

/** Rows that are drawn: timed, not ending before they start; invalid only when zero-length (a marker or a producer's zero-length row). */
const DRAWN = (valid: string) => `start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns AND (${valid} OR end_ns = start_ns)`;
const DISPATCH_DRAWN = DRAWN('valid');
const SUBMISSION_DRAWN = `${DRAWN('coalesce(valid, true)')} AND device IS NOT NULL`;
const HOST_DRAWN = DRAWN('coalesce(valid, true)');

/** SQL of the device processes: one row per (capture, device) that has drawn rows. */
export function perfettoProcessesSql(opts: PerfettoExportOptions = {}): string {
  const host = opts.hostEvents === false ? '' : `UNION SELECT DISTINCT capture_id, device FROM host_events WHERE device IS NOT NULL AND ${HOST_DRAWN}`;
  const subs = opts.submissions === false ? '' : `UNION SELECT DISTINCT capture_id, device FROM submissions WHERE ${SUBMISSION_DRAWN}`;
  return `WITH k AS (
      SELECT DISTINCT capture_id, device FROM dispatches WHERE ${DISPATCH_DRAWN} ${subs} ${host})
    SELECT k.capture_id, k.device, coalesce(d.kind, 'unknown') AS kind, d.name, d.time_base, d.tick_hz_used,
      c.label, c.path, c.timeline, c.producer, c.sha256
    FROM k LEFT JOIN devices d USING (capture_id, device) LEFT JOIN captures c USING (capture_id)
    ORDER BY ${DEVICE_ORDER}, k.capture_id, k.device`;
}

/**
 * The fraction of each whole number of microseconds that 0-999 ns make, as
 * nsToUsDecimal writes it: '' for 0, else '.' and the digits without
 * trailing zeros ('.5' for 500 ns, '.025' for 25 ns). Looked up by index in
 * SQL: half the time of building it from the remainder per row.
 */
const US_FRACTIONS = Array.from({ length: 1000 }, (_, i) => (i === 0 ? '' : `.${String(i).padStart(3, '0').replace(/0+$/, '')}`));

/** The temporary macro of usDecimalSql (created by buildTables, dropped with its tables). */
const US_MACRO = 'tw_pf_us';
const US_MACRO_SQL = `CREATE OR REPLACE TEMP MACRO ${US_MACRO}(x) AS
  CASE WHEN x >= 0 THEN concat((x // 1000)::VARCHAR, [${US_FRACTIONS.map((t) => `'${t}'`).join(',')}][(x % 1000)::INTEGER + 1])
    ELSE concat('-', (abs(x::HUGEINT) // 1000)::VARCHAR, [${US_FRACTIONS.map((t) => `'${t}'`).join(',')}][(abs(x::HUGEINT) % 1000)::INTEGER + 1]) END`;

/**
 * SQL: exact decimal microseconds of an integer ns expression (nsToUsDecimal
 * in SQL: trailing zeros of the fraction dropped), through the temporary
 * macro buildTables creates. Non-negative values take a BIGINT path (HUGEINT
 * arithmetic is ~15x slower); negative ones go through HUGEINT so that
 * -2^63 has an absolute value.
 */
export function usDecimalSql(ns: string): string {
  return `${US_MACRO}(${ns})`;
}

/** SQL: the integer is a JSON-safe number (within +-2^53: jsonInteger writes it as a number, else as a string). */
function safeIntSql(x: string): string {
  return `(${x}) BETWEEN -9007199254740992 AND 9007199254740992`;
}

/** A field of a slice's args: its key, its SQL, and how it is written. */
type Field = readonly [key: string, sql: string, type: 'int' | 'str' | 'json' | 'bool'];

type Share = 'none' | 'some' | 'all';

/**
 * What one scan of a source's drawn rows says about a field: in how many
 * of them it is set, and (integers) in how many it is a JSON-safe number.
 * A field set in none is left out of the SQL, one set in all needs no NULL
 * test, and an integer all safe or all beyond 2^53 needs no range test per
 * row. Most columns are one or the other (a Kineto trace has no ticks, an
 * IREE capture all of them; ns since the epoch are all beyond 2^53, line
 * numbers all below), and the per-row tests were half the export's text
 * building. The text written is the same either way.
 */
export interface FieldProfile {
  readonly set: Share;
  readonly safe: Share;
}

const share = (k: number, n: number): Share => (k === 0 ? 'none' : k === n ? 'all' : 'some');

/** SQL: the parts of a JSON object of the non-NULL fields (as jsonObject writes it), for one concat(). */
function argsParts(fields: readonly Field[], profiles: readonly FieldProfile[]): string {
  const kept = fields.map((f, i) => [f, profiles[i]!] as const).filter(([, p]) => p.set !== 'none');
  if (kept.length === 0) return `'{}'`;
  // a leading comma is trimmed unless the first field is always there
  const trim = kept[0]![1].set !== 'all';
  const part = ([[k, e, t], p]: (typeof kept)[number], i: number) => {
    const int = p.safe === 'all' ? `(${e})::VARCHAR` : p.safe === 'none' ? `'"', (${e})::VARCHAR, '"'`
      : `CASE WHEN ${safeIntSql(e)} THEN (${e})::VARCHAR ELSE concat('"', (${e})::VARCHAR, '"') END`;
    // JSON text: a raw line break can only be whitespace between tokens, so it becomes a space (one event per line)
    const v = t === 'int' ? int : t === 'str' ? `to_json((${e})::VARCHAR)::VARCHAR` : t === 'bool' ? `CASE WHEN ${e} THEN 'true' ELSE 'false' END`
      : `translate((${e})::VARCHAR, chr(10) || chr(13), '  ')`;
    // the parts of one concat(): a field always set adds its key and value there, others a CASE of their own
    const text = `'${i === 0 && !trim ? '' : ','}${JSON.stringify(k)}:', ${v}`;
    return p.set === 'all' ? text : `CASE WHEN (${e}) IS NULL THEN '' ELSE concat(${text}) END`;
  };
  const body = kept.map(part).join(', ');
  return trim ? `'{', ltrim(concat(${body}), ','), '}'` : `'{', ${body}, '}'`;
}

const TIME_FIELDS: readonly Field[] = [['start_ns', 'start_ns', 'int'], ['end_ns', 'end_ns', 'int'], ['dur_ns', 'end_ns - start_ns', 'int']];
const INVALID: Field = ['valid', 'CASE WHEN coalesce(valid, true) THEN NULL ELSE false END', 'bool'];

const DISPATCH_ARGS: readonly Field[] = [
  ['kernel', 'kernel', 'str'], ['submission_id', 'submission_id', 'int'], ['command_buffer_id', 'command_buffer_id', 'int'],
  ['command_index', 'command_index', 'int'], ['event_id', 'event_id', 'int'], ['executable_id', 'executable_id', 'int'],
  ['function_ordinal', 'function_ordinal', 'int'], ['start_tick', 'start_tick', 'int'], ['end_tick', 'end_tick', 'int'],
  ...TIME_FIELDS, ['time_source', 'time_source', 'str'],
  ['workgroup_count', `CASE WHEN workgroup_count_x IS NOT NULL THEN concat(workgroup_count_x, 'x', coalesce(workgroup_count_y::VARCHAR, '?'), 'x', coalesce(workgroup_count_z::VARCHAR, '?')) END`, 'str'],
  ['rows', 'rows', 'int'], ['line', 'line', 'int'], INVALID,
];

const SUBMISSION_ARGS: readonly Field[] = [
  ['submission_id', 'submission_id', 'int'], ['command_buffer_id', 'command_buffer_id', 'int'], ['op', 'op', 'str'],
  ['operation_count', 'operation_count', 'int'], ['event_id', 'event_id', 'int'], ['start_tick', 'start_tick', 'int'], ['end_tick', 'end_tick', 'int'],
  ...TIME_FIELDS, ['time_source', 'time_source', 'str'], ['line', 'line', 'int'], INVALID,
];

const HOST_ARGS: readonly Field[] = [
  ['kind', 'kind', 'str'], ['op', 'op', 'str'], ['queue', 'queue', 'int'], ['event_id', 'event_id', 'int'], ['submission_id', 'submission_id', 'int'],
  ['command_buffer_id', 'command_buffer_id', 'int'], ['thread_id', 'thread_id', 'int'], ...TIME_FIELDS, ['time_source', 'time_source', 'str'],
  ['line', 'line', 'int'], INVALID, ['source', 'args', 'json'],
];

/** A slice source: its table, its drawn rows, the event's cat and name, its args. */
interface Source {
  readonly src: number;
  readonly table: string;
  readonly drawn: string;
  readonly cat: string;
  readonly name: string;
  readonly args: readonly Field[];
}

/** The slice sources. */
export const SOURCES: readonly Source[] = [
  { src: 0, table: 'dispatches', drawn: DISPATCH_DRAWN, cat: `'dispatch'`, name: `coalesce(kernel, 'dispatch')`, args: DISPATCH_ARGS },
  { src: 1, table: 'submissions', drawn: SUBMISSION_DRAWN, cat: `'submission'`, name: `concat('submission ', coalesce(submission_id::VARCHAR, '?'))`, args: SUBMISSION_ARGS },
  { src: 2, table: 'host_events', drawn: HOST_DRAWN, cat: 'kind', name: 'coalesce(name, op, kind)', args: HOST_ARGS },
];

/** Profiles a source's args fields (one aggregate over its drawn rows: a superset of the rows written, so what it rules out holds for them). */
export async function profileFields(store: Store, source: Source): Promise<FieldProfile[]> {
  const cols = source.args.flatMap(([, e, t], i) => [`count(${e})::BIGINT AS set_${i}`, ...(t === 'int' ? [`count(*) FILTER (${safeIntSql(e)})::BIGINT AS safe_${i}`] : [])]);
  const r = (await store.rows(`SELECT count(*)::BIGINT AS n, ${cols.join(', ')} FROM ${source.table} WHERE ${source.drawn}`))[0]!;
  return source.args.map((_, i) => {
    const set = Number(r[`set_${i}`]);
    return { set: share(set, Number(r['n'])), safe: share(Number(r[`safe_${i}`] ?? 0), set) };
  });
}

/** SQL: the events of one source, one row each, as their JSON text; `profiles` (profileFields) leave out the tests its rows never need. */
export function eventsSql(source: Source, profiles: readonly FieldProfile[] = source.args.map(() => ({ set: 'some', safe: 'some' }))): string {
  return `SELECT concat('{"ph":"X","cat":', to_json(${source.cat})::VARCHAR, ',"name":', to_json(${source.name})::VARCHAR, ',"pid":', p.pid, ',"tid":', p.tid,
      ',"ts":', ${usDecimalSql('start_ns')}, ',"dur":', ${usDecimalSql('end_ns - start_ns')}, ',"args":', ${argsParts(source.args, profiles)}, '}') AS ev
    FROM tw_pf_pos p JOIN ${source.table} x ON x.rowid = p.sid WHERE p.src = ${source.src}`;
}

/**
 * DuckDB writes the whole file: CSV of one column with no quote character
 * (so nothing is ever quoted: with one, '#' alone made DuckDB quote a
 * value), a delimiter JSON text never holds raw, ",\n" between rows, and the
 * document's head and tail as the writer's PREFIX and SUFFIX; each value is
 * written as it is, one event per line (JSON text has no raw line break:
 * to_json escapes them, and the `json` fields have theirs made spaces).
 */
async function copyTo(store: Store, sql: string, file: string, prefix: string, suffix: string): Promise<void> {
  try {
    await store.run(`SET preserve_insertion_order = false`);
    await store.run(`COPY (${sql}) TO ${sqlString(file)} (FORMAT csv, HEADER false, DELIMITER '\u0001', QUOTE '', ESCAPE '',
      NEW_LINE ',\n', PREFIX ${sqlString(prefix)}, SUFFIX ${sqlString(suffix)})`);
  } catch (e) {
    if (!(e instanceof QueryError)) throw e;
    throw new TickwiseError('cannot-write', reportMessages.cannotWrite(file, e.message.replace(/^query failed: /, '')), { cause: e });
  } finally {
    await store.run(`RESET preserve_insertion_order`).catch(() => undefined);
  }
}

type Rec = Record<string, unknown>;

const KIND_NAME: Record<string, string> = { gpu: 'GPU', npu: 'NPU', cpu: 'CPU', other: 'accelerator', unknown: 'device' };

function captureName(p: Rec): string {
  return String(p['label'] ?? (typeof p['path'] === 'string' ? p['path'].split('/').pop() : null) ?? `capture ${String(p['capture_id'])}`);
}

/** "GPU NVIDIA H200 · device 0 · run (capture 1)": the kind, the device's own name when the trace gave one. */
function processName(p: Rec): string {
  const kind = KIND_NAME[String(p['kind'])] ?? String(p['kind']);
  const name = p['name'] ? ` ${String(p['name'])}` : '';
  return `${kind}${name} · device ${String(p['device'])} · ${captureName(p)} (capture ${String(p['capture_id'])})`;
}

/**
 * The thread key of a slice (see buildTables): pk packs its process, source
 * kind, host timing and host event kind (pid, tsrc, host_timed, and hkind's
 * number in tw_pf_hk) into one integer, since a sort on four columns fewer
 * halves the lanes' window (and a text column in it cost that window 1.7x);
 * NONE stands for an unknown queue or thread id.
 */
const NONE = '(-9223372036854775807 - 1)';
const THREAD_KEY = 'pk, tq';
const QNAME = `CASE WHEN tq = ${NONE} THEN 'queue ?' ELSE concat('queue ', tq) END`;

const TEMP = ['tw_pf_proc', 'tw_pf_hk', 'tw_pf_s', 'tw_pf_run', 'tw_pf_lane', 'tw_pf_t', 'tw_pf_pos', 'tw_pf_flow'];

/**
 * Writes the store's dispatches, submissions and host events as Chrome
 * trace JSON for Perfetto's UI, streaming, into a temporary file renamed
 * into place at the end (a failed export leaves no partial file). One
 * event per line; see the module comment for the track layout and the
 * exact-time rule.
 */
export async function exportPerfettoJson(store: Store, path: string, opts: PerfettoExportOptions = {}): Promise<PerfettoExportSummary> {
  const withSubs = opts.submissions !== false;
  const withHost = opts.hostEvents !== false;
  // a folder at the path is refused before any work (the rename at the end would fail on it)
  if ((await lstat(path).catch(() => null))?.isDirectory()) {
    throw new TickwiseError('cannot-write', `${reportMessages.cannotWrite(path, 'it is a folder; give the trace a file name (e.g. trace.json)')} (nothing written)`, { file: path });
  }
  const procs = await store.rows(perfettoProcessesSql(opts));
  const negative = Number(await store.scalar(
    `SELECT (SELECT count(*) FROM dispatches WHERE valid AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns < start_ns)
      + ${withHost ? `(SELECT count(*) FROM host_events WHERE coalesce(valid, true) AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns < start_ns)` : '0'}`,
  ));
  const captures = await store.rows(`SELECT capture_id, path, format, producer, label, sha256, timeline FROM captures ORDER BY capture_id`);
  const hostProcs = withHost
    ? await store.rows(`SELECT k.capture_id, c.label, c.path FROM (SELECT DISTINCT capture_id FROM host_events WHERE device IS NULL AND ${HOST_DRAWN}) k
        LEFT JOIN captures c USING (capture_id) ORDER BY k.capture_id`)
    : [];

  const tmp = `${path}.partial-${process.pid}`;
  const counts = { dispatch: 0, submission: 0, host: 0, flows: 0, threads: 0 };
  let bytes = 0;
  try {
    await buildTables(store, procs, hostProcs, withSubs, withHost);
    const meta: string[] = [];
    procs.forEach((p, i) => {
      const pid = i + 1;
      meta.push(`{"ph":"M","name":"process_name","pid":${pid},"tid":0,"args":{"name":${JSON.stringify(processName(p))}}}`);
      meta.push(`{"ph":"M","name":"process_sort_index","pid":${pid},"tid":0,"args":{"sort_index":${pid}}}`);
      meta.push(`{"ph":"M","name":"process_labels","pid":${pid},"tid":0,"args":{"labels":${JSON.stringify(
        `capture_id=${String(p['capture_id'])} device=${String(p['device'])} kind=${String(p['kind'])} time_base=${String(p['time_base'] ?? '?')}`,
      )}}}`);
    });
    hostProcs.forEach((h, i) => {
      const pid = procs.length + i + 1;
      meta.push(`{"ph":"M","name":"process_name","pid":${pid},"tid":0,"args":{"name":${JSON.stringify(`host · ${captureName(h)} (capture ${String(h['capture_id'])})`)}}}`);
      meta.push(`{"ph":"M","name":"process_sort_index","pid":${pid},"tid":0,"args":{"sort_index":${pid}}}`);
      meta.push(`{"ph":"M","name":"process_labels","pid":${pid},"tid":0,"args":{"labels":${JSON.stringify(`capture_id=${String(h['capture_id'])} host`)}}}`);
    });
    const threads = await store.query({ pid: 'number', tid: 'number', name: 'string', sort_index: 'number' },
      `SELECT pid, tid, concat(tname, CASE WHEN lane > 0 THEN concat(' · lane ', lane + 1) ELSE '' END) AS name,
         (CASE src WHEN 1 THEN 0 WHEN 0 THEN 1000000 WHEN 2 THEN 2000000 ELSE 0 END + tid)::BIGINT AS sort_index
       FROM tw_pf_t ORDER BY tid`);
    for (const t of threads) {
      meta.push(`{"ph":"M","name":"thread_name","pid":${t.pid},"tid":${t.tid},"args":{"name":${JSON.stringify(t.name)}}}`);
      meta.push(`{"ph":"M","name":"thread_sort_index","pid":${t.pid},"tid":${t.tid},"args":{"sort_index":${t.sort_index}}}`);
    }
    counts.threads = threads.length;
    const c = await store.query({ src: 'number', n: 'number' }, `SELECT src, count(*)::BIGINT AS n FROM tw_pf_s GROUP BY src`);
    for (const r of c) {
      if (r.src === 0) counts.dispatch = r.n;
      else if (r.src === 1) counts.submission = r.n;
      else counts.host += r.n;
    }
    counts.flows = await store.count('tw_pf_flow');

    const other = [
      `"producer":"tickwise export --format perfetto-json"`,
      `"time_unit":"ts and dur are microseconds, the exact decimal of the store's integer nanoseconds"`,
      `"captures":[${captures.map((x) => jsonObject(Object.entries(x))).join(',')}]`,
    ];
    // no displayTimeUnit: older trace processors read "ns" there as the unit of ts (google/perfetto#106)
    const head = `{"otherData":{${other.join(',')}},\n"traceEvents":[\n${meta.join(',\n')}`;
    const parts: string[] = [];
    for (const source of SOURCES) if (c.some((r) => r.src === source.src)) parts.push(eventsSql(source, await profileFields(store, source)));
    if (counts.flows > 0) parts.push(FLOWS_SQL);
    if (parts.length > 0) {
      await copyTo(store, parts.join('\nUNION ALL\n'), tmp, `${head}${meta.length ? ',\n' : ''}`, '\n]}\n');
    } else {
      await writeFile(tmp, `${head}\n]}\n`);
    }
    bytes = (await stat(tmp)).size;
    await putInPlace(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    // a write that failed (full disk, no permission) names the file asked for, not the temporary one
    const text = String((e as Error).message ?? e);
    const writeFailed = e instanceof TickwiseError
      ? e.code === 'cannot-write'
      : /IO Error|No space|ENOSPC|EACCES|EROFS|EDQUOT|EISDIR|ENOTDIR|Permission denied|Read-only file system|Could not (write|open)/i.test(text);
    if (writeFailed) {
      const why = text.replace(`cannot write ${tmp}: `, '').replace(/^query failed: /, '').split(tmp).join(path);
      throw new TickwiseError('cannot-write', `${reportMessages.cannotWrite(path, why)} (nothing written)`, { file: path, cause: e });
    }
    throw e;
  } finally {
    for (const t of TEMP) await store.run(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
    await store.run(`DROP MACRO IF EXISTS ${US_MACRO}`).catch(() => undefined);
  }
  return {
    path,
    dispatch_slices: counts.dispatch,
    submission_slices: counts.submission,
    host_slices: counts.host,
    flows: counts.flows,
    processes: procs.length + hostProcs.length,
    threads: counts.threads,
    negative_duration_rows: negative,
    bytes,
  };
}

/**
 * Puts the finished file at `path`. A rename over an existing file makes
 * ext4 (auto_da_alloc) allocate the new file's blocks and start writing
 * them before the rename returns: 0.15-0.19 s of a 1 M-slice export here
 * whenever the trace was exported before. So an existing file (not a
 * folder: renaming onto one fails as before) is moved aside first, the new
 * one renamed in, and the old one removed; if the second rename fails, the
 * old file is put back. Between the renames the path is missing for a
 * moment: a reader then finds no file, never a partial one.
 */
async function putInPlace(tmp: string, path: string): Promise<void> {
  const old = await lstat(path).catch(() => null);
  const aside = old && !old.isDirectory() ? `${path}.old-${process.pid}` : null;
  if (aside) await rename(path, aside);
  try {
    await rename(tmp, path);
  } catch (e) {
    if (aside) await rename(aside, path).catch(() => undefined);
    throw e;
  }
  if (aside) await rm(aside, { force: true });
}

/**
 * The staging tables (keys only; the events' text is built when they are
 * written): tw_pf_proc (pid of each (capture, device) and host process),
 * tw_pf_s (one row per slice: its source row, process, thread key, times,
 * correlation ids), tw_pf_lane (lane > 0 of the rows that overlap on their
 * queue), tw_pf_t (one row per thread lane, tid numbered), tw_pf_pos (each
 * slice's pid and tid), tw_pf_flow (one row per flow: the launch call's and
 * the kernel's pid, tid and start; FLOWS_SQL writes its two events).
 */
async function buildTables(store: Store, procs: Rec[], hostProcs: Rec[], withSubs: boolean, withHost: boolean): Promise<void> {
  for (const t of TEMP) await store.run(`DROP TABLE IF EXISTS ${t}`);
  await store.run(US_MACRO_SQL);
  await store.run(`CREATE TEMP TABLE tw_pf_proc (capture_id INTEGER, device INTEGER, pid INTEGER)`);
  const procRows: unknown[][] = [
    ...procs.map((p, i) => [Number(p['capture_id']), Number(p['device']), i + 1]),
    ...hostProcs.map((h, i) => [Number(h['capture_id']), null, procs.length + i + 1]),
  ];
  if (procRows.length) await store.appendTemp('tw_pf_proc', procRows);

  // a thread is (pid, tsrc, host_timed, tq, hkind) and a lane: tsrc 0 dispatches, 1 submissions, 2 device-bound host
  // events, 3 host-process events; tq the queue (tsrc 0-2) or the host thread id (tsrc 3), NONE when unknown; hkind
  // the host event kind (tsrc 2) else '', and hcode its number (0 for ''). No strings are built per row (the thread
  // names are made per thread).
  const tq = (x: string) => `coalesce((${x})::BIGINT, ${NONE})`;
  let kinds = 0;
  if (withHost) {
    await store.run(`CREATE TEMP TABLE tw_pf_hk AS SELECT kind, row_number() OVER (ORDER BY kind) AS hcode FROM (SELECT DISTINCT kind FROM host_events WHERE device IS NOT NULL)`);
    kinds = await store.count('tw_pf_hk');
  }
  const timed = (t: string) => `${t} IN ${HOST_TIMED}`;
  const parts = [
    `SELECT 0 AS src, 0 AS tsrc, d.rowid AS sid, p.pid, d.capture_id, d.device, d.start_ns, d.end_ns, d.line, true AS lanes,
       ${timed('d.time_source')} AS host_timed, ${tq('d.queue')} AS tq, '' AS hkind, 0 AS hcode, d.event_id AS corr, NULL::UBIGINT AS launch_corr
     FROM dispatches d JOIN tw_pf_proc p ON p.capture_id = d.capture_id AND p.device = d.device
     WHERE ${DISPATCH_DRAWN.replaceAll(/\b(start_ns|end_ns|valid)\b/g, 'd.$1')}`,
  ];
  if (withSubs) {
    parts.push(`SELECT 1, 1, d.rowid, p.pid, d.capture_id, d.device, d.start_ns, d.end_ns, d.line, true,
       ${timed('d.time_source')}, ${tq('d.queue')}, '', 0, NULL, NULL
     FROM submissions d JOIN tw_pf_proc p ON p.capture_id = d.capture_id AND p.device = d.device
     WHERE ${SUBMISSION_DRAWN.replaceAll(/\b(start_ns|end_ns|valid|device)\b/g, 'd.$1')}`);
  }
  if (withHost) {
    // device-bound host events (copies, memsets, sync markers) on their device's process, per kind and queue (lanes);
    // the others on the capture's host process, one thread per thread_id, as written (nesting kept)
    parts.push(`SELECT 2, CASE WHEN dpid IS NOT NULL THEN 2 ELSE 3 END, sid, coalesce(dpid, hpid), capture_id, device, start_ns, end_ns, line, dpid IS NOT NULL,
       false, CASE WHEN dpid IS NOT NULL THEN ${tq('queue')} ELSE ${tq('thread_id')} END, CASE WHEN dpid IS NOT NULL THEN kind ELSE '' END,
       CASE WHEN dpid IS NOT NULL THEN hcode ELSE 0 END, CASE WHEN dpid IS NOT NULL THEN event_id END,
       CASE WHEN dpid IS NULL AND ${LAUNCH_CALL_PREDICATE} THEN CASE WHEN kind = 'cuda_api' THEN submission_id ELSE event_id END END
     FROM (SELECT h.rowid AS sid, h.capture_id, h.device, h.start_ns, h.end_ns, h.line, h.kind, h.op, h.queue, h.thread_id, h.event_id, h.submission_id,
         dp.pid AS dpid, hp.pid AS hpid, hk.hcode
       FROM host_events h
         LEFT JOIN tw_pf_proc dp ON dp.capture_id = h.capture_id AND dp.device = h.device
         LEFT JOIN tw_pf_proc hp ON hp.capture_id = h.capture_id AND hp.device IS NULL
         LEFT JOIN tw_pf_hk hk ON hk.kind = h.kind
       WHERE ${HOST_DRAWN.replaceAll(/\b(start_ns|end_ns|valid)\b/g, 'h.$1')})
     WHERE coalesce(dpid, hpid) IS NOT NULL`);
  }
  // one row per slice, keys only (rid: unique without a window: src in the high bits, the source row id below)
  await store.run(`CREATE TEMP TABLE tw_pf_s AS
    SELECT (src::BIGINT << 48) + sid::BIGINT AS rid, (pid::BIGINT * 8 + tsrc * 2 + host_timed::INTEGER) * ${kinds + 1} + hcode AS pk, * FROM (${parts.join('\nUNION ALL\n')})`);

  // lanes: only the runs of rows that overlap an earlier one of their queue need the greedy partitioning; a run
  // starts at a row that overlaps nothing before it (every lane is free there, so lane 0), so each run starts afresh.
  // ov: the row starts before an earlier row of its thread key ends; next_ov: the next row does (one running max and
  // one lead over one sort of the narrow rows; only the rows of runs leave the statement, and only where lanes apply:
  // the host threads keep their nesting)
  await store.run(`CREATE TEMP TABLE tw_pf_lane (rid BIGINT, lane INTEGER)`);
  const w = `PARTITION BY ${THREAD_KEY} ORDER BY start_ns, end_ns, line`;
  // (computed in one statement, not a streamed one: DuckDB runs a streamed query's window on fewer threads)
  // pair: the row is one of a run of two, the commonest run (a dispatch starting before the one before it ends):
  // its first row takes lane 0 and its second, overlapping the first, lane 1, with no JS; LaneAssigner takes the
  // longer runs (a run's rows are consecutive here, so lag/lead over the run rows see the row's own run). That
  // window runs over the run rows only: a row's ov is the row before's next_ov, so the neighbour lag/lead would see
  // among all rows of a run row is a run row itself, the same one (sorting all rows twice took ~0.15 s more a 1 M)
  await store.run(`CREATE TEMP TABLE tw_pf_run AS SELECT rid, ov, start_ns, end_ns, ${THREAD_KEY}, line,
      CASE WHEN ov THEN NOT coalesce(lag(ov) OVER (${w}), false) AND NOT next_ov ELSE NOT coalesce(lead(next_ov) OVER (${w}), false) END AS pair
    FROM (SELECT * FROM (
      SELECT rid, ${THREAD_KEY}, start_ns, end_ns, line, coalesce(start_ns < before, false) AS ov, coalesce(nxt < greatest(before, end_ns), false) AS next_ov
      FROM (SELECT rid, ${THREAD_KEY}, start_ns, end_ns, line,
          max(end_ns) OVER (${w} ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before, lead(start_ns) OVER (${w}) AS nxt
        FROM tw_pf_s WHERE lanes))
    WHERE ov OR next_ov)`);
  await store.run(`INSERT INTO tw_pf_lane SELECT rid, 1 FROM tw_pf_run WHERE pair AND ov`);
  const runs = `SELECT rid, ov, start_ns, end_ns FROM tw_pf_run WHERE NOT pair ORDER BY ${THREAD_KEY}, start_ns, end_ns, line`;
  const laneRows: [bigint, number][] = [];
  let assigner = new LaneAssigner();
  for await (const chunk of store.stream(runs)) {
    for (const r of chunk) {
      if (!r['ov']) assigner = new LaneAssigner(); // a run's first row: nothing in flight before it
      const lane = assigner.assign(r['start_ns'] as bigint, r['end_ns'] as bigint);
      if (lane > 0) laneRows.push([r['rid'] as bigint, lane]);
    }
  }
  if (laneRows.length) await store.appendTemp('tw_pf_lane', laneRows);

  await store.run(`CREATE TEMP TABLE tw_pf_t AS
    SELECT row_number() OVER (ORDER BY tsrc, capture_id, device NULLS LAST, host_timed, tq, hkind, lane)::INTEGER AS tid, *,
      CASE WHEN tsrc = 3 THEN 2 ELSE tsrc END AS src,
      CASE tsrc WHEN 0 THEN concat(${QNAME}, CASE WHEN host_timed THEN ' · host-timed' ELSE '' END)
        WHEN 1 THEN concat(${QNAME}, ' submissions', CASE WHEN host_timed THEN ' · host-timed' ELSE '' END)
        WHEN 2 THEN concat(${QNAME}, ' · ', hkind)
        ELSE CASE WHEN tq = ${NONE} THEN 'thread ?' ELSE concat('thread ', tq) END END AS tname
    FROM (SELECT s.pk, s.pid, s.tsrc, s.host_timed, s.tq, s.hkind, coalesce(l.lane, 0) AS lane, min(s.capture_id) AS capture_id, min(s.device) AS device
      FROM tw_pf_s s LEFT JOIN tw_pf_lane l ON l.rid = s.rid GROUP BY s.pk, s.pid, s.tsrc, s.host_timed, s.tq, s.hkind, coalesce(l.lane, 0))`);
  await store.run(`CREATE TEMP TABLE tw_pf_pos AS
    SELECT s.rid, s.src, s.sid, s.pid, t.tid FROM tw_pf_s s LEFT JOIN tw_pf_lane l ON l.rid = s.rid
      JOIN tw_pf_t t ON t.pk = s.pk AND t.tq = s.tq AND t.lane = coalesce(l.lane, 0)`);

  // flows: each device slice with a correlation id -> the earliest launch call of its capture carrying that id (no
  // statement over every slice when no launch call has one: an IREE capture has none)
  const launches = Number(await store.scalar(`SELECT count(launch_corr) FROM tw_pf_s`));
  await store.run(`CREATE TEMP TABLE tw_pf_flow AS
    WITH launch AS (
      SELECT capture_id, launch_corr AS corr, arg_min(rid, start_ns) AS rid, min(start_ns) AS lts FROM tw_pf_s WHERE launch_corr IS NOT NULL GROUP BY capture_id, launch_corr)
    SELECT k.rid AS flow_id, lp.pid AS lpid, lp.tid AS ltid, l.lts, kp.pid AS kpid, kp.tid AS ktid, k.start_ns AS kts
    FROM tw_pf_s k JOIN launch l ON l.capture_id = k.capture_id AND l.corr = k.corr
      JOIN tw_pf_pos lp ON lp.rid = l.rid JOIN tw_pf_pos kp ON kp.rid = k.rid
    WHERE k.corr IS NOT NULL AND k.src IN (0, 2)${launches === 0 ? ' AND false' : ''}`);
}

/** SQL: the flow events of tw_pf_flow, two per flow ("s" at the launch call, "f" binding to the kernel's start), as their JSON text. */
const FLOWS_SQL = `SELECT concat('{"ph":"s","cat":"launch","name":"launch","id":', flow_id, ',"pid":', lpid, ',"tid":', ltid, ',"ts":', ${usDecimalSql('lts')}, '}') AS ev
    FROM tw_pf_flow
    UNION ALL
    SELECT concat('{"ph":"f","bp":"e","cat":"launch","name":"launch","id":', flow_id, ',"pid":', kpid, ',"tid":', ktid, ',"ts":', ${usDecimalSql('kts')}, '}')
    FROM tw_pf_flow`;
