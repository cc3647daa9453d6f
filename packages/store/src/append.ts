import type { DuckDBAppender, DuckDBType, DuckDBTypeId, DuckDBValue } from '@duckdb/node-api';
import { duckdbModule, duckdbBindings } from './duckdb-module';
import { toJsonText } from './json';

/** A value that does not fit its column: the message says which column and why. */
export class AppendValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AppendValueError';
  }
}

type Writer = (v: unknown) => void;
type Converter = (v: unknown) => DuckDBValue;

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
 * The function that converts and checks one value of a column (its DuckDB
 * type as the appender reports it) into what DuckDB takes for it: integers
 * exact and in range (a number beyond 2^53 is refused, never rounded), as a
 * number up to 32 bits and a bigint beyond; `json` columns take a string as
 * JSON text and serialize anything else with {@link toJsonText}. null for a
 * type tickwise does not stage (only the appender's own conversion takes it).
 */
function columnConverter(type: DuckDBType, what: string, json: boolean): Converter | null {
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
    if (hi <= 2n ** 32n) return (v) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= loN && v <= hiN ? v : Number(check(v)));
    return (v) => (typeof v === 'bigint' && v >= lo && v <= hi ? v : typeof v === 'number' && Number.isSafeInteger(v) && v >= loN ? BigInt(v) : check(v));
  }
  switch (id) {
    case T.BOOLEAN:
      return (v) => {
        if (typeof v !== 'boolean') throw new AppendValueError(`${what}: ${String(v)} is not a boolean`);
        return v;
      };
    case T.DOUBLE:
    case T.FLOAT:
      return (v) => {
        const x = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
        if (Number.isNaN(x) && !(typeof v === 'number')) throw new AppendValueError(`${what}: ${String(v)} is not a number`);
        return x;
      };
    case T.VARCHAR:
      return (v) => {
        if (typeof v === 'string') return json ? jsonText(v, what) : v;
        if (json) return toJsonText(v, 0);
        if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
        throw new AppendValueError(`${what}: a ${typeof v} for a VARCHAR column`);
      };
    default:
      return null;
  }
}

/**
 * A string for a JSON column, checked to be JSON text: DuckDB's appender
 * stores any text in a JSON column, and a malformed one made every later
 * query of it fail ("Malformed JSON"), far from the append that wrote it.
 */
function jsonText(v: string, what: string): string {
  try {
    JSON.parse(v);
  } catch (e) {
    const shown = v.length > 60 ? `${JSON.stringify(v.slice(0, 60))}...` : JSON.stringify(v);
    throw new AppendValueError(`${what}: ${shown} is not JSON text (${(e as Error).message}); pass the value itself to have it serialized`);
  }
  return v;
}

/** Where a bulk append puts each row's values: `put(i, v)` (v not null or undefined), `putNull(i)`, then `endRow()`; `finish()` once. */
export interface RowSink {
  put(index: number, value: unknown): void;
  putNull(index: number): void;
  /** The column's default (DuckDB's appender only: a data chunk has none). */
  putDefault?(index: number): void;
  endRow(): void;
  finish(): void;
}

/** Appends value by value through DuckDB's appender (every column type; defaults). */
function valueSink(app: DuckDBAppender, what: (index: number) => string, json: (index: number) => boolean): RowSink {
  const T = duckdbModule().DuckDBTypeId;
  const writers = Array.from({ length: app.columnCount }, (_, i): Writer => {
    const type = app.columnType(i);
    const conv = columnConverter(type, what(i), json(i));
    if (conv === null) return (v) => app.appendValue(v as never);
    switch (type.typeId) {
      case T.TINYINT: return (v) => app.appendTinyInt(conv(v) as number);
      case T.SMALLINT: return (v) => app.appendSmallInt(conv(v) as number);
      case T.INTEGER: return (v) => app.appendInteger(conv(v) as number);
      case T.UTINYINT: return (v) => app.appendUTinyInt(conv(v) as number);
      case T.USMALLINT: return (v) => app.appendUSmallInt(conv(v) as number);
      case T.UINTEGER: return (v) => app.appendUInteger(conv(v) as number);
      case T.BIGINT: return (v) => app.appendBigInt(conv(v) as bigint);
      case T.UBIGINT: return (v) => app.appendUBigInt(conv(v) as bigint);
      case T.HUGEINT: return (v) => app.appendHugeInt(conv(v) as bigint);
      case T.UHUGEINT: return (v) => app.appendUHugeInt(conv(v) as bigint);
      case T.BOOLEAN: return (v) => app.appendBoolean(conv(v) as boolean);
      case T.DOUBLE: return (v) => app.appendDouble(conv(v) as number);
      case T.FLOAT: return (v) => app.appendFloat(conv(v) as number);
      default: return (v) => app.appendVarchar(conv(v) as string);
    }
  });
  return {
    put: (i, v) => writers[i]!(v),
    putNull: () => app.appendNull(),
    putDefault: () => app.appendDefault(),
    endRow: () => app.endRow(),
    finish: () => undefined,
  };
}

