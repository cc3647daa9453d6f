import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { Diagnostic, ImportOptions, ImportResult } from './ireeperf-jsonl';
import {
  baseName, cleanDuckdbMessage, duckdbCompression, insertAssumption, insertCapture, insertConditions, insertDevices, insertDiagnostics,
  orderByLineSeq, setImportMemory, sqlString, withTempDir,
} from '../capture-rows';
import { scanJsonRecords } from '../json-records';
import { earlyScanDir } from '../json-records-native';
import { PartLoader } from '../part-loader';
import { sha256File, type SourceFile } from '../source-file';
import { traceMessages } from '../trace-messages';
import type {} from '../reader-options'; // its ImportOptions fields
import { JSON_HOST_KINDS, ROCPROF_RECORDS, ROCPROF_TOOL, rocprofScanOptions } from './rocprofv3-scan';

/**
 * rocprofv3 (ROCm's rocprofiler-sdk tool) kernel traces: the
 * `--kernel-trace --output-format csv` file (`<pid>_kernel_trace.csv`, or
 * `rocpd2csv`'s `out_kernel_trace.csv`) and the `--output-format json` file
 * (`results.json`: `{"rocprofiler-sdk-tool": [{metadata, agents,
 * kernel_symbols, buffer_records: {kernel_dispatch, hip_api, ...}}]}`).
 * Timestamps are integer ns on CLOCK_BOOTTIME.
 *
 * ```
 * CSV  --DuckDB read_csv (all varchar, exact casts)----------\
 * JSON --scanJsonRecords (streamed) --DuckDB read_json-------+--> tw_rp_kd, tw_rp_host
 * rocpd (rocpd.ts) --better-sqlite3 rows --DuckDB appender---/
 *   tw_rp_kd --loadRocprofStaged (clock: boottime, or - offset --> host_monotonic)--> devices, dispatches, kernels_meta
 *   tw_rp_host --> host_events (API calls, markers, memory copies)
 * ```
 */

/**
 * Staging columns every rocprofv3 variant fills: one row per kernel dispatch.
 * Rows are loaded in the order (line, seq): `line` is the source line (many
 * records share one in a minified JSON file), `seq` the record's position
 * among its variant's records, so the order is total and stable.
 */
const KD_COLUMNS = `line BIGINT, device INTEGER, device_kind VARCHAR, device_name VARCHAR, queue_raw UBIGINT, stream_id UBIGINT,
  thread_id UBIGINT, dispatch_id UBIGINT, correlation_id UBIGINT, kernel_id UBIGINT, kernel VARCHAR, start_raw UBIGINT, end_raw UBIGINT,
  wg_x UBIGINT, wg_y UBIGINT, wg_z UBIGINT, grid_x UBIGINT, grid_y UBIGINT, grid_z UBIGINT, kind VARCHAR, seq BIGINT, agent_k BIGINT, kernel_k BIGINT`;

/**
 * A dispatch's agent and kernel texts may be staged by number instead
 * (`agent_k`, `kernel_k`: 1, 2, ... into `tw_rp_agent` and `tw_rp_kname`,
 * with device_kind, device_name and kernel NULL): a rocpd database names
 * them once per agent and symbol, and a text a row held 1 M copies of a
 * 394-character kernel name in the stage. The kernel names are read back
 * through `tw_rp_kd_v`, the agents' per device; the other readers stage the
 * texts and no numbers.
 */
const NAMED_COLUMNS = `CREATE TEMP TABLE tw_rp_agent (k BIGINT, device_kind VARCHAR, device_name VARCHAR);
  CREATE TEMP TABLE tw_rp_kname (k BIGINT, kernel VARCHAR);
  CREATE TEMP TABLE tw_rp_hname (k BIGINT, s VARCHAR)`;
/**
 * The lists of numbered names (see {@link NAMED_COLUMNS}) as variables of
 * the connection, for the views below to index: a constant, not a subquery.
 * The list as a scalar subquery was planned as a cross product, and the
 * rows inserted through it came out of order (1 M rocpd dispatches stored
 * with one back-step, at a different row each import); so did a join.
 */
const NAME_LISTS = [
  `SET VARIABLE tw_rp_knames = (SELECT list(kernel ORDER BY k) FROM tw_rp_kname)`,
  `SET VARIABLE tw_rp_hnames = (SELECT list(s ORDER BY k) FROM tw_rp_hname)`,
];
/**
 * tw_rp_kd with its kernel names (see {@link NAMED_COLUMNS}): by position
 * in the list of names ({@link NAME_LISTS}: a lookup per row that keeps the
 * rows' order); a number beyond the list (none is) reads as NULL. The
 * agents' texts are read per device ({@link DEVICES_SQL}), not per row.
 */
