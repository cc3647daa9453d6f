import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { tmp } from './helpers';
import { heteromosaicTrace, hrxProfiles, ireeperfStream, kinetoTrace } from './many-devices-gen';

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

async function devicesOf(db: string): Promise<{ device: number; name: string | null; kind: string }[]> {
  const store = await Store.open(db, { readOnly: true });
  try {
    return await store.query({ device: 'number', name: 'string?', kind: 'string' }, 'SELECT device, name, kind FROM devices ORDER BY device');
  } finally {
    await store.close();
  }
}

/** Imports both files; the many-device one must take exactly the few-device one's statements. Returns its store. */
function sameStatements(few: string, many: string, extra: string[] = [], env: Record<string, string> = {}): string {
  const a = importCounting(few, extra, env);
  const b = importCounting(many, extra, env);
  expect(b.statements).toBe(a.statements);
  return b.db;
}

describe('many devices: statements do not grow with the device count', () => {
  it('Chrome trace (Kineto), one process per GPU', async () => {
    const dir = tmp('tickwise-many-devices-');
    const manyDb = sameStatements(kinetoTrace(dir, 3, 12), kinetoTrace(dir, 300, 1200));
    const devs = await devicesOf(manyDb);
    expect(devs).toHaveLength(300);
    expect(devs[123]).toEqual({ device: 123, name: 'GPU 123', kind: 'gpu' });
  });

  it('HeteroMosaic, one device label each', async () => {
    const dir = tmp('tickwise-many-devices-');
    const manyDb = sameStatements(heteromosaicTrace(dir, 3, 9), heteromosaicTrace(dir, 300, 900));
    const devs = await devicesOf(manyDb);
    expect(devs).toHaveLength(300);
    expect(new Set(devs.map((d) => d.name)).size).toBe(300);
  });

  it('ireeperf-jsonl: a clock fit per device, its samples and residuals', async () => {
    // one staging path for both (a file mostly of dispatches is staged split, see ireeperf-split.ts)
    const dir = tmp('tickwise-many-devices-');
    const manyDb = sameStatements(ireeperfStream(dir, 3, 2), ireeperfStream(dir, 300, 2), [], { TICKWISE_IREEPERF_SPLIT: '0' });
    const store = await Store.open(manyDb, { readOnly: true });
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
    const dir = tmp('tickwise-many-devices-');
    const manyDb = sameStatements(hrxProfiles(dir, 3, 2), hrxProfiles(dir, 300, 2));
    const devs = await devicesOf(manyDb);
    expect(devs).toHaveLength(300);
    for (const d of [0, 2, 10, 100, 299]) expect(devs[d]).toEqual({ device: d, name: `npu${d}`, kind: 'npu' });
    // an assumed rate: one assumption per device, in one append
    const assumedDb = sameStatements(hrxProfiles(dir, 3, 2, false), hrxProfiles(dir, 300, 2, false), ['--tick-hz', '1GHz']);
    const store = await Store.open(assumedDb, { readOnly: true });
    try {
      expect(await store.count('assumptions', `WHERE what = 'tick_hz'`)).toBe(300);
      // device 10's first interval starts at its own first tick: 0 ns on its relative timeline
      expect(await store.scalar(`SELECT min(start_ns) FROM dispatches WHERE device = 10`)).toBe(0n);
    } finally {
      await store.close();
    }
  });
});
