/**
 * SQL literals. Everything the analyzer splices into SQL text goes through
 * here: integers are checked to be integers, strings are quoted. No DuckDB
 * import: building SQL is pure.
 */

/** A single-quoted SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}

/** An integer literal (bigint, or a safe integer number); anything else throws. */
export function sqlInt(v: bigint | number): string {
  if (typeof v === 'bigint') return v.toString();
  if (!Number.isSafeInteger(v)) throw new RangeError(`not an exact integer for SQL: ${v}`);
  return String(v);
}

/** A BIGINT literal (cast, so sums and comparisons stay in integers). */
export function sqlBigint(v: bigint | number): string {
  return `${sqlInt(v)}::BIGINT`;
}

/** A finite floating-point literal. */
export function sqlDouble(v: number): string {
  if (!Number.isFinite(v)) throw new RangeError(`not a finite number for SQL: ${v}`);
  return `${v}::DOUBLE`;
}
