import { describe, expect, it } from 'vitest';
import { errorFindingsHeader, runChecks } from '../src/index';
import { importSynth, synthCapture, tickwise } from './checks-helpers';

describe('duration-unit-mismatch', () => {
  it('trap 1: a bundle whose duration_ns were written as ticks (100 MHz): an error naming the factor 10', async () => {
    const { store, db } = await importSynth([synthCapture({ declared_hz: 100e6, duration_ns_as_ticks: true })]);
    try {
      const fs = (await runChecks(store)).filter((f) => f.code === 'duration-unit-mismatch');
      expect(fs).toHaveLength(1);
      const f = fs[0]!;
      expect(f).toMatchObject({
        severity: 'error', capture_id: 1, device: 0, factor: '10x', source_over_computed_ratio: 0.1, dispatches: 36, time_source: 'device_tick_fit',
      });
      // the first dispatch_event of the file: schema, session, device, queue, function, 6 clock samples, then dispatches
      expect(f['line']).toBe(12);
      expect(f.message).toContain("the source's own duration_ns are 10x smaller than the durations of their ticks through the clock fit");
      expect(f.advice).toContain('ticks where nanoseconds belong');
      // what other verbs print before their numbers
      expect(await errorFindingsHeader(store)).toBe(
        `!! error duration-unit-mismatch: ${f.message}\n!! 1 error finding(s): the numbers below may be wrong (tickwise check <input> for advice)\n`,
      );
    } finally {
      await store.close();
    }
    const r = tickwise(['check', db]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('error     duration-unit-mismatch');
    expect(r.stdout).toContain('factor=');
  });

  it('a 1 MHz clock whose ticks were written as ns: named 1000x', async () => {
    const { store } = await importSynth([synthCapture({ tick_hz: 1e6, dur_ticks: 500, gap_ticks: 20, duration_ns_as_ticks: true, pass_gap_ns: 50_000_000 })]);
    try {
      const [f] = (await runChecks(store)).filter((x) => x.code === 'duration-unit-mismatch');
      expect(f).toMatchObject({ severity: 'error', factor: '1000x', source_over_computed_ratio: 0.001 });
    } finally {
      await store.close();
    }
  });

  it('durations that agree: nothing', async () => {
    const { store } = await importSynth([synthCapture()]);
    try {
      expect((await runChecks(store)).filter((f) => f.code === 'duration-unit-mismatch')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
