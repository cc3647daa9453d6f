/**
 * Segment selection at scale: `selectionSql`, `launchRowsSql` and
 * `segmentExpr` over a real store with 20,000 one-dispatch segments (as
 * `--segment all`/`steady` on a long run cut at submissions), checked row
 * by row against a brute-force labelling in JS (the first listed range
 * holding a row's start, as the former one-WHEN-per-range CASE did); and a
 * small adversarial capture: an open last range, adjacent ranges, rows
 * exactly at from_ns and until_ns, two devices with interleaved ranges,
 * another capture, and overlapping/empty/duplicate ranges.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { disjointSegments, launchRowsSql, segmentExpr, selectionSql, type Scope, type SegmentRange, type SelectionSpec } from '@tickwise/analyzer';
import { tmp } from './checks-helpers';

const BASE = 1_000_000_000_000;
const N0 = 20_000;
const N1 = 4_000;

let dir: string;
let store: Store;

/** One row of a selection, every column as text, keyed by rowid. */
type Row = { rowid_key: bigint; capture_id: number; device: number; start_ns: bigint | null; segment: number | null; text: string };

const SEL_SHAPE = { rowid_key: 'bigint', capture_id: 'number', device: 'number', start_ns: 'bigint?', segment: 'number?', text: 'string' } as const;

/** The rows of a selection (`key`: an expression unique per row, the rowid by default). */
async function selected(sql: string, key = 'rowid_key'): Promise<Row[]> {
  // every column but segment, as text: the selected rows' values must not change
  return store.query(SEL_SHAPE, `SELECT (${key})::BIGINT AS rowid_key, capture_id, device, start_ns, segment, to_json(s)::VARCHAR AS text FROM (${sql}) s ORDER BY 1`)
    .then((rows) => rows.map((r) => ({ ...r, text: stripSegment(r.text) })));
}

function stripSegment(json: string): string {
  const o = JSON.parse(json) as Record<string, unknown>;
  delete o['segment'];
  return JSON.stringify(o);
}

/** The label the one-WHEN-per-range CASE gave: the first listed range of the row's (capture, device) holding its start; null: none. */
function bruteLabel(ranges: readonly SegmentRange[], capture: number, device: number, start: number): number | null {
  let memo = brute.get(ranges);
  if (memo === undefined) {
    const flat = ranges.map((g) => [g.capture_id, g.device, Number(g.from_ns), g.until_ns === null ? Infinity : Number(g.until_ns), g.segment] as const);
    memo = { flat, seen: new Map() };
    brute.set(ranges, memo);
  }
  const key = `${capture}/${device}/${start}`;
  let label = memo.seen.get(key);
  if (label === undefined) {
    label = null;
    for (const [c, d, from, until, segment] of memo.flat) {
      if (c === capture && d === device && start >= from && start < until) {
        label = segment;
        break;
      }
    }
    memo.seen.set(key, label);
  }
  return label;
}
/** Per range list: the ranges as numbers, and the labels found so far (each row's start is scanned for once). */
const brute = new WeakMap<readonly SegmentRange[], { flat: (readonly [number, number, number, number, number])[]; seen: Map<string, number | null> }>();

/** Checks a segmented selection against the unsegmented one (same rows and values) labelled by brute force. */
async function expectSelection(spec: SelectionSpec, sql: (s: SelectionSpec) => string, key?: string): Promise<number> {
  const all = await selected(sql({ sources: spec.sources, segments: null }), key);
  expect(all.every((r) => r.segment === 0)).toBe(true);
  const got = await selected(sql(spec), key);
  const want = all
    .map((r) => ({ ...r, segment: bruteLabel(spec.segments!, r.capture_id, r.device, Number(r.start_ns)) }))
    .filter((r) => r.segment !== null);
  expect(got.length).toBe(want.length);
  const bad = got.filter((r, i) => r.rowid_key !== want[i]!.rowid_key || r.segment !== want[i]!.segment || r.text !== want[i]!.text);
  expect(bad.slice(0, 5)).toEqual([]);
  return got.length;
}

/** `segmentExpr` over every timed dispatch row, against brute force. */
async function expectExpr(ranges: readonly SegmentRange[] | null): Promise<void> {
  const rows = await store.query({ k: 'bigint', capture_id: 'number', device: 'number', start_ns: 'bigint', segment: 'number?' },
    `SELECT rowid AS k, capture_id, device, start_ns, ${segmentExpr(ranges)} AS segment FROM dispatches WHERE start_ns IS NOT NULL ORDER BY k`);
  const bad = rows.filter((r) => r.segment !== (ranges === null ? 0 : bruteLabel(ranges, r.capture_id, r.device, Number(r.start_ns))));
  expect(bad.slice(0, 5)).toEqual([]);
}

const sources = [
  { capture_id: 1, device: 0, family: 'device' as const },
  { capture_id: 1, device: 1, family: 'device' as const },
  { capture_id: 2, device: 0, family: 'device' as const },
  { capture_id: 2, device: 1, family: 'device' as const },
];

