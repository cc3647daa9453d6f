/**
 * @tickwise/store: the DuckDB store. The canonical schema (`schema.ts`), the
 * connection (`Store`), typed and bigint-safe results (`query` with a row
 * shape), JSON output that keeps integers exact, and atomic updates of a
 * store file.
 */
export * from './schema';
export * from './connection';
export * from './query-error';
export * from './shape';
export * from './values';
export * from './json';
export * from './sql-text';
export * from './atomic';
export * from './conditions';
export * from './timelines';
export * from './redact';
export { loadDuckdb } from './duckdb-module';
export type { ColumnBatch } from './append';
