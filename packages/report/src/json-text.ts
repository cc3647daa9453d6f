/**
 * JSON text for values whose exactness matters: integers are written as
 * their decimal digits (a JSON number) while they fit a double exactly
 * (|v| <= 2^53), else as a string, so no reader rounds them silently.
 */
const MAX_EXACT = 2n ** 53n;

/** JSON text of an integer: a number up to 2^53, a string beyond. */
export function jsonInteger(v: bigint | number): string {
  const b = typeof v === 'bigint' ? v : BigInt(v);
  return b <= MAX_EXACT && b >= -MAX_EXACT ? b.toString() : `"${b.toString()}"`;
}

/** JSON text of any value for an `args` object: strings escaped, integers exact, null kept. */
export function jsonValue(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'bigint') return jsonInteger(v);
  if (typeof v === 'number') return Number.isFinite(v) ? (Number.isInteger(v) ? jsonInteger(v) : String(v)) : 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return JSON.stringify(String(v));
}

/** JSON object text from entries, leaving out null values. */
export function jsonObject(entries: readonly (readonly [string, unknown])[]): string {
  const parts: string[] = [];
  for (const [k, v] of entries) if (v !== null && v !== undefined) parts.push(`${JSON.stringify(k)}:${jsonValue(v)}`);
  return `{${parts.join(',')}}`;
}
