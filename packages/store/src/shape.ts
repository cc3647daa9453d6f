import { QueryError } from './query-error';

type Row = Record<string, unknown>;

/** Column kinds a row shape may declare. */
export type ColumnKind = 'bigint' | 'bigint?' | 'number' | 'number?' | 'string' | 'string?' | 'boolean' | 'boolean?' | 'json?';

/** A row shape: column name to kind, declared once `as const`. */
export type Shape = Record<string, ColumnKind>;

type KindType<K extends ColumnKind> = K extends 'bigint' ? bigint
  : K extends 'bigint?' ? bigint | null
  : K extends 'number' ? number
  : K extends 'number?' ? number | null
  : K extends 'string' ? string
  : K extends 'string?' ? string | null
  : K extends 'boolean' ? boolean
  : K extends 'boolean?' ? boolean | null
  : unknown;

/** The JS row type of a shape. */
export type RowOf<S extends Shape> = { -readonly [K in keyof S]: KindType<S[K]> };

type Convert = (v: unknown) => unknown;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** The converter of one declared column (NULL handling included), built once per query, not per value. */
function columnConverter(col: string, kind: ColumnKind, sql: string): Convert {
  const nullable = kind.endsWith('?');
  const base = nullable ? kind.slice(0, -1) : kind;
  let conv: Convert;
  switch (base) {
    case 'bigint':
      conv = (v) => {
        if (typeof v === 'bigint') return v;
        if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
        throw new QueryError(`column ${col}: ${String(v)} is not an integer`, sql, undefined);
      };
      break;
    case 'number':
      conv = (v) => {
        if (typeof v === 'number') return v;
        if (typeof v === 'bigint') {
          if (v > MAX_SAFE || v < MIN_SAFE) throw new QueryError(`column ${col}: ${v} does not fit a JS number exactly; declare it bigint`, sql, undefined);
          return Number(v);
        }
        throw new QueryError(`column ${col}: ${String(v)} is not a number`, sql, undefined);
      };
      break;
    case 'string':
      conv = (v) => (typeof v === 'string' ? v : String(v));
      break;
    case 'boolean':
      conv = (v) => Boolean(v);
      break;
    default:
      conv = (v) => (typeof v === 'string' ? JSON.parse(v) : v);
  }
  return (v) => {
    if (v === null || v === undefined) {
      if (!nullable) throw new QueryError(`column ${col}: NULL where the shape needs ${kind}`, sql, undefined);
      return null;
    }
    return conv(v);
  };
}

/**
 * Checks rows coming out of DuckDB against a shape and converts them: a
 * `number` column that arrives as a bigint must be a safe integer (else an
 * error, never a silent rounding); a `bigint` column must be an integer.
 */
export function checkRows<S extends Shape>(shape: S, rows: Row[], sql = ''): RowOf<S>[] {
  const cols = Object.entries(shape).map(([col, kind]) => [col, columnConverter(col, kind, sql)] as const);
  return rows.map((r) => {
    const o: Record<string, unknown> = {};
    for (const [col, conv] of cols) o[col] = conv(r[col]);
    return o as RowOf<S>;
  });
}

/**
 * {@link checkRows} over a result read column by column (`names[i]` names
 * `columns[i]`; a later column of the same name wins, as in a row object):
 * each value goes through `prepare` (DuckDB's value to a plain one) and the
 * shape's converter, with no intermediate row of every column.
 */
export function checkColumns<S extends Shape>(shape: S, names: readonly string[], columns: readonly (readonly unknown[])[], prepare: Convert, sql = ''): RowOf<S>[] {
  const n = columns[0]?.length ?? 0;
  const cols = Object.entries(shape).map(([col, kind]) => [col, names.lastIndexOf(col), columnConverter(col, kind, sql)] as const);
  const out: RowOf<S>[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const o: Record<string, unknown> = {};
    for (const [col, at, conv] of cols) o[col] = conv(at < 0 ? undefined : prepare(columns[at]![i]));
    out[i] = o as RowOf<S>;
  }
  return out;
}
