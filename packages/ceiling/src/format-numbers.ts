/**
 * How the ceiling's numbers are printed for people (text, Markdown, chart
 * labels). JSON keeps full precision; these round for reading only.
 */

/** ms with three significant digits ("12.0", "2.23", "0.400"); whole ms from 1000 up. */
export function formatMs(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms === 0) return '0';
  if (Math.abs(ms) >= 1000) return ms.toFixed(0);
  return ms.toPrecision(3);
}

/** A speedup with three decimals and an x ("1.067x"). */
export function formatSpeedup(x: number): string {
  return `${x.toFixed(3)}x`;
}

/** A ratio like "2.69x" (two decimals). */
export function formatFactor(x: number): string {
  return `${x.toFixed(2)}x`;
}

/** A fraction as a percentage ("60 %", "62.5 %"). */
export function formatFraction(f: number): string {
  const pct = f * 100;
  return `${Number.isInteger(Math.round(pct * 10) / 10) ? Math.round(pct).toString() : pct.toFixed(1)} %`;
}

/** A signed percentage change ("+10 %", "-2.3 %"). */
export function formatChangePct(pct: number): string {
  const r = Math.round(pct * 10) / 10;
  return `${r > 0 ? '+' : r < 0 ? '-' : '+'}${Math.abs(r).toFixed(Number.isInteger(r) ? 0 : 1)} %`;
}

/** A real number of groups, two decimals ("2.00"). */
export function formatGroups(k: number): string {
  return k.toFixed(2);
}
