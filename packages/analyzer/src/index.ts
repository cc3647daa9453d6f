/** @tickwise/analyzer: Analyses over the store: segments, gaps, overlap, kernels, row-group cost, checks. */
export * from './checks/index';
