import { describe, expect, it } from 'vitest';
import { DEFAULT_THRESHOLDS, chooseCuts, localSegments, runChecks } from '../src/index';
import { importSynth, synthCapture } from './checks-helpers';

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
