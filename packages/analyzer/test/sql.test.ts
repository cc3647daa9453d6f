/**
 * The SQL layer: builders are pure (no DuckDB import) and produce SQL that
 * DuckDB accepts (EXPLAIN); the views agree with the library functions;
 * read-only stores get TEMP views; and on seeded random timelines (overlaps,
 * ties, interleaved submissions, dispatches without a submission) the
 * window-function SQL agrees with a brute-force sweep written in plain JS.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import {
  betweenBucketsSql, busyUnionSql, durationStatsBySegmentSql, durationStatsSql, gapBucketsSql, gapList, gapListSql, gaps, installViews, kernelGlobSql,
  kernelStats, kernelStatsSql, longestGapsSql, matchedKernelsSql, overlap, overlapDeviceSql, busyPiecesSql, pairOverlapsSql, periodicSql, segmentRowsSql,
  segmentSpansSql, segmentSummarySql, selectionSql, viewStatements, type SelectionSpec,
} from '@tickwise/analyzer';
import { seededRng } from '@tickwise/time';

const SQL_DIR = resolve(import.meta.dirname, '../src/sql');

/** One dispatch of a scenario. */
interface D { device: number; queue: number; sub: number | null; kernel: string; start: number; end: number; valid?: boolean }

async function storeWith(ds: readonly D[], timeline = 'host_monotonic'): Promise<Store> {
  const store = await Store.open(':memory:');
  await store.run(`INSERT INTO captures (capture_id, path, format, timeline, producer, sha256) VALUES (1, 'test', 'test', '${timeline}', 'sql.test', 'ab')`);
  const devices = [...new Set(ds.map((d) => d.device))];
  for (const d of devices) await store.run(`INSERT INTO devices (capture_id, device, kind, time_base) VALUES (1, ${d}, 'gpu', 'device_tick_fit')`);
  if (ds.length) {
    const values = ds.map((d, i) =>
      `(1, ${d.device}, ${d.queue}, ${d.sub ?? 'NULL'}, '${d.kernel}', ${d.start}, ${d.end}, ${d.end - d.start}, 'device_tick_fit', ${d.valid === false ? 'false' : 'true'}, ${i + 1})`);
    await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line) VALUES ${values.join(', ')}`);
  }
  return store;
}

/** Seeded PRNG (mulberry32). */
/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

/** A random device timeline: back-to-back runs, overlaps, ties, submissions interleaving, some without an id. */
function scenario(seed: number, device: number, n: number): D[] {
  const r = rng(seed);
  const out: D[] = [];
  let t = 1000;
  let sub = 1;
  for (let i = 0; i < n; i++) {
    const x = r();
    if (x < 0.15) sub++;
    const start = x < 0.25 ? t - Math.floor(r() * 40) : t + Math.floor(r() * 60) * (r() < 0.3 ? 0 : 1);
    const dur = Math.floor(r() * 50);
    const s = r() < 0.1 ? (out.length ? out[Math.floor(r() * out.length)]!.sub : sub) : r() < 0.05 ? null : sub;
    out.push({ device, queue: 0, sub: s, kernel: `k${Math.floor(r() * 3)}`, start: Math.max(0, start), end: Math.max(0, start) + dur, valid: r() > 0.03 });
    t = Math.max(t, start + dur);
  }
  return out;
}

/** Brute force: busy, gaps (with class), >= 2 in flight, >= 2 submissions in flight. */
function sweep(all: readonly D[]) {
  const ds = all.filter((d) => d.valid !== false);
  const subOf = (d: D, i: number) => (d.sub === null ? `row${i}` : `${d.queue}/${d.sub}`);
  const points = [...new Set(ds.flatMap((d) => [d.start, d.end]))].sort((a, b) => a - b);
  let busy = 0;
  let multi = 0;
  let cross = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const a = points[i]!;
    const b = points[i + 1]!;
    const live = ds.map((d, j) => [d, j] as const).filter(([d]) => d.start <= a && d.end >= b && d.end > d.start);
    if (live.length >= 1) busy += b - a;
    if (live.length >= 2) multi += b - a;
    if (new Set(live.map(([d, j]) => subOf(d, j))).size >= 2) cross += b - a;
  }
  const first = Math.min(...ds.map((d) => d.start));
  const last = Math.max(...ds.map((d) => d.end));
  // maximal idle intervals: walk in start order keeping the max end
  const sorted = ds.map((d, j) => ({ d, j })).sort((x, y) => x.d.start - y.d.start || x.d.end - y.d.end);
  const gapsFound: { start: number; end: number; between: boolean }[] = [];
  let maxEnd = -Infinity;
  for (const { d } of sorted) {
    if (maxEnd !== -Infinity && d.start > maxEnd) {
      const g = { start: maxEnd, end: d.start };
      const subsBefore = new Set(ds.map((x, j) => [x, j] as const).filter(([x]) => x.end <= g.start).map(([x, j]) => subOf(x, j)));
      const subsAfter = new Set(ds.map((x, j) => [x, j] as const).filter(([x]) => x.start >= g.end).map(([x, j]) => subOf(x, j)));
      gapsFound.push({ ...g, between: ![...subsBefore].some((s) => subsAfter.has(s)) });
    }
    maxEnd = Math.max(maxEnd, d.end);
  }
  return { busy, multi, cross, span: last - first, gaps: gapsFound };
}

let open: Store[] = [];
afterEach(async () => {
  for (const s of open) await s.close();
  open = [];
});
async function track(p: Promise<Store>): Promise<Store> {
  const s = await p;
  open.push(s);
  return s;
}

describe('SQL builders', () => {
  it('files that build SQL are pure: they import nothing but each other', () => {
    for (const f of readdirSync(SQL_DIR)) {
      const text = readFileSync(join(SQL_DIR, f), 'utf8');
      const specs = [...text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]!);
      expect(specs.filter((s) => !s.startsWith('./')), f).toEqual([]);
    }
  });

  it('every generated statement passes DuckDB EXPLAIN (with and without segment ranges)', async () => {
    const store = await track(storeWith([{ device: 0, queue: 0, sub: 1, kernel: 'k', start: 0, end: 10 }]));
    const specs: SelectionSpec[] = [
      { sources: [{ capture_id: 1, device: 0, family: 'device' }], segments: null },
      { sources: [{ capture_id: 1, device: 0, family: 'host' }], segments: [{ capture_id: 1, device: 0, segment: 0, from_ns: 0n, until_ns: 100n }, { capture_id: 1, device: 0, segment: 1, from_ns: 100n, until_ns: null }] },
    ];
    await store.run(`CREATE TEMP TABLE t AS ${segmentRowsSql(selectionSql(specs[0]!), [{ capture_id: 1, device: 0 }])}`);
    for (const spec of specs) {
      const sel = selectionSql(spec, { capture_id: 1, device: 0, queue: null });
      const statements = [
        sel, gapBucketsSql(sel, 200_000n), betweenBucketsSql(sel, 1n), segmentSpansSql(sel), gapListSql(sel),
        overlapDeviceSql(sel), busyPiecesSql(sel), pairOverlapsSql(`(${busyPiecesSql(sel)})`), kernelStatsSql(sel), busyUnionSql(sel), matchedKernelsSql(selectionSql(spec, undefined, kernelGlobSql("it's*"))),
        durationStatsSql(sel), durationStatsBySegmentSql(sel), segmentRowsSql(sel, [{ capture_id: 1, device: 0 }, { capture_id: 1, device: 1 }]),
        longestGapsSql('t', [{ dev: 0, limit: 5 }]), longestGapsSql('t', [{ dev: 0, limit: 5 }, { dev: 1, limit: 2 }]), periodicSql('t', [{ dev: 0, period: 2 }]),
        segmentSummarySql('t', [{ dev: 0, boundaries: [] }]), segmentSummarySql('t', [{ dev: 0, boundaries: [1n, 3n] }, { dev: 1, boundaries: [] }], true),
      ];
      for (const sql of statements) await store.run(`EXPLAIN ${sql}`);
    }
    for (const sql of viewStatements(true)) await store.run(sql);
    for (const v of ['dispatch_spans', 'busy_intervals', 'device_busy', 'gaps_v', 'kernel_stats', 'gaps_over(1)', "kernel_cost('k*', 512, 256)"]) {
      await store.run(`EXPLAIN SELECT * FROM ${v}`);
    }
  });
});

describe('the selection of sources', () => {
  it('reads each (capture, device) in its own time-source family only, through one IN list per family at any number of devices', async () => {
    const store = await track(Store.open(':memory:'));
    await store.run(`INSERT INTO captures (capture_id, path, format, timeline, producer, sha256) SELECT c, 'c' || c, 'test', 'host_monotonic', 'sql.test', 'ab' FROM range(1, 4) t(c)`);
    // every (capture, device) has rows of both families; one row per family a device, numbered so the sum says which were read
    await store.run(`INSERT INTO dispatches (capture_id, device, queue, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
      SELECT c, d, 0, 'k', 1000 * d, 1000 * d + 10, 10, ts, true, c * 100000 + d * 10 + (ts = 'host_monotonic')::INTEGER
      FROM range(1, 4) t(c), range(0, 700) u(d), (VALUES ('device_tick_fit'), ('host_monotonic')) v(ts)`);
    // captures 1 and 3 from device ticks on even devices, host clocks on odd ones; capture 2 not selected
    const sources = [1, 3].flatMap((c) => Array.from({ length: 700 }, (_, d) => ({ capture_id: c, device: d, family: d % 2 === 0 ? 'device' as const : 'host' as const })));
    const spec: SelectionSpec = { sources, segments: null };
    const sql = selectionSql(spec);
    // two families, two terms: not one per device (an OR of 1,400 terms made every row test every device)
    expect(sql.match(/\bOR\b/g)?.length ?? 0).toBe(1);
    const [got] = await store.rows(`SELECT count(*)::INTEGER AS n, sum(d.line)::BIGINT AS lines FROM (${sql}) s JOIN dispatches d ON d.rowid = s.rowid_key`);
    const want = sources.map((s) => s.capture_id * 100000 + s.device * 10 + (s.family === 'host' ? 1 : 0));
    expect(got).toEqual({ n: 1400, lines: BigInt(want.reduce((a, b) => a + b, 0)) });
    // scoped to one device: its own family only
    const one = await store.rows(`SELECT time_source FROM (${selectionSql(spec, { capture_id: 3, device: 5, queue: null })})`);
    expect(one).toEqual([{ time_source: 'host_monotonic' }]);
    expect(selectionSql({ sources: [], segments: null })).toMatch(/\bfalse\b/);
  });
});

describe('views', () => {
  const ds: D[] = [
    ...scenario(7, 0, 60),
    { device: 1, queue: 0, sub: 1, kernel: 'npu', start: 1100, end: 1400 },
    { device: 1, queue: 0, sub: 2, kernel: 'npu', start: 1500, end: 1900 },
  ];

  it('dispatch_spans, device_busy, gaps_v, gaps_over, kernel_stats, kernel_cost agree with the library functions', async () => {
    const store = await track(storeWith(ds));
    const installed = await installViews(store);
    expect(installed.temporary).toBe(false);
    const lib = await gaps(store, { thresholdNs: 30n });
    const busy = await store.rows(`SELECT * FROM device_busy ORDER BY device`);
    for (const b of busy) {
      const s = lib.scopes.find((x) => x.device === b['device'] && x.queue === null)!;
      expect(b['busy_ns']).toBe(s.busy_ns);
      expect(b['span_ns']).toBe(s.span_ns);
      expect(b['gap_count']).toBe(BigInt(s.gap_count));
    }
    const list = await gapList(store);
    const gv = await store.rows(`SELECT device, start_ns, end_ns, gap_ns, between_submissions FROM gaps_v ORDER BY device, start_ns`);
    expect(gv.map((g) => [Number(g['device']), g['start_ns'], g['end_ns'], g['between_submissions']])).toEqual(list.map((g) => [g.device, g.start_ns, g.end_ns, g.between_submissions]));
    const over = await store.rows(`SELECT device, count, idle_ns FROM gaps_over(30) ORDER BY device`);
    expect(over.map((o) => [o['count'], o['idle_ns']])).toEqual(lib.scopes.filter((s) => s.queue === null).map((s) => [BigInt(s.gaps_over_threshold.count), s.gaps_over_threshold.idle_ns]));
    const ks = await store.rows(`SELECT device, kernel, count, total_ns, share_of_busy, median_ns FROM kernel_stats ORDER BY device, total_ns DESC, kernel`);
    const libK = (await kernelStats(store)).kernels;
    expect(ks.map((k) => [k['kernel'], Number(k['count']), k['total_ns']])).toEqual(libK.map((k) => [k.kernel, k.count, k.total_ns]));
    ks.forEach((k, i) => expect(k['share_of_busy']).toBeCloseTo(libK[i]!.share_of_busy!, 12));
    const cost = await store.rows(`SELECT dispatch_count, group_ms FROM kernel_cost('npu', 512, 256)`);
    expect(cost[0]!['dispatch_count']).toBe(2n);
    expect(cost[0]!['group_ms']).toBeCloseTo(350 * 256 / 512 / 1e6, 15);
  });

  it('a read-only store gets TEMP views', async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'tickwise-views-')), 's.duckdb');
    const w = await storeWith(ds);
    await w.run(`ATTACH '${path}' AS f; COPY FROM DATABASE memory TO f; DETACH f`);
    await w.close();
    const ro = await track(Store.open(path, { readOnly: true }));
    const installed = await installViews(ro);
    expect(installed.temporary).toBe(true);
    expect(await ro.scalar(`SELECT count(*) FROM busy_intervals`)).toBeGreaterThan(0n);
  });
});

describe('window-function SQL agrees with a brute-force sweep on seeded random timelines', () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`seed ${seed}`, async () => {
      const ds = [...scenario(seed, 0, 80), ...scenario(seed + 100, 1, 40)];
      const store = await track(storeWith(ds));
      const g = await gaps(store, { thresholdNs: 20n });
      const gSpans = await gaps(store, { thresholdNs: 20n, classifyBySpans: true });
      const o = await overlap(store);
      for (const device of [0, 1]) {
        const truth = sweep(ds.filter((d) => d.device === device));
        const s = g.scopes.find((x) => x.device === device && x.queue === null)!;
        const s2 = gSpans.scopes.find((x) => x.device === device && x.queue === null)!;
        expect(Number(s.busy_ns)).toBe(truth.busy);
        expect(Number(s.span_ns)).toBe(truth.span);
        expect(s.gap_count).toBe(truth.gaps.length);
        expect(s.gaps_over_threshold.count).toBe(truth.gaps.filter((x) => x.end - x.start > 20).length);
        const between = truth.gaps.filter((x) => x.between);
        expect([s.between_submissions.count, Number(s.between_submissions.idle_ns)]).toEqual([between.length, between.reduce((a, x) => a + x.end - x.start, 0)]);
        expect(s2.between_submissions).toEqual(s.between_submissions);
        expect(s2.histogram).toEqual(s.histogram);
        const d = o.devices.find((x) => x.device === device)!;
        expect(Number(d.busy_ns)).toBe(truth.busy);
        expect(Number(d.multi_inflight_ns)).toBe(truth.multi);
        expect(Number(d.cross_submission_inflight_ns)).toBe(truth.cross);
      }
      const both = sweep(ds);
      const a = sweep(ds.filter((d) => d.device === 0));
      const b = sweep(ds.filter((d) => d.device === 1));
      expect(Number(o.device_pairs[0]!.overlap_ns)).toBe(a.busy + b.busy - both.busy);
    });
  }
  // every pair at once (one query): 5 devices, one of them later than all others (no overlap: 0, not left out)
  for (const seed of [11, 12, 13]) {
    it(`seed ${seed}: every pair of 5 devices`, async () => {
      const late = scenario(seed + 4, 4, 30).map((d) => ({ ...d, start: d.start + 1_000_000, end: d.end + 1_000_000 }));
      const ds = [...scenario(seed, 0, 60), ...scenario(seed + 1, 1, 50), ...scenario(seed + 2, 2, 40), ...scenario(seed + 3, 3, 20), ...late];
      const store = await track(storeWith(ds));
      const o = await overlap(store);
      expect(o.device_pairs).toHaveLength(10);
      const busy = (devs: number[]) => sweep(ds.filter((d) => devs.includes(d.device))).busy;
      let nonZero = 0;
      for (const p of o.device_pairs) {
        expect(p.a.device).toBeLessThan(p.b.device);
        const truth = busy([p.a.device]) + busy([p.b.device]) - busy([p.a.device, p.b.device]);
        expect(Number(p.overlap_ns), `${p.a.device}/${p.b.device}`).toBe(truth);
        if (truth > 0) nonZero++;
        if (p.b.device === 4) expect(p.overlap_ns).toBe(0n);
      }
      expect(nonZero).toBeGreaterThanOrEqual(6);
    });
  }
});
