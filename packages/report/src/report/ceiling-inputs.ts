/**
 * The split ceiling's inputs for a report: given on the command line, or
 * derived from the store when it can be done without guessing.
 *
 * ```
 * g (iGPU ms per G-row group) : --gpu-group-ms, else rowGroupCost(--gpu-kernel | derived)
 * t (NPU ms per G-row tile)   : --npu-tile-ms,  else rowGroupCost(--npu-kernel | derived)
 * M (rows of the GEMM)        : --rows, else the prompt length of the store's wall references (one value)
 * derived kernels             : an NPU GEMM named  <Mn>xNxK and the iGPU GEMMs named <Mg>xNxK
 *                               with the same N and K (the same weight matrix)
 * rows per dispatch           : --gpu/npu-rows-per-dispatch, else the M in the kernel's name
 * ```
 */
import { gemmShapeFromName, globMatch, rowGroupCost, type CostResult } from '@tickwise/analyzer';
import { ceiling, constantCost, type CeilingInput, type CeilingResult } from '@tickwise/ceiling';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { ReportCeiling, ReportDevice, ReportKernel } from './model';

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

/** Default target of the required-tile bar: a 15 % per-GEMM win (domain.md's question). */
export const DEFAULT_TARGET_SPEEDUP = 1.15;

