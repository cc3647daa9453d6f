import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { QueryError, sqlString, type DeviceKind, type Severity, type Store } from '@tickwise/store';
import { TickwiseError, fitClock, mapFromFrequency, type ClockFit, type ClockSample } from '@tickwise/time';
import { insertAssumptions, setImportMemory, type AssumptionRow } from '../capture-rows';
import { captureMessages } from '../messages';
import { sanitizeJsonl } from '../jsonl-sanitize';
import { lineText, processTempDir, sha256File, type SourceFile } from '../source-file';
import { tickNsSql, tickOffsetSql } from '../tick-sql';
import { createTempFromJson, dropSplit, type SplitStage, splitViews, stageSplit } from '../ireeperf-split';
import { duckdbLine } from '../capture-rows';

/** ireeperf-jsonl schema versions this reader understands. */
export const IREEPERF_SCHEMA_VERSIONS = [15] as const;

/** Options shared by capture readers. */
export interface ImportOptions {
  /** A label for the capture (defaults to the file name). */
  readonly label?: string;
  /** Device kind to record when the source does not say (e.g. `npu`). */
  readonly deviceKind?: DeviceKind;
  /** A tick rate to assume for devices with no time base (recorded as an assumption). */
  readonly assumeTickHz?: number;
  /** Called with a phase name as the import proceeds (progress display). */
  readonly onProgress?: (phase: string) => void;
  /**
   * The store keeps the DuckDB memory bound the import set (see
   * setImportMemory) instead of getting its own back: for a caller that
   * closes the store next, or imports more (the CLI's import; 3-5 ms a capture).
   */
  readonly keepImportMemory?: boolean;
}

/** What an import did. */
export interface ImportResult {
  readonly capture_id: number;
  readonly format: string;
  readonly records: number;
  readonly dispatches: number;
  readonly diagnostics: number;
}

/** A diagnostic collected during import. */
export interface Diagnostic {
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  readonly line?: number | undefined;
}

/**
 * Columns read from every record. DuckDB parses the file once into a staging
 * table with these columns; fields a record type lacks are NULL. Types are
 * the widest the format allows (u64 as UBIGINT); `schema_version` is text so
 * an unknown version is reported rather than failing a cast.
 */
const STAGE_COLUMNS: Record<string, string> = {
  record_type: 'VARCHAR',
  schema_version: 'VARCHAR',
  format: 'VARCHAR',
  source_format: 'VARCHAR',
  source_version_major: 'UBIGINT',
  source_version_minor: 'UBIGINT',
  event: 'VARCHAR',
  session_status: 'VARCHAR',
  physical_device_ordinal: 'UBIGINT',
  queue_ordinal: 'UBIGINT',
  timestamp_frequency_hz: 'DOUBLE',
  device_class: 'VARCHAR',
  kind: 'VARCHAR',
  name: 'VARCHAR',
  executable_id: 'UBIGINT',
  function_ordinal: 'UBIGINT',
  export_ordinal: 'UBIGINT',
  command_buffer_id: 'UBIGINT',
  command_index: 'UBIGINT',
  op: 'VARCHAR',
  key: 'VARCHAR',
  workgroup_count: 'UBIGINT[]',
  workgroup_size: 'UBIGINT[]',
  binding_count: 'UBIGINT',
  sample_id: 'UBIGINT',
  device_tick: 'UBIGINT',
  host_cpu_timestamp_ns: 'BIGINT',
  host_time_domain: 'VARCHAR',
  host_time_begin_ns: 'BIGINT',
  host_time_end_ns: 'BIGINT',
  event_id: 'UBIGINT',
  submission_id: 'UBIGINT',
  start_tick: 'UBIGINT',
  end_tick: 'UBIGINT',
  valid: 'BOOLEAN',
  duration_ns: 'BIGINT',
  host_time_ns: 'BIGINT',
  ready_host_time_ns: 'BIGINT',
  dependency_strategy: 'VARCHAR',
  wait_count: 'UBIGINT',
  signal_count: 'UBIGINT',
  barrier_count: 'UBIGINT',
  operation_count: 'UBIGINT',
  start_host_time_ns: 'BIGINT',
  end_host_time_ns: 'BIGINT',
  tile_count: 'UBIGINT',
  tile_duration_sum_ns: 'BIGINT',
  event_type: 'VARCHAR',
  allocation_id: 'UBIGINT',
  pool_id: 'UBIGINT',
  length: 'UBIGINT',
  source_id: 'UBIGINT',
  values: 'JSON',
  message: 'VARCHAR',
  severity: 'VARCHAR',
  dropped_record_count: 'UBIGINT',
};

/** Record types that land in a table of their own; all others go to raw_records. */
export const IREEPERF_TABLED_TYPES = [
  'schema', 'session', 'device', 'clock_correlation', 'dispatch_event', 'queue_event', 'queue_device_event',
  'host_execution_event', 'command_region_event', 'memory_event', 'device_metric_sample',
  'executable_function', 'executable_export',
] as const;

/** Record types IREE's schema 15 defines (others are reported as unknown). */
const KNOWN = new Set<string>([
  ...IREEPERF_TABLED_TYPES, 'queue', 'executable', 'executable_code_object', 'executable_code_object_load', 'command_buffer',
  'command_operation', 'event_relationship', 'counter_set', 'counter', 'counter_sample', 'device_metric_source',
  'device_metric_descriptor', 'executable_trace', 'diagnostic', 'chunk', 'dropped_records', 'truncated_chunk',
]);

const U32_NONE = '4294967295';

/** The explicit `columns` argument the reader gives DuckDB's read_json (benchmarks compare against it). */
export function ireeperfColumnsSql(): string {
  return columnsSql();
}

function columnsSql(): string {
  return '{' + Object.entries(STAGE_COLUMNS).map(([k, v]) => `'${k}': '${v}'`).join(', ') + '}';
}

/**
 * read_json's `maximum_object_size` when DuckDB's default (16 MiB: it reads
 * records of up to twice that) is not enough. Not the first choice: its
 * larger buffers made the stage of a 300 MB capture 50-80 ms slower.
 */
const LARGE_OBJECT_BYTES = 67108864;

function readJsonSql(path: string, compression: string, columns: string, maxObjectBytes?: number): string {
  const comp = compression === 'none' ? 'uncompressed' : compression;
  const size = maxObjectBytes === undefined ? '' : `, maximum_object_size = ${maxObjectBytes}`;
  return `read_json(${sqlString(path)}, format = 'newline_delimited', columns = ${columns}, compression = '${comp}'${size})`;
}

/** The columns a `dispatch_event` uses (the split stage reads only these from every record: ireeperf-split.ts). */
const DISPATCH_COLUMNS = [
  'record_type', 'schema_version', 'physical_device_ordinal', 'queue_ordinal', 'submission_id', 'command_buffer_id', 'command_index',
  'event_id', 'executable_id', 'function_ordinal', 'key', 'workgroup_count', 'start_tick', 'end_tick', 'valid', 'duration_ns',
] as const;
/** The columns queue_event and queue_device_event records use (the split stage's second narrow table). */
const QUEUE_TYPES = ['queue_event', 'queue_device_event'] as const;
const QUEUE_COLUMNS = [
  'record_type', 'schema_version', 'physical_device_ordinal', 'queue_ordinal', 'event_id', 'op', 'submission_id', 'command_buffer_id',
  'start_tick', 'end_tick', 'valid', 'host_time_ns', 'ready_host_time_ns', 'dependency_strategy', 'wait_count', 'signal_count',
  'barrier_count', 'operation_count', 'start_host_time_ns', 'end_host_time_ns', 'duration_ns',
] as const;

