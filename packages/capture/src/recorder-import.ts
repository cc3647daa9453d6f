import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { Store } from '@tickwise/store';
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
  await insertAll(store, 'devices', devices);
  await insertAll(store, 'clock_samples', cap.clock_samples);
  await insertAll(store, 'dispatches', cap.dispatches);
  await insertAll(store, 'host_events', cap.host_events);
  await insertAll(store, 'provenance', cap.provenance);
  await insertAll(store, 'conditions', cap.conditions);
  await insertAll(store, 'diagnostics', cap.diagnostics);
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

/** Inserts rows whose keys are the table's column names. */
async function insertAll(store: Store, table: string, rows: readonly object[]): Promise<void> {
  const first = rows[0];
  if (!first) return;
  const columns = Object.keys(first);
  await store.insertRows(table, columns, rows.map((r) => columns.map((c) => (r as Record<string, unknown>)[c] ?? null)));
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
