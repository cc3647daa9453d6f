import type { DuckDBAppender, DuckDBTypeId } from '@duckdb/node-api';
import { duckdbModule } from './duckdb-module';
import { toJsonText } from './json';

/** A value that does not fit its column: the message says which column and why. */
export class AppendValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppendValueError';
  }
}

type Writer = (v: unknown) => void;

let intRanges: Partial<Record<DuckDBTypeId, readonly [bigint, bigint]>> | undefined;

/** Each integer type's range, by its DuckDB type id (built once DuckDB is loaded). */
function intRangesOf(T: typeof DuckDBTypeId): Partial<Record<DuckDBTypeId, readonly [bigint, bigint]>> {
  return intRanges ??= {
    [T.TINYINT]: [-(2n ** 7n), 2n ** 7n - 1n],
    [T.SMALLINT]: [-(2n ** 15n), 2n ** 15n - 1n],
    [T.INTEGER]: [-(2n ** 31n), 2n ** 31n - 1n],
    [T.BIGINT]: [-(2n ** 63n), 2n ** 63n - 1n],
    [T.HUGEINT]: [-(2n ** 127n), 2n ** 127n - 1n],
    [T.UTINYINT]: [0n, 2n ** 8n - 1n],
    [T.USMALLINT]: [0n, 2n ** 16n - 1n],
    [T.UINTEGER]: [0n, 2n ** 32n - 1n],
    [T.UBIGINT]: [0n, 2n ** 64n - 1n],
    [T.UHUGEINT]: [0n, 2n ** 128n - 1n],
  };
}

function exactInteger(v: unknown, what: string): bigint {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v)) return BigInt(v);
    if (Number.isInteger(v)) throw new AppendValueError(`${what}: ${v} is beyond 2^53 as a JS number and may have been rounded; pass a bigint`);
    throw new AppendValueError(`${what}: ${v} is not an integer`);
  }
  if (typeof v === 'string' && /^\s*-?\d+\s*$/.test(v)) return BigInt(v.trim());
  throw new AppendValueError(`${what}: ${typeof v === 'string' ? JSON.stringify(v) : String(v)} is not an integer`);
}

/**
 * The function that appends one value of column `index` (its DuckDB type as
 * the appender reports it). Integers must be exact and in range (a number
 * beyond 2^53 is refused, never rounded); `json` columns take a string as
 * JSON text and serialize anything else with {@link toJsonText}.
 */
export function columnWriter(app: DuckDBAppender, index: number, what: string, json: boolean): Writer {
  const type = app.columnType(index);
  const id = type.typeId;
  const T = duckdbModule().DuckDBTypeId;
  json ||= type.alias === 'JSON';
  const range = intRangesOf(T)[id];
  if (range) {
    const [lo, hi] = range;
    const check = (v: unknown): bigint => {
      const b = exactInteger(v, what);
      if (b < lo || b > hi) throw new AppendValueError(`${what}: ${b} is out of range [${lo}, ${hi}]`);
      return b;
    };
    // The bulk path's common case, without a BigInt: a safe-integer number inside the column's range
    // (the bounds as numbers are exact for every type up to 32 bits; wider ranges hold every safe integer
    // of the right sign, so only the sign is checked there).
    const loN = lo < BigInt(Number.MIN_SAFE_INTEGER) ? Number.MIN_SAFE_INTEGER : Number(lo);
    const hiN = hi > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(hi);
    const small = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) && v >= loN && v <= hiN ? v : Number(check(v)));
    const wide = (v: unknown): bigint => (typeof v === 'number' && Number.isSafeInteger(v) && v >= loN ? BigInt(v) : check(v));
    switch (id) {
      case T.TINYINT: return (v) => app.appendTinyInt(small(v));
      case T.SMALLINT: return (v) => app.appendSmallInt(small(v));
      case T.INTEGER: return (v) => app.appendInteger(small(v));
      case T.UTINYINT: return (v) => app.appendUTinyInt(small(v));
      case T.USMALLINT: return (v) => app.appendUSmallInt(small(v));
      case T.UINTEGER: return (v) => app.appendUInteger(small(v));
      case T.BIGINT: return (v) => app.appendBigInt(typeof v === 'bigint' && v >= lo && v <= hi ? v : wide(v));
      case T.UBIGINT: return (v) => app.appendUBigInt(typeof v === 'bigint' && v >= lo && v <= hi ? v : wide(v));
      case T.HUGEINT: return (v) => app.appendHugeInt(wide(v));
      default: return (v) => app.appendUHugeInt(wide(v));
    }
  }
  switch (id) {
    case T.BOOLEAN:
      return (v) => {
        if (typeof v !== 'boolean') throw new AppendValueError(`${what}: ${String(v)} is not a boolean`);
        app.appendBoolean(v);
      };
    case T.DOUBLE:
    case T.FLOAT: {
      const put = id === T.DOUBLE ? (x: number) => app.appendDouble(x) : (x: number) => app.appendFloat(x);
      return (v) => {
        const x = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
        if (Number.isNaN(x) && !(typeof v === 'number')) throw new AppendValueError(`${what}: ${String(v)} is not a number`);
        put(x);
      };
    }
    case T.VARCHAR:
      return (v) => {
        if (typeof v === 'string') app.appendVarchar(v);
        else if (json) app.appendVarchar(toJsonText(v, 0));
        else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') app.appendVarchar(String(v));
        else throw new AppendValueError(`${what}: a ${typeof v} for a VARCHAR column`);
      };
    default:
      return (v) => app.appendValue(v as never);
  }
}

/**
 * Calls `fn` for every row: a synchronous iterable (an array, a generator)
 * in a plain loop, an async one with `for await` (an await per row costs a
 * microtask each: most of a bulk append of small rows).
 */
export async function forEachRow<R>(rows: Iterable<R> | AsyncIterable<R>, fn: (row: R) => void): Promise<void> {
  if (Symbol.iterator in (rows as object)) {
    for (const row of rows as Iterable<R>) fn(row);
    return;
  }
  for await (const row of rows as AsyncIterable<R>) fn(row);
}