async function dropStage(store: Store): Promise<void> {
  await dropSplit(store);
  await store.run('DROP TABLE IF EXISTS tw_stage_rows');
}

/**
 * One parallel scan of the file into a staging table. DuckDB keeps insertion
 * order, so `rowid + 1` is the record number: no window function (which
 * would serialize the scan). Records are counted without blank lines; the
 * sanitizing fallback writes blank lines as `{}` so numbers stay line numbers.
 * Two views: `tw_stage`, every record with its `line`, and `tw_stage_nd`,
 * every record but dispatch_event (a capture's few: queries that want
 * only other records read it, not the dispatches' hundreds of thousands).
 */
async function stageScan(store: Store, path: string, compression: string, split: boolean): Promise<boolean> {
  // Bound DuckDB's memory so a multi-GB capture spills to disk instead of
  // growing the process: 1 GB whatever the size (TICKWISE_IMPORT_MEMORY overrides, e.g. "4GB").
  await setImportMemory(store, null, { minMb: 300, capMb: 1000 });
  // a plain file that is mostly dispatches: the dispatch columns from every record, all of them from the others
  if (split && compression === 'none' && await stageSplit(store, path, SPLIT_STAGE)) return true;
  // a record beyond DuckDB's default buffer: once more with larger ones (a parse error goes to the caller)
  await createTempFromJson(store, 'tw_stage_rows', (size) => readJsonSql(path, compression, columnsSql(), size), LARGE_OBJECT_BYTES);
  await store.run(`CREATE TEMP VIEW tw_stage AS SELECT rowid + 1 AS line, * FROM tw_stage_rows`);
  await store.run(`CREATE TEMP VIEW tw_stage_nd AS SELECT * FROM tw_stage WHERE record_type IS DISTINCT FROM 'dispatch_event'`);
  return false;
}

/** The split stage of a plain capture (ireeperf-split.ts). */
const SPLIT_STAGE: SplitStage = {
  columns: STAGE_COLUMNS, dispatchColumns: DISPATCH_COLUMNS, queueTypes: QUEUE_TYPES, queueColumns: QUEUE_COLUMNS, largeObjectBytes: LARGE_OBJECT_BYTES,
  readJson: (p, columns, size) => readJsonSql(p, 'none', columns, size),
};

/** Finds which field of a record holds the value DuckDB could not cast (for the message). */
async function fieldOfBadValue(path: string, line: number, message: string): Promise<string | undefined> {
  const token = /numerical: (\S+)/.exec(message)?.[1] ?? /value "?([^"\s]+)"?/.exec(message)?.[1];
  if (token === undefined) return undefined;
  const text = await lineText(path, line);
  if (text === undefined) return undefined;
  return new RegExp(`"([^"]+)"\\s*:\\s*"?${token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"?\\s*[,}]`).exec(text)?.[1];
}

function cleanDuckdbMessage(message: string): string {
  return message
    .replace(/^query failed: /, '')
    .replace(/Invalid Input Error: /, '')
    .replace(/Conversion Error: /, '')
    .replace(/ in file "[^"]*"/, '')
    .replace(/,? in line \d+/, '')
    .split('\n')[0]!
    .trim();
}

/**
 * Imports one ireeperf-jsonl stream into the store.
 *
 * ```
 * file --DuckDB read_json (explicit columns, one pass)--> tw_stage
 *   tw_stage.clock_correlation --fitClock (weighted LSQ)--> devices, tw_fit
 *   tw_stage.dispatch_event x tw_fit --exact HUGEINT math--> dispatches (*_ns)
 *   tw_stage.{queue,host,memory,metric}_* --> their tables
 *   other record types --second scan, only if present--> raw_records
 * ```
 * Malformed input falls back to a line-exact sanitizing pass, then either
 * imports with diagnostics or throws a TickwiseError naming file and line.
 */
/**
 * Refuses an assumed tick rate (`--tick-hz`) outside 0.001 Hz..1 THz: the
 * ns per tick of a rate beyond leave the exact 128-bit map's range.
 */
export function checkAssumedTickHz(opts: ImportOptions): void {
  const hz = opts.assumeTickHz;
  if (hz !== undefined && !(Number.isFinite(hz) && hz >= 1e-3 && hz <= 1e12)) {
    throw new TickwiseError('usage', `--tick-hz ${hz} Hz: a tick rate must be between 0.001 Hz and 1 THz`);
  }
}

export async function importIreeperfJsonl(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  checkAssumedTickHz(opts);
  const captureId = await store.nextCaptureId();
  const diags: Diagnostic[] = [];
  let readPath = src.path;
  let compression: string = src.compression;
  let tmpDir: string | undefined;
  let restoreThreads: (() => Promise<void>) | undefined;
  opts.onProgress?.('scanning');
  // hashed on a worker thread once DuckDB's parallel scan is done (during the scan both cores
  // parse; 0.79x vs 0.73x of the raw read on 300 MB, against 0.68x when hashed after the tables)
  let sha: Promise<string> | undefined;
  const hash = (): Promise<string> => {
    if (sha === undefined) {
      sha = sha256File(src.path);
      sha.catch(() => undefined);
    }
    return sha;
  };
  try {
    await dropStage(store);
    let shared = false; // the split stage, which a second connection can read
    try {
      shared = await stageScan(store, readPath, compression, true);
    } catch (first) {
      if (!(first instanceof QueryError)) throw first;
      opts.onProgress?.('repairing');
      tmpDir = await processTempDir('sanitize');
      const clean = join(tmpDir, 'clean.jsonl');
      const { issues } = await sanitizeJsonl(src.path, src.compression, clean, src.displayPath);
      for (const i of issues) diags.push(i);
      readPath = clean;
      compression = 'none';
      try {
        // the whole file with every column (no split): DuckDB's error then names the record's own line
        await stageScan(store, readPath, compression, false);
      } catch (second) {
        const msg = (second as Error).message;
        const line = duckdbLine(msg);
        const field = line === undefined ? undefined : await fieldOfBadValue(readPath, line, msg);
        throw new TickwiseError('bad-record', captureMessages.badValue((field ? `field "${field}": ` : '') + cleanDuckdbMessage(msg)), {
          file: src.displayPath,
          line,
          cause: second,
        });
      }
    }
    // From here on, one DuckDB thread: what follows is small queries over the stage (which DuckDB's second thread
    // only waits through, busy, beside the hash's thread), and the dispatches' insert, which a second thread hardly
    // shortens, beside the other tables' on a second connection. 300 MB, in-process, 12 alternating runs: 1.46 ->
    // 1.25 s, CPU 2.33 -> 1.94 s (the second connection alone: 1.385 s). TICKWISE_IREEPERF_HOLD_THREADS=0 keeps them
    restoreThreads = process.env['TICKWISE_IREEPERF_HOLD_THREADS'] === '0' ? undefined : await store.holdOneThread();
    void hash();
    const checks = rangeChecks();
    const facts = await stageFacts(store, checks);
    const records = facts.records;
    if (records === 0) throw new TickwiseError('empty-input', captureMessages.emptyFile(), { file: src.displayPath });
    opts.onProgress?.('checking');
    const schemaVersion = await checkSchema(store, src.displayPath, facts);
    await refuseOutOfRange(store, src.displayPath, checks, facts);
    opts.onProgress?.('fitting clocks');
    const fits = await fitDevices(store, captureId, facts.devices, diags, opts, src.displayPath);
    opts.onProgress?.('loading tables');
    await insertKernelsMeta(store, captureId);
    // The device dispatches (most of a capture's rows) go in on a second connection while this one loads the other
    // tables and reads the diagnostics: writing them is ~0.3 s of one core, which DuckDB's second thread hardly
    // shortens. Only from the split stage (in a database both connections see) and a fit per device in the SQL
    // (not tw_fit, a TEMP table). TICKWISE_IREEPERF_SIDE=0: one connection, one statement after another
    const side = shared && !fitsJoined(fits) && process.env['TICKWISE_IREEPERF_SIDE'] !== '0' ? await store.sibling() : null;
    let sessionStatus: string | null;
    try {
      if (side) await splitViews(side, SPLIT_STAGE);
      const deviceDispatches = deviceDispatchesSql(captureId, fits, facts.keyless);
      const dispatched = (side ?? store).run(deviceDispatches);
      dispatched.catch(() => undefined);
      try {
        if (!side) await dispatched;
        await loadOtherTables(store, captureId, fits);
        await collectEventDiagnostics(store, diags, fits);
        await loadRaw(store, captureId, readPath, compression);
        sessionStatus = await sessionDiagnostics(store, diags);
      } finally {
        await dispatched.catch(() => undefined);
      }
      await dispatched;
    } finally {
      await side?.close();
    }
    // after the device dispatches: a table's rows are stored in the order they went in
    await insertHostDispatches(store, captureId);
    // the capture's timeline is set by its tick-timed devices; host-timed ones are on host_monotonic
    const ticked = [...fits.values()].filter((f) => f.ticked);
    const timeline = ticked.some((f) => f.source === 'device_tick_declared' || f.source === 'device_tick_assumed')
      ? 'relative'
      : ticked.some((f) => f.source === 'device_tick_none') ? 'ticks-only' : 'host_monotonic';
    await store.run(
      `INSERT INTO captures (capture_id, path, format, schema_version, sha256, size_bytes, imported_at, producer, label, timeline, session_status, record_count)
       VALUES ($1, $2, 'ireeperf-jsonl', $3, $11, $4, $5, $6, $7, $8, $9, $10)`,
      [captureId, src.displayPath, schemaVersion, src.sizeBytes, new Date().toISOString(), await producerOf(store), opts.label ?? baseName(src.displayPath), timeline, sessionStatus, records, await hash()],
    );
    await store.insertRows('diagnostics', ['capture_id', 'severity', 'code', 'message', 'file', 'line'],
      diags.map((d) => [captureId, d.severity, d.code, d.message, src.displayPath, d.line ?? null]));
    const dispatches = await store.count('dispatches', `WHERE capture_id = ${captureId}`);
    return { capture_id: captureId, format: 'ireeperf-jsonl', records, dispatches, diagnostics: diags.length };
  } finally {
    await restoreThreads?.().catch(() => undefined);
    await dropStage(store).catch(() => undefined);
    await store.run('DROP TABLE IF EXISTS tw_fit').catch(() => undefined);
    if (tmpDir) await rm(tmpDir, { recursive: true, force: true });
  }
}

