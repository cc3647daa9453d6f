import type { Store } from '@tickwise/store';
import { QueryError } from '@tickwise/store';

/** One value as it comes out of a streamed chunk: integers stay bigint. */
export type StreamValue = bigint | number | string | boolean | null;

/** One streamed row: column name to value. */
export type StreamRecord = Record<string, StreamValue>;

/**
 * Streams a query's rows chunk by chunk (DuckDB's vector size, 2048 rows),
 * so an export of millions of dispatches never holds them all in memory.
 * Columns should be of primitive SQL types (integers, floats, VARCHAR,
 * BOOLEAN); anything else arrives as its string form.
 */
export async function* streamRecords(store: Store, sql: string): AsyncGenerator<StreamRecord[]> {
  let result;
  try {
    result = await store.connection.stream(sql);
  } catch (e) {
    throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
  }
  const names = result.columnNames();
  for await (const chunk of result.yieldRows()) {
    yield chunk.map((row) => {
      const o: StreamRecord = {};
      for (let i = 0; i < names.length; i++) o[names[i]!] = primitive(row[i]);
      return o;
    });
  }
}

function primitive(v: unknown): StreamValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint' || typeof v === 'number' || typeof v === 'string' || typeof v === 'boolean') return v;
  return String(v);
}
