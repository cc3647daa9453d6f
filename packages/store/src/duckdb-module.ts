import type * as DuckDB from '@duckdb/node-api';

/**
 * `@duckdb/node-api`, loaded on first use: a verb that never opens a store
 * (`--help`, `ceiling` from numbers, `provenance`) does not pay for loading
 * DuckDB's native library (~60 ms here, more on a cold disk).
 */
let loaded: typeof DuckDB | undefined;

/** Loads the DuckDB module (once). */
export async function loadDuckdb(): Promise<typeof DuckDB> {
  loaded ??= await import('@duckdb/node-api');
  return loaded;
}

/** The DuckDB module, already loaded by {@link loadDuckdb} (every Store is opened through it). */
export function duckdbModule(): typeof DuckDB {
  if (loaded === undefined) throw new Error('internal: DuckDB is used before any store was opened');
  return loaded;
}
