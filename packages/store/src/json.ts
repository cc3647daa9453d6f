/**
 * JSON for machines, one rule per type, never depending on the value:
 *
 * - every integer (a `bigint`: BIGINT, UBIGINT, HUGEINT from DuckDB; or an
 *   integer `number`: INTEGER, UINTEGER) is a JSON number written with all its
 *   exact digits, also beyond 2^53 (JSON numbers are arbitrary precision in
 *   the text; Python's `json`, jq 1.7 and DuckDB read them exactly);
 * - a DOUBLE is its shortest round-trip decimal (`JSON.stringify`'s), a
 *   non-finite one `null`;
 * - an {@link ExactNumber} (a DECIMAL) its exact digits;
 * - bytes a hex string; strings, booleans, arrays, objects as usual, key
 *   order kept.
 *
 * {@link toJsonText} is the writer; `tickwise ... --json` uses it.
 */

/** A number whose exact decimal text must be written as is (a DECIMAL). */
export class ExactNumber {
  readonly text: string;
  constructor(text: string) {
    if (!/^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(text)) throw new Error(`not a decimal number: ${text}`);
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
  valueOf(): number {
    return Number(this.text);
  }
}

/**
 * Serializes `value` as JSON text with the rule above. `indent` as in
 * `JSON.stringify` (0: one line); the layout is `JSON.stringify`'s, so output
 * with no bigint is byte-identical to it.
 */
export function toJsonText(value: unknown, indent = 2): string {
  const pad = ' '.repeat(Math.max(0, Math.min(10, indent)));
  return write(value, '', pad) ?? 'null';
}

function write(value: unknown, cur: string, pad: string): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'bigint':
      return value.toString();
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value instanceof ExactNumber) return value.text;
  if (value instanceof Uint8Array) return JSON.stringify(Buffer.from(value).toString('hex'));
  const withToJson = value as { toJSON?: () => unknown };
  if (typeof withToJson.toJSON === 'function') return write(withToJson.toJSON(), cur, pad);
  const inner = cur + pad;
  const open = pad ? '\n' + inner : '';
  const sep = pad ? ',\n' + inner : ',';
  const close = pad ? '\n' + cur : '';
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return '[' + open + value.map((v) => write(v, inner, pad) ?? 'null').join(sep) + close + ']';
  }
  const parts: string[] = [];
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    const s = write(v, inner, pad);
    if (s !== undefined) parts.push(JSON.stringify(k) + (pad ? ': ' : ':') + s);
  }
  if (parts.length === 0) return '{}';
  return '{' + open + parts.join(sep) + close + '}';
}

/**
 * For JS consumers (the HTML report's embedded data, notebook charts), which
 * parse with `JSON.parse` and would round integers beyond 2^53: those become
 * strings (exact), safe ones numbers; non-finite floats become null. Machine
 * output (`--json`) uses {@link toJsonText} instead, whose types never depend
 * on the value.
 */
export function toJsonSafe(value: unknown): unknown {
  if (typeof value === 'bigint') {
    return value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString();
  }
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (value instanceof ExactNumber) return value.valueOf();
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