/**
 * Rows held a data chunk (DuckDB's vector size, 2048 rows) at a time, a
 * column array each, and handed to DuckDB in one call per chunk: numbers
 * and bigints are written into the chunk's typed vectors and copied once;
 * only strings still cross one by one. An appender call per value took ~0.18
 * us: 3.7 s of a rocpd import of 1M dispatches x 21 columns.
 */
function chunkSink(app: DuckDBAppender, converters: readonly Converter[]): RowSink {
  const { DuckDBDataChunk } = duckdbModule();
  const types = converters.map((_, i) => app.columnType(i));
  const cols = converters.map(() => new Array<DuckDBValue>(CHUNK_ROWS));
  // one chunk, reset for each batch: a chunk a batch held its native memory until V8 collected the wrapper
  // (a 1M-row append peaked 330 MB higher)
  const chunk = DuckDBDataChunk.create(types);
  let n = 0;
  const flush = () => {
    if (n === 0) return;
    chunk.reset();
    chunk.rowCount = n;
    for (let i = 0; i < cols.length; i++) {
      const col = cols[i]!;
      chunk.setColumnValues(i, n === CHUNK_ROWS ? col : col.slice(0, n));
    }
    app.appendDataChunk(chunk);
    n = 0;
  };
  return {
    put: (i, v) => { cols[i]![n] = converters[i]!(v); },
    putNull: (i) => { cols[i]![n] = null; },
    endRow: () => { if (++n === CHUNK_ROWS) flush(); },
    finish: flush,
  };
}

/** Rows a data chunk holds (DuckDB's STANDARD_VECTOR_SIZE). */
const CHUNK_ROWS = 2048;

/**
 * A sink for bulk rows into the appender's table: a data chunk at a time
 * when every column's type has a converter and no default is wanted, else
 * value by value. `what(i)` names column i in errors; `json(i)` says it
 * holds JSON text.
 */
