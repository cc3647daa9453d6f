import { describe, expect, it } from 'vitest';
import { runChecks, type Finding } from '../src/index';
import { importSynth, synthCapture } from './checks-helpers';

async function findings(spec: Parameters<typeof synthCapture>[0], args: string[] = [], codes?: Parameters<typeof runChecks>[1]): Promise<Finding[]> {
  const { store } = await importSynth([synthCapture(spec)], args);
  try {
    return await runChecks(store, codes);
  } finally {
    await store.close();
  }
}

const only = (fs: Finding[], code: string) => fs.filter((f) => f.code === code);

describe('tick-frequency-mismatch', () => {
  it('trap 3: declared 99.81 MHz, samples say 100 MHz: both numbers, which is which, info below 0.5 %', async () => {
    const [f, ...rest] = only(await findings({ declared_hz: 99.81e6 }), 'tick-frequency-mismatch');
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ severity: 'info', capture_id: 1, device: 0, tick_hz_declared: 99_810_000, diff_ppm: -1900, used: 'tick_hz_fitted' });
    expect(f!['tick_hz_fitted']).toBeCloseTo(100e6, 0);
    expect(f!.message).toContain('declared tick rate 99.810 MHz');
    expect(f!.message).toContain('fitted to 6 clock samples, 100.000 MHz');
  });

  it('declared 1 % off: a warning', async () => {
    const [f] = only(await findings({ declared_hz: 99e6 }), 'tick-frequency-mismatch');
    expect(f).toMatchObject({ severity: 'warning', diff_ppm: -10000 });
  });

  it('declared 10x (a MHz/Hz slip): an error that names the factor 10', async () => {
    const [f] = only(await findings({ declared_hz: 1e9 }), 'tick-frequency-mismatch');
    expect(f).toMatchObject({ severity: 'error', factor: '10x' });
    expect(f!.message).toContain('a factor of 10x');
    expect(f!.advice).toContain('10x');
  });

  it('a declared rate with no samples to check it: info', async () => {
    const [f] = only(await findings({ declared_hz: 100e6, clock_samples: 0 }), 'tick-frequency-mismatch');
    expect(f).toMatchObject({ severity: 'info', tick_hz_declared: 100e6, tick_hz_fitted: null });
    expect(f!.message).toContain('no clock samples to check it against');
  });

  it('declared = fitted: nothing', async () => {
    expect(only(await findings({ declared_hz: 100e6 }), 'tick-frequency-mismatch')).toEqual([]);
  });
});

describe('no-time-base', () => {
  it('ticks with no clock samples and no declared rate: an error counting the dispatches', async () => {
    const fs = await findings({ clock_samples: 0 });
    const [f] = only(fs, 'no-time-base');
    expect(f).toMatchObject({ severity: 'error', device: 0, untimed_dispatches: 36 });
    expect(f!.advice).toContain('--tick-hz');
    // nothing is timed, so there are no segments and no time-based findings
    expect(only(fs, 'cold-first-pass')).toEqual([]);
  });

  it('with --tick-hz the rate is an assumption: info', async () => {
    const [f] = only(await findings({ clock_samples: 0 }, ['--tick-hz', '100MHz']), 'no-time-base');
    expect(f).toMatchObject({ severity: 'info', assumed_dispatches: 36, tick_hz_assumed: 100e6 });
  });
});

describe('clock-fit-poor', () => {
  it('a 300 us clock jump in one sample, dispatches of 500 us: the fit error is named against the median dispatch', async () => {
    const [f] = only(await findings({ declared_hz: 100e6, clock_jump_ns: 300_000, clock_samples: 7 }), 'clock-fit-poor');
    expect(f).toBeDefined();
    expect(f!.severity).toBe('warning');
    expect(f!['median_dispatch_ns']).toBe(500_000);
    const share = f!['fit_error_over_median_dispatch_fraction'] as number;
    expect(share).toBeGreaterThan(0.1);
    expect(share).toBeLessThan(1);
    expect(f!.message).toMatch(/of the median dispatch \(500\.000 us\)/);
  });

  it('a 3 ms jump against 500 us dispatches: an error', async () => {
    const [f] = only(await findings({ clock_jump_ns: 3_000_000, clock_samples: 7 }), 'clock-fit-poor');
    expect(f!.severity).toBe('error');
  });

  it('narrow, consistent samples: nothing', async () => {
    expect(only(await findings({ clock_samples: 7 }), 'clock-fit-poor')).toEqual([]);
  });
});
