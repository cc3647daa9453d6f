/** Number formatting shared by the HTML and Markdown reports (display only). */
import { formatNs } from '@tickwise/time';

/** A duration for people: "1.234 ms" (formatNs), "-" for null. */
export function dur(ns: bigint | null | undefined): string {
  return formatNs(ns ?? null);
}

/** A share as a percentage with two decimals, "-" for null. */
export function pct(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '-' : `${(x * 100).toFixed(2)} %`;
}

/** Milliseconds with four significant digits. */
export function ms(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toPrecision(4);
}

/** A count with thousands separators. */
export function count(n: number | bigint): string {
  return n.toLocaleString('en-US');
}
