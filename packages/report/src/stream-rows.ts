import type { Store } from '@tickwise/store';

/** One value as it comes out of a streamed chunk: integers stay bigint. */
export type StreamValue = bigint | number | string | boolean | null;

/** One streamed row: column name to value. */
export type StreamRecord = Record<string, StreamValue>;

/**
 * Streams a query's rows chunk by chunk (`Store.stream`: DuckDB's vector
 * size, 2048 rows), so an export of millions of dispatches never holds them
 * all in memory. Columns should be of primitive SQL types (integers, floats,
 * VARCHAR, BOOLEAN); anything else arrives as its string form.
 */
export async function* streamRecords(store: Store, sql: string): AsyncGenerator<StreamRecord[]> {
  for await (const chunk of store.stream(sql)) {
    yield chunk.map((row) => {
      const o: StreamRecord = {};
      for (const [k, v] of Object.entries(row)) o[k] = primitive(v);
      return o;
    });
  }
}

function primitive(v: unknown): StreamValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  return String(v);
}