/** Start times of capture 1 (as inserted below). */
const start0 = (i: number) => BASE + i * 1000 + ((i * 7919) % 500);
const start1 = (i: number) => BASE + i * 5000 + 250;

/** Capture 2's rows: device -> start times. */
const SMALL: Record<number, number[]> = {
  0: [100, 199, 200, 250, 299, 300, 399, 400, 500, 1000, 5000],
  1: [99, 100, 150, 199, 200, 250, 300, 349, 350, 1000],
};

beforeAll(async () => {
  dir = tmp('tickwise-segment-scale-');
  store = await Store.open(join(dir, 'scale.duckdb'));
  await store.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
    VALUES (1, 'test:scale', 'generated', 1, NULL, 'segment-select-scale.test', 'scale', 'host_monotonic', ${N0 + N1}),
           (2, 'test:small', 'generated', 1, NULL, 'segment-select-scale.test', 'small', 'host_monotonic', 21)`);
  await store.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES
    (1, 0, 'gpu', 'gpu', 'device_tick_fit'), (1, 1, 'npu', 'npu', 'device_tick_fit'),
    (2, 0, 'gpu', 'gpu', 'device_tick_fit'), (2, 1, 'npu', 'npu', 'device_tick_fit')`);
  // capture 1: device 0 one dispatch per submission (each its own segment), two queues; device 1 interleaved in time;
  // a few invalid rows and rows without an end, which no selection keeps
  await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, workgroup_count_x, workgroup_count_y, workgroup_count_z, line)
    SELECT 1, 0, (i % 2)::INTEGER, i + 1, 'k' || (i % 7), ${BASE} + i * 1000 + (i * 7919) % 500,
      CASE WHEN i % 997 = 5 THEN NULL ELSE ${BASE} + i * 1000 + (i * 7919) % 500 + 300 + i % 13 END, 300 + i % 13, 'device_tick_fit', i % 1009 <> 3,
      (1 + i % 4)::UINTEGER, 1, 1, i + 1
    FROM range(${N0}) t(i)`);
  await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
    SELECT 1, 1, 0, i // 10 + 1, 'npu' || (i % 3), ${BASE} + i * 5000 + 250, ${BASE} + i * 5000 + 2250, 2000, 'device_tick_fit', true, i + 1
    FROM range(${N1}) t(i)`);
  const small = Object.entries(SMALL).flatMap(([d, ts]) => ts.map((t, i) => `(2, ${d}, 0, ${i + 1}, 'small${i}', ${t}, ${t + 10}, 10, 'device_tick_fit', true, ${i + 1})`));
  await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line) VALUES ${small.join(', ')}`);
}, 60_000);

afterAll(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Every segment of capture 1: device 0 one per dispatch (the last open-ended), device 1 one per 10 dispatches, cut between them. */
function bigSegments(): SegmentRange[] {
  const d0: SegmentRange[] = Array.from({ length: N0 }, (_, i) => ({
    capture_id: 1, device: 0, segment: i, from_ns: BigInt(start0(i)), until_ns: i + 1 < N0 ? BigInt(start0(i + 1)) : null,
  }));
  const m = N1 / 10;
  const d1: SegmentRange[] = Array.from({ length: m }, (_, k) => ({
    capture_id: 1, device: 1, segment: k, from_ns: BigInt(start1(10 * k) - 100), until_ns: k + 1 < m ? BigInt(start1(10 * (k + 1)) - 100) : null,
  }));
  return [...d0, ...d1];
}

describe('segment selection at 20,000 segments', () => {
  it('selectionSql keeps exactly the rows of the selected segments, labelled as brute force labels them, values unchanged', async () => {
    const segs = bigSegments();
    // two thirds of device 0's segments (the open last one included), every other one of device 1's, listed in a scrambled order
    const picked = segs.filter((g) => (g.device === 0 ? g.segment % 3 !== 1 || g.segment === N0 - 1 : g.segment % 2 === 0));
    const scrambled = picked.map((g, i) => ({ g, k: (i * 7307) % picked.length })).sort((a, b) => a.k - b.k).map((x) => x.g);
    expect(scrambled.length).toBeGreaterThan(13_000);
    const spec: SelectionSpec = { sources, segments: scrambled };
    const n = await expectSelection(spec, (s) => selectionSql(s));
    expect(n).toBeGreaterThan(14_000);
    for (const scope of [{ capture_id: 1, device: 0, queue: null }, { capture_id: 1, device: 0, queue: 1 }, { capture_id: 1, device: 1, queue: null }] satisfies Scope[]) {
      await expectSelection(spec, (s) => selectionSql(s, scope));
      await expectSelection(spec, (s) => selectionSql(s, scope, "kernel <> 'k3'"));
      await expectSelection(spec, (s) => launchRowsSql(s, scope), 'start_ns * 8 + capture_id * 2 + device');
    }
    await expectExpr(scrambled);
  }, 120_000);

  it('every segment (--segment all) and none selected', async () => {
    const segs = bigSegments();
    const spec: SelectionSpec = { sources, segments: segs };
    const sel = await selected(selectionSql(spec));
    const all = await selected(selectionSql({ sources, segments: null }));
    const cap1 = all.filter((r) => r.capture_id === 1);
    expect(sel.map((r) => [r.rowid_key, r.text])).toEqual(cap1.map((r) => [r.rowid_key, r.text]));
    expect(sel.filter((r) => r.device === 0).every((r) => r.start_ns === BigInt(start0(r.segment!)))).toBe(true);
    expect(await selected(selectionSql({ sources, segments: [] }))).toEqual([]);
    expect(await selected(selectionSql({ sources, segments: [] }, { capture_id: 1, device: 0, queue: null }))).toEqual([]);
    expect(await store.scalar(`SELECT count(*) FROM (${launchRowsSql({ sources, segments: [] }, { capture_id: 1, device: 0, queue: null })})`)).toBe(0n);
  }, 120_000);
});

describe('segment selection: edges', () => {
  /** Capture 2's ranges: adjacent on device 0 with an open last one; device 1's interleaved with them. */
  const edges: SegmentRange[] = [
    { capture_id: 2, device: 0, segment: 3, from_ns: 200n, until_ns: 300n },
    { capture_id: 2, device: 1, segment: 0, from_ns: 100n, until_ns: 200n },
    { capture_id: 2, device: 0, segment: 4, from_ns: 300n, until_ns: 400n },
    { capture_id: 2, device: 1, segment: 2, from_ns: 250n, until_ns: 350n },
    { capture_id: 2, device: 0, segment: 7, from_ns: 500n, until_ns: null },
    { capture_id: 2, device: 1, segment: 5, from_ns: 1000n, until_ns: null },
    // capture 1's ranges at capture 2's times: must not label capture 2's rows
    { capture_id: 1, device: 0, segment: 99, from_ns: 0n, until_ns: 10_000n },
  ];

  it('labels rows at from_ns, drops rows at until_ns and between ranges, per device', async () => {
    const rows = await store.query({ device: 'number', start_ns: 'bigint', segment: 'number' },
      `SELECT device, start_ns, segment FROM (${selectionSql({ sources, segments: edges })}) WHERE capture_id = 2 ORDER BY device, start_ns`);
    expect(rows.map((r) => [r.device, Number(r.start_ns), r.segment])).toEqual([
      [0, 200, 3], [0, 250, 3], [0, 299, 3], [0, 300, 4], [0, 399, 4], [0, 500, 7], [0, 1000, 7], [0, 5000, 7],
      [1, 100, 0], [1, 150, 0], [1, 199, 0], [1, 250, 2], [1, 300, 2], [1, 349, 2], [1, 1000, 5],
    ]);
    await expectSelection({ sources, segments: edges }, (s) => selectionSql(s));
    for (const device of [0, 1]) {
      await expectSelection({ sources, segments: edges }, (s) => selectionSql(s, { capture_id: 2, device, queue: null }));
    }
    await expectExpr(edges);
    await expectExpr(null);
    await expectExpr([]);
  });

  it('overlapping, empty and duplicate ranges: the first listed range holding a row wins, as with one WHEN per range', async () => {
    const messy: SegmentRange[] = [
      { capture_id: 2, device: 0, segment: 1, from_ns: 250n, until_ns: 400n },
      { capture_id: 2, device: 0, segment: 2, from_ns: 200n, until_ns: 300n },
      { capture_id: 2, device: 0, segment: 3, from_ns: 300n, until_ns: 300n },
      { capture_id: 2, device: 0, segment: 4, from_ns: 100n, until_ns: null },
      { capture_id: 2, device: 0, segment: 5, from_ns: 150n, until_ns: 1000n },
      { capture_id: 2, device: 1, segment: 6, from_ns: 200n, until_ns: 300n },
      { capture_id: 2, device: 1, segment: 7, from_ns: 200n, until_ns: 300n },
      { capture_id: 2, device: 1, segment: 8, from_ns: 100n, until_ns: 250n },
      { capture_id: 2, device: 1, segment: 9, from_ns: 349n, until_ns: 350n },
    ];
    const d = disjointSegments(messy);
    for (let i = 1; i < d.length; i++) {
      if (d[i]!.device !== d[i - 1]!.device) continue;
      expect(d[i - 1]!.until_ns !== null && d[i - 1]!.until_ns! <= d[i]!.from_ns).toBe(true);
    }
    await expectSelection({ sources, segments: messy }, (s) => selectionSql(s));
    await expectExpr(messy);
    // every start time from 0 to 1100, against the list
    for (let t = 0; t <= 1100; t++) {
      for (const device of [0, 1]) {
        const g = d.find((x) => x.device === device && BigInt(t) >= x.from_ns && (x.until_ns === null || BigInt(t) < x.until_ns));
        expect([t, device, g?.segment ?? null]).toEqual([t, device, bruteLabel(messy, 2, device, t)]);
      }
    }
  });
});