function baseName(p: string): string {
  return p.split('/').pop() ?? p;
}

async function producerOf(store: Store): Promise<string> {
  const rows = await store.rows(`SELECT source_format, source_version_major AS ma, source_version_minor AS mi,
      (SELECT count(*) FROM tw_stage_nd WHERE record_type = 'device' AND timestamp_frequency_hz IS NOT NULL) AS declared
    FROM tw_stage_nd WHERE record_type = 'schema' LIMIT 1`);
  const r = rows[0];
  if (!r) return 'ireeperf-jsonl';
  const src = r['source_format'] === null ? 'unknown source' : `${String(r['source_format'])} ${String(r['ma'] ?? '?')}.${String(r['mi'] ?? '?')}`;
  const variant = Number(r['declared']) > 0 ? 'derived ireeperf-jsonl (device.timestamp_frequency_hz)' : 'iree-profile export ireeperf-jsonl';
  return `${variant} from ${src}`;
}

/**
 * What the checks, the clock fits and the tables need from the stage, in one
 * pass grouped by device (four statements took 58 ms of a 300 MB capture's
 * import, the pass ~30; the devices' figures and the keyless dispatches in a
 * pass each after it, another ~45 ms): the record count, the first line of a
 * schema version unlike the first schema record's, of a device event without
 * its device, and of each range check on `tw_stage` ({@link rangeChecks}, by
 * index); whether a dispatch has no key; each listed device's figures
 * ({@link fitDevices}).
 */
interface StageFacts {
  readonly records: number;
  readonly mixedLine: number | null;
  readonly missingLine: number | null;
  readonly firstBad: ReadonlyMap<number, number>;
  /** A dispatch record has no key (its kernel is named from kernels_meta). */
  readonly keyless: boolean;
  /** Per device named by a listed record type, in device order: what {@link fitDevices} reads. */
  readonly devices: readonly Record<string, unknown>[];
}

/** A device event that names no device (NULL, or 4294967295: "none" elsewhere). */
const MISSING_DEVICE = `(physical_device_ordinal IS NULL OR physical_device_ordinal = ${U32_NONE})
  AND (record_type IN ('dispatch_event', 'queue_device_event') OR (record_type = 'host_execution_event' AND op = 'dispatch'))`;

async function stageFacts(store: Store, checks: readonly RangeCheck[]): Promise<StageFacts> {
  const mine = checks.map((c, i) => ({ c, i })).filter((x) => x.c.table === 'tw_stage');
  const declared = `(SELECT schema_version FROM tw_stage_nd WHERE record_type = 'schema' ORDER BY line LIMIT 1)`;
  const ticked = `record_type IN ('dispatch_event', 'queue_device_event')`;
  // per device (a NULL or 4294967295 device is a group too, for the facts): the facts' partial counts and first lines,
  // summed and taken the least of here
  const rows = await store.rows(`SELECT physical_device_ordinal AS device,
      count(*) FILTER (WHERE record_type IS NOT NULL) AS records,
      min(line) FILTER (WHERE record_type IS NOT NULL AND schema_version IS DISTINCT FROM ${declared}) AS mixed,
      min(line) FILTER (WHERE ${MISSING_DEVICE}) AS missing,
      count(*) FILTER (WHERE record_type = 'dispatch_event' AND key IS NULL) AS keyless
      ${mine.map((x) => `, min(line) FILTER (WHERE ${x.c.bad}) AS c${x.i}`).join('')},
      max(timestamp_frequency_hz) FILTER (WHERE record_type = 'device') AS hz,
      max(coalesce(kind, device_class)) FILTER (WHERE record_type = 'device') AS kind,
      max(name) FILTER (WHERE record_type = 'device') AS name,
      max(device_class) FILTER (WHERE record_type = 'device_metric_source') AS metric_class,
      count(*) FILTER (WHERE ${ticked}) AS tick_events,
      min(start_tick) FILTER (WHERE ${ticked}) AS min_tick,
      least(min(start_tick) FILTER (WHERE ${ticked}), min(end_tick) FILTER (WHERE ${ticked})) AS lo_tick,
      greatest(max(start_tick) FILTER (WHERE ${ticked}), max(end_tick) FILTER (WHERE ${ticked})) AS hi_tick,
      bool_or(record_type IN ('device', 'dispatch_event', 'queue_device_event', 'clock_correlation', 'host_execution_event', 'queue_event')) AS listed
    FROM tw_stage GROUP BY 1 ORDER BY 1`);
  const line = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const least = (key: string): number | null => rows.reduce<number | null>((m, r) => {
    const l = line(r[key]);
    return l === null ? m : m === null ? l : Math.min(m, l);
  }, null);
  const firstBad = new Map<number, number>();
  for (const x of mine) {
    const l = least(`c${x.i}`);
    if (l !== null) firstBad.set(x.i, l);
  }
  return {
    records: rows.reduce((n, r) => n + Number(r['records']), 0),
    mixedLine: least('mixed'),
    missingLine: least('missing'),
    firstBad,
    keyless: rows.some((r) => Number(r['keyless']) > 0),
    devices: rows.filter((r) => r['device'] !== null && String(r['device']) !== U32_NONE && r['listed'] === true),
  };
}

