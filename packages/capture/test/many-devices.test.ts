import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { tmp } from './helpers';

/**
 * A capture with many devices (a merged multi-node Kineto trace, one
 * process per GPU; an hrx file with a profile per tile; HeteroMosaic stages
 * naming their engine) imports with as many SQL statements as one with
 * three: devices, their assumptions and diagnostics go in one append each,
 * never a statement per device (at ~3 ms a statement, 5000 device labels
 * took 28 s, 1000 IREE devices 22 s and 50k Kineto device processes 146 s). Counted from the
 * store's statement trace (TICKWISE_TRACE_SQL), not timed. The rows are
 * checked too, and hrx devices are numbered in document order (profile 10
 * is device 10, not device 2 as a text sort gave).
 */

const ROOT = resolve(import.meta.dirname, '../../..');

function importCounting(file: string, extra: string[] = [], env: Record<string, string> = {}): { statements: number; db: string } {
  const db = join(tmp('tickwise-many-devices-'), 'run.duckdb');
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', file, '--db', db, ...extra], {
    encoding: 'utf8', cwd: ROOT, env: { ...process.env, ...env, TICKWISE_TRACE_SQL: '1' },
  });
  expect(r.status, r.stderr).toBe(0);
  return { statements: r.stderr.split('\n').filter((l) => l.startsWith('sql @')).length, db };
}

function kineto(devices: number): string {
  const ev: object[] = [];
  for (let p = 0; p < devices; p++) ev.push({ ph: 'M', name: 'process_name', pid: 100 + p, tid: 0, args: { name: `GPU ${p}` } });
  for (let i = 0; i < devices * 4; i++) {
    const p = i % devices;
    ev.push({ ph: 'X', cat: 'kernel', name: `k${i % 3}`, pid: 100 + p, tid: 7, ts: 1000 + i, dur: 0.5, args: { device: p, stream: 7, correlation: i } });
  }
  ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 999, dur: 2 });
  const file = join(tmp('tickwise-many-devices-'), `kineto-${devices}.json`);
  writeFileSync(file, JSON.stringify({ traceEvents: ev }));
  return file;
}

