/**
 * Test helper: the shipped sample captures imported into a temporary store
 * by the real CLI (`scripts/tickwise import`); the report layer may not
 * import @tickwise/capture itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..');
/** The sample iGPU capture (relative to ROOT: stores record the path as given, and goldens must not hold this machine's paths). */
export const SAMPLE_GPU = 'captures/sample/igpu-prefill.ireeperf.jsonl';
/** The sample NPU capture (relative to ROOT). */
export const SAMPLE_NPU = 'captures/sample/npu-tiles.ireeperf.jsonl';

/** Runs the CLI from source; returns stdout. */
export function tickwise(args: readonly string[], opts: { cwd?: string } = {}): string {
  return execFileSync(join(ROOT, 'scripts/tickwise'), args, { cwd: opts.cwd ?? ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TZ: 'America/Los_Angeles', TICKWISE_FROM_SOURCE: '1' } });
}

/** A fresh temporary folder. */
export function tmp(prefix = 'tickwise-report-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Imports the sample captures (iGPU, and NPU unless `npu: false`) into a new store; returns its path. */
export function sampleStore(opts: { npu?: boolean } = {}): string {
  const db = join(tmp(), 'sample.duckdb');
  tickwise(['import', SAMPLE_GPU, '--db', db, '--label', 'igpu-prefill']);
  if (opts.npu !== false) tickwise(['import', SAMPLE_NPU, '--db', db, '--label', 'npu-tiles', '--device-kind', 'npu']);
  return db;
}

/** The kernel name the escaping tests put into a capture. */
export const XSS_KERNEL = '<script>alert(1)</script>';
/** The capture label the escaping tests give the iGPU capture (it names devices in charts, dropdowns and tables). */
export const XSS_LABEL = '<img src=x onerror=alert(2)>';

/**
 * A store whose iGPU capture is the sample with one kernel renamed to
 * {@link XSS_KERNEL} (every occurrence, so the import sees it as the name)
 * and labelled {@link XSS_LABEL}, plus the NPU sample.
 */
export function xssStore(): string {
  const dir = tmp();
  const text = readFileSync(join(ROOT, SAMPLE_GPU), 'utf8').replaceAll('prefill_dispatch_3_rope_512x32x128_f16', XSS_KERNEL);
  const capture = join(dir, 'xss.ireeperf.jsonl');
  writeFileSync(capture, text);
  const db = join(dir, 'xss.duckdb');
  tickwise(['import', capture, '--db', db, '--label', XSS_LABEL]);
  tickwise(['import', SAMPLE_NPU, '--db', db, '--label', 'npu-tiles', '--device-kind', 'npu']);
  return db;
}
