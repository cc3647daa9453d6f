/**
 * Per-row-group cost of a kernel: a dispatch covers `rowsPerDispatch` rows
 * (the ubatch), so a group of `groupRows` rows costs
 * `dispatch_ms x groupRows / rowsPerDispatch` (mean-, median-, p10- and
 * p90-based). With `params` and `tokens`, a second, independent reading
 * from FLOPs: the GEMM kernels' rate `2 x params x tokens / GEMM time per
 * prefill`, and a group's FLOPs `2 x groupRows x N x K` (N, K from the
 * kernel name's MxNxK) over that rate.
 *
 * ```
 * planSources --kernel GLOB--> exactly one (capture, device) matches, else refuse
 *   --resolveSegments (always: per-segment counts; --segment picks)-->
 *   durationStatsSql (+ per segment) --> group_ms = dispatch_ns x G / U / 1e6
 *   [--params --tokens] GEMM time per selected prefill --> tflops --> group_ms_from_flops
 * ```
 */
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { planAnalysis } from './plan';
import { planSources, whereLabel, type SelectionOptions } from './selection';
import { DURATION_STATS_SHAPE, MATCHED_KERNEL_SHAPE, SEGMENT_DURATION_SHAPE, gemmShapeFromName } from './shapes';

/** M, N, K from a kernel name (tile sizes are not shapes): defined in shapes.ts, re-exported for old imports. */
export { gemmShapeFromName };
import { durationStatsBySegmentSql, durationStatsSql, kernelGlobSql, matchedKernelsSql } from './sql/cost';
import { sqlInt } from './sql/quote';
import { selectionSql, type SelectionSpec } from './sql/selection';

/** Options of {@link rowGroupCost}. */
export interface CostOptions extends SelectionOptions {
  /** Kernel name glob (case-sensitive; `*`, `?`, `[...]`). */
  readonly kernel: string;
  /** Rows one dispatch covers (the ubatch, e.g. 512). */
  readonly rowsPerDispatch: number;
  /** Rows of a group (default 256, the NPU tile). */
  readonly groupRows?: number | undefined;
  /** Weight parameters of the model (for the FLOP reading). */
  readonly params?: number | undefined;
  /** Tokens (rows) of one prefill (for the FLOP reading). */
  readonly tokens?: number | undefined;
  /** The GEMM kernels whose time makes the engine rate (default: matmul/gemm/mmt names with a `<rowsPerDispatch>xNxK` shape). */
  readonly gemmKernels?: string | undefined;
}

/** The FLOP reading. */
export interface FlopReading {
  readonly params: number;
  readonly tokens: number;
  /** How the GEMM kernels were chosen. */
  readonly gemm_kernels: string;
  readonly gemm_kernels_matched: readonly string[];
  /** Selected repetitions the GEMM time is divided over. */
  readonly prefills: number;
  /** 2 x params x tokens. */
  readonly flops_per_prefill: number;
  readonly gemm_time_ns_per_prefill: number;
  readonly tflops: number;
  /** M, N, K read from the kernel name (null when it has none). */
  readonly gemm_shape: { readonly m: number; readonly n: number; readonly k: number } | null;
  /** 2 x group_rows x N x K. */
  readonly group_flops: number | null;
  readonly group_ms_from_flops: number | null;
  /** group_ms / group_ms_from_flops. */
  readonly ratio: number | null;
  readonly note: string | null;
}

/** Result of {@link rowGroupCost}. */
export interface CostResult {
  readonly capture_id: number;
  readonly device: number;
  /** The glob as given. */
  readonly kernel: string;
  readonly matched_kernels: readonly { readonly kernel: string; readonly dispatch_count: number; readonly total_ns: bigint }[];
  readonly segment: string;
  /** Segments (repetitions) selected on this device. */
  readonly segments_selected: number;
  readonly dispatch_count: number;
  readonly per_segment: readonly { readonly segment: number; readonly dispatch_count: number; readonly mean_dispatch_ns: number; readonly median_dispatch_ns: number }[];
  readonly mean_dispatch_ns: number;
  readonly median_dispatch_ns: number;
  readonly p10_dispatch_ns: number;
  readonly p90_dispatch_ns: number;
  readonly min_dispatch_ns: bigint;
  readonly max_dispatch_ns: bigint;
  readonly rows_per_dispatch: number;
  readonly group_rows: number;
  /** mean_dispatch_ns x group_rows / rows_per_dispatch, in ms. */
  readonly group_ms: number;
  readonly group_ms_median: number;
  readonly group_ms_p10: number;
  readonly group_ms_p90: number;
  readonly flops: FlopReading | null;
  readonly excluded_dispatches: number;
}