async function checkSchema(store: Store, file: string, facts: StageFacts): Promise<number> {
  const schema = await store.rows(`SELECT line, schema_version, format FROM tw_stage_nd WHERE record_type = 'schema' ORDER BY line LIMIT 1`);
  const first = schema[0];
  if (!first) throw new TickwiseError('missing-schema', captureMessages.missingSchema(), { file, line: 1 });
  if (first['format'] !== null && first['format'] !== 'ireeperf-jsonl') {
    throw new TickwiseError('wrong-format', captureMessages.wrongFormat(String(first['format'])), { file, line: Number(first['line']) });
  }
  const declared = String(first['schema_version']);
  if (!(IREEPERF_SCHEMA_VERSIONS as readonly number[]).includes(Number(declared))) {
    throw new TickwiseError('unknown-schema-version', captureMessages.unknownSchemaVersion(declared, IREEPERF_SCHEMA_VERSIONS), {
      file,
      line: Number(first['line']),
    });
  }
  if (facts.mixedLine !== null) {
    const odd = await store.scalar(`SELECT schema_version FROM tw_stage WHERE line = ${facts.mixedLine} AND record_type IS NOT NULL LIMIT 1`);
    throw new TickwiseError('mixed-schema-version', captureMessages.mixedSchemaVersion(String(odd), declared), { file, line: facts.mixedLine });
  }
  return Number(declared);
}

/**
 * Integers the stage reads as UBIGINT but the store keeps narrower: a value
 * present but beyond its column is refused with its line and field ("out of
 * range", never "missing", never DuckDB's cast text). The u32 "none"
 * sentinel (4294967295) is allowed where the reader maps it to NULL.
 */
const NARROW_FIELDS: readonly [field: string, max: bigint, sentinel: boolean][] = [
  ['physical_device_ordinal', 2147483647n, true], ['queue_ordinal', 2147483647n, true], ['command_index', 4294967295n, true],
  ['function_ordinal', 4294967295n, true], ['export_ordinal', 4294967295n, true],
  ['binding_count', 9223372036854775807n, false], ['wait_count', 9223372036854775807n, false], ['signal_count', 9223372036854775807n, false],
  ['barrier_count', 9223372036854775807n, false], ['operation_count', 9223372036854775807n, false], ['sample_id', 9223372036854775807n, false],
  ['tile_count', 9223372036854775807n, false],
];
const NARROW_LISTS: readonly string[] = ['workgroup_count', 'workgroup_size'];

/** One range check: `bad` is true on a row of `table` whose `field` is out of range. */
interface RangeCheck {
  readonly field: string;
  readonly table: 'tw_stage' | 'tw_stage_nd';
  readonly bad: string;
  readonly value: string;
  readonly bound: string;
}

/** The range checks, in the order that decides between two on one line. */
function rangeChecks(): RangeCheck[] {
  // a field a dispatch record does not use is checked on the other records only (a dispatch's is not read: see DISPATCH_COLUMNS)
  const stage = (f: string) => ((DISPATCH_COLUMNS as readonly string[]).includes(f) ? 'tw_stage' : 'tw_stage_nd');
  const checks: RangeCheck[] = NARROW_FIELDS.map(([f, max, sentinel]) => ({
    field: f, table: stage(f), bad: `${f} > ${max}${sentinel ? ` AND ${f} <> ${U32_NONE}` : ''}`, value: f, bound: `at most ${max}`,
  }));
  // host times are ns on a monotonic clock: a negative one is out of range (and end - start would overflow int64)
  for (const f of ['start_host_time_ns', 'end_host_time_ns', 'host_time_ns', 'ready_host_time_ns', 'host_time_begin_ns', 'host_time_end_ns',
    'host_cpu_timestamp_ns', 'duration_ns', 'tile_duration_sum_ns']) {
    checks.push({ field: f, table: stage(f), bad: `${f} < 0`, value: f, bound: 'ns >= 0' });
  }
  for (const f of NARROW_LISTS) checks.push({ field: f, table: stage(f), bad: `list_max(${f}) > 4294967295`, value: `list_max(${f})`, bound: 'at most 4294967295' });
  return checks;
}

async function refuseOutOfRange(store: Store, file: string, checks: readonly RangeCheck[], facts: StageFacts): Promise<void> {
  // a device event without its device would be dropped by the device join, or refused by the store's NOT NULL: say which line
  // (4294967295, "none" elsewhere, names no device either)
  if (facts.missingLine !== null) {
    const [m] = await store.rows(`SELECT record_type, physical_device_ordinal IS NOT NULL AS none FROM tw_stage
      WHERE line = ${facts.missingLine} AND ${MISSING_DEVICE} LIMIT 1`);
    const what = m?.['none'] ? `is ${U32_NONE} (no device) in` : 'is missing from';
    throw new TickwiseError('missing-field', `field "physical_device_ordinal" ${what} this ${String(m?.['record_type'])} (every device event names its device)`,
      { file, line: facts.missingLine });
  }
  // each check's first line: tw_stage's from the stage's one pass (stageFacts), tw_stage_nd's here (a statement per
  // check cost a small capture ~30 ms); the earliest line wins, and on one line the first check in the list
  const first = new Map<number, number>(facts.firstBad); // check index -> its first bad line
  const mine = checks.map((c, i) => ({ c, i })).filter((x) => x.c.table === 'tw_stage_nd');
  if (mine.length > 0) {
    const [row] = await store.rows(`SELECT ${mine.map((x) => `min(line) FILTER (WHERE ${x.c.bad}) AS c${x.i}`).join(', ')} FROM tw_stage_nd`);
    for (const x of mine) if (row?.[`c${x.i}`] != null) first.set(x.i, Number(row[`c${x.i}`]));
  }
  if (first.size > 0) {
    const line = Math.min(...first.values());
    const c = checks[[...first.entries()].filter(([, l]) => l === line).map(([i]) => i).sort((a, b) => a - b)[0]!]!;
    const v = await store.scalar(`SELECT (${c.value})::VARCHAR FROM ${c.table} WHERE line = ${line} AND ${c.bad} LIMIT 1`);
    throw new TickwiseError('bad-value', `field "${c.field}": ${String(v)} is out of range (${c.bound})`, { file, line });
  }
}

/** How one device's ticks reach the host timeline. */
interface DeviceTime {
  readonly source: 'device_tick_fit' | 'device_tick_declared' | 'device_tick_assumed' | 'device_tick_none';
  readonly fit: ClockFit | null;
  /** The device has tick-timed events (a host-timed-only device does not set the timeline). */
  readonly ticked: boolean;
  /** The smallest and largest start or end tick of its tick-timed events (see {@link ticksInRange}); null: none. */
  readonly ticks?: { readonly lo: bigint; readonly hi: bigint } | null;
}

