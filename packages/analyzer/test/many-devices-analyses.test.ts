/**
 * Analyses over many devices: `gaps`, `overlap`, `launches` and `kernels` run a fixed number of
 * statements however many devices are selected (every device's numbers
 * from statements partitioned by capture, device and queue), and each
 * device's numbers equal those of that device analyzed alone. Devices with
 * two queues, submission ids that go backwards, dispatches without a
 * submission, repetitions; two captures. Counted statements on a real
 * DuckDB, no timing.
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { gaps, kernelStats, launches, overlap, segments } from '@tickwise/analyzer';
import { ROOT, statementCounter, tickwise, tmp } from './checks-helpers';

const REAL = join(ROOT, '../shared/fixtures/external/chrome-trace');
const TRACELENS_4GPU = join(REAL, 'hpctraining_tracefusion_merged_nccl_only.json.gz');
const HTA_STEPS = join(REAL, 'hta_trace_diff_control.json.gz');
const HAVE_REAL = existsSync(TRACELENS_4GPU) && existsSync(HTA_STEPS);
if (!HAVE_REAL) console.warn(`many-devices-analyses: the real-trace case is skipped: ${REAL} lacks its fixtures`);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * A store of `devices` devices per capture, 2 captures. Device d: 3 passes of
 * 30 dispatches on queue d % 2 (and every third dispatch on queue 7 for odd d),
 * submissions of 3 (ids going backwards on devices d % 3 = 1, none on d % 5 = 4),
 * a 5 ms gap between passes.
 */
async function storeOf(devices: number): Promise<string> {
  const dir = tmp('tickwise-many-analyses-');
  dirs.push(dir);
  const db = join(dir, 's.duckdb');
  const s = await Store.open(db);
  try {
    await s.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
      SELECT c, 'test:' || c, 'generated', 1, NULL, 'many-devices-analyses.test', 'c' || c, 'host_monotonic', 0 FROM range(1, 3) t(c)`);
    await s.run(`INSERT INTO devices (capture_id, device, kind, name, time_base)
      SELECT c, d, CASE WHEN d % 2 = 0 THEN 'gpu' ELSE 'npu' END, 'dev' || d, 'device_tick_fit' FROM range(1, 3) a(c), range(${devices}) b(d)`);
    await s.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
      SELECT c, d, CASE WHEN d % 2 = 1 AND i % 3 = 0 THEN 7 ELSE d % 2 END,
        CASE WHEN d % 5 = 4 THEN NULL WHEN d % 3 = 1 THEN 1000 - i // 3 ELSE i // 3 END,
        'k' || (i % 30 % (3 + d % 4)),
        st, st + 40_000 + (i * 7 + d) % 13 * 1000, 40_000 + (i * 7 + d) % 13 * 1000, 'device_tick_fit', true, i + 1
      FROM (SELECT c, d, i, 1_000_000_000 + c * 10_000_000_000 + d * 1_000 + (i // 30) * 5_000_000 + (i % 30) * (45_000 + d % 3 * 20_000) AS st
        FROM range(1, 3) a(c), range(${devices}) b(d), range(90) r(i))`);
  } finally {
    await s.close();
  }
  return db;
}

/**
 * A read-only store whose statements to DuckDB are counted, opened after
 * every device's segmentation (a search per device, memoized on a
 * read-only store: not what is counted here).
 */
async function countingStore(db: string): Promise<{ store: Store; count: <T>(f: (s: Store) => Promise<T>) => Promise<{ value: T; statements: number }> }> {
  const store = await Store.open(db, { readOnly: true });
  await segments(store);
  const statements = statementCounter(store);
  return {
    store,
    count: async (f) => {
      statements.reset();
      const value = await f(store);
      return { value, statements: statements.n() };
    },
  };
}

const plain = <T>(x: T): unknown => JSON.parse(JSON.stringify(x, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)));

