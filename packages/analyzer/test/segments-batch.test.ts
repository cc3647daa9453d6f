/**
 * Segmentation of many devices at once: every device's search asks its
 * questions in rounds shared with the other devices, one statement per kind
 * of question. The statements do not grow with the number of devices, and
 * each device's segments, method, refused cuts and cold pass are those it
 * gets when segmented alone. The devices take every path of the search:
 * gap-cut repetitions, a cold first pass, profiler-step markers, submissions,
 * and none (one dispatch per submission, refused by a count). Counted
 * statements on a real DuckDB, no timing.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { resolveSegments, segmentCaptures, segments, type DeviceSegmentation } from '@tickwise/analyzer';
import { statementCounter, tmp } from './checks-helpers';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const BASE_NS = 1_000_000_000n;
const PASS_NS = 5_000_000n; // between pass starts
const STEP_NS = 20_000n; // between dispatch starts inside a pass
const DUR_NS = 10_000n;
const PER_PASS = 12;

/**
 * `devices` devices in each of 2 captures; capture 2 has a ProfilerStep#r host
 * marker at each pass start. Device d, by d % 4:
 * 0: 3 passes of 12 (kernels by position), 4 submissions a pass, 5 ms apart;
 * 1: the same with 2 extra kernels leading the first pass (a cold pass), no submissions;
 * 2: 36 dispatches back to back, kernels not periodic, one submission each;
 * 3: 3 passes of 12 back to back (no long gap), one submission a pass.
 */
async function storeOf(devices: number): Promise<string> {
  return newStore('s.duckdb', async (s) => {
    await s.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
      SELECT c, 'test:' || c, 'generated', 1, NULL, 'segments-batch.test', 'c' || c, 'host_monotonic', 0 FROM range(1, 3) t(c)`);
    await s.run(`INSERT INTO devices (capture_id, device, kind, name, time_base)
      SELECT c, d, 'gpu', 'dev' || d, 'device_tick_fit' FROM range(1, 3) a(c), range(${devices}) b(d)`);
    const rows: { capture_id: number; device: number; queue: number; submission_id: bigint | null; kernel: string; start_ns: bigint; end_ns: bigint; dur_ns: bigint; time_source: string; valid: boolean; line: bigint }[] = [];
    for (const c of [1, 2]) {
      for (let d = 0; d < devices; d++) {
        const add = (start: bigint, kernel: string, sub: number | null) =>
          rows.push({ capture_id: c, device: d, queue: 0, submission_id: sub === null ? null : BigInt(sub), kernel, start_ns: start, end_ns: start + DUR_NS, dur_ns: DUR_NS, time_source: 'device_tick_fit', valid: true, line: BigInt(rows.length + 1) });
        const k = d % 4;
        for (let r = 0; r < 3; r++) {
          const lead = k === 1 && r === 0 ? 2 : 0;
          for (let j = 0; j < PER_PASS + lead; j++) {
            const i = r * PER_PASS + j;
            if (k === 0) add(BASE_NS + BigInt(r) * PASS_NS + BigInt(j) * STEP_NS, `a${j % 5}`, r * 4 + Math.floor(j / 3));
            else if (k === 1) add(BASE_NS + BigInt(r) * PASS_NS + BigInt(j) * STEP_NS, j < lead ? 'warm' : `b${(j - lead) % 4}`, null);
            else if (k === 2) add(BASE_NS + BigInt(i) * STEP_NS, `r${(i * 7919 + d) % 11}`, i);
            else add(BASE_NS + BigInt(i) * STEP_NS, `c${j % 6}`, r);
          }
        }
      }
    }
    await s.append('dispatches', rows);
    await s.append('host_events', [0, 1, 2].map((r) => ({
      capture_id: 2, kind: 'slice', name: `ProfilerStep#${r}`, start_ns: BASE_NS + BigInt(r) * PASS_NS - 1_000n, end_ns: BASE_NS + BigInt(r + 1) * PASS_NS - 2_000n,
      dur_ns: PASS_NS - 1_000n, time_source: 'host_monotonic', valid: true,
    })));
  });
}

/** A new store file (in a folder removed after the tests), filled by `fill`. */
async function newStore(name: string, fill: (s: Store) => Promise<void>): Promise<string> {
  const dir = tmp('tickwise-segments-batch-');
  dirs.push(dir);
  const db = join(dir, name);
  const s = await Store.open(db);
  try {
    await fill(s);
  } finally {
    await s.close();
  }
  return db;
}

/** Runs `f` on a fresh read-only store (nothing memoized) and counts its statements to DuckDB. */
async function counted<T>(db: string, f: (s: Store) => Promise<T>): Promise<{ value: T; statements: number }> {
  const store = await Store.open(db, { readOnly: true });
  const statements = statementCounter(store);
  try {
    return { value: await f(store), statements: statements.n() };
  } finally {
    await store.close();
  }
}

const plain = <T>(x: T): unknown => JSON.parse(JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)));

/** Each listed device segmented alone, on a writable store (never memoized). */
async function alone(db: string, which: readonly (readonly [number, number])[]): Promise<DeviceSegmentation[]> {
  const s = await Store.open(db);
  try {
    const out: DeviceSegmentation[] = [];
    for (const [c, d] of which) out.push(...(await resolveSegments(s, { captureId: c, device: d })).devices);
    return out;
  } finally {
    await s.close();
  }
}

