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

/**
 * Checks rows coming out of DuckDB against a shape and converts them: a
 * `number` column that arrives as a bigint must be a safe integer (else an
 * error, never a silent rounding); a `bigint` column must be an integer.
 */
export function checkRows<S extends Shape>(shape: S, rows: Row[], sql = ''): RowOf<S>[] {
  return rows.map((r) => {
    const o: Record<string, unknown> = {};
    for (const [col, kind] of Object.entries(shape)) {
      const v = r[col];
      const nullable = kind.endsWith('?');
      if (v === null || v === undefined) {
        if (!nullable) throw new QueryError(`column ${col}: NULL where the shape needs ${kind}`, sql, undefined);
        o[col] = null;
        continue;
      }
      switch (kind.replace('?', '')) {
        case 'bigint':
          if (typeof v === 'bigint') o[col] = v;
          else if (typeof v === 'number' && Number.isInteger(v)) o[col] = BigInt(v);
          else throw new QueryError(`column ${col}: ${String(v)} is not an integer`, sql, undefined);
          break;
        case 'number':
          if (typeof v === 'number') o[col] = v;
          else if (typeof v === 'bigint') {
            if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
              throw new QueryError(`column ${col}: ${v} does not fit a JS number exactly; declare it bigint`, sql, undefined);
            }
            o[col] = Number(v);
          } else throw new QueryError(`column ${col}: ${String(v)} is not a number`, sql, undefined);
          break;
        case 'string':
          o[col] = typeof v === 'string' ? v : String(v);
          break;
        case 'boolean':
          o[col] = Boolean(v);
          break;
        default:
          o[col] = typeof v === 'string' ? JSON.parse(v) : v;
      }
    }
    return o as RowOf<S>;
  });
}