async function fitDevices(store: Store, captureId: number, devices: StageFacts['devices'], diags: Diagnostic[], opts: ImportOptions, file?: string): Promise<Map<number, DeviceTime>> {
  // a declared tick rate that is not a positive finite number of Hz is refused, not stored (or silently dropped)
  const badHz = await store.rows(`SELECT line, timestamp_frequency_hz::VARCHAR AS hz FROM tw_stage_nd WHERE record_type = 'device'
    AND timestamp_frequency_hz IS NOT NULL AND NOT (isfinite(timestamp_frequency_hz) AND timestamp_frequency_hz BETWEEN 1e-3 AND 1e12) ORDER BY line LIMIT 1`);
  if (badHz[0]) {
    throw new TickwiseError('bad-value', `timestamp_frequency_hz ${String(badHz[0]['hz'])}: a declared tick rate must be a number of Hz between 0.001 and 1e12 (leave it out and pass --tick-hz when the producer does not know it)`,
      { file, line: Number(badHz[0]['line']) });
  }
  const out = new Map<number, DeviceTime>();
  // every device's samples in one query, and the rows of all devices in one append each: a statement or a scan
  // of the stage per device took 22 s for 1000 devices
  const samplesOf = new Map<string, Record<string, unknown>[]>();
  for (const r of await store.rows(
    `SELECT physical_device_ordinal AS device, line, sample_id, device_tick, host_time_begin_ns, host_time_end_ns, host_cpu_timestamp_ns, host_time_domain
     FROM tw_stage_nd WHERE record_type = 'clock_correlation' AND physical_device_ordinal IS NOT NULL ORDER BY physical_device_ordinal, line`,
  )) {
    const k = String(r['device']);
    const list = samplesOf.get(k);
    if (list) list.push(r);
    else samplesOf.set(k, [r]);
  }
  const deviceRows: Record<string, unknown>[] = [];
  const assumptions: AssumptionRow[] = [];
  const residualFits: unknown[][] = [];
  for (const d of devices) {
    const device = Number(d['device']);
    const declared = d['hz'] === null ? null : Number(d['hz']);
    const samplesRows = samplesOf.get(String(d['device'])) ?? [];
    const usable = samplesRows.filter((r) => r['device_tick'] !== null && r['host_time_begin_ns'] !== null && r['host_time_end_ns'] !== null);
    const samples: ClockSample[] = usable.map((r) => ({
      device_tick: r['device_tick'] as bigint,
      host_begin_ns: r['host_time_begin_ns'] as bigint,
      host_end_ns: r['host_time_end_ns'] as bigint,
    }));
    const tickEvents = Number(d['tick_events']);
    let time: DeviceTime;
    const fitted = samples.length > 0 ? fitClock(samples) : { fit: null, problems: [] };
    const problems = fitted.problems;
    // samples that go backwards make any line through them meaningless: refuse the fit
    const fit = problems.some((p) => p.code === 'non-monotonic-clock-samples' || p.code === 'inverted-bracket') ? null : fitted.fit;
    for (const p of problems) {
      if (p.code === 'too-few-samples' && samples.length === 1) {
        diags.push({ severity: 'warning', code: 'one-clock-sample', message: captureMessages.oneSample(device) });
      } else if (p.code !== 'too-few-samples') {
        const line = p.sample_index === undefined ? undefined : Number(usable[p.sample_index]?.['line']);
        diags.push({ severity: 'error', code: p.code, message: `device ${device}: ${p.message}`, line });
      }
    }
    const minTick = (d['min_tick'] as bigint | null) ?? 0n;
    const ticked = tickEvents > 0;
    if (fit) time = { source: 'device_tick_fit', fit, ticked };
    else if (declared !== null && declared > 0) {
      time = { source: 'device_tick_declared', fit: mapFromFrequency(declared, minTick, 0n, 'declared'), ticked };
      if (tickEvents > 0) diags.push({ severity: 'warning', code: 'declared-frequency-only', message: captureMessages.declaredOnly(device, declared) });
    } else if (opts.assumeTickHz !== undefined) {
      time = { source: 'device_tick_assumed', fit: mapFromFrequency(opts.assumeTickHz, minTick, 0n, 'assumed'), ticked };
      assumptions.push({ device, what: 'tick_hz', value: String(opts.assumeTickHz), note: 'given with --tick-hz; ticks placed on a relative timeline starting at 0' });
    } else {
      time = { source: 'device_tick_none', fit: null, ticked };
      if (tickEvents > 0) diags.push({ severity: 'error', code: 'no-time-base', message: captureMessages.noTimeBase(device) });
    }
    const lo = d['lo_tick'] as bigint | null, hi = d['hi_tick'] as bigint | null;
    out.set(device, { ...time, ticks: lo === null || hi === null ? null : { lo, hi } });
    const kind = normalizeKind(d['kind'] ?? d['metric_class'], opts.deviceKind, tickEvents > 0);
    const f = time.fit;
    const measured = time.source === 'device_tick_fit' ? f : null;
    deviceRows.push({
      capture_id: captureId, device, kind, name: (d['name'] as string | null) ?? null, tick_hz_declared: declared, tick_hz_fitted: measured?.tick_hz_fitted ?? null,
      tick_hz_used: tickEvents > 0 && f ? f.tick_hz : null, time_base: tickEvents > 0 || samples.length > 0 ? time.source : 'host_monotonic',
      fit_method: f?.method ?? null, fit_domain: measured ? String(usable[0]?.['host_time_domain'] ?? 'iree_host_time_ns') : null,
      fit_residual_max_ns: measured?.residual_max_ns ?? null, fit_residual_rms_ns: measured?.residual_rms_ns ?? null, fit_uncertainty_ns: measured?.uncertainty_ns ?? null,
      fit_slope_uncertainty_ppm: measured?.slope_uncertainty_ppm ?? null, fit_bracket_min_ns: measured?.bracket_min_ns ?? null, fit_bracket_max_ns: measured?.bracket_max_ns ?? null,
      fit_base_tick: f?.base_tick ?? null, fit_base_ns: f?.base_ns ?? null, fit_ns_per_tick_num: f?.ns_per_tick_num ?? null, clock_samples: samples.length,
    });
    // the residual of each sample's bracket midpoint from the fitted line, in ns (the slope as the double JS holds)
    if (measured) residualFits.push([device, measured.base_ns, measured.base_tick, Number(measured.ns_per_tick_num)]);
  }
  await insertAssumptions(store, captureId, assumptions);
  if (deviceRows.length > 0) await store.append('devices', deviceRows as never);
  await store.run('DROP TABLE IF EXISTS tw_fit');
  await store.run(`CREATE TEMP TABLE tw_fit (device UBIGINT, time_source VARCHAR, base_tick HUGEINT, base_ns HUGEINT, num HUGEINT)`);
  await store.appendTemp('tw_fit', [...out].map(([device, t]) => [device, t.source, t.fit?.base_tick ?? null, t.fit?.base_ns ?? null, t.fit?.ns_per_tick_num ?? null]));
  await store.run(
    `INSERT INTO clock_samples SELECT $1, physical_device_ordinal, sample_id, device_tick, host_time_begin_ns, host_time_end_ns, host_cpu_timestamp_ns,
       host_time_domain, NULL, line
     FROM tw_stage_nd WHERE record_type = 'clock_correlation' AND physical_device_ordinal IN (SELECT device FROM tw_fit)
       AND device_tick IS NOT NULL AND host_time_begin_ns IS NOT NULL AND host_time_end_ns IS NOT NULL
     ORDER BY physical_device_ordinal, line`,
    [captureId],
  );
  if (residualFits.length > 0) {
    await store.run('DROP TABLE IF EXISTS tw_fit_residual');
    await store.run('CREATE TEMP TABLE tw_fit_residual (device UBIGINT, base_ns HUGEINT, base_tick HUGEINT, slope DOUBLE)');
    try {
      await store.appendTemp('tw_fit_residual', residualFits);
      await store.run(
        `UPDATE clock_samples SET residual_ns = (clock_samples.host_begin_ns + clock_samples.host_end_ns) / 2.0
           - (r.base_ns + (clock_samples.device_tick::HUGEINT - r.base_tick)::DOUBLE * r.slope / 1e15)
         FROM tw_fit_residual r WHERE clock_samples.capture_id = $1 AND clock_samples.device = r.device`,
        [captureId],
      );
    } finally {
      await store.run('DROP TABLE IF EXISTS tw_fit_residual');
    }
  }
  return out;
}