export function rowSink(app: DuckDBAppender, what: (index: number) => string, json: (index: number) => boolean = () => false, defaults = false): RowSink {
  if (!defaults) {
    const converters: Converter[] = [];
    for (let i = 0; i < app.columnCount; i++) {
      const c = columnConverter(app.columnType(i), what(i), json(i));
      if (c === null) break;
      converters.push(c);
    }
    if (converters.length === app.columnCount) return chunkSink(app, converters);
  }
  return valueSink(app, what, json);
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

/**
 * A column of a batch for {@link appendColumnBatch}: integers in a typed
 * array of the column's own width (BigInt64Array for BIGINT, BigUint64Array
 * for UBIGINT, Int32Array for INTEGER), a 1 in `nulls` for a NULL; or one
 * value for every row (`same`: NULL, or a text for a VARCHAR column); or
 * values one by one (texts for a VARCHAR column, null for NULL; for another
 * column converted as a bulk append converts them).
 */
export type ColumnBatch =
  | { readonly ints: BigInt64Array | BigUint64Array | Int32Array; readonly nulls?: Uint8Array }
  | { readonly same: string | null }
  | { readonly values: ArrayLike<unknown> };

/**
 * Appends `n` rows given as columns, a data chunk (2,048 rows) at a time,
 * through DuckDB's C API: a column of integers is copied into the chunk's
 * vector whole, NULLs are written as the vector's validity bits, texts one
 * call each (no value goes through a JS wrapper of the vector). Refuses a
 * typed array that is not the column's width, or too short.
 */
export function appendColumnBatch(app: DuckDBAppender, what: string, columns: readonly ColumnBatch[], n: number): void {
  const { DuckDBDataChunk, DuckDBTypeId: T } = duckdbModule();
  const b = duckdbBindings();
  if (columns.length !== app.columnCount) throw new AppendValueError(`${what}: ${columns.length} columns given for ${app.columnCount}`);
  const types = columns.map((_, i) => app.columnType(i));
  const width = new Map<number, string>([[T.BIGINT, 'BigInt64Array'], [T.UBIGINT, 'BigUint64Array'], [T.INTEGER, 'Int32Array']]);
  const converters = columns.map((c, i) => {
    const name = `${what} column ${i + 1}`;
    const varchar = types[i]!.typeId === T.VARCHAR;
    if ('ints' in c) {
      if (width.get(types[i]!.typeId) !== c.ints.constructor.name) throw new AppendValueError(`${name}: a ${c.ints.constructor.name} for a ${types[i]!.toString()} column`);
      if (c.ints.length < n || (c.nulls !== undefined && c.nulls.length < n)) throw new AppendValueError(`${name}: fewer than ${n} values`);
      return null;
    }
    if ('same' in c) {
      if (c.same !== null && !varchar) throw new AppendValueError(`${name}: one text for every row of a ${types[i]!.toString()} column`);
      return null;
    }
    if (c.values.length < n) throw new AppendValueError(`${name}: fewer than ${n} values`);
    return varchar ? null : columnConverter(types[i]!, name, false) ?? ((v: unknown) => v as DuckDBValue);
  });
  // a JSON column's texts are checked as a bulk append checks them (jsonText)
  const json = types.map((ty) => ty.alias === 'JSON');
  const chunk = DuckDBDataChunk.create(types);
  // validity bits of a chunk (row i: byte i >> 3, bit i & 7, as DuckDB's little-endian 64-bit words lay them out)
  const mask = new Uint8Array(CHUNK_ROWS / 8);
  const setValidity = (vector: ReturnType<typeof b.data_chunk_get_vector>, len: number) => {
    b.vector_ensure_validity_writable(vector);
    b.copy_data_to_vector_validity(vector, 0, mask.buffer, 0, Math.ceil(len / 64) * 8);
  };
  for (let at = 0; at < n; at += CHUNK_ROWS) {
    const len = Math.min(CHUNK_ROWS, n - at);
    chunk.reset();
    chunk.rowCount = len;
    for (let c = 0; c < columns.length; c++) {
      const col = columns[c]!;
      const conv = converters[c];
      if (conv) {
        const values = new Array<DuckDBValue>(len);
        const given = (col as { values: ArrayLike<unknown> }).values;
        for (let i = 0; i < len; i++) {
          const v = given[at + i];
          values[i] = v === null || v === undefined ? null : conv(v);
        }
        chunk.setColumnValues(c, values);
        continue;
      }
      const vector = b.data_chunk_get_vector(chunk.chunk, c);
      if ('ints' in col) {
        const bytes = col.ints.BYTES_PER_ELEMENT;
        b.copy_data_to_vector(vector, 0, col.ints.buffer as ArrayBuffer, col.ints.byteOffset + at * bytes, len * bytes);
        // (written for every chunk of a column that may hold NULLs: a chunk's reset need not clear the last one's bits)
        if (col.nulls !== undefined) {
          mask.fill(0xff);
          const nulls = col.nulls;
          for (let i = 0; i < len; i++) if (nulls[at + i] === 1) mask[i >> 3]! &= ~(1 << (i & 7));
          setValidity(vector, len);
        }
      } else if ('same' in col) {
        if (col.same === null) {
          mask.fill(0);
          setValidity(vector, len);
        } else {
          const text = json[c] ? jsonText(col.same, `${what} column ${c + 1}`) : col.same;
          for (let i = 0; i < len; i++) b.vector_assign_string_element(vector, i, text);
        }
      } else {
        mask.fill(0xff);
        for (let i = 0; i < len; i++) {
          const v = col.values[at + i];
          if (v === null || v === undefined) mask[i >> 3]! &= ~(1 << (i & 7));
          else if (typeof v === 'string') b.vector_assign_string_element(vector, i, json[c] ? jsonText(v, `${what} column ${c + 1}`) : v);
          else throw new AppendValueError(`${what} column ${c + 1}: a ${typeof v} for a VARCHAR column (row ${at + i + 1})`);
        }
        // (every chunk, as for integers: its validity is never left from the chunk before)
        setValidity(vector, len);
      }
    }
    app.appendDataChunk(chunk);
  }
}
