import { describe, expect, it } from 'vitest';
import { TickwiseError, parseDuration, parseDurationNs, parseFrequencyHz } from '../src/index';

describe('parseDuration', () => {
  it.each([
    ['200us', 200_000n],
    ['0.2ms', 200_000n],
    ['200000ns', 200_000n],
    ['1.5s', 1_500_000_000n],
    ['2e3ns', 2_000n],
    ['0.000001ms', 1n],
    ['200µs', 200_000n],
  ])('%s is %i ns', (text, want) => {
    const d = parseDuration(text);
    expect(d.kind).toBe('ns');
    expect(d.kind === 'ns' && d.ns).toBe(want);
  });

  it('reads ticks with their device', () => {
    expect(parseDuration('20000ticks@dev0')).toMatchObject({ kind: 'ticks', ticks: 20000n, device: 0 });
    expect(parseDuration('3000ticks@dev12')).toMatchObject({ kind: 'ticks', ticks: 3000n, device: 12 });
  });

  it('refuses a bare number and says what to write', () => {
    expect(() => parseDuration('200000')).toThrow(TickwiseError);
    expect(() => parseDuration('200000')).toThrow(/write a unit: 200000ns, 200000us/);
  });

  it('refuses ticks without a device, fractions of a ns, negatives and junk', () => {
    expect(() => parseDuration('3000ticks')).toThrow(/names no device/);
    expect(() => parseDuration('0.5ns')).toThrow(/whole number of nanoseconds/);
    expect(() => parseDuration('-5us')).toThrow(/negative/);
    expect(() => parseDuration('5 parsecs')).toThrow(/expected a number with a unit/);
    expect(() => parseDurationNs('10ticks@dev0')).toThrow(/in ticks/);
  });

  it('parses frequencies with units only', () => {
    expect(parseFrequencyHz('100MHz')).toBe(100e6);
    expect(parseFrequencyHz('1GHz')).toBe(1e9);
    expect(parseFrequencyHz('99810000Hz')).toBe(99.81e6);
    expect(() => parseFrequencyHz('100')).toThrow(/write a unit/);
  });
});
