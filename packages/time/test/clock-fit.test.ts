import { describe, expect, it } from 'vitest';
import { FIT_DEN, MAX_NS_DIGITS, fitClock, fitFirstLast, nsToUsDecimal, decimalToNs, tickSpanToNs, tickToNs, seededRng, type ClockSample } from '../src/index';

/** Deterministic PRNG (mulberry32) so the tests are repeatable. */
/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

/**
 * Samples of a device clock at `hz` (with `ppm` drift against the host) read
 * between two host clock reads of random width; a few brackets are very wide.
 */
function makeSamples(opts: { hz: number; ppm: number; offsetNs: bigint; n: number; everyNs: number; seed: number }) {
  const r = rng(opts.seed);
  const trueHz = opts.hz * (1 + opts.ppm / 1e6);
  const out: ClockSample[] = [];
  for (let i = 0; i < opts.n; i++) {
    const hostNs = opts.offsetNs + BigInt(Math.round(i * opts.everyNs + r() * 1000));
    const width = r() < 0.1 ? 20_000 + Math.round(r() * 50_000) : 200 + Math.round(r() * 800);
    const before = Math.round(r() * width);
    // the device value is taken at hostNs; the host reads bracket it
    const tick = BigInt(Math.round((Number(hostNs - opts.offsetNs) * trueHz) / 1e9)) + 5_000_000n;
    out.push({ device_tick: tick, host_begin_ns: hostNs - BigInt(before), host_end_ns: hostNs - BigInt(before) + BigInt(width) });
  }
  return { samples: out, trueHz };
}

describe('fitClock', () => {
  it('recovers a 100 MHz clock with 50 ppm drift within 0.1 ppm', () => {
    const { samples, trueHz } = makeSamples({ hz: 100e6, ppm: 50, offsetNs: 1_000_000_000_000n, n: 300, everyNs: 100e6, seed: 7 });
    const { fit, problems } = fitClock(samples);
    expect(problems).toEqual([]);
    expect(fit).not.toBeNull();
    expect(Math.abs((fit!.tick_hz_fitted - trueHz) / trueHz) * 1e6).toBeLessThan(0.1);
    // narrow brackets dominate: the residual of a typical sample is sub-microsecond
    expect(fit!.residual_rms_ns).toBeLessThan(10_000);
    expect(fit!.uncertainty_ns).toBeGreaterThan(0);
  });

  it('fits 400k samples (a long recording): no call-stack overflow, the bracket extremes exact', () => {
    const { samples, trueHz } = makeSamples({ hz: 100e6, ppm: 20, offsetNs: 1_000_000_000n, n: 400_000, everyNs: 1e6, seed: 11 });
    const { fit } = fitClock(samples);
    expect(Math.abs((fit!.tick_hz_fitted - trueHz) / trueHz) * 1e6).toBeLessThan(0.1);
    const widths = samples.map((s) => Number(s.host_end_ns - s.host_begin_ns));
    expect([fit!.bracket_min_ns, fit!.bracket_max_ns]).toEqual([widths.reduce((a, w) => Math.min(a, w)), widths.reduce((a, w) => Math.max(a, w))]);
  });

  it('weights narrow brackets: one wild wide sample barely moves the fit', () => {
    const { samples, trueHz } = makeSamples({ hz: 100e6, ppm: 0, offsetNs: 5_000_000n, n: 50, everyNs: 100e6, seed: 3 });
    const last = samples[samples.length - 1]!;
    // a sample whose bracket is 2 ms wide and centred 900 us late
    samples[samples.length - 1] = { ...last, host_begin_ns: last.host_begin_ns + 0n, host_end_ns: last.host_begin_ns + 2_000_000n };
    const { fit } = fitClock(samples);
    const naive = fitFirstLast(samples)!;
    const errFit = Math.abs(fit!.tick_hz_fitted - trueHz) / trueHz;
    const errNaive = Math.abs(naive.tick_hz - trueHz) / trueHz;
    expect(errFit).toBeLessThan(errNaive / 10);
  });

  it('flags non-monotonic and too few samples', () => {
    const a = { device_tick: 100n, host_begin_ns: 1000n, host_end_ns: 1010n };
    const b = { device_tick: 90n, host_begin_ns: 2000n, host_end_ns: 2010n };
    expect(fitClock([a, b]).problems.map((p) => p.code)).toContain('non-monotonic-clock-samples');
    expect(fitClock([a]).fit).toBeNull();
    expect(fitClock([a]).problems.map((p) => p.code)).toContain('too-few-samples');
  });

  it('reproduces the IREE fixture: ticks 100 and 200 at host 905 and 1905 give 10 ns per tick', () => {
    const { fit } = fitClock([
      { device_tick: 100n, host_begin_ns: 900n, host_end_ns: 910n },
      { device_tick: 200n, host_begin_ns: 1900n, host_end_ns: 1910n },
    ]);
    expect(fit!.tick_hz_fitted).toBeCloseTo(100e6, 3);
    expect(tickToNs(fit!, 120n)).toBe(1105n);
    expect(tickToNs(fit!, 160n)).toBe(1505n);
  });
});

