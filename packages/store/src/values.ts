import type { DuckDBValue } from '@duckdb/node-api';
import { duckdbModule } from './duckdb-module';

/**
 * Converts a DuckDB value to plain JS: integers stay `bigint` (never a lossy
 * number), DECIMAL becomes a number, lists become arrays, structs objects,
 * anything else its string form.
 */
export function convertValue(v: DuckDBValue): unknown {
  if (v === null || typeof v === 'bigint' || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  // a value came from a store, so DuckDB is loaded
  const { DuckDBArrayValue, DuckDBDecimalValue, DuckDBListValue, DuckDBStructValue } = duckdbModule();
  if (v instanceof DuckDBDecimalValue) return v.toDouble();
  if (v instanceof DuckDBListValue || v instanceof DuckDBArrayValue) return v.items.map((x) => convertValue(x));
  if (v instanceof DuckDBStructValue) {
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v.entries)) o[k] = convertValue(x as DuckDBValue);
    return o;
  }
  if (v instanceof Uint8Array) return v;
  return String(v);
}