const KD_VIEW = `CREATE OR REPLACE TEMP VIEW tw_rp_kd_v AS SELECT * REPLACE (
    coalesce(kernel, getvariable('tw_rp_knames')[kernel_k]) AS kernel)
  FROM tw_rp_kd`;

/** Each device's kind, name and dispatch count: the staged rows counted per device and agent first, the agent's texts joined to those few. */
const DEVICES_SQL = `SELECT g.device, max(coalesce(g.device_kind, a.device_kind)) AS kind, max(coalesce(g.device_name, a.device_name)) AS name,
    sum(g.n)::INTEGER AS n
  FROM (SELECT device, device_kind, device_name, agent_k, count(*) AS n FROM tw_rp_kd GROUP BY ALL) g LEFT JOIN tw_rp_agent a ON a.k = g.agent_k
  GROUP BY g.device`;

/**
 * DuckDB's memory bound for a rocprofv3 input (JSON, CSV, rocpd): twice its
 * size, 300 MB to 700 MB, as for a Chrome trace; beyond it the stage spills.
 * Unbounded, a 1 GB JSON peaked at 3.09 GB and a 964 MB CSV at 3.18 GB.
 */
export const ROCPROF_MEMORY = { minMb: 300, capMb: 700 } as const;

/**
 * Staging columns of host-side spans (API calls, markers, copies): one row
 * each. A region's name and category may be staged by number instead
 * (`name_k`, `op_k`: 1, 2, ... into `tw_rp_hname`, with name and op NULL),
 * as a dispatch's kernel is (see {@link NAMED_COLUMNS}): rocpd names each
 * once in its string table. The other readers stage the texts.
 */
const HOST_COLUMNS = `line BIGINT, kind VARCHAR, op VARCHAR, name VARCHAR, device INTEGER, thread_id UBIGINT, correlation_id UBIGINT,
  start_raw UBIGINT, end_raw UBIGINT, args JSON, seq BIGINT, op_k BIGINT, name_k BIGINT`;
/** tw_rp_host with its numbered texts read back by position, as {@link KD_VIEW} reads kernel names. */
const HOST_VIEW = `CREATE OR REPLACE TEMP VIEW tw_rp_host_v AS SELECT * REPLACE (
    coalesce(op, getvariable('tw_rp_hnames')[op_k]) AS op,
    coalesce(name, getvariable('tw_rp_hnames')[name_k]) AS name)
  FROM tw_rp_host`;

/** Creates the empty staging tables (`tw_rp_kd`, `tw_rp_host`). */
export async function createRocprofStaging(store: Store): Promise<void> {
  await dropRocprofStaging(store);
  await store.run(`CREATE TEMP TABLE tw_rp_kd (${KD_COLUMNS})`);
  await store.run(`CREATE TEMP TABLE tw_rp_host (${HOST_COLUMNS})`);
  for (const sql of NAMED_COLUMNS.split(';')) await store.run(sql);
}

/** Drops the staging tables. */
export async function dropRocprofStaging(store: Store): Promise<void> {
  await store.run('DROP VIEW IF EXISTS tw_rp_kd_v');
  await store.run('DROP VIEW IF EXISTS tw_rp_host_v');
  for (const v of ['tw_rp_knames', 'tw_rp_hnames']) await store.run(`RESET VARIABLE ${v}`);
  for (const t of ['tw_rp_kd', 'tw_rp_kd_b', 'tw_rp_host', 'tw_rp_agent', 'tw_rp_kname', 'tw_rp_hname']) await store.run(`DROP TABLE IF EXISTS ${t}`);
}

/** What a variant tells the shared loader about its source. */
export interface RocprofSource {
  readonly format: string;
  readonly producer: string;
  readonly schemaVersion?: number | null;
  readonly records: number;
  readonly conditions?: ReadonlyArray<readonly [string, string | null]>;
}

/**
 * Loads the staged rows of one rocprofv3 capture into the canonical tables.
 * Times stay CLOCK_BOOTTIME (`host_boottime`, timeline `boottime`) unless
 * `opts.boottimeOffsetNs` relates the clocks, when they are shifted onto
 * host_monotonic and the relation is recorded in `assumptions`.
 */
