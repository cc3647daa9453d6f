/**
 * Segmentation cost on a read-only store: each device is segmented once
 * however its callers select it (all devices, then one device: the report
 * does both), a capture's host markers are counted once (none: no device
 * looks for marker cuts), and a device submitted dispatch by dispatch is refused as a
 * repetition by a count, without reading its cuts into JavaScript. Counted
 * statements and result sizes on a real DuckDB, no timing.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { resolveSegments, segments } from '@tickwise/analyzer';
import { tmp } from './checks-helpers';

const REPS = 3;
const PER_REP = 8; // dispatches of a repetition, 4 submissions of 2
const N1 = 6_000; // device 1: one dispatch per submission

let dir: string;
let db: string;

beforeAll(async () => {
  dir = tmp('tickwise-segments-once-');
  db = join(dir, 's.duckdb');
  const w = await Store.open(db);
  await w.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
    VALUES (1, 'test:once', 'generated', 1, NULL, 'segments-once.test', 'once', 'host_monotonic', ${REPS * PER_REP + N1})`);
  await w.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES (1, 0, 'gpu', 'gpu', 'device_tick_fit'), (1, 1, 'npu', 'npu', 'device_tick_fit')`);
  // device 0: 3 repetitions of 8 dispatches (submissions of 2), 1 ms apart inside, 50 ms between repetitions
  await w.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
    SELECT 1, 0, 0, i // 2 + 1, 'k' || (i % ${PER_REP}), ${1_000_000_000} + (i // ${PER_REP}) * 50_000_000 + (i % ${PER_REP}) * 1_000_000,
      ${1_000_000_000} + (i // ${PER_REP}) * 50_000_000 + (i % ${PER_REP}) * 1_000_000 + 500_000, 500_000, 'device_tick_fit', true, i + 1
    FROM range(${REPS * PER_REP}) t(i)`);
  // device 1: one pass submitted dispatch by dispatch, kernels not periodic
  await w.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
    SELECT 1, 1, 0, i + 1, 'n' || (i * 7919 % 1013), ${1_000_000_000} + i * 10_000, ${1_000_000_000} + i * 10_000 + 4_000, 4_000, 'device_tick_fit', true, i + 1
    FROM range(${N1}) t(i)`);
  await w.close();
}, 60_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A read-only store whose statements are counted: segment-row tables created, and the largest result read. */
async function countedStore(): Promise<{ store: Store; created: () => number; largest: () => number; queries: string[] }> {
  const store = await Store.open(db, { readOnly: true });
  let created = 0;
  let largest = 0;
  const queries: string[] = [];
  const run = store.run.bind(store);
  const query = store.query.bind(store);
  store.run = (async (sql: string, ...rest: unknown[]) => {
    if (/CREATE OR REPLACE TEMP TABLE tw_segment_rows_/.test(sql)) created++;
    return (run as (...a: unknown[]) => Promise<unknown>)(sql, ...rest);
  }) as Store['run'];
  store.query = (async (...a: Parameters<Store['query']>) => {
    queries.push(a[1]);
    const rows = await query(...a);
    largest = Math.max(largest, rows.length);
    return rows;
  }) as Store['query'];
  return { store, created: () => created, largest: () => largest, queries };
}

describe('segmentation on a read-only store', () => {
  it('segments each device once: all devices, then each alone, then steady for one', async () => {
    const { store, created, queries } = await countedStore();
    try {
      const all = await segments(store);
      // one table of both devices' rows (the devices are segmented together)
      expect(created()).toBe(1);
      // the capture has no host markers: counted once for both devices, no per-device marker query
      expect(queries.filter((q) => q.includes('ProfilerStep'))).toHaveLength(1);
      expect(queries.filter((q) => q.startsWith('WITH m AS'))).toEqual([]);
      const d0 = all.devices.find((d) => d.device === 0)!;
      expect(d0.method).toBe('detected');
      expect(d0.segments.map((s) => s.dispatch_count)).toEqual([PER_REP, PER_REP, PER_REP]);
      for (const device of [0, 1]) {
        const one = await resolveSegments(store, { captureId: 1, device, segment: 'all' });
        expect(one.devices).toEqual(all.devices.filter((d) => d.device === device));
      }
      const steady = await resolveSegments(store, { captureId: 1, device: 0, segment: 'steady' });
      expect(steady.ranges.map((r) => r.segment)).toEqual([1, 2]);
      expect(created()).toBe(1);
    } finally {
      await store.close();
    }
  });

  it('a device submitted dispatch by dispatch: refused by a count, its cuts never read', async () => {
    const { store, largest } = await countedStore();
    try {
      const r = await resolveSegments(store, { captureId: 1, device: 1, segment: 'all' });
      const d1 = r.devices[0]!;
      expect(d1.method).toBe('none');
      expect(d1.segments.length).toBe(1);
      expect(d1.segments[0]!.dispatch_count).toBe(N1);
      expect(d1.refused).toContainEqual({ method: 'submissions', segments: N1, reason: 'one dispatch per submission: not a repeated sequence' });
      // the longest-gap list (at most 4096 rows) is the largest read; the 5,999 cuts are counted, not read
      expect(largest()).toBeLessThan(N1 - 1);
    } finally {
      await store.close();
    }
  });
});