describe('exact integer mapping', () => {
  it('has no float drift at 1e15 ticks', () => {
    // 10 ns per tick exactly, anchored at tick 0 = host 0
    const map = { base_tick: 0n, base_ns: 0n, ns_per_tick_num: 10n * FIT_DEN, tick_hz: 100e6 };
    expect(tickToNs(map, 10n ** 15n + 1n)).toBe(10n ** 16n + 10n);
    // 1/3 ns per tick: exact rational rounding, symmetric for negative offsets
    const third = { base_tick: 0n, base_ns: 0n, ns_per_tick_num: FIT_DEN / 3n, tick_hz: 3e9 };
    expect(tickToNs(third, 3n * 10n ** 15n)).toBe(10n ** 15n - 1n); // FIT_DEN/3 truncates by 1/3e-15
    expect(tickToNs(third, -3n)).toBe(-1n);
    expect(tickSpanToNs(map, 7n)).toBe(70n);
  });

  it('converts decimal microseconds exactly', () => {
    // 1 700 000 000 123.4567 us = 1 700 000 000 123 456.7 ns, rounded to the nearest ns; as a double it would be 1700000000123456.8
    expect(decimalToNs('1700000000123.4567', 1000n)).toBe(1_700_000_000_123_457n);
    expect(decimalToNs('1700000000123.4564', 1000n)).toBe(1_700_000_000_123_456n);
    expect(decimalToNs('0.0005', 1000n)).toBe(1n);
    expect(decimalToNs('-0.0005', 1000n)).toBe(-1n);
    expect(decimalToNs('1.5e3', 1000n)).toBe(1_500_000n);
    expect(decimalToNs('abc', 1000n)).toBeNull();
    expect(nsToUsDecimal(1_234_567n)).toBe('1234.567');
    expect(nsToUsDecimal(1_000n)).toBe('1');
    expect(nsToUsDecimal(-1_500n)).toBe('-1.5');
  });

  it('an exponent of any size costs what the text costs: beyond 60 digits a time is +-10^60 (out of range), below 0.1 ns it is 0', () => {
    const big = 10n ** BigInt(MAX_NS_DIGITS);
    expect(MAX_NS_DIGITS).toBe(60);
    // a billion-digit number before (BigInt gave up: "Maximum BigInt size exceeded")
    expect(decimalToNs('1e999999999', 1000n)).toBe(big);
    expect(decimalToNs('-1e999999999', 1000n)).toBe(-big);
    expect(decimalToNs('1e99999999999999999999999', 1n)).toBe(big);
    expect(decimalToNs('1e-999999999', 1000n)).toBe(0n);
    expect(decimalToNs('-7e-999999999', 1000n)).toBe(0n);
    expect(decimalToNs('0e999999999', 1000n)).toBe(0n);
    // the edge: 60 digits are exact, 61 are clamped; rounding up to 10^60 meets the clamp
    expect(decimalToNs('9'.repeat(57), 1000n)).toBe(10n ** 60n - 1000n);
    expect(decimalToNs('1' + '0'.repeat(57), 1000n)).toBe(big);
    expect(decimalToNs('2' + '0'.repeat(57), 1000n)).toBe(big);
    expect(decimalToNs('9'.repeat(60) + '.5', 1n)).toBe(big);
    // a long mantissa with an exponent that brings it back: exact, whatever the length
    expect(decimalToNs('1234567890'.repeat(1000) + 'e-9997', 1000n)).toBe(123_457n); // 123.456789... us
    expect(decimalToNs('1234567890'.repeat(1000) + 'e-9996', 1000n)).toBe(1_234_568n);
    expect(decimalToNs('0.' + '0'.repeat(70) + '5', 10n ** 71n)).toBe(5n);
    expect(decimalToNs('0.' + '0'.repeat(70) + '5', 10n ** 70n)).toBe(1n);
    // within the bounds, the plain BigInt arithmetic (the former implementation) is the reference, digit for digit
    const reference = (t: string, unit: bigint): bigint | null => {
      const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(t.trim());
      if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
      const sign = m[1] === '-' ? -1n : 1n;
      const num = BigInt((m[2] ?? '') + (m[3] ?? '') || '0') * unit;
      const scale = -(m[3] ?? '').length + Number(m[4] ?? '0');
      if (scale >= 0) return sign * num * 10n ** BigInt(scale);
      const den = 10n ** BigInt(-scale);
      return sign * (num % den * 2n >= den ? num / den + 1n : num / den);
    };
    const r = seededRng(4711);
    const digit = () => '0123456789'[r.int(10)]!;
    for (let k = 0; k < 3000; k++) {
      const mantissa = Array.from({ length: 1 + r.int(r.int(4) === 0 ? 200 : 20) }, digit).join('');
      const point = r.int(mantissa.length + 1);
      const t = `${['', '-', '+'][r.int(3)]}${mantissa.slice(0, point)}.${mantissa.slice(point)}${r.int(2) ? `e${r.int(120) - 60}` : ''}`;
      for (const unit of [1n, 1000n, 10n ** 15n, 7n]) {
        const want = reference(t, unit);
        const abs = want !== null && want < 0n ? -want : want;
        if (abs !== null && abs.toString().length > MAX_NS_DIGITS) continue; // clamped, above
        expect(decimalToNs(t, unit), `${t} x ${unit}`).toBe(want === 0n ? 0n : want);
      }
    }
    // other units keep the bounds (7 ns a unit)
    expect(decimalToNs('1e999999999', 7n)).toBe(big);
    expect(decimalToNs('0.5', 7n)).toBe(4n);
  });
});