export async function loadRocprofStaged(
  store: Store, src: SourceFile, opts: ImportOptions, info: RocprofSource, diags: Diagnostic[], sha: Promise<string>,
): Promise<ImportResult> {
  const captureId = await store.nextCaptureId();
  const offset = opts.boottimeOffsetNs;
  const timeSource = offset === undefined ? 'host_boottime' : 'host_monotonic';
  const timeline = offset === undefined ? 'boottime' : 'host_monotonic';
  const off = (offset ?? 0n).toString();
  // no offset: a plain cast (NULL beyond int64, as the HUGEINT difference would be); 70 ms less for 307k dispatches
  const ns = (col: string) => (offset === undefined || offset === 0n ? `TRY_CAST(${col} AS BIGINT)` : `TRY_CAST(${col}::HUGEINT - ${off}::HUGEINT AS BIGINT)`);

  for (const sql of NAME_LISTS) await store.run(sql);
  await store.run(KD_VIEW);
  await store.run(HOST_VIEW);
  const devices = await store.query(
    { device: 'number', kind: 'string?', name: 'string?', n: 'number' },
    `${DEVICES_SQL}
     UNION ALL SELECT device, NULL, NULL, 0 FROM tw_rp_host WHERE device IS NOT NULL AND device NOT IN (SELECT device FROM tw_rp_kd) GROUP BY device
     ORDER BY device`,
  );
  await insertDevices(store, devices.map((d) => ({
    capture_id: captureId, device: d.device, kind: opts.deviceKind ?? (d.kind === 'cpu' || d.kind === 'npu' || d.kind === 'gpu' ? d.kind : 'gpu'),
    name: d.name, time_base: timeSource,
  })));

  // Queue handles of the 2024-07 layout are pointers (139690710949888) that do not fit the INTEGER queue column:
  // each handle becomes queue 1, 2, ... of its device in order of first use (never queue 0, which reads as a
  // real queue index), and the handle itself is kept exactly in conditions (queue_handle.<device>.<queue>) and
  // named in a diagnostic.
  // one pass over the staged dispatches for every check below
  const [stats] = await store.query(
    { big_queues: 'number', wide: 'number', wide_line: 'number?', missing: 'number', nonpos: 'number', range: 'number', missing_line: 'number?', nonpos_line: 'number?', range_line: 'number?' },
    `SELECT count(*) FILTER (WHERE queue_raw > 2147483647)::INTEGER AS big_queues,
       count(*) FILTER (WHERE greatest(wg_x, wg_y, wg_z, grid_x, grid_y, grid_z) > 4294967295)::INTEGER AS wide,
       min(line) FILTER (WHERE greatest(wg_x, wg_y, wg_z, grid_x, grid_y, grid_z) > 4294967295)::BIGINT AS wide_line,
       count(*) FILTER (WHERE start_raw IS NULL OR end_raw IS NULL)::INTEGER AS missing,
       count(*) FILTER (WHERE start_raw IS NOT NULL AND end_raw IS NOT NULL AND end_raw <= start_raw)::INTEGER AS nonpos,
       count(*) FILTER (WHERE start_raw IS NOT NULL AND end_raw IS NOT NULL AND (${ns('start_raw')} IS NULL OR ${ns('end_raw')} IS NULL))::INTEGER AS range,
       min(line) FILTER (WHERE start_raw IS NULL OR end_raw IS NULL)::BIGINT AS missing_line,
       min(line) FILTER (WHERE start_raw IS NOT NULL AND end_raw IS NOT NULL AND end_raw <= start_raw)::BIGINT AS nonpos_line,
       min(line) FILTER (WHERE start_raw IS NOT NULL AND end_raw IS NOT NULL AND (${ns('start_raw')} IS NULL OR ${ns('end_raw')} IS NULL))::BIGINT AS range_line
     FROM tw_rp_kd`,
  );
  const b = stats!;
  const bigQueues = b.big_queues > 0;
  let queue = 'queue_raw::INTEGER';
  if (bigQueues) {
    await store.run(`CREATE OR REPLACE TEMP TABLE tw_rp_queues AS
      SELECT device, queue_raw, row_number() OVER (PARTITION BY device ORDER BY min(line))::INTEGER AS queue, min(line) AS line
      FROM tw_rp_kd WHERE queue_raw IS NOT NULL GROUP BY device, queue_raw`);
    await store.run(`UPDATE tw_rp_kd SET queue_raw = q.queue FROM tw_rp_queues q WHERE q.device = tw_rp_kd.device AND q.queue_raw = tw_rp_kd.queue_raw`);
    const handles = await store.query({ device: 'number', queue: 'number', handle: 'string', line: 'number' },
      `SELECT device, queue, queue_raw::VARCHAR AS handle, line FROM tw_rp_queues ORDER BY device, queue`);
    await store.run('DROP TABLE tw_rp_queues');
    await insertConditions(store, captureId, handles.map((h) => ({
      key: `queue_handle.${h.device}.${h.queue}`, value: h.handle, note: `rocprofv3 Queue_Id handle of device ${h.device} queue ${h.queue}`,
    })));
    const list = handles.slice(0, 4).map((h) => `device ${h.device} queue ${h.queue} = ${h.handle}`).join(', ') + (handles.length > 4 ? ', ...' : '');
    diags.push({ severity: 'info', code: 'queue-handles', message: `${traceMessages.queueHandles(handles.length, handles[0]!.handle)} (${list})`, line: handles[0]!.line });
  }
  // workgroup and grid sizes are 32-bit in HSA: a wider value (a corrupt record) is left NULL, with a diagnostic
  const wgCount = (g: string, w: string) => `CASE WHEN ${w} > 0 THEN TRY_CAST(${g} // ${w} AS UINTEGER) END`;
  if (b.wide > 0) diags.push({ severity: 'warning', code: 'value-out-of-range', message: traceMessages.wideWorkgroup(b.wide), line: b.wide_line ?? undefined });
  await store.run(`INSERT INTO dispatches
    SELECT ${captureId}, device, ${queue}, NULL, NULL, NULL, coalesce(dispatch_id, correlation_id), NULL, TRY_CAST(kernel_id AS UINTEGER),
      coalesce(kernel, 'kernel_' || kernel_id::VARCHAR, 'unknown'),
      ${ns('start_raw')} AS s_ns, ${ns('end_raw')} AS e_ns, e_ns - s_ns,
      NULL, NULL, TRY_CAST(end_raw::HUGEINT - start_raw::HUGEINT AS BIGINT), '${timeSource}',
      s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns > s_ns,
      ${wgCount('grid_x', 'wg_x')}, ${wgCount('grid_y', 'wg_y')}, ${wgCount('grid_z', 'wg_z')}, NULL, line
    FROM tw_rp_kd_v ${await orderByLineSeq(store, 'tw_rp_kd')}`);
  await store.run(`INSERT INTO kernels_meta
    SELECT ${captureId}, NULL, TRY_CAST(kernel_id AS UINTEGER), arg_min(kernel, line), TRY_CAST(arg_min(wg_x, line) AS UINTEGER),
      TRY_CAST(arg_min(wg_y, line) AS UINTEGER), TRY_CAST(arg_min(wg_z, line) AS UINTEGER), NULL
    FROM tw_rp_kd_v WHERE kernel IS NOT NULL GROUP BY kernel_id, kernel ORDER BY min(line), min(seq)`);
  await store.run(`INSERT INTO host_events
    SELECT ${captureId}, device, NULL, kind, op, name, correlation_id, NULL, NULL, NULL, TRY_CAST(thread_id AS BIGINT),
      ${ns('start_raw')} AS s_ns, ${ns('end_raw')} AS e_ns, e_ns - s_ns, '${timeSource}', s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns >= s_ns, args, line
    FROM tw_rp_host_v ${await orderByLineSeq(store, 'tw_rp_host')}`);

  if (b.missing > 0) diags.push({ severity: 'warning', code: 'missing-timestamp', message: traceMessages.badTimestamp('dispatch(es)', b.missing, 'start or end timestamp'), line: b.missing_line ?? undefined });
  if (b.nonpos > 0) diags.push({ severity: 'warning', code: 'non-positive-duration', message: traceMessages.nonPositiveDuration('dispatch(es)', b.nonpos), line: b.nonpos_line ?? undefined });
  if (b.range > 0) diags.push({ severity: 'warning', code: 'time-out-of-range', message: traceMessages.outOfRange('dispatch(es)', b.range), line: b.range_line ?? undefined });

  if (offset === undefined) {
    diags.push({ severity: 'info', code: 'boottime-unaligned', message: traceMessages.boottimeUnaligned() });
  } else {
    await insertAssumption(store, captureId, null, 'clock_relation', `host_monotonic_ns = host_boottime_ns - ${off}`, traceMessages.boottimeShifted(off));
  }
  await insertConditions(store, captureId, (info.conditions ?? []).map(([key, value]) => ({ key, value })));
  await insertCapture(store, {
    capture_id: captureId, path: src.displayPath, format: info.format, schema_version: info.schemaVersion ?? null, sha256: await sha,
    size_bytes: src.sizeBytes, producer: info.producer, label: opts.label ?? baseName(src.displayPath), timeline, record_count: info.records,
  });
  await insertDiagnostics(store, captureId, src.displayPath, diags);
  const dispatches = await store.count('dispatches', `WHERE capture_id = ${captureId}`);
  if (dispatches === 0) {
    const nd: Diagnostic = { severity: 'error', code: 'no-dispatches', message: traceMessages.noDispatches('no kernel dispatch records (was the kernel trace enabled?)') };
    diags.push(nd);
    await insertDiagnostics(store, captureId, src.displayPath, [nd]);
  }
  return { capture_id: captureId, format: info.format, records: info.records, dispatches, diagnostics: diags.length };
}