describe('many devices: analyses', () => {
  it('gaps, overlap, launches and kernels: as many statements for 2 x 24 devices as for 2 x 12; each device as when analyzed alone', async () => {
    // enough devices that every subset a verb reads (devices with several queues, with ids going backwards) is above
    // SCOPED_STATEMENTS_UP_TO: below it the window statements run per device
    const few = await countingStore(await storeOf(12));
    const many = await countingStore(await storeOf(24));
    // each device alone, on the same store
    const lone = many.store;
    for (const opts of [{}, { segment: 'steady' }, { classifyBySpans: true }]) {
      const a = await few.count((s) => gaps(s, opts));
      const b = await many.count((s) => gaps(s, opts));
      expect(b.statements).toBe(a.statements);
      // every device-wide scope and every queue scope, in device order
      expect(b.value.scopes.filter((x) => x.queue === null)).toHaveLength(48);
      expect(b.value.scopes.some((x) => x.gap_classification === 'spans')).toBe(true);
      expect(b.value.scopes.some((x) => x.gap_classification === 'adjacent')).toBe(!('classifyBySpans' in opts));
      const alone = [];
      for (const c of [1, 2]) for (const d of [0, 1, 4, 7, 23]) alone.push(...(await gaps(lone, { ...opts, captureId: c, device: d })).scopes);
      const picked = b.value.scopes.filter((x) => [0, 1, 4, 7, 23].includes(x.device));
      expect(plain(picked)).toEqual(plain(alone));
    }
    // overlap: each device's own numbers from one statement; the pairs from one range join
    for (const opts of [{}, { segment: 'steady' }, { work: 'all' as const }]) {
      const oa = await few.count((s) => overlap(s, opts));
      const ob = await many.count((s) => overlap(s, opts));
      expect(ob.statements).toBe(oa.statements);
      expect(ob.value.devices).toHaveLength(48);
      expect(ob.value.devices.some((d) => d.multi_inflight_ns > 0n && d.cross_submission_inflight_ns > 0n && d.max_in_flight >= 2)).toBe(true);
      for (const [c, d] of [[1, 0], [1, 7], [2, 23]] as const) {
        const alone = await overlap(lone, { ...opts, captureId: c, device: d });
        expect(plain(ob.value.devices.find((x) => x.capture_id === c && x.device === d))).toEqual(plain(alone.devices[0]));
      }
    }
    // launches: the groups, correlation and submit latency of every device from a fixed number of statements
    for (const opts of [{}, { segment: 'steady', rowsPerDispatch: 64 }]) {
      const la = await few.count((s) => launches(s, opts));
      const lb = await many.count((s) => launches(s, opts));
      expect(lb.statements).toBe(la.statements);
      expect(lb.value.launch_correlation).toHaveLength(48);
      for (const [c, d] of [[1, 3], [2, 0], [2, 22]] as const) {
        const alone = await launches(lone, { ...opts, captureId: c, device: d });
        const mine = <T extends { capture_id: number; device: number }>(xs: readonly T[]) => xs.filter((x) => x.capture_id === c && x.device === d);
        expect(plain(mine(lb.value.groups))).toEqual(plain(alone.groups));
        expect(plain(mine(lb.value.launch_correlation))).toEqual(plain(alone.launch_correlation));
        expect(plain(mine(lb.value.submit_latency))).toEqual(plain(alone.submit_latency));
        expect(alone.groups.length).toBeGreaterThan(2);
      }
    }
    const ka = await few.count((s) => kernelStats(s, { segment: 'steady' }));
    const kb = await many.count((s) => kernelStats(s, { segment: 'steady' }));
    expect(kb.statements).toBe(ka.statements);
    expect(kb.value.devices).toHaveLength(48);
    const k7 = await kernelStats(lone, { segment: 'steady', captureId: 2, device: 7 });
    expect(plain(kb.value.kernels.filter((k) => k.capture_id === 2 && k.device === 7))).toEqual(plain(k7.kernels));
    expect(plain(kb.value.devices.find((d) => d.capture_id === 2 && d.device === 7))).toEqual(plain(k7.devices[0]));
    await few.store.close();
    await many.store.close();
  }, 120_000);
});

describe('many devices: real traces', () => {
  // 9 devices (TraceLens' 4-GPU merge twice, HTA's trace with profiler steps and launch calls): above
  // SCOPED_STATEMENTS_UP_TO, so all devices are read by one partitioned statement; each device alone by scoped ones.
  // (Not overlap: the two merges are each on a clock of their own, so no pair across them compares.)
  it.skipIf(!HAVE_REAL)('each device of one partitioned statement equals that device read alone (gaps, kernels, launches)', async () => {
    const dir = tmp('tickwise-many-analyses-real-');
    dirs.push(dir);
    const db = join(dir, 'real.duckdb');
    for (const f of [TRACELENS_4GPU, TRACELENS_4GPU, HTA_STEPS]) expect(tickwise(['import', f, '--db', db]).status).toBe(0);
    const s = await Store.open(db, { readOnly: true });
    try {
      for (const opts of [{}, { segment: 'steady' }]) {
        const g = await gaps(s, opts);
        const k = await kernelStats(s, opts);
        const l = await launches(s, opts);
        expect(k.devices).toHaveLength(9);
        expect(l.launch_correlation.some((c) => c.linked > 0)).toBe(true);
        for (const { capture_id: c, device: d } of [k.devices[0]!, k.devices[5]!, k.devices[8]!]) {
          const mine = <T extends { capture_id: number; device: number }>(xs: readonly T[]) => xs.filter((x) => x.capture_id === c && x.device === d);
          // alone, `steady` is refused for a device with one segment: read it whole, as `steady` over all devices does
          const repeats = (await segments(s)).devices.find((x) => x.capture_id === c && x.device === d)!.segments.length > 1;
          const one = { ...opts, ...(repeats ? {} : { segment: 'all' }), captureId: c, device: d };
          expect(plain(mine(g.scopes))).toEqual(plain((await gaps(s, one)).scopes));
          expect(plain(mine(k.kernels))).toEqual(plain((await kernelStats(s, one)).kernels));
          const lone = await launches(s, one);
          expect(plain(mine(l.groups))).toEqual(plain(lone.groups));
          expect(plain(mine(l.launch_correlation))).toEqual(plain(lone.launch_correlation));
        }
      }
    } finally {
      await s.close();
    }
  }, 120_000);
});
