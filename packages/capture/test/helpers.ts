import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..');
/** IREE's real fixtures, beside the repo in the dev setup. */
export const FIXTURES = resolve(ROOT, '../shared/fixtures/iree');
/** True when the shared fixtures are present. */
export const HAVE_FIXTURES = existsSync(join(FIXTURES, 'fixture_smoke.ireeperf.jsonl'));

/** Runs the CLI from source; returns status, stdout, stderr. */
export function tickwise(args: string[], input?: string) {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', input, cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A fresh temporary directory. */
export function tmp(prefix = 'tickwise-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A small valid ireeperf-jsonl stream (schema 15) as an array of records:
 * one device whose clock runs at exactly 100 MHz (tick 1000 at host
 * 1_000_000 ns), two dispatches, session begin and end.
 */
export function baseRecords(): Record<string, unknown>[] {
  const v = 15;
  return [
    { schema_version: v, record_type: 'schema', format: 'ireeperf-jsonl', contract: 'schema_versioned_interchange' },
    { schema_version: v, record_type: 'session', event: 'begin', session_id: 1, session_status: 'OK' },
    { schema_version: v, record_type: 'device', physical_device_ordinal: 0, queue_count: 1 },
    { schema_version: v, record_type: 'queue', physical_device_ordinal: 0, queue_ordinal: 0, stream_id: 1 },
    { schema_version: v, record_type: 'executable_function', executable_id: 1, function_ordinal: 0, name: 'gemm_a', workgroup_size: [64, 1, 1] },
    { schema_version: v, record_type: 'clock_correlation', sample_id: 1, physical_device_ordinal: 0, device_tick: 1000, host_time_begin_ns: 999_990, host_time_end_ns: 1_000_010 },
    { schema_version: v, record_type: 'clock_correlation', sample_id: 2, physical_device_ordinal: 0, device_tick: 101_000, host_time_begin_ns: 1_999_990, host_time_end_ns: 2_000_010 },
    { schema_version: v, record_type: 'dispatch_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: 1, submission_id: 7, command_buffer_id: 3, command_index: 0, executable_id: 1, function_ordinal: 0, key: null, workgroup_count: [4, 1, 1], start_tick: 2000, end_tick: 2500, duration_ticks: 500, valid: true, duration_ns: 5000 },
    { schema_version: v, record_type: 'dispatch_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: 2, submission_id: 7, command_buffer_id: 3, command_index: 1, executable_id: 1, function_ordinal: 0, key: 'gemm_b', workgroup_count: [4, 1, 1], start_tick: 3000, end_tick: 3100, duration_ticks: 100, valid: true, duration_ns: 1000 },
    { schema_version: v, record_type: 'session', event: 'end', session_id: 1, session_status: 'OK' },
  ];
}

/** Records to JSON lines text. */
export function toJsonl(records: readonly unknown[]): string {
  return records.map((r) => (typeof r === 'string' ? r : JSON.stringify(r))).join('\n') + '\n';
}