function heteromosaic(devices: number): string {
  const lines: string[] = [];
  for (let i = 0; i < devices * 3; i++) {
    lines.push(JSON.stringify({ run_id: 0, chunk_id: i, layer_id: 0, stage: 'gemm', device: `gpu${i % devices}`, start_ts_us: 10 * i, end_ts_us: 10 * i + 5 }));
  }
  lines.push(JSON.stringify({ run_id: 0, chunk_id: 0, layer_id: 0, stage: 'cpu_prep', start_ts_us: 1, end_ts_us: 2 }));
  const file = join(tmp('tickwise-many-devices-'), `hm-${devices}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

function hrx(devices: number, declared = true): string {
  const profiles = Array.from({ length: devices }, (_, p) => ({
    device: `npu${p}`, kind: 'npu', ...(declared ? { frequency_hz: 100_000_000 } : {}),
    intervals: [{ name: 'gemm', start_tick: 1000 + p, end_tick: 2000 + p, queue: 0 }, { name: 'gemm', start_tick: 3000 + p, end_tick: 3500 + p, queue: 0 }],
  }));
  const file = join(tmp('tickwise-many-devices-'), `hrx-${devices}.json`);
  writeFileSync(file, JSON.stringify({ profiles }));
  return file;
}

/** An ireeperf-jsonl stream with `devices` devices, each with two clock samples (100 MHz) and two dispatches. */
function ireeperf(devices: number): string {
  const v = 15;
  const recs: object[] = [
    { schema_version: v, record_type: 'schema', format: 'ireeperf-jsonl', contract: 'schema_versioned_interchange' },
    { schema_version: v, record_type: 'session', event: 'begin', session_id: 1, session_status: 'OK' },
    { schema_version: v, record_type: 'executable_function', executable_id: 1, function_ordinal: 0, name: 'gemm_a', workgroup_size: [64, 1, 1] },
  ];
  for (let d = 0; d < devices; d++) {
    recs.push(
      { schema_version: v, record_type: 'device', physical_device_ordinal: d, queue_count: 1 },
      { schema_version: v, record_type: 'queue', physical_device_ordinal: d, queue_ordinal: 0, stream_id: 1 },
      { schema_version: v, record_type: 'clock_correlation', sample_id: 1, physical_device_ordinal: d, device_tick: 1000, host_time_begin_ns: 999_990 + d, host_time_end_ns: 1_000_010 + d },
      { schema_version: v, record_type: 'clock_correlation', sample_id: 2, physical_device_ordinal: d, device_tick: 101_000, host_time_begin_ns: 1_999_990 + d, host_time_end_ns: 2_000_010 + d },
    );
    for (let i = 0; i < 2; i++) {
      recs.push({ schema_version: v, record_type: 'dispatch_event', physical_device_ordinal: d, queue_ordinal: 0, event_id: i + 1, submission_id: 7, command_buffer_id: 3,
        command_index: i, executable_id: 1, function_ordinal: 0, key: null, workgroup_count: [4, 1, 1], start_tick: 2000 + 1000 * i, end_tick: 2500 + 1000 * i,
        duration_ticks: 500, valid: true, duration_ns: 5000 });
    }
  }
  recs.push({ schema_version: v, record_type: 'session', event: 'end', session_id: 1, session_status: 'OK' });
  const file = join(tmp('tickwise-many-devices-'), `iree-${devices}.ireeperf.jsonl`);
  writeFileSync(file, `${recs.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
}

async function devicesOf(db: string): Promise<{ device: number; name: string | null; kind: string }[]> {
  const store = await Store.open(db, { readOnly: true });
  try {
    return await store.query({ device: 'number', name: 'string?', kind: 'string' }, 'SELECT device, name, kind FROM devices ORDER BY device');
  } finally {
    await store.close();
  }
}

describe('many devices: statements do not grow with the device count', () => {
  it('Chrome trace (Kineto), one process per GPU', async () => {
    const few = importCounting(kineto(3));
    const many = importCounting(kineto(300));
    expect(many.statements).toBe(few.statements);
    const devs = await devicesOf(many.db);
    expect(devs).toHaveLength(300);
    expect(devs[123]).toEqual({ device: 123, name: 'GPU 123', kind: 'gpu' });
  });

  it('HeteroMosaic, one device label each', async () => {
    const few = importCounting(heteromosaic(3));
    const many = importCounting(heteromosaic(300));
    expect(many.statements).toBe(few.statements);
    const devs = await devicesOf(many.db);
    expect(devs).toHaveLength(300);
    expect(new Set(devs.map((d) => d.name)).size).toBe(300);
  });

  it('ireeperf-jsonl: a clock fit per device, its samples and residuals', async () => {
    // one staging path for both (a file mostly of dispatches is staged split, see ireeperf-split.ts)
    const few = importCounting(ireeperf(3), [], { TICKWISE_IREEPERF_SPLIT: '0' });
    const many = importCounting(ireeperf(300), [], { TICKWISE_IREEPERF_SPLIT: '0' });
    expect(many.statements).toBe(few.statements);
    const store = await Store.open(many.db, { readOnly: true });
    try {
      expect(await store.count('devices', `WHERE time_base = 'device_tick_fit' AND clock_samples = 2`)).toBe(300);
      // device 123's host clock is 123 ns later: its first dispatch (tick 2000, 10 ns a tick) at 1_010_000 + 123 ns
      expect(await store.scalar(`SELECT min(start_ns) FROM dispatches WHERE device = 123`)).toBe(1_010_123n);
      expect(await store.count('clock_samples', `WHERE residual_ns IS NOT NULL`)).toBe(600);
      expect(Number(await store.scalar(`SELECT max(abs(residual_ns)) FROM clock_samples`))).toBeLessThan(1);
    } finally {
      await store.close();
    }
  });

  it('hrx DeviceProfile, one profile each, numbered in document order', async () => {
    const few = importCounting(hrx(3));
    const many = importCounting(hrx(300));
    expect(many.statements).toBe(few.statements);
    const devs = await devicesOf(many.db);
    expect(devs).toHaveLength(300);
    for (const d of [0, 2, 10, 100, 299]) expect(devs[d]).toEqual({ device: d, name: `npu${d}`, kind: 'npu' });
    // an assumed rate: one assumption per device, in one append
    const fewAssumed = importCounting(hrx(3, false), ['--tick-hz', '1GHz']);
    const manyAssumed = importCounting(hrx(300, false), ['--tick-hz', '1GHz']);
    expect(manyAssumed.statements).toBe(fewAssumed.statements);
    const store = await Store.open(manyAssumed.db, { readOnly: true });
    try {
      expect(await store.count('assumptions', `WHERE what = 'tick_hz'`)).toBe(300);
      // device 10's first interval starts at its own first tick: 0 ns on its relative timeline
      expect(await store.scalar(`SELECT min(start_ns) FROM dispatches WHERE device = 10`)).toBe(0n);
    } finally {
      await store.close();
    }
  });
});
