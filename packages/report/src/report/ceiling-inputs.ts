/**
 * The split ceiling's inputs for a report: given on the command line, or
 * derived from the store when it can be done without guessing, by
 * `@tickwise/inputs`' ceilingInputs (the same function `tickwise ceiling`
 * calls); the model is `@tickwise/ceiling`'s `ceiling()`.
 *
 * ```
 * g (iGPU ms per G-row group) : --gpu-group-ms, else kernelCost(--gpu-kernel | derived)
 * t (NPU ms per G-row tile)   : --npu-tile-ms,  else kernelCost(--npu-kernel | derived)
 * M (rows of the GEMM)        : --rows, else the prompt length of the store's wall references (one value)
 * derived kernels             : an NPU GEMM named  <Mn>xNxK and the iGPU GEMMs named <Mg>xNxK
 *                               with the same N and K (the same weight matrix), among the report's kernels
 * rows per dispatch           : --gpu/npu-rows-per-dispatch, else the M in the kernel's name
 * segments                    : steady where the device repeats, else all
 * ```
 */
import { globMatch } from '@tickwise/analyzer';
import { ceiling } from '@tickwise/ceiling';
import { DEFAULT_TARGET_SPEEDUP, ceilingInputs, globLiteral } from '@tickwise/inputs';
import type { Store } from '@tickwise/store';
import type { ReportCeiling, ReportDevice, ReportKernel } from './model';

export { DEFAULT_TARGET_SPEEDUP, globLiteral };

/** What the user gave for the ceiling (all optional). */
export interface CeilingOptions {
  readonly gpuKernel?: string | undefined;
  readonly gpuRowsPerDispatch?: number | undefined;
  readonly gpuGroupMs?: number | undefined;
  readonly npuKernel?: string | undefined;
  readonly npuRowsPerDispatch?: number | undefined;
  readonly npuTileMs?: number | undefined;
  readonly rows?: number | undefined;
  /** G (default 256). */
  readonly groupRows?: number | undefined;
  /** Default 1.15: the per-GEMM win the required-tile bar asks for. */
  readonly targetSpeedup?: number | undefined;
  readonly splittableFraction?: number | undefined;
  readonly syncOverheadMs?: number | undefined;
}

/**
 * Resolves the inputs and runs the model. Explicit options that fail (a glob
 * that matches nothing) are errors; derivations that fail become the
 * `missing` list, so a report without ceiling inputs still renders.
 */
export async function resolveCeiling(
  store: Store,
  opts: CeilingOptions,
  devices: readonly ReportDevice[],
  kernels: readonly ReportKernel[],
): Promise<ReportCeiling> {
  const r = await ceilingInputs(store, {
    gpu: {
      number: opts.gpuGroupMs === undefined ? undefined : { ms: opts.gpuGroupMs, line: `--gpu-group-ms ${opts.gpuGroupMs}` },
      kernel: opts.gpuKernel,
      rowsPerDispatch: opts.gpuRowsPerDispatch === undefined ? undefined : [opts.gpuRowsPerDispatch],
    },
    npu: {
      number: opts.npuTileMs === undefined ? undefined : { ms: opts.npuTileMs, line: `--npu-tile-ms ${opts.npuTileMs}` },
      kernel: opts.npuKernel,
      rowsPerDispatch: opts.npuRowsPerDispatch === undefined ? undefined : [opts.npuRowsPerDispatch],
    },
    rows: opts.rows,
    groupRows: opts.groupRows,
    targetSpeedup: opts.targetSpeedup ?? DEFAULT_TARGET_SPEEDUP,
    splittableFraction: opts.splittableFraction === undefined ? undefined : { value: opts.splittableFraction, line: `--splittable-fraction ${opts.splittableFraction}` },
    syncOverheadMs: opts.syncOverheadMs,
    derive: { devices, kernels },
  });
  if (r.kind === 'missing') return { kind: 'missing', missing: [...r.missing], found: [...r.found] };
  return { kind: 'result', result: ceiling(r.input), inputs: [...r.found] };
}

/** DuckDB's GLOB (one implementation, in the analyzer), for picking kernels from names already loaded. */
export const globMatches = globMatch;
