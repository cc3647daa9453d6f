/**
 * @tickwise/analyzer: the analyses over the store, in SQL (window functions
 * over sorted intervals), each result checked against a declared row shape.
 *
 * ```
 * store.dispatches --planSources: one time source per device, refuse ticks without a time base-->
 *   --resolveSegments (--segment first|last|steady|N, --reps N)-->
 *   selectionSql --> gaps | overlap | kernelStats | rowGroupCost | segments
 *   installViews: the same as SQL views/macros for `tickwise sql`
 * ```
 * SQL text is built in `sql/` (pure, no DuckDB); the modules here run it.
 */
export * from './messages';
export * from './shapes';
export * from './selection';
export * from './plan';
export * from './segments';
export * from './segment-default';
export * from './gaps';
export * from './overlap';
export * from './kernels';
export * from './cost';
export * from './views';
export * from './provenance';
export * from './sql/intervals';
export * from './sql/selection';
export * from './sql/gaps';
export * from './sql/overlap';
export * from './sql/kernels';
export * from './sql/cost';
export * from './sql/segments';
export * from './sql/views';
export * from './checks/index';
export * from './launch-shapes';
export * from './launches';
export * from './diff';
export * from './sql/launches';
export * from './sql/work';
export * from './stage-costs';
export * from './glob';
export * from './group';
export * from './energy';
