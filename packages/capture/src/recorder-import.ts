import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { tableColumns, type ColumnBatch, type Store, type TableName } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { insertCapture } from './capture-rows';
import type { ImportOptions, ImportResult } from './readers/ireeperf-jsonl';
import { readRecorderDir, recorderProcessDirs, type RecorderCapture, type RecorderDispatchRow, type RecorderHostEventRow } from './readers/recorder-dir';
import type { ColumnarRows } from './readers/recorder-map';
import type { SourceFile } from './source-file';
import { readConditionsFile, storeConditions } from './conditions';

/**
 * Imports a tickwise recorder capture directory (native/FORMAT.md):
 *
 * ```
 * run/ (records.twr + meta.json, proc-<pid>/ children)
 *   --readRecorderDir--> canonical rows (host_monotonic ns, fits done);
 *                        dispatches/host_events in batches into staging tables
 *   --insertRows--> captures, devices, clock_samples, dispatches,
 *                   host_events, provenance, conditions, diagnostics
 * ```
 * The capture's sha256 is over every process's `records.twr` then
 * `meta.json`, in directory order, so the same directory always hashes alike.
 */
export async function importRecorderDir(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  const captureId = await store.nextCaptureId();
  // the two big tables stream through staging tables while the capture is read (the rows are
  // never all in memory), then one INSERT ... SELECT each, once the captures row exists
  const dispatches = await Staging.create(store, 'dispatches', captureId, DISPATCH_NULLS);
  const hostEvents = await Staging.create(store, 'host_events', captureId, HOST_EVENT_NULLS);
  try {
    let cap: RecorderCapture;
    try {
      cap = await readRecorderDir(src.path, {
        captureId,
        batchColumns: { dispatches: dispatches.batchColumns, host_events: hostEvents.batchColumns },
        onBatch: async (b) => {
          await dispatches.add(b.dispatches);
          await hostEvents.add(b.host_events);
        },
      });
    } catch (e) {
      throw new TickwiseError('bad-recorder-capture', `not a readable recorder capture: ${(e as Error).message}`, { file: src.displayPath, cause: e });
    }
    const { sha256, sizeBytes } = await hashDirectory(src.path);
    await insertCapture(store, {
      capture_id: captureId,
      path: src.displayPath,
      format: cap.capture.format,
      schema_version: cap.capture.schema_version,
      sha256,
      size_bytes: sizeBytes,
      producer: cap.capture.producer,
      label: opts.label ?? (src.displayPath.replace(/\/+$/, '').split('/').pop() ?? src.displayPath),
      timeline: cap.capture.timeline,
      session_status: cap.capture.session_status,
      record_count: cap.capture.record_count,
    });
    const devices = opts.deviceKind ? cap.devices.map((d) => ({ ...d, kind: opts.deviceKind! })) : cap.devices;
    await store.append('devices', devices as never);
    await store.append('clock_samples', cap.clock_samples as never);
    await dispatches.insert();
    await hostEvents.insert();
    await finishImport(store, src, captureId, cap);
    return {
      capture_id: captureId,
      format: cap.capture.format,
      records: cap.capture.record_count,
      dispatches: cap.dispatch_count,
      diagnostics: cap.diagnostics.length,
    };
  } finally {
    // an error above is the one to report, not a failed clean-up of temporary tables
    await dispatches.drop().catch(() => undefined);
    await hostEvents.drop().catch(() => undefined);
  }
}

async function finishImport(store: Store, src: SourceFile, captureId: number, cap: RecorderCapture): Promise<void> {
  await store.append('provenance', cap.provenance as never);
  await store.append('conditions', cap.conditions as never);
  await store.append('diagnostics', cap.diagnostics as never);
  // host conditions `tickwise capture` sampled while the program ran
  const condFile = join(src.path, 'conditions.json');
  if (existsSync(condFile)) {
    await storeConditions(store, captureId, await readConditionsFile(condFile, join(src.displayPath, 'conditions.json')));
  }
}

