/**
 * Test helper: the shipped sample captures imported into a temporary store
 * by the real CLI (`scripts/tickwise import`); the report layer may not
 * import @tickwise/capture itself.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..');
/** The sample iGPU capture. */
export const SAMPLE_GPU = join(ROOT, 'captures/sample/igpu-prefill.ireeperf.jsonl');
/** The sample NPU capture. */
export const SAMPLE_NPU = join(ROOT, 'captures/sample/npu-tiles.ireeperf.jsonl');

/** Runs the CLI from source; returns stdout. */
export function tickwise(args: readonly string[], opts: { cwd?: string } = {}): string {
  return execFileSync(join(ROOT, 'scripts/tickwise'), args, { cwd: opts.cwd ?? ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, TZ: 'America/Los_Angeles' } });
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
