/**
 * Naming a ratio: a unit error shows as a factor near a power of ten (10x:
 * ticks of 10 ns read as ns; 1000x: us read as ns), and saying so turns a
 * plausible wrong number into an obvious one.
 */

/** A power-of-ten factor a ratio is close to. */
export interface PowerOfTen {
  /** k in 10^k (non-zero). */
  readonly exponent: number;
  /** "10x", "1000x": the magnitude, whichever side is larger. */
  readonly name: string;
}

/** The power of ten (other than 1) within `tolerance` (relative) of `ratio`, or null. */
export function nearPowerOfTen(ratio: number, tolerance: number): PowerOfTen | null {
  if (!(ratio > 0) || !Number.isFinite(ratio)) return null;
  const k = Math.round(Math.log10(ratio));
  if (k === 0) return null;
  if (Math.abs(ratio / 10 ** k - 1) > tolerance) return null;
  return { exponent: k, name: `${10 ** Math.abs(k)}x` };
}

/** "10x" for a power of ten, else the ratio as "3.20x" (always >= 1: the larger over the smaller). */
export function factorName(ratio: number, tolerance: number): string {
  const p = nearPowerOfTen(ratio, tolerance);
  if (p) return p.name;
  const m = ratio >= 1 ? ratio : 1 / ratio;
  return `${m.toFixed(m >= 100 ? 0 : 2)}x`;
}

/** A rate in Hz for people: "99.810 MHz". */
export function formatHz(hz: number): string {
  const abs = Math.abs(hz);
  if (abs >= 1e9) return `${(hz / 1e9).toFixed(4)} GHz`;
  if (abs >= 1e6) return `${(hz / 1e6).toFixed(3)} MHz`;
  if (abs >= 1e3) return `${(hz / 1e3).toFixed(3)} kHz`;
  return `${hz.toFixed(3)} Hz`;
}

/** A fraction as a signed percentage: "-0.19 %". */
export function formatPercent(fraction: number, digits = 2): string {
  return `${fraction >= 0 ? '+' : ''}${(fraction * 100).toFixed(digits)} %`;
}

/** Rounds for JSON output (fixed significant digits; never more precise than computed). */
export function round(x: number, digits = 6): number {
  if (!Number.isFinite(x)) return x;
  return Number(x.toPrecision(digits));
}