/** The keys of T whose type is `null`. */
type NullKeys<T> = { [K in keyof T]-?: T[K] extends null ? K : never }[keyof T];
/** Columns of `dispatches` no recorder row sets (RecorderDispatchRow declares them `null`). */
const DISPATCH_NULLS = [
  'command_buffer_id', 'command_index', 'executable_id', 'function_ordinal', 'start_tick', 'end_tick', 'source_dur_ns',
  'workgroup_count_x', 'workgroup_count_y', 'workgroup_count_z', 'rows', 'line',
] as const satisfies readonly NullKeys<RecorderDispatchRow>[];
/** Columns of `host_events` no recorder row sets (RecorderHostEventRow declares them `null`). */
const HOST_EVENT_NULLS = ['command_buffer_id', 'command_index', 'line'] as const satisfies readonly NullKeys<RecorderHostEventRow>[];

/**
 * Rows of one canonical table in bulk: the columns that vary go, batch by
 * batch, into a temporary table through the store's appender (the reader
 * hands them over as columns, `RowColumns`: integers copied whole from
 * typed arrays, a JSON column as text that DuckDB checks in the insert);
 * `insert()` then adds them to the table in one `INSERT ... SELECT` that
 * writes capture_id and the columns no recorder row sets as constants
 * (DuckDB checks the table's constraints there). A text column is staged as
 * a number, each text's first-seen rank, and read back by its position in
 * the list of texts (a recorder capture's kernel names, ops and time
 * sources are a few texts repeated: the appender encoded every copy, 870k
 * of them for 144k dispatches; a list lookup keeps the rows' order, which
 * a join need not).
 */
class Staging {
  /** Per text column (its index among `varying`), its texts by first-seen rank (1-based: the key is the rank). */
  private readonly texts = new Map<number, Map<string, number>>();

  private constructor(
    private readonly store: Store,
    private readonly table: TableName,
    private readonly name: string,
    private readonly columns: readonly string[],
    private readonly varying: readonly string[],
    private readonly constants: ReadonlyMap<string, string>,
    textColumns: readonly string[],
  ) {
    for (const c of textColumns) this.texts.set(varying.indexOf(c), new Map());
  }

  static async create(store: Store, table: TableName, captureId: number, nulls: readonly string[]): Promise<Staging> {
    const info = tableColumns(table);
    const columns = info.map((c) => c.name);
    const constants = new Map<string, string>([['capture_id', String(captureId)], ...nulls.map((c) => [c, 'NULL'] as [string, string])]);
    const varying = columns.filter((c) => !constants.has(c));
    const textColumns = info.filter((c) => c.type === 'VARCHAR' && !constants.has(c.name)).map((c) => c.name);
    const name = `tw_recorder_${table}`;
    // a JSON column staged as VARCHAR: DuckDB checks its texts once, in the insert (JSON.parse of each in JS cost
    // ~0.16 s of the 144k-launch import)
    const json = new Set(info.filter((c) => c.type === 'JSON').map((c) => c.name));
    await store.run(`CREATE OR REPLACE TEMP TABLE ${name} AS SELECT ${varying.map((c) => (textColumns.includes(c) ? `NULL::INTEGER AS ${c}` : json.has(c) ? `${c}::VARCHAR AS ${c}` : c)).join(', ')} FROM ${table} LIMIT 0`);
    return new Staging(store, table, name, columns, varying, constants, textColumns);
  }

  /** The staged columns (name, store type) a batch brings, in staging order. */
  get batchColumns(): readonly { readonly name: string; readonly type: string }[] {
    const types = new Map(tableColumns(this.table).map((c) => [c.name, c.type]));
    return this.varying.map((name) => ({ name, type: types.get(name)! }));
  }

