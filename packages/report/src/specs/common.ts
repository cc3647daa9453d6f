/** Shared pieces of the report's Vega-Lite specs (pure). */

/** A Vega-Lite spec as plain JSON (checked by compiling it in the tests). */
export type VegaLiteSpec = Record<string, unknown>;

/** The Vega-Lite schema the specs are written against (vega-lite 6). */
export const VEGA_LITE_SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

/** Six significant digits: enough for drawing, stable for goldens. */
export function r6(x: number): number {
  return Number(x.toPrecision(6));
}

/** Nanoseconds (exact) to a chart's milliseconds (lossy, for drawing only), relative to `origin`. */
export function msSince(ns: bigint, origin: bigint): number {
  return r6(Number(ns - origin) / 1e6);
}

/** Colours of device kinds, fixed so iGPU and NPU look the same in every chart. */
export const KIND_COLORS = { domain: ['gpu', 'npu', 'cpu', 'unknown'], range: ['#4c78a8', '#f58518', '#54a24b', '#9d9d9d'] } as const;

/** Colours of gap classes. */
export const CLASS_COLORS = { domain: ['between submissions', 'inside a submission'], range: ['#4c78a8', '#e45756'] } as const;

/** Chart width of full-width panels, px. */
export const FULL_WIDTH = 880;