/** Columns of the kernel trace CSV tickwise reads (lower case), with the ones it needs. */
const CSV_REQUIRED = ['kernel_name', 'start_timestamp', 'end_timestamp'] as const;

/**
 * Imports a rocprofv3 kernel trace CSV. Columns are matched by name (their
 * set changed across ROCm releases: Stream_Id, Thread_Id, Dispatch_Id,
 * LDS_Block_Size vs Private/Group_Segment_Size, rocpd2csv's Guid); values
 * are read as text and cast exactly, so a bad cell becomes a diagnostic
 * with its line, not a failed import.
 */
export async function importRocprofCsv(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  const diags: Diagnostic[] = [];
  const sha = sha256File(src.path);
  sha.catch(() => undefined);
  opts.onProgress?.('scanning');
  const read = `read_csv(${sqlString(src.path)}, header = true, all_varchar = true, delim = ',', quote = '"', escape = '"', compression = '${duckdbCompression(src.compression)}')`;
  await setImportMemory(store, src, ROCPROF_MEMORY);
  try {
    await store.run('DROP TABLE IF EXISTS tw_rp_csv');
    try {
      await store.run(`CREATE TEMP TABLE tw_rp_csv AS SELECT * FROM ${read}`);
    } catch (e) {
      const msg = (e as Error).message;
      // DuckDB's sniffer names line 1 (or the first line of its sample) for a record with too few or too many
      // fields further down: find that record ourselves and name it
      const ragged = await firstRaggedCsvRecord(src).catch(() => null);
      if (ragged !== null) {
        throw new TickwiseError('bad-record', traceMessages.badRecord(`${ragged.fields} field(s) where the header has ${ragged.header}`), { file: src.displayPath, line: ragged.line, cause: e });
      }
      const line = /Line: (\d+)/i.exec(msg) ?? /line (\d+)/i.exec(msg);
      throw new TickwiseError('bad-record', traceMessages.badRecord(cleanDuckdbMessage(msg)), { file: src.displayPath, line: line ? Number(line[1]) : undefined, cause: e });
    }
    const cols = (await store.rows(`DESCRIBE tw_rp_csv`)).map((r) => String(r['column_name']));
    const byName = new Map(cols.map((c) => [c.toLowerCase(), c]));
    const missing = CSV_REQUIRED.filter((c) => !byName.has(c));
    if (missing.length > 0) throw new TickwiseError('wrong-format', traceMessages.missingColumns(missing, cols), { file: src.displayPath, line: 1 });
    const col = (name: string, cast: string | null = 'UBIGINT'): string => {
      const c = byName.get(name);
      if (!c) return 'NULL';
      const q = `"${c.replaceAll('"', '""')}"`;
      return cast ? `TRY_CAST(trim(${q}) AS ${cast})` : q;
    };
    const agent = byName.has('agent_id') ? col('agent_id', null) : `'0'`;
    const records = await store.count('tw_rp_csv');
    if (records === 0) throw new TickwiseError('empty-input', traceMessages.noDispatches('the file has its header and no rows'), { file: src.displayPath, line: 2 });
    await createRocprofStaging(store);
    // rowid follows the file order; the header is line 1.
    await store.run(`INSERT INTO tw_rp_kd
      SELECT rowid + 2, coalesce(TRY_CAST(regexp_extract(${agent}, '(\\d+)\\s*$', 1) AS INTEGER), 0),
        CASE WHEN upper(${agent}) LIKE 'CPU%' THEN 'cpu' ELSE 'gpu' END,
        CASE WHEN TRY_CAST(${agent} AS INTEGER) IS NOT NULL THEN 'Agent ' || ${agent} ELSE ${agent} END,
        ${col('queue_id')}, ${col('stream_id')}, ${col('thread_id')}, ${col('dispatch_id')}, ${col('correlation_id')}, ${col('kernel_id')},
        ${col('kernel_name', null)}, ${col('start_timestamp')}, ${col('end_timestamp')},
        ${col('workgroup_size_x')}, ${col('workgroup_size_y')}, ${col('workgroup_size_z')}, ${col('grid_size_x')}, ${col('grid_size_y')}, ${col('grid_size_z')},
        ${col('kind', null)}, rowid, NULL, NULL
      FROM tw_rp_csv`);
    await store.run('DROP TABLE tw_rp_csv'); // copied: the loader's inserts then do not hold it too
    const otherKinds = await store.query({ kind: 'string', n: 'number', line: 'number' },
      `SELECT kind, count(*)::INTEGER AS n, min(line)::BIGINT AS line FROM tw_rp_kd WHERE kind IS NOT NULL AND kind <> 'KERNEL_DISPATCH' GROUP BY kind`);
    for (const k of otherKinds) diags.push({ severity: 'warning', code: 'unexpected-kind', message: `${k.n} row(s) of Kind "${k.kind}" read as kernel dispatches`, line: k.line });
    opts.onProgress?.('loading tables');
    return await loadRocprofStaged(store, src, opts, { format: 'rocprofv3-csv', producer: 'rocprofv3 (kernel trace CSV)', records }, diags, sha);
  } finally {
    await store.run('DROP TABLE IF EXISTS tw_rp_csv').catch(() => undefined);
    await dropRocprofStaging(store).catch(() => undefined);
  }
}

