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
 * took 28 s and 50k Kineto device processes 146 s). Counted from the
 * store's statement trace (TICKWISE_TRACE_SQL), not timed. The rows are
 * checked too, and hrx devices are numbered in document order (profile 10
 * is device 10, not device 2 as a text sort gave).
 */

const ROOT = resolve(import.meta.dirname, '../../..');

function importCounting(file: string, extra: string[] = []): { statements: number; db: string } {
  const db = join(tmp('tickwise-many-devices-'), 'run.duckdb');
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', file, '--db', db, ...extra], {
    encoding: 'utf8', cwd: ROOT, env: { ...process.env, TICKWISE_TRACE_SQL: '1' },
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