describe('segmentation of many devices at once', () => {
  it('as many statements for 2 x 16 devices as for 2 x 8; each device as when segmented alone; every path taken', async () => {
    const few = await storeOf(8);
    const many = await storeOf(16);
    const a = await counted(few, (s) => segments(s));
    const b = await counted(many, (s) => segments(s));
    expect(b.value.devices).toHaveLength(32);
    expect(b.statements).toBe(a.statements);
    // one statement per device was ~5 x 32
    expect(b.statements).toBeLessThan(40);
    const byMethod = (m: string) => b.value.devices.filter((x) => x.method === m);
    expect(byMethod('detected').length).toBeGreaterThan(0);
    expect(byMethod('profiler_steps').length).toBeGreaterThan(0);
    expect(byMethod('submissions').length).toBeGreaterThan(0);
    expect(byMethod('none').length).toBeGreaterThan(0);
    expect(b.value.devices.some((x) => x.cold_pass_extra_dispatches === 2 && x.segments.length === 3)).toBe(true);
    expect(b.value.devices.some((x) => x.refused.some((r) => r.reason === 'one dispatch per submission: not a repeated sequence'))).toBe(true);
    // device 1 of capture 1: a cold pass found by gaps (offset 2); of capture 2: by the profiler steps
    const d1 = (c: number) => b.value.devices.find((x) => x.capture_id === c && x.device === 1)!;
    expect([d1(1).method, d1(1).cold_pass_extra_dispatches, d1(1).segments.map((x) => x.dispatch_count)]).toEqual(['detected', 2, [14, 12, 12]]);
    expect([d1(2).method, d1(2).cold_pass_extra_dispatches, d1(2).segments.map((x) => x.dispatch_count)]).toEqual(['profiler_steps', 2, [14, 12, 12]]);
    const which = b.value.devices.map((x) => [x.capture_id, x.device] as const);
    expect(plain(await alone(many, which))).toEqual(plain(b.value.devices));
  }, 120_000);

  it('more devices than are searched at once: the same segmentations as alone, in a few statements per round', async () => {
    const db = await storeOf(50);
    // ~200 gap rows at once: 5 or 6 devices of 36-38 dispatches, the others waiting for a slot
    vi.stubEnv('TICKWISE_SEGMENT_GAP_ROWS', '200');
    let all: Awaited<ReturnType<typeof counted<Awaited<ReturnType<typeof segments>>>>>;
    try {
      all = await counted(db, (s) => segments(s));
    } finally {
      vi.unstubAllEnvs();
    }
    expect(all.value.devices).toHaveLength(100);
    // the same answers as all 100 at once (which takes fewer rounds, so fewer statements)
    const together = await counted(db, (s) => segments(s));
    expect(plain(together.value)).toEqual(plain(all.value));
    expect(all.statements).toBeGreaterThan(together.statements);
    expect(together.statements).toBeLessThan(60);
    const which = [[1, 0], [1, 1], [1, 49], [2, 2], [2, 3], [2, 45]] as const;
    const mine = which.map(([c, d]) => all.value.devices.find((x) => x.capture_id === c && x.device === d)!);
    expect(plain(await alone(db, which))).toEqual(plain(mine));
  }, 120_000);

  it('segmentCaptures (check): every capture at once, a capture that cannot be segmented listed apart', async () => {
    const db = await storeOf(4);
    const s = await Store.open(db);
    try {
      // a device without a time base refuses its capture's plan
      await s.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES (2, 9, 'npu', 'npu', 'none')`);
      await s.run(`INSERT INTO dispatches (capture_id, device, queue, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
        VALUES (2, 9, 0, 'x', NULL, NULL, NULL, 'device_tick_none', true, 1)`);
      const r = await segmentCaptures(s, [1, 2]);
      expect(r.refused).toEqual([2]);
      expect(r.devices.map((x) => [x.capture_id, x.device])).toEqual([[1, 0], [1, 1], [1, 2], [1, 3]]);
      expect(plain(r.devices)).toEqual(plain((await resolveSegments(s, { captureId: 1 })).devices));
      const one = await segmentCaptures(s, [1]);
      expect(one.refused).toEqual([]);
      expect(plain(one.devices)).toEqual(plain(r.devices));
    } finally {
      await s.close();
    }
  }, 120_000);

  it('a cut into 140k unequal segments is refused with their size range (their sizes were spread into Math.min: a stack overflow)', async () => {
    const db = await newStore('subs.duckdb', async (w) => {
      await w.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
        VALUES (1, 'test:subs', 'generated', 1, NULL, 'segments-batch.test', 'subs', 'host_monotonic', 0)`);
      await w.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES (1, 0, 'gpu', 'gpu', 'device_tick_fit')`);
      // submissions of 1, 2, ..., 7 dispatches, over and over (j = i % 28: submission floor((sqrt(8j + 1) - 1) / 2) of its block)
      await w.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
        SELECT 1, 0, 0, (i // 28) * 7 + floor((sqrt(8 * (i % 28) + 1) - 1) / 2)::BIGINT, 'k' || (i % 5), 1000 * i, 1000 * i + 500, 500, 'device_tick_fit', true, i + 1
        FROM range(560000) t(i)`);
    });
    const [d] = (await counted(db, (s) => segments(s))).value.devices;
    expect(d!.method).toBe('none');
    expect(d!.refused).toContainEqual({ method: 'submissions', segments: 140_000, reason: 'segments of 1 to 7 dispatches differ' });
  }, 120_000);
});
