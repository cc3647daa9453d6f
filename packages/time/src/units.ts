/**
 * Branded time units. Every time value in tickwise is an int64 `bigint`
 * branded with its unit, so a tick count can never be passed where
 * nanoseconds are expected (the trap this project exists to prevent).
 * Conversions live here and in `clock-fit.ts` only; lossy ones say so.
 */

declare const nsBrand: unique symbol;
declare const ticksBrand: unique symbol;

/** Nanoseconds on some host timeline, as an exact int64. */
export type Ns = bigint & { readonly [nsBrand]: 'ns' };
/** Raw device counter ticks; meaningless as time without a frequency. */
export type Ticks = bigint & { readonly [ticksBrand]: 'ticks' };

/** Brands a bigint (or safe integer) as nanoseconds. */
export function ns(value: bigint | number): Ns {
  return toBigIntExact(value, 'ns') as Ns;
}

/** Brands a bigint (or safe integer) as device ticks. */
export function ticks(value: bigint | number): Ticks {
  return toBigIntExact(value, 'ticks') as Ticks;
}

function toBigIntExact(value: bigint | number, unit: string): bigint {
  if (typeof value === 'bigint') return value;
  if (!Number.isSafeInteger(value)) {
    throw new RangeError(`${unit} value ${value} is not an exact integer; pass a bigint`);
  }
  return BigInt(value);
}

/** Nanoseconds to milliseconds as a float (loses precision beyond 2^53 ns). */
export function nsToMsLossy(value: Ns | bigint): number {
  return Number(value) / 1e6;
}

/** Nanoseconds to microseconds as a float (loses precision beyond 2^53 ns). */
export function nsToUsLossy(value: Ns | bigint): number {
  return Number(value) / 1e3;
}

/**
 * Nanoseconds as an exact decimal string of microseconds ("1234.567"), for
 * formats such as Chrome trace JSON whose unit is the microsecond.
 */
export function nsToUsDecimal(value: Ns | bigint): string {
  const neg = value < 0n;
  const abs = neg ? -value : value;
  const whole = abs / 1000n;
  const frac = abs % 1000n;
  const fracText = frac === 0n ? '' : '.' + frac.toString().padStart(3, '0').replace(/0+$/, '');
  return (neg ? '-' : '') + whole.toString() + fracText;
}

/**
 * Parses a decimal number written in `unit` (e.g. Chrome trace "ts":
 * "1234.5678" microseconds) into exact nanoseconds, rounding half away from
 * zero at the nanosecond. Returns null for text that is not a decimal number.
 */
export function decimalToNs(text: string, nsPerUnit: bigint): Ns | null {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const sign = m[1] === '-' ? -1n : 1n;
  let digits = (m[2] ?? '') + (m[3] ?? '');
  let scale = -(m[3] ?? '').length + Number(m[4] ?? '0');
  if (digits === '') digits = '0';
  // value = digits * 10^scale units = digits * 10^scale * nsPerUnit ns
  let num = BigInt(digits) * nsPerUnit;
  if (scale >= 0) return (sign * num * 10n ** BigInt(scale)) as Ns;
  const den = 10n ** BigInt(-scale);
  const q = num / den;
  const r = num % den;
  num = r * 2n >= den ? q + 1n : q;
  return (sign * num) as Ns;
}

/** Nanoseconds per unit for the decimal units tickwise reads and prints. */
export const NS_PER = { ns: 1n, us: 1_000n, ms: 1_000_000n, s: 1_000_000_000n } as const;
/** A decimal time unit name. */
export type TimeUnit = keyof typeof NS_PER;
/** Type guard for {@link TimeUnit}. */
export function isTimeUnit(x: string): x is TimeUnit {
  return Object.hasOwn(NS_PER, x);
}

/** Formats nanoseconds for humans with an adaptive unit ("1.234 ms"). */
export function formatNs(value: Ns | bigint | null | undefined): string {
  if (value === null || value === undefined) return '-';
  const abs = value < 0n ? -value : value;
  if (abs < 1_000n) return `${value} ns`;
  if (abs < 1_000_000n) return `${(Number(value) / 1e3).toFixed(3)} us`;
  if (abs < 1_000_000_000n) return `${(Number(value) / 1e6).toFixed(3)} ms`;
  return `${(Number(value) / 1e9).toFixed(3)} s`;
}
