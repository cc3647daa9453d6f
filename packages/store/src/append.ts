import { DuckDBTypeId, type DuckDBAppender } from '@duckdb/node-api';
import { toJsonText } from './json';

/** A value that does not fit its column: the message says which column and why. */
export class AppendValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppendValueError';
  }
}

type Writer = (v: unknown) => void;

const INT_RANGES: Partial<Record<DuckDBTypeId, readonly [bigint, bigint]>> = {
  [DuckDBTypeId.TINYINT]: [-(2n ** 7n), 2n ** 7n - 1n],
  [DuckDBTypeId.SMALLINT]: [-(2n ** 15n), 2n ** 15n - 1n],
  [DuckDBTypeId.INTEGER]: [-(2n ** 31n), 2n ** 31n - 1n],
  [DuckDBTypeId.BIGINT]: [-(2n ** 63n), 2n ** 63n - 1n],
  [DuckDBTypeId.HUGEINT]: [-(2n ** 127n), 2n ** 127n - 1n],
  [DuckDBTypeId.UTINYINT]: [0n, 2n ** 8n - 1n],
  [DuckDBTypeId.USMALLINT]: [0n, 2n ** 16n - 1n],
  [DuckDBTypeId.UINTEGER]: [0n, 2n ** 32n - 1n],
  [DuckDBTypeId.UBIGINT]: [0n, 2n ** 64n - 1n],
  [DuckDBTypeId.UHUGEINT]: [0n, 2n ** 128n - 1n],
};

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
  json ||= type.alias === 'JSON';
  const range = INT_RANGES[id];
  if (range) {
    const [lo, hi] = range;
    const check = (v: unknown): bigint => {
      const b = exactInteger(v, what);
      if (b < lo || b > hi) throw new AppendValueError(`${what}: ${b} is out of range [${lo}, ${hi}]`);
      return b;
    };
    switch (id) {
      case DuckDBTypeId.TINYINT: return (v) => app.appendTinyInt(Number(check(v)));
      case DuckDBTypeId.SMALLINT: return (v) => app.appendSmallInt(Number(check(v)));
      case DuckDBTypeId.INTEGER: return (v) => app.appendInteger(Number(check(v)));
      case DuckDBTypeId.UTINYINT: return (v) => app.appendUTinyInt(Number(check(v)));
      case DuckDBTypeId.USMALLINT: return (v) => app.appendUSmallInt(Number(check(v)));
      case DuckDBTypeId.UINTEGER: return (v) => app.appendUInteger(Number(check(v)));
      case DuckDBTypeId.BIGINT: return (v) => app.appendBigInt(check(v));
      case DuckDBTypeId.UBIGINT: return (v) => app.appendUBigInt(check(v));
      case DuckDBTypeId.HUGEINT: return (v) => app.appendHugeInt(check(v));
      default: return (v) => app.appendUHugeInt(check(v));
    }
  }
  switch (id) {
    case DuckDBTypeId.BOOLEAN:
      return (v) => {
        if (typeof v !== 'boolean') throw new AppendValueError(`${what}: ${String(v)} is not a boolean`);
        app.appendBoolean(v);
      };
    case DuckDBTypeId.DOUBLE:
    case DuckDBTypeId.FLOAT: {
      const put = id === DuckDBTypeId.DOUBLE ? (x: number) => app.appendDouble(x) : (x: number) => app.appendFloat(x);
      return (v) => {
        const x = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
        if (Number.isNaN(x) && !(typeof v === 'number')) throw new AppendValueError(`${what}: ${String(v)} is not a number`);
        put(x);
      };
    }
    case DuckDBTypeId.VARCHAR:
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