function normalizeKind(raw: unknown, override: DeviceKind | undefined, hasTicks: boolean): DeviceKind {
  if (override) return override;
  const s = typeof raw === 'string' ? raw.toLowerCase() : '';
  if (s.includes('npu') || s.includes('aie') || s.includes('xdna')) return 'npu';
  if (s.includes('gpu')) return 'gpu';
  if (s.includes('cpu')) return 'cpu';
  return hasTicks ? 'gpu' : 'cpu';
}

/**
 * SQL that is true when a tick maps (through fit `fit`) to a time beyond
 * int64 ns (|ns| >= 9.22e18, a little inside 2^63 so the DOUBLE estimate's
 * error cannot matter): such a tick is kept, its `*_ns` NULL and its row
 * `valid = false`, with a diagnostic, instead of failing the import.
 */
export function tickBeyondNsSql(col: string, fit = 'f', o = tickOffsetSql(col, fit)): string {
  return `(${fit}.num IS NOT NULL AND (${col}) IS NOT NULL AND NOT (abs(${o} + ${fit}.base_ns::DOUBLE) < 9.22e18))`;
}

/** {@link tickNsSql}, NULL for a tick beyond int64 ns ({@link tickBeyondNsSql}); `o`: the tick's {@link tickOffsetSql}. */
export function tickNsInRangeSql(col: string, fit = 'f', o = tickOffsetSql(col, fit)): string {
  return `CASE WHEN ${tickBeyondNsSql(col, fit, o)} THEN NULL ELSE ${tickNsSql(col, fit, o)} END`;
}

/** SQL: true when a start or end tick of stage row `s` maps beyond int64 ns through tw_fit `f`. */
const tickBeyond = (s: string): string => `(${tickBeyondNsSql(`${s}.start_tick`, 'f')} OR ${tickBeyondNsSql(`${s}.end_tick`, 'f')})`;

/** Devices up to this many have their fits written into the SQL ({@link withFit}); more are joined with tw_fit. */
const FIT_CASES = 64;

/**
 * The rows of stage `from` that `where` picks, as relation `s` with their
 * device's fit (time_source, base_tick, base_ns, num: no stage column has
 * these names) and each tick's offset computed once (`o_start`, `o_end`),
 * for {@link mappedNs} and {@link mappedBeyond}; a row of a device without a
 * fit is left out. Up to {@link FIT_CASES} devices the fit is a CASE over the
 * device of constants (`fits`, the rows of tw_fit), and the rows keep the
 * stage's order; a join with tw_fit did not (313k dispatches were stored
 * with a row group of them after the last), so the caller sorts when
 * `fitsJoined` says the join was used.
 */
const withFit = (from: string, where: string, fits: ReadonlyMap<number, DeviceTime>): string => {
  if (fitsJoined(fits)) {
    return `(SELECT s.*, f.time_source, f.base_tick, f.base_ns, f.num, ${tickOffsetSql('s.start_tick')} AS o_start, ${tickOffsetSql('s.end_tick')} AS o_end
      FROM ${from} s JOIN tw_fit f ON f.device = s.physical_device_ordinal WHERE ${where}) s`;
  }
  const big = (v: bigint | undefined) => (v === undefined ? 'NULL' : `${v.toString()}::HUGEINT`);
  // (one device, the common case: its constants; a CASE over one device cost the 313k-dispatch insert ~30 ms)
  const each = (value: (t: DeviceTime) => string) => (fits.size === 1 ? value([...fits.values()][0]!)
    : `CASE s.physical_device_ordinal ${[...fits].map(([device, t]) => `WHEN ${device} THEN ${value(t)}`).join(' ')} END`);
  return `(SELECT s.*, ${tickOffsetSql('s.start_tick', 's')} AS o_start, ${tickOffsetSql('s.end_tick', 's')} AS o_end
    FROM (SELECT s.*, ${each((t) => sqlString(t.source))} AS time_source, ${each((t) => big(t.fit?.base_tick))} AS base_tick,
      ${each((t) => big(t.fit?.base_ns))} AS base_ns, ${each((t) => big(t.fit?.ns_per_tick_num))} AS num
    FROM ${from} s WHERE (${where}) AND s.physical_device_ordinal IN (${[...fits.keys()].join(', ')})) s) s`;
};
/** {@link withFit} joins tw_fit (its rows then in no particular order): beyond {@link FIT_CASES} devices, or none (no row then). */
const fitsJoined = (fits: ReadonlyMap<number, DeviceTime>): boolean => fits.size === 0 || fits.size > FIT_CASES;
/** SQL mapping the start or end tick of a {@link withFit} row to host ns, exactly (DOUBLE where provably exact, else HUGEINT); NULL beyond int64 ns. */
const mappedNs = (end: 'start' | 'end'): string => tickNsInRangeSql(`s.${end}_tick`, 's', `s.o_${end}`);
/** SQL: true when a tick of a {@link withFit} row maps beyond int64 ns. */
const mappedBeyond = `(${tickBeyondNsSql('s.start_tick', 's', 's.o_start')} OR ${tickBeyondNsSql('s.end_tick', 's', 's.o_end')})`;

const noneIfU32 = (c: string) => `NULLIF(${c}, ${U32_NONE})`;
const noneIfZero = (c: string) => `NULLIF(${c}, 0)`;

/** kernels_meta, from the stage's executable records (before the dispatches: a dispatch without a key is named from it). */
async function insertKernelsMeta(store: Store, captureId: number): Promise<void> {
  await store.run(`INSERT INTO kernels_meta
    SELECT ${captureId}, executable_id, coalesce(${noneIfU32('function_ordinal')}, ${noneIfU32('export_ordinal')}), name,
      workgroup_size[1], workgroup_size[2], workgroup_size[3], binding_count
    FROM tw_stage_nd WHERE record_type IN ('executable_function', 'executable_export')`);
}

/** SQL naming a dispatch's kernel (`s`: its stage row): its key, else kernels_meta's name (`k`: {@link kernelJoin}), else its executable and function. */
const kernelName = `coalesce(s.key, k.name, CASE WHEN s.executable_id IS NOT NULL THEN 'executable_' || s.executable_id || ':' || coalesce(${noneIfU32('s.function_ordinal')}::VARCHAR, '?') END, 'unknown')`;
/** SQL joining capture `captureId`'s kernels_meta (`k`) to stage row `s`. */
const kernelJoin = (captureId: number) => `LEFT JOIN (SELECT DISTINCT ON (executable_id, function_ordinal) executable_id, function_ordinal, name FROM kernels_meta WHERE capture_id = ${captureId}) k
      ON k.executable_id = s.executable_id AND k.function_ordinal = ${noneIfU32('s.function_ordinal')}`;

