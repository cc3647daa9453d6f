/**
 * @tickwise/report: what a person looks at. Perfetto (Chrome trace JSON)
 * and Parquet exports, Vega-Lite specs as pure functions, the self-contained
 * HTML and Markdown reports, and notebooks (Markdown with SQL and Vega-Lite
 * cells) run against a store.
 */
export * from './messages';
export * from './json-text';
export * from './lanes';
export * from './stream-rows';
export * from './perfetto-json';
export * from './parquet-export';
export * from './html/escape';
export * from './html/markdown';
export * from './html/table';
export * from './html/page';
export * from './html/vendor';
export * from './notebook/parse';
export * from './notebook/run';
export * from './notebook/render';
export * from './sql/timeline';
export * from './sql/gap-histogram';
export * from './specs/common';
export * from './specs/timeline';
export * from './specs/gap-histogram';
export * from './specs/kernel-breakdown';
export * from './report/model';
export * from './report/format';
export * from './report/sections';
export * from './report/groups';
export * from './report/verdict';
export * from './report/text-blocks';
export * from './report/ceiling-inputs';
export * from './report/schedule-section';
export * from './report/collect';
export * from './report/html';
export * from './report/markdown';
