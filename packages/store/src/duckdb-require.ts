import type * as DuckDB from '@duckdb/node-api';
import { createRequire } from 'node:module';

/** Set to true by the CLI build (scripts/build-cli.mjs), whose chunks define `require`. */
declare const TICKWISE_BUNDLED: boolean | undefined;

/**
 * `@duckdb/node-api`, required, not imported: it is CommonJS, and Node's ESM
 * loader parses each of its files for export names before running them (~40
 * ms of every verb that opens a store); `require` runs them as they are. In
 * the CLI build this `require` is esbuild's: the package's code is part of
 * the build (scripts/build-cli.mjs), its native bindings are not.
 */
export function requireDuckdb(): typeof DuckDB {
  return (typeof TICKWISE_BUNDLED !== 'undefined' && TICKWISE_BUNDLED
    ? require('@duckdb/node-api')
    : createRequire(import.meta.url)('@duckdb/node-api')) as typeof DuckDB;
}