/**
 * Imports rocprofv3's JSON output. The file is one JSON object of any size:
 * it is streamed (never JSON.parse'd whole), its record arrays written to
 * NDJSON and read by DuckDB with explicit columns, so 64-bit values stay
 * exact. Several processes (`rocprofiler-sdk-tool[i]`) land in one capture;
 * a device is an agent's logical node id.
 */
export async function importRocprofJson(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  const diags: Diagnostic[] = [];
  const sha = sha256File(src.path);
  sha.catch(() => undefined);
  opts.onProgress?.('scanning');
  return withTempDir('tickwise-rocprof-', async (dir) => {
    const hostKinds = Object.keys(JSON_HOST_KINDS) as (keyof typeof JSON_HOST_KINDS)[];
    const corr = `correlation_id: 'STRUCT(internal UBIGINT, external UBIGINT)'`;
    const hostColumns = `kind: 'VARCHAR', operation: 'VARCHAR', thread_id: 'UBIGINT', ${corr}, start_timestamp: 'UBIGINT',
          end_timestamp: 'UBIGINT', dst_agent_id: 'STRUCT(handle UBIGINT)', src_agent_id: 'STRUCT(handle UBIGINT)', bytes: 'UBIGINT'`;
    // each record kind (rocprofv3-scan.ts: its path, in the scan's order): its staging table and columns (read by
    // DuckDB in parts while the scan goes on)
    const staging: Record<string, { table: string; columns: string }> = {
      // (thread_id and stream_id are not read: no table keeps them for a dispatch, and each column costs every record's parse)
      kd: { table: 'tw_rpj_kd', columns: `${corr}, start_timestamp: 'UBIGINT', end_timestamp: 'UBIGINT',
        dispatch_info: 'STRUCT(agent_id STRUCT(handle UBIGINT), queue_id STRUCT(handle UBIGINT), kernel_id UBIGINT, dispatch_id UBIGINT,
          workgroup_size STRUCT(x UBIGINT, y UBIGINT, z UBIGINT), grid_size STRUCT(x UBIGINT, y UBIGINT, z UBIGINT))'` },
      agents: { table: 'tw_rpj_agents', columns: `id: 'STRUCT(handle UBIGINT)', type: 'VARCHAR', node_id: 'UBIGINT', logical_node_id: 'UBIGINT',
        name: 'VARCHAR', product_name: 'VARCHAR', model_name: 'VARCHAR'` },
      syms: { table: 'tw_rpj_syms', columns: `kernel_id: 'UBIGINT', kernel_name: 'VARCHAR', formatted_kernel_name: 'VARCHAR', truncated_kernel_name: 'VARCHAR'` },
      ...Object.fromEntries(hostKinds.map((k, i) => [k, { table: `tw_rpj_h${i}`, columns: hostColumns }])),
    };
    await setImportMemory(store, src, ROCPROF_MEMORY);
    const loader = await PartLoader.start(store, 268435456, src);
    let scan;
    try {
      scan = await scanJsonRecords(src, rocprofScanOptions(dir, (i) => {
        const k = staging[ROCPROF_RECORDS[i]!.name]!;
        return loader.into(i, k.table, `_line: 'UBIGINT', _i: 'UBIGINT[]', ${k.columns}`);
      }, () => loader.restart()));
    } finally {
      await loader.settle(); // never leave a load running on the store (the scan may have failed)
    }
    await loader.finish(scan.lines, src.displayPath);
    for (const i of scan.issues) diags.push(i);
    const processes = [...scan.captured.keys()].filter((k) => k.endsWith('/metadata')).length;
    if (processes === 0 && scan.counts[0] === 0) {
      throw new TickwiseError('wrong-format', `not rocprofv3 JSON output: no "${ROCPROF_TOOL}" entries with metadata or kernel dispatches`, { file: src.displayPath, line: 1 });
    }
    try {
      opts.onProgress?.('reading records');
      await createRocprofStaging(store);
      // The agent table: type 1 = CPU, 2 = GPU (rocprofiler_agent_type_t); the device number is the logical node id.
      await store.run(`CREATE OR REPLACE TEMP VIEW tw_rpj_agent AS
        SELECT _i[1] AS proc, id.handle AS handle,
          coalesce(TRY_CAST(logical_node_id AS INTEGER), TRY_CAST(node_id AS INTEGER), TRY_CAST(_i[2] AS INTEGER)) AS device,
          CASE WHEN type IN ('1', 'CPU', 'ROCPROFILER_AGENT_TYPE_CPU') THEN 'cpu' ELSE 'gpu' END AS kind,
          coalesce(nullif(product_name, ''), nullif(name, ''), nullif(model_name, '')) AS name
        FROM tw_rpj_agents`);
      // No ORDER BY: a hash join may emit a row of a chunk late (a match found in a later probe round), and the
      // copy to dispatches sorts only then (orderByLineSeq); sorting the narrow lookups first and pairing them by
      // position cost more (0.50 vs 0.40 s on 307k dispatches) than the rare sort.
      // a node id beyond INTEGER (a damaged file: found by the import fuzz) numbers its agent by the next id, said once
      const [wide] = await store.query({ n: 'number', line: 'number?' },
        `SELECT count(*)::INTEGER AS n, min(_line)::BIGINT AS line FROM tw_rpj_agents
         WHERE (logical_node_id IS NOT NULL AND TRY_CAST(logical_node_id AS INTEGER) IS NULL) OR (node_id IS NOT NULL AND TRY_CAST(node_id AS INTEGER) IS NULL)`);
      if (wide!.n > 0) {
        diags.push({ severity: 'warning', code: 'value-out-of-range', line: wide!.line ?? undefined,
          message: `${wide!.n} agent(s) with a node id beyond 2147483647: numbered by node_id, else their position in agents[]` });
      }
      await store.run(`INSERT INTO tw_rp_kd
        SELECT k._line, coalesce(a.device, 0), coalesce(a.kind, 'gpu'), a.name, k.dispatch_info.queue_id.handle, NULL,
          NULL, k.dispatch_info.dispatch_id, k.correlation_id.internal, k.dispatch_info.kernel_id,
          coalesce(nullif(s.formatted_kernel_name, ''), nullif(s.kernel_name, ''), nullif(s.truncated_kernel_name, '')),
          k.start_timestamp, k.end_timestamp,
          k.dispatch_info.workgroup_size.x, k.dispatch_info.workgroup_size.y, k.dispatch_info.workgroup_size.z,
          k.dispatch_info.grid_size.x, k.dispatch_info.grid_size.y, k.dispatch_info.grid_size.z, 'KERNEL_DISPATCH', k.rowid, NULL, NULL
        FROM tw_rpj_kd k
        LEFT JOIN tw_rpj_agent a ON a.proc = k._i[1] AND a.handle = k.dispatch_info.agent_id.handle
        LEFT JOIN (SELECT DISTINCT ON (_i[1], kernel_id) _i[1] AS proc, * FROM tw_rpj_syms ORDER BY _i[1], kernel_id, rowid) s
          ON s.proc = k._i[1] AND s.kernel_id = k.dispatch_info.kernel_id`);
      // each record stage dropped once copied: the loader's inserts then do not hold it too
      await store.run('DROP TABLE tw_rpj_kd');
      // Operation names: strings.buffer_records[kind].operations[operation], per process.
      await store.run(`DROP TABLE IF EXISTS tw_rpj_ops`);
      await store.run(`CREATE TEMP TABLE tw_rpj_ops (proc UBIGINT, kind VARCHAR, kind_name VARCHAR, op VARCHAR, name VARCHAR)`);
      for (const [path, text] of scan.captured) {
        const m = /^rocprofiler-sdk-tool\/(\d+)\/strings\/buffer_records$/.exec(path);
        if (!m) continue;
        let kinds: unknown;
        try {
          kinds = JSON.parse(text);
        } catch {
          continue;
        }
        if (!Array.isArray(kinds)) continue;
        const rows: unknown[][] = [];
        kinds.forEach((k: { kind?: unknown; operations?: unknown }, ki) => {
          if (!Array.isArray(k?.operations)) return;
          k.operations.forEach((name, oi) => rows.push([Number(m[1]), String(ki), String(k.kind ?? ''), String(oi), String(name)]));
        });
        await store.appendTemp('tw_rpj_ops', rows);
      }
      for (let k = 0; k < hostKinds.length; k++) {
        const kind = JSON_HOST_KINDS[hostKinds[k]!];
        const copy = kind === 'memory_copy';
        await store.run(`INSERT INTO tw_rp_host
          SELECT h._line, '${kind}', coalesce(o.kind_name, h.kind), coalesce(o.name, 'operation ' || h.operation), ${copy ? 'd.device' : 'NULL'},
            h.thread_id, h.correlation_id.internal, h.start_timestamp, h.end_timestamp,
            ${copy ? `json_object('bytes', h.bytes, 'src_device', s.device, 'dst_device', d.device)` : 'NULL'}, (${k}::BIGINT << 40) + h.rowid, NULL, NULL
          FROM tw_rpj_h${k} h
          LEFT JOIN tw_rpj_ops o ON o.proc = h._i[1] AND o.kind = h.kind AND o.op = h.operation
          ${copy ? 'LEFT JOIN tw_rpj_agent d ON d.proc = h._i[1] AND d.handle = h.dst_agent_id.handle LEFT JOIN tw_rpj_agent s ON s.proc = h._i[1] AND s.handle = h.src_agent_id.handle' : ''}`);
        await store.run(`DROP TABLE tw_rpj_h${k}`);
      }
      const conditions: [string, string | null][] = [];
      for (const [path, text] of scan.captured) {
        if (!path.endsWith('/metadata')) continue;
        try {
          const md = JSON.parse(text) as { pid?: unknown; command?: unknown };
          if (md.pid !== undefined) conditions.push(['command.pid', String(md.pid)]);
          if (Array.isArray(md.command)) conditions.push(['command.line', md.command.join(' ')]);
        } catch {
          // metadata is informational only
        }
      }
      const records = scan.counts.reduce((a, b) => a + b, 0);
      opts.onProgress?.('loading tables');
      return await loadRocprofStaged(store, src, opts, { format: 'rocprofv3-json', producer: 'rocprofv3 (JSON output)', records, conditions }, diags, sha);
    } finally {
      for (const t of ['tw_rpj_kd', 'tw_rpj_agents', 'tw_rpj_syms', 'tw_rpj_ops', ...hostKinds.map((_, k) => `tw_rpj_h${k}`)]) {
        await store.run(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
      }
      await store.run('DROP VIEW IF EXISTS tw_rpj_agent').catch(() => undefined);
      await dropRocprofStaging(store).catch(() => undefined);
    }
  }, earlyScanDir(src.path)); // an early scan's folder (the plan names it): see startRocprofScanEarly
}

/** True when a file's first bytes look like a rocprofv3 kernel trace CSV header. */
export function sniffRocprofCsv(head: string): boolean {
  const first = head.split(/\r?\n/, 1)[0] ?? '';
  return /"?Kernel_Name"?/.test(first) && /"?Start_Timestamp"?/.test(first) && /"?End_Timestamp"?/.test(first);
}

/**
 * The first CSV record (after the header) whose field count differs from the
 * header's, with the line it starts on (quotes and doubled quotes honoured,
 * newlines inside quotes counted); null when every record has the header's
 * count. Streams the file (gzip too) and stops at the first such record.
 */
export async function firstRaggedCsvRecord(src: SourceFile): Promise<{ line: number; fields: number; header: number } | null> {
  const { createReadStream } = await import('node:fs');
  const { createGunzip } = await import('node:zlib');
  let input: NodeJS.ReadableStream = createReadStream(src.path);
  if (src.compression === 'gzip') input = input.pipe(createGunzip());
  let line = 1;
  let recordLine = 1;
  let fields = 1;
  let header = -1;
  let inQuotes = false;
  let pendingQuote = false;
  let empty = true;
  for await (const chunk of input as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (inQuotes) {
        if (c === 0x22) { inQuotes = false; pendingQuote = true; } else if (c === 0x0a) line++;
        continue;
      }
      if (c === 0x22) {
        inQuotes = true;
        if (pendingQuote) pendingQuote = false; // a doubled quote inside a quoted field
        empty = false;
        continue;
      }
      pendingQuote = false;
      if (c === 0x2c) { fields++; empty = false; continue; }
      if (c === 0x0a) {
        if (!empty) {
          if (header < 0) header = fields;
          else if (fields !== header) return { line: recordLine, fields, header };
        }
        line++;
        recordLine = line;
        fields = 1;
        empty = true;
        continue;
      }
      if (c !== 0x0d) empty = false;
    }
  }
  if (!empty && header >= 0 && fields !== header) return { line: recordLine, fields, header };
  return null;
}