/**
 * The insert of the device dispatches (dispatch_event) into `dispatches`.
 * A plain scan of the stage keeps its (line) order (DuckDB preserves
 * insertion order without an ORDER BY), so it sorts by line only through a
 * join (a join's output, even with a table of a few rows, came out of order:
 * see {@link withFit}).
 */
function deviceDispatchesSql(captureId: number, fits: Map<number, DeviceTime>, keyless: boolean): string {
  // A dispatch's kernel is its key; kernels_meta names only those without one. IREE writes a key for every
  // dispatch, so the join (and the sort it needs) is left out when no dispatch lacks one: 35-40 ms of a 300 MB
  // capture's import. ORDER BY line: a LEFT JOIN emits a chunk's unmatched rows after its matched ones
  // (dispatches of a kernel kernels_meta lacks), so without it the rows are stored out of the file's order
  const [dispatchKernel, dispatchJoin, dispatchOrder] = keyless ? [kernelName, kernelJoin(captureId), 'ORDER BY line'] : ['s.key', '', fitsJoined(fits) ? 'ORDER BY line' : ''];
  // map each tick once (its offset once: withFit), then derive dur_ns
  return `INSERT INTO dispatches
    SELECT cid, dev, q, sub, cb, ci, ev, ex, fo, kernel, start_ns, end_ns, end_ns - start_ns, start_tick, end_tick, source_dur_ns, ts, ok, wx, wy, wz, NULL, line
    FROM (SELECT ${captureId} AS cid, s.physical_device_ordinal AS dev, ${noneIfU32('s.queue_ordinal')} AS q, ${noneIfZero('s.submission_id')} AS sub,
      ${noneIfZero('s.command_buffer_id')} AS cb, ${noneIfU32('s.command_index')} AS ci, s.event_id AS ev, ${noneIfZero('s.executable_id')} AS ex,
      ${noneIfU32('s.function_ordinal')} AS fo, ${dispatchKernel} AS kernel,
      ${mappedNs('start')} AS start_ns, ${mappedNs('end')} AS end_ns, s.start_tick, s.end_tick, s.duration_ns AS source_dur_ns, s.time_source AS ts,
      coalesce(coalesce(s.valid, true) AND s.start_tick IS NOT NULL AND s.end_tick IS NOT NULL AND s.end_tick >= s.start_tick AND NOT ${mappedBeyond}, false) AS ok,
      s.workgroup_count[1] AS wx, s.workgroup_count[2] AS wy, s.workgroup_count[3] AS wz, s.line
    FROM ${withFit('tw_stage', `record_type = 'dispatch_event'`, fits)} ${dispatchJoin}) ${dispatchOrder}`;
}

/** The host-timed dispatches (host_execution_event, op dispatch) into `dispatches`, after the device ones. */
async function insertHostDispatches(store: Store, captureId: number): Promise<void> {
  await store.run(`INSERT INTO dispatches
    SELECT ${captureId}, s.physical_device_ordinal, ${noneIfU32('s.queue_ordinal')}, ${noneIfZero('s.submission_id')}, ${noneIfZero('s.command_buffer_id')},
      ${noneIfU32('s.command_index')}, s.event_id, ${noneIfZero('s.executable_id')}, ${noneIfU32('s.function_ordinal')}, ${kernelName},
      s.start_host_time_ns, s.end_host_time_ns, s.end_host_time_ns - s.start_host_time_ns, NULL, NULL, s.duration_ns, 'host_monotonic',
      coalesce(coalesce(s.valid, true) AND s.start_host_time_ns IS NOT NULL AND s.end_host_time_ns >= s.start_host_time_ns, false),
      s.workgroup_count[1], s.workgroup_count[2], s.workgroup_count[3], NULL, s.line
    FROM tw_stage_nd s ${kernelJoin(captureId)}
    WHERE s.record_type = 'host_execution_event' AND s.op = 'dispatch' ORDER BY s.line`);
}

/**
 * The tables from the stage but dispatches and kernels_meta. A plain scan of
 * the stage keeps its (line) order; the inserts through a join sort by line.
 */
async function loadOtherTables(store: Store, captureId: number, fits: Map<number, DeviceTime>): Promise<void> {
  await store.run(`INSERT INTO submissions
    SELECT ${captureId}, s.physical_device_ordinal, ${noneIfU32('s.queue_ordinal')}, ${noneIfZero('s.submission_id')}, ${noneIfZero('s.command_buffer_id')},
      s.event_id, s.op, ${mappedNs('start')} AS start_ns, ${mappedNs('end')} AS end_ns, end_ns - start_ns, s.start_tick, s.end_tick,
      s.time_source, coalesce(coalesce(s.valid, true) AND s.end_tick >= s.start_tick AND NOT ${mappedBeyond}, false), s.operation_count, s.line
    FROM ${withFit('tw_stage_nd', `record_type = 'queue_device_event'`, fits)} ORDER BY s.line`);
  await store.run(`INSERT INTO queue_events
    SELECT ${captureId}, ${noneIfU32('physical_device_ordinal')}, ${noneIfU32('queue_ordinal')}, event_id, op, ${noneIfZero('submission_id')},
      ${noneIfZero('command_buffer_id')}, host_time_ns, ready_host_time_ns, dependency_strategy, wait_count, signal_count, barrier_count,
      operation_count, line
    FROM tw_stage_nd WHERE record_type = 'queue_event'`);
  await store.run(`INSERT INTO host_events
    SELECT ${captureId}, ${noneIfU32('physical_device_ordinal')}, ${noneIfU32('queue_ordinal')},
      CASE record_type WHEN 'host_execution_event' THEN 'host_execution' ELSE 'command_region' END, op, key, event_id,
      ${noneIfZero('submission_id')}, ${noneIfZero('command_buffer_id')}, ${noneIfU32('command_index')}, NULL,
      start_host_time_ns, end_host_time_ns, end_host_time_ns - start_host_time_ns, 'host_monotonic',
      coalesce(coalesce(valid, true) AND end_host_time_ns >= start_host_time_ns, false),
      CASE WHEN tile_count IS NOT NULL THEN json_object('tile_count', tile_count, 'tile_duration_sum_ns', tile_duration_sum_ns, 'source_duration_ns', duration_ns) END,
      line
    FROM tw_stage_nd WHERE record_type IN ('host_execution_event', 'command_region_event')`);
  await store.run(`INSERT INTO memory_events
    SELECT ${captureId}, ${noneIfU32('physical_device_ordinal')}, ${noneIfU32('queue_ordinal')}, event_id, event_type, host_time_ns,
      ${noneIfZero('allocation_id')}, ${noneIfZero('pool_id')}, ${noneIfZero('submission_id')}, length, line
    FROM tw_stage_nd WHERE record_type = 'memory_event'`);
  await store.run(`INSERT INTO metric_samples
    SELECT ${captureId}, ${noneIfU32('s.physical_device_ordinal')}, s.source_id, TRY_CAST(v->>'metric_id' AS UBIGINT), v->>'name', v->>'unit',
      v->>'semantic', s.host_time_begin_ns, s.host_time_end_ns, TRY_CAST(v->>'value' AS DOUBLE), s.line
    FROM tw_stage_nd s, unnest(CAST(s."values" AS JSON[])) AS u(v)
    WHERE s.record_type = 'device_metric_sample' AND s."values" IS NOT NULL`);
}

