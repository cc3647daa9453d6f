/**
 * @tickwise/ceiling: the iGPU/NPU split model, pure functions, no I/O.
 * Entry point: {@link ceiling}; presentation: {@link ceilingMarkdown},
 * {@link ceilingSpec}.
 */
export * from './messages';
export * from './cost-curve';
export * from './cost-csv';
export * from './split-model';
export * from './end-to-end';
export * from './required-tile';
export * from './uncertainty';
export * from './sensitivity';
export * from './ceiling';
export * from './format-numbers';
export * from './markdown';
export * from './vega-spec';
export * from './schedule/index';
