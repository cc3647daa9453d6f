/**
 * The report's per-device SQL run once for all devices: the timeline's busy
 * intervals against a JavaScript reference of their definition (blocks,
 * merge across the gaps <= the maxIntervals-th longest), and the gap
 * histogram of all devices against each device's alone. Seeded random rows
 * on a real DuckDB: overlapping, nested, touching and zero-length rows,
 * repeated gap lengths (ties at the merge threshold), several captures.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { seededRng } from '@tickwise/time';
import { GAP_HISTOGRAM_SHAPE, gapHistogramSql } from '../src/sql/gap-histogram';
import { TIMELINE_INTERVAL_SHAPE, timelineIntervalsSql } from '../src/sql/timeline';
import { tmp } from './sample-store';

type Row = { capture_id: number; device: number; submission_id: number | null; segment: number; start_ns: number; end_ns: number };

/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

/** Rows of 5 (capture, device) pairs: bursts of overlapping work separated by gaps drawn from a few lengths. */
function randomRows(seed: number): Row[] {
  const r = rng(seed);
  const rows: Row[] = [];
  for (const [capture_id, device] of [[1, 0], [1, 1], [1, 2], [2, 0], [3, 7]] as const) {
    let t = Math.floor(r() * 1000);
    let sub = 1;
    const n = 50 + Math.floor(r() * 300);
    for (let i = 0; i < n; i++) {
      const kind = r();
      const dur = kind < 0.05 ? 0 : 1 + Math.floor(r() * 40);
      rows.push({ capture_id, device, submission_id: r() < 0.1 ? null : sub, segment: i < n / 3 ? 0 : 1, start_ns: t, end_ns: t + dur });
      if (r() < 0.3) sub++;
      // next start: inside this row (overlap), touching it, or after a gap of one of 4 lengths (ties)
      const step = r();
      t += step < 0.3 ? Math.floor(dur / 2) : step < 0.4 ? dur : dur + [3, 10, 10, 50][Math.floor(r() * 4)]!;
    }
  }
  return rows;
}

type Interval = { start_ns: number; end_ns: number; busy_ns: number; dispatches: number; blocks: number; merged_gap_max_ns: number | null; raw_blocks: number };

/** The timeline's definition, in JavaScript: busy blocks, then merged across every gap <= the maxIntervals-th longest. */
function referenceIntervals(rows: readonly Row[], maxIntervals: number): Interval[] {
  const sorted = [...rows].sort((a, b) => a.start_ns - b.start_ns || a.end_ns - b.end_ns);
  const blocks: { s: number; e: number; n: number }[] = [];
  for (const x of sorted) {
    const last = blocks[blocks.length - 1];
    if (last && x.start_ns <= last.e) {
      last.e = Math.max(last.e, x.end_ns);
      last.n++;
    } else blocks.push({ s: x.start_ns, e: x.end_ns, n: 1 });
  }
  const gapsDesc = blocks.slice(1).map((b, i) => b.s - blocks[i]!.e).sort((a, b) => b - a);
  const t = gapsDesc.length >= maxIntervals ? gapsDesc[maxIntervals - 1]! : null;
  const out: Interval[] = [];
  blocks.forEach((b, i) => {
    const gap = i === 0 ? null : b.s - blocks[i - 1]!.e;
    const last = out[out.length - 1];
    if (last && gap !== null && t !== null && gap <= t) {
      last.end_ns = b.e;
      last.busy_ns += b.e - b.s;
      last.dispatches += b.n;
      last.blocks++;
    } else out.push({ start_ns: b.s, end_ns: b.e, busy_ns: b.e - b.s, dispatches: b.n, blocks: 1, merged_gap_max_ns: t, raw_blocks: blocks.length });
  });
  return out;
}

let dir: string;
let store: Store;
beforeAll(async () => {
  dir = tmp('tickwise-timeline-sql-');
  store = await Store.open(join(dir, 't.duckdb'));
});
afterAll(async () => {
  await store?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function load(rows: readonly Row[]): Promise<void> {
  await store.run('CREATE OR REPLACE TEMP TABLE sel (capture_id INTEGER, device INTEGER, submission_id BIGINT, segment INTEGER, start_ns BIGINT, end_ns BIGINT)');
  await store.run(`INSERT INTO sel VALUES ${rows.map((x) => `(${x.capture_id}, ${x.device}, ${x.submission_id ?? 'NULL'}, ${x.segment}, ${x.start_ns}, ${x.end_ns})`).join(', ')}`);
}

const keys = (rows: readonly Row[]) => [...new Set(rows.map((x) => `${x.capture_id}/${x.device}`))].map((k) => k.split('/').map(Number) as [number, number]);

describe('timelineIntervalsSql over every device at once', () => {
  for (const seed of [1, 2, 3, 4]) {
    it(`equals the definition per device (seed ${seed}; maxIntervals 1, 2, 3, 7, 40, 10000)`, async () => {
      const rows = randomRows(seed);
      await load(rows);
      for (const max of [1, 2, 3, 7, 40, 10_000]) {
        const got = await store.query(TIMELINE_INTERVAL_SHAPE, timelineIntervalsSql('SELECT * FROM sel', max));
        const want = keys(rows).flatMap(([c, d]) =>
          referenceIntervals(rows.filter((x) => x.capture_id === c && x.device === d), max).map((i) => ({ capture_id: c, device: d, ...i })));
        const asNumbers = got.map((g) => ({ ...g, start_ns: Number(g.start_ns), end_ns: Number(g.end_ns), busy_ns: Number(g.busy_ns), merged_gap_max_ns: g.merged_gap_max_ns === null ? null : Number(g.merged_gap_max_ns) }));
        expect(asNumbers).toEqual(want);
        if (max < 10_000) expect(want.some((i) => i.blocks > 1)).toBe(true);
      }
    });
  }
});

describe('gapHistogramSql over every device at once', () => {
  it('each device\'s bars equal that device\'s histogram alone (4 seeds)', async () => {
    for (const seed of [1, 2, 3, 4]) {
      const rows = randomRows(seed);
      await load(rows);
      const all = await store.query(GAP_HISTOGRAM_SHAPE, gapHistogramSql('SELECT * FROM sel'));
      let between = 0;
      for (const [c, d] of keys(rows)) {
        const alone = await store.query(GAP_HISTOGRAM_SHAPE, gapHistogramSql(`SELECT * FROM sel WHERE capture_id = ${c} AND device = ${d}`));
        expect(all.filter((h) => h.capture_id === c && h.device === d)).toEqual(alone);
        // the bars hold the device's gaps: idle of the union within each segment
        const gapsOf = (seg: number) => referenceIntervals(rows.filter((x) => x.capture_id === c && x.device === d && x.segment === seg), 1e9);
        const idle = [0, 1].reduce((a, seg) => a + gapsOf(seg).slice(1).reduce((s, b, i) => s + (b.start_ns - gapsOf(seg)[i]!.end_ns), 0), 0);
        expect(Number(alone.reduce((a, h) => a + h.idle_ns, 0n))).toBe(idle);
        between += alone.filter((h) => h.between).length;
      }
      expect(between).toBeGreaterThan(0);
    }
  });
});