/** A glob that matches exactly one literal name (GLOB's `* ? [` escaped as classes). */
export function globLiteral(name: string): string {
  return name.replace(/[*?[]/g, (c) => `[${c}]`);
}

function isGemm(kernel: string): boolean {
  return /(matmul|gemm|mmt)/i.test(kernel) && gemmShapeFromName(kernel) !== null;
}

function fmt(ms: number): string {
  return ms.toPrecision(4);
}

function costLine(what: string, c: CostResult, device: ReportDevice | undefined): string {
  const where = device ? device.label : `capture ${c.capture_id} device ${c.device}`;
  return `${what}: ${c.kernel} on ${where}, ${c.dispatch_count} dispatches of ${c.rows_per_dispatch} rows (segment ${c.segment}): ` +
    `${fmt(c.group_ms)} ms per ${c.group_rows}-row group (p10 ${fmt(c.group_ms_p10)}, p90 ${fmt(c.group_ms_p90)})`;
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
  const G = opts.groupRows ?? 256;
  const found: string[] = [];
  const missing: string[] = [];
  const byKey = (capture_id: number, device: number) => devices.find((d) => d.capture_id === capture_id && d.device === device);

  const npuKernels = kernels.filter((k) => byKey(k.capture_id, k.device)?.kind === 'npu' && isGemm(k.kernel));
  const gpuKernels = kernels.filter((k) => byKey(k.capture_id, k.device)?.kind === 'gpu' && isGemm(k.kernel));
  // the weight matrix shared by an NPU GEMM and iGPU GEMMs (same N x K)
  const pair = (() => {
    for (const n of npuKernels) {
      const ns = gemmShapeFromName(n.kernel)!;
      const gs = gpuKernels.filter((g) => { const s = gemmShapeFromName(g.kernel)!; return s.n === ns.n && s.k === ns.k; });
      if (gs.length > 0) return { npu: n, gpu: gs };
    }
    return null;
  })();

  let g: { ms: number; p10: number | undefined; p90: number | undefined; line: string } | null = null;
  if (opts.gpuGroupMs !== undefined) {
    g = { ms: opts.gpuGroupMs, p10: undefined, p90: undefined, line: `iGPU: --gpu-group-ms ${opts.gpuGroupMs}` };
  } else {
    let glob = opts.gpuKernel;
    let where: { captureId?: number; device?: number } = {};
    let how = 'iGPU (--gpu-kernel)';
    if (glob === undefined && pair) {
      const shape = gemmShapeFromName(pair.gpu[0]!.kernel)!;
      const sameM = pair.gpu.every((k) => gemmShapeFromName(k.kernel)!.m === shape.m);
      glob = pair.gpu.length === 1 || !sameM ? globLiteral(pair.gpu[0]!.kernel) : `*${shape.m}x${shape.n}x${shape.k}*`;
      where = { captureId: pair.gpu[0]!.capture_id, device: pair.gpu[0]!.device };
      how = `iGPU (derived: the GEMM with the NPU kernel's N x K = ${shape.n} x ${shape.k})`;
    }
    if (glob === undefined) {
      missing.push('the iGPU cost: --gpu-kernel GLOB (with --gpu-rows-per-dispatch N) or --gpu-group-ms MS');
    } else {
      const matched = kernels.filter((k) => byKey(k.capture_id, k.device)?.kind !== 'npu' && globMatches(glob!, k.kernel));
      const shapes = [...new Set(matched.map((k) => gemmShapeFromName(k.kernel)?.m))];
      const U = opts.gpuRowsPerDispatch ?? (shapes.length === 1 && shapes[0] !== undefined ? shapes[0] : undefined);
      if (U === undefined) {
        if (opts.gpuKernel !== undefined) {
          throw new TickwiseError('usage', `--gpu-kernel ${opts.gpuKernel}: give --gpu-rows-per-dispatch N (the rows one dispatch covers; the kernel names do not say)`);
        }
        missing.push('the iGPU rows per dispatch: --gpu-rows-per-dispatch N');
      } else {
        const dev = where.captureId !== undefined ? byKey(where.captureId, where.device!) : matched[0] ? byKey(matched[0].capture_id, matched[0].device) : undefined;
        const c = await rowGroupCost(store, {
          kernel: glob, rowsPerDispatch: U, groupRows: G, segment: dev?.steady_choice ?? 'all',
          ...(dev ? { captureId: dev.capture_id, device: dev.device } : {}),
        });
        g = { ms: c.group_ms, p10: c.group_ms_p10, p90: c.group_ms_p90, line: costLine(how, c, byKey(c.capture_id, c.device)) };
      }
    }
  }
  if (g) found.push(g.line);

  let t: { ms: number; p10: number | undefined; p90: number | undefined; line: string } | null = null;
  if (opts.npuTileMs !== undefined) {
    t = { ms: opts.npuTileMs, p10: undefined, p90: undefined, line: `NPU: --npu-tile-ms ${opts.npuTileMs}` };
  } else {
    const glob = opts.npuKernel ?? (pair ? globLiteral(pair.npu.kernel) : undefined);
    if (glob === undefined) {
      missing.push('the NPU tile: --npu-tile-ms MS, or an NPU capture in the store (--npu-kernel GLOB)');
    } else {
      const matched = kernels.filter((k) => byKey(k.capture_id, k.device)?.kind === 'npu' && globMatches(glob, k.kernel));
      const ms = [...new Set(matched.map((k) => gemmShapeFromName(k.kernel)?.m))];
      const U = opts.npuRowsPerDispatch ?? (ms.length === 1 && ms[0] !== undefined ? ms[0] : G);
      const dev = matched[0] ? byKey(matched[0].capture_id, matched[0].device) : undefined;
      const c = await rowGroupCost(store, {
        kernel: glob, rowsPerDispatch: U, groupRows: G, segment: dev?.steady_choice ?? 'all',
        ...(dev ? { captureId: dev.capture_id, device: dev.device } : {}),
      });
      t = { ms: c.group_ms, p10: c.group_ms_p10, p90: c.group_ms_p90, line: costLine(opts.npuKernel ? 'NPU (--npu-kernel)' : 'NPU (derived: the NPU capture\'s GEMM)', c, byKey(c.capture_id, c.device)) };
    }
  }
  if (t) found.push(t.line);

  let M = opts.rows;
  if (M !== undefined) found.push(`M: --rows ${M}`);
  else {
    const prompts = (await store.rows(`SELECT DISTINCT n_prompt FROM wall_refs WHERE n_prompt > 0`)).map((r) => Number(r['n_prompt']));
    if (prompts.length === 1) {
      M = prompts[0]!;
      found.push(`M: ${M} rows, the prompt of the store's wall reference (llama-bench n_prompt)`);
    } else missing.push('the rows to split: --rows M (e.g. the prompt length, 8192)');
  }

  if (!g || !t || M === undefined) return { kind: 'missing', missing, found };
  const input: CeilingInput = {
    rows: M,
    group_rows: G,
    gpu: constantCost(g.ms, { p10_ms: g.p10, p90_ms: g.p90, what: 'iGPU cost', source: { from: opts.gpuGroupMs !== undefined ? 'number' : 'capture', line: g.line } }),
    npu: constantCost(t.ms, { p10_ms: t.p10, p90_ms: t.p90, what: 'NPU cost', source: { from: opts.npuTileMs !== undefined ? 'number' : 'capture', line: t.line } }),
    target_speedup: opts.targetSpeedup ?? DEFAULT_TARGET_SPEEDUP,
    ...(opts.splittableFraction !== undefined ? { splittable_fraction: opts.splittableFraction, splittable_fraction_source: { from: 'number', line: `--splittable-fraction ${opts.splittableFraction}` } } : {}),
    ...(opts.syncOverheadMs !== undefined ? { sync_overhead_ms: opts.syncOverheadMs } : {}),
  };
  const result: CeilingResult = ceiling(input);
  return { kind: 'result', result, inputs: found };
}

/** DuckDB's GLOB (one implementation, in the analyzer), for picking kernels from names already loaded. */
export const globMatches = globMatch;