/** Event records timed by device ticks (the others by host ns). */
const DEVICE_TIMED = new Set(['dispatch_event', 'queue_device_event']);
/** The record types whose events {@link collectEventDiagnostics} checks. */
const EVENT_TYPES = new Set(['dispatch_event', 'queue_device_event', 'host_execution_event', 'command_region_event']);
/** SQL: an event's start or end is missing (device events are timed by ticks, host events by host ns); stored with valid = false. */
const NO_TIME = `CASE WHEN record_type IN ('dispatch_event', 'queue_device_event') THEN start_tick IS NULL OR end_tick IS NULL
  ELSE start_host_time_ns IS NULL OR end_host_time_ns IS NULL END`;

/**
 * True when no tick of a device's events can map beyond int64 ns
 * ({@link tickBeyondNsSql}): the map is linear, so its extremes over the
 * events are at their smallest and largest tick, computed here in doubles as
 * the SQL computes them, against a bound a little inside its own (9.0e18
 * against 9.22e18). Then the query that counts them is not run (20-26 ms on
 * 313k dispatches).
 */
function ticksInRange(t: DeviceTime): boolean {
  const fit = t.fit;
  if (fit === null || t.ticks === null) return true; // no map, or no tick-timed event: nothing maps
  if (t.ticks === undefined) return false;
  const ns = (tick: bigint) => Number(tick - fit.base_tick) * (Number(fit.ns_per_tick_num) / 1e15) + Number(fit.base_ns);
  return Math.abs(ns(t.ticks.lo)) < 9.0e18 && Math.abs(ns(t.ticks.hi)) < 9.0e18;
}

async function collectEventDiagnostics(store: Store, diags: Diagnostic[], fits: ReadonlyMap<number, DeviceTime>): Promise<void> {
  // one pass, grouped by record type: the events' problems, and each type's count and first line (an unknown type's
  // warning, after the others)
  const rows = await store.rows(`
    SELECT record_type, count(*) AS n, min(line) AS line, count(*) FILTER (WHERE valid = false) AS invalid,
      count(*) FILTER (WHERE end_tick < start_tick OR end_host_time_ns < start_host_time_ns) AS backwards,
      min(line) FILTER (WHERE valid = false OR end_tick < start_tick OR end_host_time_ns < start_host_time_ns) AS first_line,
      count(*) FILTER (WHERE ${NO_TIME}) AS untimed, min(line) FILTER (WHERE ${NO_TIME}) AS untimed_line
    FROM tw_stage WHERE record_type IS NOT NULL
    GROUP BY 1 ORDER BY 1`);
  for (const r of rows) {
    if (!EVENT_TYPES.has(String(r['record_type']))) continue;
    const invalid = Number(r['invalid']);
    const backwards = Number(r['backwards']);
    const untimed = Number(r['untimed']);
    const line = r['first_line'] === null ? undefined : Number(r['first_line']);
    if (invalid > 0) diags.push({ severity: 'warning', code: 'invalid-events', message: captureMessages.invalidEvents(String(r['record_type']), invalid), line });
    if (backwards > 0) diags.push({ severity: 'warning', code: 'invalid-events', message: captureMessages.endBeforeStart(String(r['record_type']), backwards), line });
    if (untimed > 0) {
      diags.push({ severity: 'warning', code: 'missing-timestamp', line: Number(r['untimed_line']),
        message: `${untimed} ${String(r['record_type'])}(s) have no start or end time (${DEVICE_TIMED.has(String(r['record_type'])) ? 'start_tick, end_tick' : 'start_host_time_ns, end_host_time_ns'}): kept with valid = false` });
    }
  }
  const beyond = [...fits.values()].every(ticksInRange) ? undefined : (await store.rows(`SELECT count(*) AS n, min(s.line) AS line FROM tw_stage s JOIN tw_fit f ON f.device = s.physical_device_ordinal
    WHERE s.record_type IN ('dispatch_event', 'queue_device_event') AND ${tickBeyond('s')}`))[0];
  if (beyond && Number(beyond['n']) > 0) {
    diags.push({ severity: 'warning', code: 'tick-beyond-ns-range', line: Number(beyond['line']),
      message: `${String(beyond['n'])} event(s) have a device tick that maps beyond the int64 ns range: kept with their ticks, *_ns NULL and valid = false` });
  }
  const producer = await store.rows(`SELECT line, severity, message, dropped_record_count, record_type FROM tw_stage_nd
    WHERE record_type IN ('diagnostic', 'dropped_records', 'truncated_chunk') OR dropped_record_count > 0 ORDER BY line`);
  for (const r of producer) {
    const line = Number(r['line']);
    if (r['dropped_record_count'] !== null && (r['dropped_record_count'] as bigint) > 0n) {
      diags.push({ severity: 'warning', code: 'dropped-records', message: captureMessages.droppedRecords(String(r['dropped_record_count'])), line });
    } else {
      const sev = String(r['severity'] ?? '').toLowerCase();
      diags.push({
        severity: sev.startsWith('err') ? 'error' : 'warning',
        code: r['record_type'] === 'diagnostic' ? 'producer-diagnostic' : String(r['record_type']).replace('_', '-'),
        message: captureMessages.producerDiagnostic(String(r['message'] ?? r['record_type'])),
        line,
      });
    }
  }
  for (const r of rows) {
    const t = String(r['record_type']);
    if (!KNOWN.has(t)) diags.push({ severity: 'warning', code: 'unknown-record-type', message: captureMessages.unknownRecordType(t, Number(r['n'])), line: Number(r['line']) });
  }
}

async function loadRaw(store: Store, captureId: number, path: string, compression: string): Promise<void> {
  const tabled = IREEPERF_TABLED_TYPES.map((t) => `'${t}'`).join(', ');
  const lastLine = await store.scalar(`SELECT max(line) FROM tw_stage_nd WHERE record_type IS NOT NULL AND record_type NOT IN (${tabled})`);
  if (lastLine === null) return;
  // A second pass, only when such records exist, and only as far as the last
  // of them (metadata usually comes early): keep each one's whole JSON.
  // DuckDB's default buffers first, larger ones only for a record beyond them: the 64 MiB buffers cost 35-40 ms
  const insert = (size?: number) => store.run(`INSERT INTO raw_records (capture_id, record_type, line, json)
    SELECT ${captureId}, (j->>'$.record_type'), line, j FROM (
      SELECT ordinality AS line, json AS j FROM read_json_objects(${sqlString(path)}, format = 'newline_delimited',
        compression = '${compression === 'none' ? 'uncompressed' : compression}'${size === undefined ? '' : `, maximum_object_size = ${size}`}) WITH ORDINALITY
      LIMIT ${String(lastLine)})
    WHERE (j->>'$.record_type') IS NOT NULL AND (j->>'$.record_type') NOT IN (${tabled})`);
  try {
    await insert();
  } catch (e) {
    if (!(e instanceof QueryError && /maximum_object_size/.test(e.message))) throw e;
    await insert(LARGE_OBJECT_BYTES);
  }
}

async function sessionDiagnostics(store: Store, diags: Diagnostic[]): Promise<string | null> {
  const rows = await store.rows(`SELECT event, session_status, line FROM tw_stage_nd WHERE record_type = 'session' ORDER BY line`);
  const end = rows.find((r) => r['event'] === 'end');
  if (!end) {
    diags.push({ severity: 'warning', code: 'no-session-end', message: captureMessages.noSessionEnd() });
    return null;
  }
  const status = String(end['session_status'] ?? 'unknown');
  if (status !== 'OK') diags.push({ severity: 'warning', code: 'session-not-ok', message: captureMessages.sessionNotOk(status), line: Number(end['line']) });
  return status;
}