  /**
   * Appends a batch of rows given as {@link batchColumns}: integers copied
   * whole from their typed arrays, a text column as each text's rank.
   */
  async add(batch: ColumnarRows): Promise<void> {
    if (batch.n === 0) return;
    const columns = this.varying.map((c, i): ColumnBatch => {
      const col = batch.columns[i];
      if (col?.name !== c) throw new Error(`internal: ${this.table} batch column ${i + 1} is ${col?.name}, not ${c}`);
      const keys = this.texts.get(i);
      if ('ints' in col) return { ints: col.ints, nulls: col.nulls };
      if (keys === undefined) return { values: col.values };
      const ranks = new Int32Array(batch.n);
      const nulls = new Uint8Array(batch.n);
      for (let r = 0; r < batch.n; r++) {
        const v = col.values[r];
        if (v === null || v === undefined) {
          nulls[r] = 1;
          continue;
        }
        if (typeof v !== 'string') throw new Error(`internal: ${this.table}.${c} is a ${typeof v}, not a text`);
        let k = keys.get(v);
        if (k === undefined) keys.set(v, (k = keys.size + 1));
        ranks[r] = k;
      }
      return { ints: ranks, nulls };
    });
    await this.store.appendTempColumns(this.name, columns, batch.n);
  }

  async insert(): Promise<void> {
    const lists = `${this.name}_texts`;
    await this.store.run(`CREATE OR REPLACE TEMP TABLE ${lists} (col INTEGER, k INTEGER, v VARCHAR)`);
    const rows: unknown[][] = [];
    for (const [i, keys] of this.texts) for (const [v, k] of keys) rows.push([i, k, v]);
    await this.store.appendTemp(lists, rows);
    // each text column's list a variable of the connection, indexed per row: a constant, not a scalar subquery,
    // whose cross product let an insert's rows come out of order (rocprofv3.ts, NAME_LISTS)
    const variable = (i: number) => `${this.name}_texts_${i}`;
    for (const i of this.texts.keys()) await this.store.run(`SET VARIABLE ${variable(i)} = (SELECT list(v ORDER BY k) FROM ${lists} WHERE col = ${i})`);
    const select = this.columns.map((c) => {
      const i = this.varying.indexOf(c);
      if (this.constants.has(c)) return `${this.constants.get(c)} AS ${c}`;
      return this.texts.has(i) ? `getvariable('${variable(i)}')[${c}] AS ${c}` : c;
    });
    try {
      await this.store.run(`INSERT INTO ${this.table} (${this.columns.join(', ')}) SELECT ${select.join(', ')} FROM ${this.name}`);
    } finally {
      for (const i of this.texts.keys()) await this.store.run(`RESET VARIABLE ${variable(i)}`).catch(() => undefined);
    }
  }

  async drop(): Promise<void> {
    await this.store.run(`DROP TABLE IF EXISTS ${this.name}`);
    await this.store.run(`DROP TABLE IF EXISTS ${this.name}_texts`);
  }
}

async function hashDirectory(dir: string): Promise<{ sha256: string; sizeBytes: number }> {
  const h = createHash('sha256');
  let sizeBytes = 0;
  for (const d of await recorderProcessDirs(dir)) {
    for (const name of ['records.twr', 'meta.json']) {
      const p = join(d, name);
      if (!existsSync(p)) continue;
      const buf = await readFile(p);
      sizeBytes += buf.length;
      h.update(buf);
    }
  }
  return { sha256: h.digest('hex'), sizeBytes };
}

/** True for a directory that holds a recorder capture (itself or proc-<pid> children). */
export function sniffRecorderDir(path: string, isDirectory: boolean): boolean {
  if (!isDirectory) return false;
  if (existsSync(join(path, 'records.twr'))) return true;
  try {
    return readdirSync(path).some((n) => /^proc-\d+/.test(n) && statSync(join(path, n)).isDirectory() && existsSync(join(path, n, 'records.twr')));
  } catch {
    return false;
  }
}
