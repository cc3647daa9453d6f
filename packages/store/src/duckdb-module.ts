import type * as DuckDB from '@duckdb/node-api';
import type DuckDBBindings from '@duckdb/node-bindings';
import { createRequire } from 'node:module';

/** Set to true by the CLI build (scripts/build-cli.mjs), whose chunks define `require`. */
declare const TICKWISE_BUNDLED: boolean | undefined;

/**
 * `@duckdb/node-api`, loaded on first use: a verb that never opens a store
 * (`--help`, `ceiling` from numbers, `provenance`) does not pay for loading
 * DuckDB's native library (~60 ms here, more on a cold disk).
 */
let loaded: typeof DuckDB | undefined;

/**
 * Loads the DuckDB module (once), from a module of its own
 * (`duckdb-require.ts`): the CLI build bundles `@duckdb/node-api`'s code,
 * and the dynamic import keeps it in a chunk that only a verb opening a
 * store reads.
 */
export async function loadDuckdb(): Promise<typeof DuckDB> {
  loaded ??= (await import('./duckdb-require')).requireDuckdb();
  return loaded;
}

/** The DuckDB module, already loaded by {@link loadDuckdb} (every Store is opened through it). */
export function duckdbModule(): typeof DuckDB {
  if (loaded === undefined) throw new Error('internal: DuckDB is used before any store was opened');
  return loaded;
}

let bindings: typeof DuckDBBindings | undefined;

/**
 * DuckDB's C API as `@duckdb/node-api` calls it (`@duckdb/node-bindings`,
 * loaded with it): for writing a column of integers into a data chunk's
 * vector as one copy ({@link appendColumnBatch}). After {@link loadDuckdb}.
 */
export function duckdbBindings(): typeof DuckDBBindings {
  duckdbModule();
  bindings ??= (typeof TICKWISE_BUNDLED !== 'undefined' && TICKWISE_BUNDLED
    ? require('@duckdb/node-bindings')
    : createRequire(import.meta.url)('@duckdb/node-bindings')) as typeof DuckDBBindings;
  return bindings;
}
