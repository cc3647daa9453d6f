import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { sqlString, tableColumns, type Store, type TableName } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { insertCapture } from './capture-rows';
import type { ImportOptions, ImportResult } from './readers/ireeperf-jsonl';
import { readRecorderDir, recorderProcessDirs, type RecorderCapture } from './readers/recorder-dir';
import type { SourceFile } from './source-file';
import { readConditionsFile, storeConditions } from './conditions';

/**
 * Imports a tickwise recorder capture directory (native/FORMAT.md):
 *
 * ```
 * run/ (records.twr + meta.json, proc-<pid>/ children)
 *   --readRecorderDir--> canonical rows (host_monotonic ns, fits done)
 *   --insertRows--> captures, devices, clock_samples, dispatches,
 *                   host_events, provenance, conditions, diagnostics
 * ```
 * The capture's sha256 is over every process's `records.twr` then
 * `meta.json`, in directory order, so the same directory always hashes alike.
 */
export async function importRecorderDir(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  const captureId = await store.nextCaptureId();
  let cap: RecorderCapture;
  try {
    cap = await readRecorderDir(src.path, { captureId });
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
  // the two big tables through a staging table: positional rows, then one INSERT ... SELECT
  await appendBulk(store, 'dispatches', cap.dispatches);
  await appendBulk(store, 'host_events', cap.host_events);
  await store.append('provenance', cap.provenance as never);
  await store.append('conditions', cap.conditions as never);
  await store.append('diagnostics', cap.diagnostics as never);
  // host conditions `tickwise capture` sampled while the program ran
  const condFile = join(src.path, 'conditions.json');
  if (existsSync(condFile)) {
    await storeConditions(store, captureId, await readConditionsFile(condFile, join(src.displayPath, 'conditions.json')));
  }
  return {
    capture_id: captureId,
    format: cap.capture.format,
    records: cap.capture.record_count,
    dispatches: cap.dispatches.length,
    diagnostics: cap.diagnostics.length,
  };
}

/**
 * Appends rows (objects keyed by the table's column names) in bulk: the
 * columns that vary go as positional rows into a temporary table through the
 * store's appender, then one `INSERT ... SELECT` adds the columns that hold
 * one value in every row (capture_id, the recorder's many NULL columns) as
 * constants; DuckDB checks the table's constraints there.
 */
async function appendBulk(store: Store, table: TableName, rows: readonly object[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = tableColumns(table).map((c) => c.name);
  const first = rows[0] as Record<string, unknown>;
  const constant = new Set(columns.filter((c) => isLiteral(first[c] ?? null)));
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    for (const c of constant) if ((r[c] ?? null) !== (first[c] ?? null)) constant.delete(c);
    if (constant.size === 0) break;
  }
  const varying = columns.filter((c) => !constant.has(c));
  const staging = `tw_recorder_${table}`;
  await store.run(`CREATE OR REPLACE TEMP TABLE ${staging} AS SELECT ${varying.join(', ')} FROM ${table} LIMIT 0`);
  try {
    await store.appendTemp(staging, positional(rows, varying));
    const select = columns.map((c) => (constant.has(c) ? `${literal(first[c] ?? null)} AS ${c}` : c));
    await store.run(`INSERT INTO ${table} (${columns.join(', ')}) SELECT ${select.join(', ')} FROM ${staging}`);
  } finally {
    await store.run(`DROP TABLE IF EXISTS ${staging}`);
  }
}

/** True for a value that {@link literal} writes as SQL (not a bigint beyond int64, never an object). */
function isLiteral(v: unknown): boolean {
  return v === null || typeof v === 'boolean' || typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

function literal(v: unknown): string {
  if (v === null) return 'NULL';
  if (typeof v === 'string') return sqlString(v);
  return String(v);
}

function* positional(rows: readonly object[], columns: readonly string[]): Generator<unknown[]> {
  const n = columns.length;
  for (const row of rows) {
    const r = row as Record<string, unknown>;
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = r[columns[i]!] ?? null;
    yield out;
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
