/**
 * The few numeric helpers every layer needs, defined once: a seeded PRNG
 * (reproducible bootstrap intervals and generated test data), the quantile
 * rule DuckDB's `quantile_cont` uses, and medians of numbers and of exact
 * bigint nanoseconds.
 */

/** A seeded pseudo-random source. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
}

/**
 * A seeded {@link Rng} (mulberry32): the same seed draws the same numbers on
 * every machine. Not for anything that needs cryptographic quality.
 */
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (n: number) => Math.floor(next() * n) };
}

/** Linear-interpolation quantile of sorted values (q in [0, 1]), DuckDB's `quantile_cont` rule; NaN when empty. */
export function quantileSorted(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** The median of numbers (the mean of the middle two for an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
  return quantileSorted([...xs].sort((p, q) => p - q), 0.5);
}

/** The median of exact integers (the middle two's mean rounded toward zero for an even count). */
export function medianBigint(xs: readonly bigint[]): bigint {
  if (xs.length === 0) throw new RangeError('median of no values');
  const a = [...xs].sort((p, q) => (p < q ? -1 : p > q ? 1 : 0));
  const m = a.length >> 1;
  return a.length % 2 ? a[m]! : (a[m - 1]! + a[m]!) / 2n;
}
