/**
 * JSON for machines: integers beyond 2^53 become strings (exact), safe ones
 * numbers; non-finite floats become null. Key order is kept.
 */
export function toJsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString();
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (Array.isArray(value)) return value.map(toJsonSafe);
  if (value instanceof Uint8Array) return Buffer.from(value).toString('hex');
  if (value !== null && typeof value === 'object') {
    const o: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) o[k] = toJsonSafe(v);
    return o;
  }
  return value;
}

/** `JSON.stringify` of {@link toJsonSafe}. */
export function stringifyJson(value: unknown, indent = 2): string {
  return JSON.stringify(toJsonSafe(value), null, indent);
}
