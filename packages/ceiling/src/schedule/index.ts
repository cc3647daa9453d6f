/**
 * The schedule model: the stage graph of one micro-batched prefill, the
 * strategies that place its stages on the engines (all-iGPU, per-GEMM row
 * split, HEFT pipelining, exhaustive search), error bars and energy. Pure:
 * no I/O. Entry point: {@link scheduleModel}; chart: {@link scheduleGanttSpec}.
 */
export * from './messages';
export * from './rng';
export * from './graph';
export * from './stages';
export * from './schedule';
export * from './strategies';
export * from './exhaustive';
export * from './measured';
export * from './bootstrap';
export * from './energy';
export * from './model';
export * from './gantt-spec';
