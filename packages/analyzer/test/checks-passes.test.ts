import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { seededRng } from '@tickwise/time';
import { DEFAULT_THRESHOLDS, SEGMENT_STATS_SHAPE, chooseCuts, localSegments, runChecks, segmentStatsSql } from '../src/index';
import { importSynth, synthCapture, tmp } from './checks-helpers';

/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

/** Length of the union of [s, e) intervals, by sorting and sweeping. */
function unionLength(xs: readonly (readonly [number, number])[]): number {
  const sorted = [...xs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let total = 0;
  let curS = -Infinity;
  let curE = -Infinity;
  for (const [s, e] of sorted) {
    if (s > curE) {
      if (curE > curS) total += curE - curS;
      curS = s;
      curE = e;
    } else if (e > curE) curE = e;
  }
  if (curE > curS) total += curE - curS;
  return total;
}

describe('segments (the checks\' local splitter)', () => {
  const t = DEFAULT_THRESHOLDS;
  it('chooseCuts: the largest jump of at least 10x among gaps of 1 ms or more', () => {
    const ms = (x: number) => BigInt(Math.round(x * 1e6));
    expect(chooseCuts([ms(150), ms(3.5), ms(3), ms(0.5)], 4, 100, t)).toBe(1);
    expect(chooseCuts([ms(150), ms(149), ms(148), ms(3), ms(0.2)], 5, 100, t)).toBe(3);
    expect(chooseCuts([ms(4), ms(3), ms(2.5), ms(0.5)], 4, 100, t)).toBe(0);
    expect(chooseCuts([ms(0.9)], 1, 100, t)).toBe(0);
    // back-to-back dispatches inside passes leave only the pass gaps: every gap is a cut
    expect(chooseCuts([ms(150), ms(149)], 2, 100, t)).toBe(2);
    // ... but not when that makes lone dispatches segments (host gaps of 3 ms between single dispatches)
    expect(chooseCuts([ms(3.1), ms(3), ms(2.9)], 3, 4, t)).toBe(0);
    // ... nor more than 16 of them
    expect(chooseCuts(Array.from({ length: 20 }, () => ms(3)), 20, 1000, t)).toBe(0);
    // the next gap was not fetched: no claim about a jump after the last one fetched
    expect(chooseCuts([ms(5), ms(5)], 100, 1000, t)).toBe(0);
  });

  it('recovers the true passes of a capture: spans and busy time (union) exact', async () => {
    const cap = synthCapture({ passes: 3, dispatches_per_pass: 12, dur_ticks: 50_000, gap_ticks: 2_000 });
    const { store } = await importSynth([cap]);
    try {
      const segs = await localSegments(store, { captureIds: null }, t);
      expect(segs.map((s) => [s.segment, s.span_ns, s.busy_ns, s.dispatches])).toEqual(
        cap.pass_span_ns.map((span, i) => [i, BigInt(span), 12n * 500_000n, 12]),
      );
    } finally {
      await store.close();
    }
  });
});

describe('segmentStatsSql: busy time per segment', () => {
  it('equals a sort-and-sweep union per segment on overlapping, nested and touching rows (3 seeds, 2 devices, cuts)', async () => {
    const dir = tmp('tickwise-segment-stats-');
    const store = await Store.open(join(dir, 's.duckdb'));
    try {
      await store.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
        VALUES (1, 'test:stats', 'generated', 1, NULL, 'checks-passes.test', 'stats', 'host_monotonic', 0)`);
      await store.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES (1, 0, 'gpu', 'a', 'device_tick_fit'), (1, 1, 'npu', 'b', 'device_tick_fit')`);
      for (const seed of [1, 2, 3]) {
        await store.run('DELETE FROM dispatches');
        const r = rng(seed);
        const rows: [number, number, number][] = [];
        for (const device of [0, 1]) {
          for (let i = 0; i < 400; i++) {
            const s = Math.floor(r() * 100_000);
            const kind = r();
            // nested in an earlier row, touching it, zero-length, or free
            const e = kind < 0.1 ? s : kind < 0.2 && rows.length ? rows[rows.length - 1]![2] : s + 1 + Math.floor(r() * 3_000);
            rows.push([device, s, Math.max(s, e)]);
          }
        }
        await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
          VALUES ${rows.map(([d, s, e], i) => `(1, ${d}, 0, ${i + 1}, 'k', ${s}, ${e}, ${e - s}, 'device_tick_fit', true, ${i + 1})`).join(', ')}`);
        const cuts = [
          { capture_id: 1, device: 0, cut_ns: 30_000n }, { capture_id: 1, device: 0, cut_ns: 61_000n },
          { capture_id: 1, device: 1, cut_ns: 50_000n },
        ];
        const got = await store.query(SEGMENT_STATS_SHAPE, segmentStatsSql({ captureIds: [1] }, cuts));
        const want: (typeof got)[number][] = [];
        for (const device of [0, 1]) {
          const at = cuts.filter((c) => c.device === device).map((c) => Number(c.cut_ns));
          const seg = (s: number) => at.filter((c) => s >= c).length;
          for (let g = 0; g <= at.length; g++) {
            const mine = rows.filter(([d, s]) => d === device && seg(s) === g).map(([, s, e]) => [s, e] as const);
            if (mine.length === 0) continue;
            const start = Math.min(...mine.map((x) => x[0]));
            const end = Math.max(...mine.map((x) => x[1]));
            want.push({ capture_id: 1, device, segment: g, start_ns: BigInt(start), end_ns: BigInt(end), span_ns: BigInt(end - start), busy_ns: BigInt(unionLength(mine)), dispatches: mine.length });
          }
        }
        expect(got).toEqual(want);
      }
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('cold-first-pass', () => {
  it('trap 5: a single-pass capture: a warning with its idle share', async () => {
    const { store } = await importSynth([synthCapture({ passes: 1 })]);
    try {
      const [f, ...rest] = (await runChecks(store)).filter((x) => x.code === 'cold-first-pass');
      expect(rest).toEqual([]);
      expect(f).toMatchObject({ severity: 'warning', capture_id: 1, device: 0, segments: 1, dispatches: 12 });
      // 11 gaps of 20 us in a span of 12 x 500 us + 11 x 20 us
      expect(f!['idle_fraction']).toBeCloseTo(220 / 6220, 4);
      expect(f!.message).toContain('one pass only');
    } finally {
      await store.close();
    }
  });

  it('a first pass idling far more than the rest: info naming both shares', async () => {
    const { store } = await importSynth([synthCapture({ passes: 3, first_pass_gap_ticks: 20_000 })]);
    try {
      const [f] = (await runChecks(store)).filter((x) => x.code === 'cold-first-pass');
      expect(f).toMatchObject({ severity: 'info', segments: 3 });
      expect(f!['first_idle_fraction']).toBeCloseTo(2200 / 8200, 4);
      expect(f!['others_idle_fraction']).toBeCloseTo(220 / 6220, 4);
    } finally {
      await store.close();
    }
  });

  it('passes that idle alike: nothing', async () => {
    const { store } = await importSynth([synthCapture({ passes: 3 })]);
    try {
      expect((await runChecks(store)).filter((x) => x.code === 'cold-first-pass')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