function positiveInt(name: string, v: number): number {
  if (!(Number.isSafeInteger(v) && v > 0)) throw new TickwiseError('usage', analyzerMessages.badRows(name, v));
  return v;
}



/** SQL predicate of the default GEMM set: matmul/gemm/mmt names with a `<U>xNxK` shape. */
function defaultGemmPredicate(rows: number): string {
  return `regexp_matches(kernel, '(matmul|gemm|mmt)', 'i') AND regexp_matches(kernel, '(^|[_.\\- ])${sqlInt(rows)}x[0-9]+x[0-9]+($|[_.\\- ])') AND NOT regexp_matches(kernel, '(tile|tilesize|warp|warpsize|tensor|cta|block)_?${sqlInt(rows)}x[0-9]+x[0-9]+', 'i')`;
}

/**
 * The per-row-group cost of the dispatches matching `kernel` on one device
 * (the ceiling model's g). Refuses when the glob matches nothing or matches
 * dispatches on more than one device (give captureId/device).
 */
export async function rowGroupCost(store: Store, opts: CostOptions): Promise<CostResult> {
  const U = positiveInt('rows-per-dispatch', opts.rowsPerDispatch);
  const G = positiveInt('group-rows', opts.groupRows ?? 256);
  if ((opts.params === undefined) !== (opts.tokens === undefined)) throw new TickwiseError('usage', analyzerMessages.flopsNeedBoth());
  const glob = kernelGlobSql(opts.kernel);
  const sources = await planSources(store, opts);
  const matched = await store.query(MATCHED_KERNEL_SHAPE, matchedKernelsSql(selectionSql(sources.spec, undefined, glob)));
  const where = [...new Set(matched.map((m) => `${m.capture_id}/${m.device}`))];
  if (where.length === 0) {
    const examples = (await store.rows(`SELECT DISTINCT kernel FROM (${selectionSql(sources.spec)}) ORDER BY kernel LIMIT 8`)).map((r) => String(r['kernel']));
    throw new TickwiseError('no-match', analyzerMessages.costNoMatch(opts.kernel, examples));
  }
  if (where.length > 1) {
    const names = where.map((w) => {
      const [c, d] = w.split('/').map(Number);
      const dev = sources.devices.find((x) => x.capture_id === c && x.device === d);
      return whereLabel({ capture_id: c!, device: d!, label: dev?.label ?? '' });
    });
    throw new TickwiseError('ambiguous', analyzerMessages.costManyDevices(opts.kernel, names));
  }
  const capture_id = matched[0]!.capture_id;
  const device = matched[0]!.device;
  const plan = await planAnalysis(store, { captureId: capture_id, device, segment: opts.segment, reps: opts.reps }, 'always');
  const spec: SelectionSpec = plan.spec;
  const scope = { capture_id, device, queue: null };
  const sel = selectionSql(spec, scope, glob);
  const s = (await store.query(DURATION_STATS_SHAPE, durationStatsSql(sel)))[0]!;
  if (s.dispatch_count === 0 || s.mean_ns === null || s.median_ns === null || s.p10_ns === null || s.p90_ns === null) {
    throw new TickwiseError('no-match', analyzerMessages.noDispatchSelected(`--kernel ${opts.kernel} has no dispatches in --segment ${plan.segment}`));
  }
  const perSegment = await store.query(SEGMENT_DURATION_SHAPE, durationStatsBySegmentSql(sel));
  const kernels = await store.query(MATCHED_KERNEL_SHAPE, matchedKernelsSql(sel));
  // in this order, so exact inputs give the exact answer (1.2e6 ns x 256 / 512 / 1e6 = 0.6)
  const toGroupMs = (dispatchNs: number) => (dispatchNs * G) / U / 1e6;
  const group_ms = toGroupMs(s.mean_ns);
  const segmentsSelected = plan.resolved ? plan.resolved.ranges.filter((r) => r.capture_id === capture_id && r.device === device).length : 1;
  let flops: FlopReading | null = null;
  if (opts.params !== undefined && opts.tokens !== undefined) {
    const gemmGlob = opts.gemmKernels;
    const gemmWhere = gemmGlob === undefined ? defaultGemmPredicate(U) : kernelGlobSql(gemmGlob);
    const gemm = await store.query(MATCHED_KERNEL_SHAPE, matchedKernelsSql(selectionSql(spec, scope, gemmWhere)));
    const how = gemmGlob ?? `matmul/gemm/mmt kernels named with a ${U}xNxK shape`;
    if (gemm.length === 0) throw new TickwiseError('no-match', analyzerMessages.noGemmTime(how));
    const gemmNs = gemm.reduce((a, g) => a + Number(g.total_ns), 0) / segmentsSelected;
    const flopsPerPrefill = 2 * opts.params * opts.tokens;
    const tflops = flopsPerPrefill / gemmNs / 1e3;
    const shapes = [...new Set(kernels.map((k) => JSON.stringify(gemmShapeFromName(k.kernel ?? ''))))];
    const shape = shapes.length === 1 ? (JSON.parse(shapes[0]!) as FlopReading['gemm_shape']) : null;
    let note: string | null = null;
    if (!shape) note = shapes.length > 1 ? 'matched kernels have different shapes: no single group FLOP count' : 'kernel name carries no MxNxK shape: no group FLOP count';
    else if (shape.m !== U) note = `kernel name says M = ${shape.m}, but --rows-per-dispatch is ${U}`;
    const groupFlops = shape ? 2 * G * shape.n * shape.k : null;
    const fromFlops = groupFlops === null ? null : groupFlops / (tflops * 1e12) * 1e3;
    flops = {
      params: opts.params,
      tokens: opts.tokens,
      gemm_kernels: how,
      gemm_kernels_matched: gemm.map((g) => g.kernel ?? 'unknown'),
      prefills: segmentsSelected,
      flops_per_prefill: flopsPerPrefill,
      gemm_time_ns_per_prefill: gemmNs,
      tflops,
      gemm_shape: shape,
      group_flops: groupFlops,
      group_ms_from_flops: fromFlops,
      ratio: fromFlops === null ? null : group_ms / fromFlops,
      note,
    };
  }
  return {
    capture_id,
    device,
    kernel: opts.kernel,
    matched_kernels: kernels.map((k) => ({ kernel: k.kernel ?? 'unknown', dispatch_count: k.dispatch_count, total_ns: k.total_ns })),
    segment: plan.segment,
    segments_selected: segmentsSelected,
    dispatch_count: s.dispatch_count,
    per_segment: perSegment.map((p) => ({ segment: p.segment, dispatch_count: p.dispatch_count, mean_dispatch_ns: p.mean_ns, median_dispatch_ns: p.median_ns })),
    mean_dispatch_ns: s.mean_ns,
    median_dispatch_ns: s.median_ns,
    p10_dispatch_ns: s.p10_ns,
    p90_dispatch_ns: s.p90_ns,
    min_dispatch_ns: s.min_ns ?? 0n,
    max_dispatch_ns: s.max_ns ?? 0n,
    rows_per_dispatch: U,
    group_rows: G,
    group_ms,
    group_ms_median: toGroupMs(s.median_ns),
    group_ms_p10: toGroupMs(s.p10_ns),
    group_ms_p90: toGroupMs(s.p90_ns),
    flops,
    excluded_dispatches: plan.excluded_dispatches,
  };
}
