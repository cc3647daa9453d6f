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
 * Results of {@link decimalToNs} with more digits than this come back as
 * +-10^MAX_NS_DIGITS: far beyond every integer type a store holds (int64 ns
 * has 19 digits), so such a time is still out of range, but found in bounded
 * time and memory (`"ts": 1e999999999` in a 60-byte file would otherwise be
 * a number of a billion digits).
 */
export const MAX_NS_DIGITS = 60;

/**
 * Parses a decimal number written in `unit` (e.g. Chrome trace "ts":
 * "1234.5678" microseconds) into exact nanoseconds, rounding half away from
 * zero at the nanosecond. Returns null for text that is not a decimal number;
 * a result of more than {@link MAX_NS_DIGITS} digits is clamped to
 * +-10^MAX_NS_DIGITS, and one below 0.1 ns in magnitude is 0 (the work is
 * bounded by the text's length, never by its exponent).
 */
export function decimalToNs(text: string, nsPerUnit: bigint): Ns | null {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return null;
  const negative = m[1] === '-';
  const frac = m[3] ?? '';
  const sig = ((m[2] ?? '') + frac).replace(/^0+/, '');
  if (sig === '' || nsPerUnit === 0n) return 0n as Ns;
  // value = sig x 10^scale units = sig x 10^scale x nsPerUnit ns (an exponent too long for a double is still huge or tiny)
  const scale = Number(m[4] ?? '0') - frac.length;
  const unit = (nsPerUnit < 0n ? -nsPerUnit : nsPerUnit).toString();
  // the result has about (or, for a power of ten, exactly, before rounding) this many digits
  const digits = sig.length + scale + unit.length - 1;
  const sign = negative !== nsPerUnit < 0n ? -1n : 1n;
  if (digits > MAX_NS_DIGITS) return (sign * 10n ** BigInt(MAX_NS_DIGITS)) as Ns;
  if (digits < -1) return 0n as Ns; // below 0.1 ns: rounds to 0
  let kept = sig;
  let shift = scale;
  if (/^10*$/.test(unit) && shift < 0 && sig.length > digits + 1) {
    // a power-of-ten unit: the digits past the first one dropped cannot change the rounding (half away from zero)
    kept = sig.slice(0, Math.max(digits + 1, 0));
    shift += sig.length - kept.length;
    if (kept === '') return 0n as Ns;
  }
  const num = BigInt(kept) * (nsPerUnit < 0n ? -nsPerUnit : nsPerUnit);
  if (shift >= 0) return (sign * num * 10n ** BigInt(shift)) as Ns;
  const den = 10n ** BigInt(-shift);
  const q = num / den;
  const r = num % den;
  return (sign * (r * 2n >= den ? q + 1n : q)) as Ns;
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
