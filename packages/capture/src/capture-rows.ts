import { accessSync, constants as fsConstants, mkdirSync, readdirSync, rmSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryError, sqlString, type DeviceKind, type Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { firstInvalidUtf8Line, processAlive, processTempDir } from './source-file';
import type { Diagnostic } from './readers/ireeperf-jsonl';

/**
 * The rows every reader writes besides its events: the `captures` row, the
 * `devices` rows, `diagnostics`, `assumptions` and `conditions`, plus the
 * small SQL and temp-file helpers the readers share.
 */

/**
 * Runs statement `sql(maxObjectBytes?)`, which reads JSON with DuckDB: first
 * with DuckDB's default buffers (faster: 47 -> 20 ms for the ireeperf raw
 * pass, 560 -> 410 ms for a Chrome trace's 30 MB of flow events), once more
 * with `large` after DuckDB's maximum_object_size error (a record beyond
 * them). The failed statement has left nothing (each statement is atomic).
 */
export async function runJsonRead(store: Store, sql: (maxObjectBytes?: number) => string, large: number): Promise<void> {
  try {
    await store.run(sql());
  } catch (e) {
    if (!(e instanceof QueryError && /maximum_object_size/.test(e.message))) throw e;
    await store.run(sql(large));
  }
}

/**
 * Bounds DuckDB's memory for one import, so a large input spills to disk
 * instead of growing the process: `TICKWISE_IMPORT_MEMORY` when set (e.g.
 * "4GB"), else twice the input's size (a compressed one counted at ten times
 * its size on disk), within `minMb` and `capMb`; `capMb` whatever the size
 * when `src` is null. What the store held in memory when the import began
 * (an in-memory store's tables, temp tables: {@link beginImportMemory}) is
 * added: the bound is the import's, not the caller's data's. The process
 * holds ~130 MB besides (Node, DuckDB's code, what it allocates outside its
 * buffers). A 174 MB Kineto trace: 348 MB, peak RSS 540-580 MB against
 * 660-680 MB under a fixed 700 MB, as fast; under 250 MB 0.1-0.2 s slower.
 * `on`: the connection to set it on (a sibling of `store`'s, whose statements
 * may run beside `store`'s: the settings are the database's).
 */
export async function setImportMemory(
  store: Store, src: { readonly sizeBytes: number; readonly compression: string } | null, limits: ImportMemoryLimits, on: Store = store,
): Promise<void> {
  // set only when it changes: a folder of small captures set the same 318 MB before each (12 ms a statement)
  const limit = importMemoryLimit(src, limits, process.env, importStart.get(store)?.heldMb ?? 0);
  if (memorySet.get(store) === limit) return;
  // the spill folder first, so a limit below what the store holds spills there, not to DuckDB's default (for an
  // in-memory store, ".tmp" in the working directory). Once per store: DuckDB refuses to set it again (even to
  // the same folder) once it has spilled there, and a caller's store that has spilled keeps its own
  if (!memorySet.has(store)) {
    await on.run(`SET temp_directory = ${sqlString(spillFolder())}`).catch((e: unknown) => {
      if (!(e instanceof QueryError && /temporary directory/i.test(e.message))) throw e;
    });
  }
  try {
    await on.run(`SET memory_limit = '${limit}'`);
  } catch (e) {
    // a limit the user gave that DuckDB cannot keep (below what it holds): their setting named, not DuckDB's words alone
    const given = process.env['TICKWISE_IMPORT_MEMORY'];
    if (!(e instanceof QueryError) || given === undefined || given === '') throw e;
    throw new TickwiseError('usage', `TICKWISE_IMPORT_MEMORY=${given}: DuckDB cannot work under it (${cleanDuckdbMessage(e.message)}); give more, e.g. 1GB, or unset it`);
  }
  memorySet.set(store, limit);
}
/**
 * A spill folder for one store, of its own: DuckDB names its spill files
 * the same in every database (`duckdb_temp_storage_DEFAULT-0.tmp`, ...),
 * and two databases spilling into one folder at once wrote over each other's
 * files (two processes spilling 100 MB each into one folder both crashed,
 * a segmentation fault, three times in three). `$TMPDIR/tickwise-duckdb-spill/<pid>-<n>`,
 * made by DuckDB when it first spills and removed by it when the store closes;
 * the folders of processes that are gone (killed while spilling), untouched
 * for an hour, are removed the first time a process asks for one.
 */
export function spillFolder(): string {
  // (in $TMPDIR as it is: a TMPDIR that does not exist is not made, its error is said as such: readerFailure)
  const made = (dir: string) => {
    try {
      mkdirSync(dir);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    accessSync(dir, fsConstants.W_OK);
    return dir;
  };
  let root: string;
  try {
    root = made(join(tmpdir(), 'tickwise-duckdb-spill'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EACCES') throw e;
    // another user's: one of this user's own
    root = made(join(tmpdir(), `tickwise-duckdb-spill-${process.getuid?.() ?? 'user'}`));
  }
  if (!sweptSpill) {
    sweptSpill = true;
    sweepSpillFolders(root);
  }
  return join(root, `${process.pid}-${++spillFolders}`);
}
let spillFolders = 0;
let sweptSpill = false;

/** Removes the spill folders under `root` of processes that are gone, untouched for an hour ({@link spillFolder}). */
export function sweepSpillFolders(root: string): void {
  for (const name of readdirSync(root)) {
    const pid = Number(/^(\d+)-\d+$/.exec(name)?.[1]);
    if (!(pid > 0) || pid === process.pid || processAlive(pid)) continue;
    // and untouched for an hour (a process of another pid namespace sharing the folder is not seen)
    const at = join(root, name);
    if (Date.now() - (statSync(at, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) < 3_600_000) continue;
    rmSync(at, { recursive: true, force: true });
  }
}

/** The memory_limit each store was last given by {@link setImportMemory} (only it sets one). */
const memorySet = new WeakMap<Store, string>();
/** The bound {@link setImportMemory} last set on `store` and did not give back ("700MB"), if any. */
export function importMemoryInForce(store: Store): string | undefined {
  const limit = memorySet.get(store);
  return limit === undefined || limit === MEMORY_GIVEN_BACK ? undefined : limit;
}
/** Per store, its import's start ({@link beginImportMemory}): the MB it held in memory, its memory_limit then. */
const importStart = new WeakMap<Store, { readonly heldMb: number; readonly limit: string }>();

/**
 * Notes, as an import begins, what the store holds in memory that its
 * bound must not count ({@link setImportMemory}) and its memory_limit;
 * the function returned, called when the import ends (whatever its end),
 * gives the store that memory_limit back if the import changed it (unless
 * `giveBack` is false: ImportOptions.keepImportMemory). A library
 * caller's store is left as it was given: an in-memory store holding 300 MB
 * failed a 10 MB trace's import (DuckDB spilled its tables to make room
 * under a 300 MB bound, then refused the spill folder), and a store kept
 * the import's bound, under which the caller's own queries ran out of memory.
 */
export async function beginImportMemory(store: Store, giveBack = true): Promise<() => Promise<void>> {
  const r = await store.query({ held: 'number', limit: 'string' },
    `SELECT coalesce(sum(memory_usage_bytes) FILTER (WHERE tag = 'IN_MEMORY_TABLE'), 0)::DOUBLE AS held, current_setting('memory_limit') AS limit
     FROM duckdb_memory()`);
  const start = { heldMb: r[0]!.held / 1e6, limit: r[0]!.limit };
  importStart.set(store, start);
  return async () => {
    if (importStart.get(store) === start) importStart.delete(store);
    if (!giveBack || memorySet.get(store) === undefined || memorySet.get(store) === MEMORY_GIVEN_BACK) return;
    // (not RESET: DuckDB 1.5 resets the setting's text but keeps the limit in force)
    await store.run(`SET memory_limit = ${sqlString(shownLimitAgain(start.limit))}`);
    memorySet.set(store, MEMORY_GIVEN_BACK);
  };
}
/** {@link memorySet}'s entry for a store whose import gave its memory_limit back (its spill folder is set). */
const MEMORY_GIVEN_BACK = '';

/**
 * A memory_limit that DuckDB shows as `shown`: DuckDB shows a limit rounded
 * down to its last digit ("18.8 GiB" for 18.80-18.89 GiB), so `shown` set
 * as it is reads back one lower ("18.7 GiB"), and an import giving back what
 * it read would lower a store's limit import after import. Half a last digit
 * more reads back the same ("18.85GiB"; 214 limits checked).
 */
export function shownLimitAgain(shown: string): string {
  const m = /^(\d+)\.(\d+)\s*([A-Za-z]+)$/.exec(shown.trim());
  return m === null ? shown : `${m[1]}.${m[2]}5${m[3]}`;
}

/** The bounds of {@link setImportMemory}: `perInput` MB a MB of input (2 unless said), within `minMb` and `capMb`. */
export interface ImportMemoryLimits {
  readonly minMb: number;
  readonly capMb: number;
  readonly perInput?: number;
}

/**
 * The memory_limit text {@link setImportMemory} sets (`env`: where
 * TICKWISE_IMPORT_MEMORY is read, taken as it is; `heldMb`: what the store
 * held when the import began, added to the bound computed).
 */
export function importMemoryLimit(
  src: { readonly sizeBytes: number; readonly compression: string } | null, limits: ImportMemoryLimits, env = process.env, heldMb = 0,
): string {
  const given = env['TICKWISE_IMPORT_MEMORY'];
  if (given !== undefined && given !== '') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]i?B)\s*$/i.exec(given);
    if (m === null) throw new TickwiseError('usage', `TICKWISE_IMPORT_MEMORY=${given}: not a size; give a number and its unit (KB, MB, GB, TB, or KiB ... TiB), e.g. 4GB`);
    return `${m[1]}${m[2]}`;
  }
  const inputMb = src === null ? Infinity : (src.sizeBytes * (src.compression === 'none' ? 1 : 10)) / 1e6;
  return `${Math.round(heldMb + Math.min(Math.max(limits.capMb, limits.minMb), Math.max(limits.minMb, (limits.perInput ?? 2) * inputMb)))}MB`;
}

/** The `captures` row of one import. */
export interface CaptureRow {
  readonly capture_id: number;
  readonly path: string;
  readonly format: string;
  readonly schema_version?: number | null;
  readonly sha256: string;
  readonly size_bytes: number;
  readonly producer: string | null;
  readonly label: string;
  /** A {@link Timeline} key. */
  readonly timeline: string;
  readonly session_status?: string | null;
  readonly record_count: number;
}

/** Inserts the `captures` row. */
export async function insertCapture(store: Store, row: CaptureRow): Promise<void> {
  await store.run(
    `INSERT INTO captures (capture_id, path, format, schema_version, sha256, size_bytes, imported_at, producer, label, timeline, session_status, record_count)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      row.capture_id, row.path, row.format, row.schema_version ?? null, row.sha256, row.size_bytes, new Date().toISOString(),
      row.producer, row.label, row.timeline, row.session_status ?? null, row.record_count,
    ],
  );
}

/**
 * Inserts a capture's diagnostics, each with the file and (where known) line:
 * one append for all (a statement each cost ~3 ms, which a capture with
 * thousands of devices or queues, each with its note, multiplied).
 */
export async function insertDiagnostics(store: Store, captureId: number, file: string, diags: readonly Diagnostic[]): Promise<void> {
  if (diags.length === 0) return;
  await store.append('diagnostics', diags.map((d) => ({ capture_id: captureId, severity: d.severity, code: d.code, message: d.message, file, line: d.line ?? null })));
}

/** A `devices` row for a device whose times are host ns or declared-frequency ticks. */
export interface DeviceRow {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: DeviceKind;
  readonly name: string | null;
  /** A `TimeSource` key. */
  readonly time_base: string;
  readonly tick_hz_declared?: number | null;
  readonly tick_hz_used?: number | null;
  readonly fit_method?: string | null;
  readonly fit_base_tick?: bigint | null;
  readonly fit_base_ns?: bigint | null;
  readonly fit_ns_per_tick_num?: bigint | null;
}

/**
 * Inserts `devices` rows (no clock fit: host-timed or declared frequency),
 * all in one append: a trace may name thousands of device processes, and a
 * statement each took ~3 ms (50k devices: 150 s).
 */
export async function insertDevices(store: Store, rows: readonly DeviceRow[]): Promise<void> {
  if (rows.length === 0) return;
  await store.append('devices', rows.map((d) => ({
    capture_id: d.capture_id, device: d.device, kind: d.kind, name: d.name, tick_hz_declared: d.tick_hz_declared ?? null, tick_hz_used: d.tick_hz_used ?? null,
    time_base: d.time_base, fit_method: d.fit_method ?? null, fit_base_tick: d.fit_base_tick ?? null, fit_base_ns: d.fit_base_ns ?? null,
    fit_ns_per_tick_num: d.fit_ns_per_tick_num ?? null, clock_samples: 0,
  })));
}

/** An assumption the import made (a clock relation, a unit, a frequency), for {@link insertAssumptions}. */
export interface AssumptionRow {
  readonly device: number | null;
  readonly what: string;
  readonly value: string;
  readonly note: string;
}

/** Records an assumption the import made (a clock relation, a unit, a frequency). */
export async function insertAssumption(store: Store, captureId: number, device: number | null, what: string, value: string, note: string): Promise<void> {
  await insertAssumptions(store, captureId, [{ device, what, value, note }]);
}

/** Records assumptions the import made, in one append (one per device of a capture with thousands). */
export async function insertAssumptions(store: Store, captureId: number, rows: readonly AssumptionRow[]): Promise<void> {
  if (rows.length === 0) return;
  await store.append('assumptions', rows.map((r) => ({ capture_id: captureId, device: r.device, what: r.what, value: r.value, note: r.note })));
}

/** Records a condition of the capture (host, command, producer setting). */
export async function insertCondition(store: Store, captureId: number, key: string, value: string | null, unit: string | null = null, note: string | null = null): Promise<void> {
  await insertConditions(store, captureId, [{ key, value, unit, note }]);
}

/** Records conditions of the capture, in one append. */
export async function insertConditions(
  store: Store, captureId: number, rows: readonly { key: string; value: string | null; unit?: string | null; note?: string | null }[],
): Promise<void> {
  if (rows.length === 0) return;
  // through the appender, which redacts secrets (a producer's command line)
  await store.append('conditions', rows.map((r) => ({ capture_id: captureId, key: r.key, value: r.value, unit: r.unit ?? null, note: r.note ?? null })));
}

/** The last path component. */
export function baseName(p: string): string {
  return p.split('/').pop() ?? p;
}

/** A SQL string literal (the store's one quoting; re-exported for the readers). */
export { sqlString } from '@tickwise/store';

/** DuckDB's compression argument for a source's compression. */
export function duckdbCompression(c: string): string {
  return c === 'none' ? 'uncompressed' : c;
}

/** DuckDB reports a failing JSON record as "line N". */
export function duckdbLine(message: string): number | undefined {
  const m = /line (\d+)/.exec(message);
  return m ? Number(m[1]) : undefined;
}

/**
 * The 1-based line of NDJSON file `path` holding the record DuckDB refused
 * with `message`. DuckDB (1.5) names the line after a malformed record's
 * own ("Malformed JSON ... at byte B in line N+1"; its transform and cast
 * errors name the record's own): for invalid UTF-8, the one malformed
 * record a scanner's output can hold, the file is searched for it; another
 * malformed record is taken as the line before.
 */
export async function ndjsonErrorLine(message: string, path: string): Promise<number | undefined> {
  if (/invalid UTF-8/i.test(message)) {
    const line = await firstInvalidUtf8Line(path);
    if (line !== undefined) return line;
  }
  const line = duckdbLine(message);
  return line !== undefined && /Malformed JSON/.test(message) && /at byte \d+ in line/.test(message) ? Math.max(1, line - 1) : line;
}

/** A DuckDB error message without its class prefixes, file name and line. */
export function cleanDuckdbMessage(message: string): string {
  return message
    .replace(/^query failed: /, '')
    .replace(/(Invalid Input|Conversion|Binder|Parser) Error: /g, '')
    .replace(/ in file "[^"]*"/, '')
    .replace(/,? (at byte \d+ )?in (line|record\/line) \d+:?/, ':')
    .split('\n')[0]!
    .trim();
}

/** A device kind from free text (a process name, an agent type, a stage name), or null. */
export function deviceKindFromText(text: string | null | undefined): DeviceKind | null {
  const s = (text ?? '').toLowerCase();
  if (/\b(npu|aie|xdna|ipu)\w*/.test(s) || s.includes('npu')) return 'npu';
  if (/gpu|radeon|gfx\d|igpu|\bhip\b|cuda/.test(s)) return 'gpu';
  if (/\bcpu\b|host/.test(s)) return 'cpu';
  return null;
}

/**
 * Runs `fn` with a fresh temporary directory of this process, removed
 * afterwards (`prefix` `tickwise-<what>-`; one left by a killed process is
 * removed by the next import, see processTempDir); or with `adopt`, one made
 * before (an early scan's), removed afterwards all the same.
 */
export async function withTempDir<T>(prefix: string, fn: (dir: string) => Promise<T>, adopt?: string): Promise<T> {
  const dir = adopt ?? await processTempDir(prefix.replace(/^tickwise-/, '').replace(/[^a-z]/g, ''));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The two rewrites that turn a record line written by `scanJsonRecords` back
 * into the source's JSON text, as regular expressions (the same text in
 * DuckDB's RE2 and in JS): the leading `_line`/`_i` keys, and the trailing
 * exact `_<key>`/`_<key>_text` keys. By text, so number texts stay as written
 * (re-serialising through a JSON value would round them).
 */
const LEAD_KEYS = String.raw`^\{"_line":[0-9]+,"_i":\[[0-9,]*\],?`;
const exactTail = (keys: string) => String.raw`(,"_(${keys})(_text)?":(null|"([^"\\]|\\.)*"))+\}$`;
const keyAlternatives = (exactKeys: readonly string[]) => exactKeys.map((k) => k.replace(/[^A-Za-z0-9_]/g, '')).join('|');

/** SQL of {@link LEAD_KEYS} and {@link exactTail} on column `col`. */
export function sourceJsonSql(col: string, exactKeys: readonly string[]): string {
  const keys = keyAlternatives(exactKeys);
  const lead = `regexp_replace(${col}::VARCHAR, '${LEAD_KEYS}', '{')`;
  return keys ? `regexp_replace(${lead}, '${exactTail(keys)}', '}')::JSON` : `${lead}::JSON`;
}

const leadRe = new RegExp(LEAD_KEYS);
const tailRes = new Map<string, RegExp>();

/** {@link sourceJsonSql} in JS, on one staged record's text. */
export function sourceJsonText(text: string, exactKeys: readonly string[]): string {
  const keys = keyAlternatives(exactKeys);
  const lead = text.replace(leadRe, '{');
  if (!keys) return lead;
  let tail = tailRes.get(keys);
  if (tail === undefined) tailRes.set(keys, tail = new RegExp(exactTail(keys)));
  return lead.replace(tail, '}');
}

/**
 * The ORDER BY that copying staging table `table` into a canonical table
 * needs for its rows to land in `(line, seq)` order: '' when they are stored
 * in that order already, else `ORDER BY line, seq`. The check is one pass
 * with no sort (a window with an empty OVER () sees the stored order), and a
 * copy from one table keeps the stored order (DuckDB's order preservation),
 * so an import whose staging rows came in order skips sorting every column.
 * A NULL key, or a staging table filled through a join that reordered rows,
 * gets the sort.
 */
export async function orderByLineSeq(store: Store, table: string): Promise<string> {
  const unordered = await store.scalar(`SELECT count(*) FROM (
      SELECT line, seq, lag(line) OVER () AS pl, lag(seq) OVER () AS ps FROM ${table})
    WHERE line IS NULL OR seq IS NULL OR pl > line OR (pl = line AND ps > seq)`);
  return Number(unordered) === 0 ? '' : 'ORDER BY line, seq';
}
