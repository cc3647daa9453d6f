import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, type ImportOptions } from '../src/index';
import { KERNEL_TOTALS_SQL, expectGolden, fixture } from './trace-helpers';

async function load(file: string, opts: ImportOptions = {}) {
  const store = await Store.open(':memory:');
  const result = await importInput(store, file, opts);
  return { store, result };
}

describe('hrx DeviceProfile JSON', () => {
  it('kernel totals (diff test)', async () => {
    const { store, result } = await load(fixture('hrx', 'npu_profile.json'));
    expect(result).toMatchObject({ format: 'hrx-device-profile', records: 5, dispatches: 5 });
    await expectGolden(store, fixture('hrx', 'npu_profile.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
  });

  it('ticks go through frequency_hz, never read as ns (trap 1): 600000 ticks at 100 MHz are 6 ms', async () => {
    const { store } = await load(fixture('hrx', 'npu_profile.json'));
    const first = await store.rows(`SELECT start_tick, end_tick, start_ns, end_ns, dur_ns, time_source FROM dispatches ORDER BY line LIMIT 1`);
    // ticks beyond 2^53 are exact; the relative timeline starts at the first tick
    expect(first).toEqual([{ start_tick: 18_014_398_509_481_985n, end_tick: 18_014_398_510_081_985n, start_ns: 0n, end_ns: 6_000_000n, dur_ns: 6_000_000n, time_source: 'device_tick_declared' }]);
    expect(await store.rows(`SELECT kind, name, tick_hz_declared, tick_hz_used, time_base, fit_method FROM devices`)).toEqual([
      { kind: 'npu', name: 'npu0', tick_hz_declared: 100_000_000, tick_hz_used: 100_000_000, time_base: 'device_tick_declared', fit_method: 'declared' },
    ]);
    expect(await store.scalar(`SELECT timeline FROM captures`)).toBe('relative');
    expect(await store.rows(`SELECT code, line FROM diagnostics ORDER BY code`)).toEqual([
      { code: 'declared-frequency-only', line: null },
      { code: 'non-positive-duration', line: 9n },
    ]);
  });

  it('several profiles: a declared 99.81 MHz device and one with no frequency (kept in ticks, error diagnostic)', async () => {
    const { store } = await load(fixture('hrx', 'two_devices.json'));
    expect(await store.rows(`SELECT device, kind, name, time_base, tick_hz_declared FROM devices ORDER BY device`)).toEqual([
      { device: 0, kind: 'gpu', name: 'gpu0', time_base: 'device_tick_declared', tick_hz_declared: 99_810_000 },
      { device: 1, kind: 'npu', name: 'npu0', time_base: 'device_tick_none', tick_hz_declared: null },
    ]);
    // 119810 ticks at 99.81 MHz = 1200380.7 ns
    expect(await store.rows(`SELECT device, start_ns, dur_ns, start_tick, end_tick FROM dispatches ORDER BY device, line`)).toEqual([
      { device: 0, start_ns: 0n, dur_ns: 1_200_381n, start_tick: 1000n, end_tick: 120_810n },
      { device: 0, start_ns: 1_292_456n, dur_ns: 1_200_380n, start_tick: 130_000n, end_tick: 249_810n },
      { device: 1, start_ns: null, dur_ns: null, start_tick: 5000n, end_tick: 605_000n },
    ]);
    expect(await store.rows(`SELECT severity, code FROM diagnostics WHERE severity = 'error'`)).toEqual([{ severity: 'error', code: 'no-time-base' }]);
  });

  it('--tick-hz assumes a rate for a profile that declares none, recorded as an assumption', async () => {
    const { store } = await load(fixture('hrx', 'two_devices.json'), { assumeTickHz: 50_000_000 });
    expect(await store.rows(`SELECT start_ns, dur_ns, time_source FROM dispatches WHERE device = 1`)).toEqual([{ start_ns: 0n, dur_ns: 12_000_000n, time_source: 'device_tick_assumed' }]);
    expect(await store.rows(`SELECT device, what, value FROM assumptions`)).toEqual([{ device: 1, what: 'tick_hz', value: '50000000' }]);
  });

  it('an interval without start_tick stops the import with file:line', async () => {
    const err = await load(fixture('hrx', 'missing_start.json')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).where()).toMatch(/missing_start\.json:3: this interval has no "start_tick" field$/);
  });
});
