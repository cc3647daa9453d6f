/**
 * The split ceiling's inputs from measurements: each engine's cost per
 * G-row group from a typed number, a curve (a CSV sweep), captures (one
 * point per capture), or, for a report, derived from the store's kernels;
 * M from the options, the iGPU's rows per dispatch, or the store's wall
 * reference; the splittable fraction typed or `auto` (from the iGPU capture).
 * Every number comes with its source line. `tickwise ceiling` and the report
 * both call {@link ceilingInputs}; the model is `@tickwise/ceiling`'s `ceiling()`.
 *
 * ```
 * g (iGPU ms per G-row group) : number | curve | captures (kernelCost per capture) | derived
 * t (NPU ms per G-row tile)   : number | curve | captures                          | derived
 * M (rows of the GEMM)        : rows, else the one iGPU capture's rows per dispatch, else the wall reference's prompt
 * derived kernels             : an NPU GEMM named <Mn>xNxK and the iGPU GEMMs named <Mg>xNxK with the same N and K
 * ```
 */
import { gemmShapeFromName, globMatch, planSources, type CostResult } from '@tickwise/analyzer';
import {
  constantCost, costCurve, formatFraction, formatMs, type CeilingInput, type CostPoint, type CostSource, type EngineCost,
} from '@tickwise/ceiling';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { captureCost, kernelCost, type CaptureCost } from './kernel-cost';

/** The two engines of the split. */
export type SplitEngine = 'gpu' | 'npu';
const ENGINE_NAME: Record<SplitEngine, string> = { gpu: 'iGPU', npu: 'NPU' };

/** A capture to cost a kernel in: its own store (one per input file), named as the user gave it. */
export interface CaptureInput {
  readonly store: Store;
  readonly input: string;
}

/** Which part of a capture to read. */
export interface CaptureSelection {
  readonly captureId?: number | undefined;
  readonly device?: number | undefined;
  /** all | first | last | steady | N; default: steady where the device repeats, else all (said in a note). */
  readonly segment?: string | undefined;
  readonly reps?: number | undefined;
}

/** One engine's cost: exactly one of number, curve, captures; or nothing (derived, for a report). */
export interface EngineCostOptions {
  /** A typed cost with its source line (`--gpu-group-ms 0.40`). */
  readonly number?: {
    readonly ms: number; readonly p10_ms?: number | undefined; readonly p90_ms?: number | undefined;
    /** Where it came from (`--gpu-group-ms 0.40 (p10 0.36, p90 0.46)`). */
    readonly line: string;
    /** What a validation message calls it (default: the engine's cost). */
    readonly what?: string | undefined;
  } | undefined;
  /** A cost curve in rows (e.g. `parseCostCsv` of a sweep). */
  readonly curve?: EngineCost | undefined;
  /** Capture inputs to cost `kernel` in: one point each, at its rows per dispatch (several make a curve). */
  readonly captures?: readonly CaptureInput[] | undefined;
  /** Kernel glob (DuckDB GLOB). With `captures`: required. Without: costed in the shared store (the report). */
  readonly kernel?: string | undefined;
  /** Rows one dispatch covers: one value, or one per capture. Default (derived): the M of the kernel names. */
  readonly rowsPerDispatch?: readonly number[] | undefined;
  readonly selection?: CaptureSelection | undefined;
  /** How the options are spelled, for notes (default `--gpu`/`--npu`). */
  readonly option?: string | undefined;
}

/** Options of {@link ceilingInputs}. */
export interface CeilingInputOptions {
  readonly gpu?: EngineCostOptions | undefined;
  readonly npu?: EngineCostOptions | undefined;
  /** M, with its source line when typed. */
  readonly rows?: number | undefined;
  /** G (default 256). */
  readonly groupRows?: number | undefined;
  /** Join/sync cost, ms. */
  readonly syncOverheadMs?: number | undefined;
  /** A share in [0, 1] with its source line, or `auto` (the matched kernels' time over the iGPU capture's prefill span). */
  readonly splittableFraction?: { readonly value: number; readonly line: string } | 'auto' | undefined;
  readonly targetSpeedup?: number | null | undefined;
  /**
   * Derive what is not given from the shared store (the report): kernels by
   * shape, M from a wall reference. `true` reads the store's devices and
   * kernels; a report passes the ones it lists (its order decides the pairing).
   */
  readonly derive?: boolean | DeriveFrom | undefined;
}

/** What {@link ceilingInputs} found: the model's input, or the list of what is missing. */
export type CeilingInputs =
  | {
      readonly kind: 'inputs';
      readonly input: CeilingInput;
      /** One line per input: where it came from. */
      readonly found: readonly string[];
      /** Things to say beside the result (a capture with one segment, M taken from the rows per dispatch). */
      readonly notes: readonly string[];
      /** The capture inputs costed, per engine. */
      readonly captures: { readonly gpu: readonly CaptureCost[]; readonly npu: readonly CaptureCost[] };
    }
  | { readonly kind: 'missing'; readonly missing: readonly string[]; readonly found: readonly string[] };

/** Default target of the required-tile bar in a report: a 15 % per-GEMM win (domain.md's question). */
export const DEFAULT_TARGET_SPEEDUP = 1.15;

/** A glob that matches exactly one literal name (GLOB's `* ? [` escaped as classes). */
export function globLiteral(name: string): string {
  return name.replace(/[*?[]/g, (c) => `[${c}]`);
}

function usage(message: string): TickwiseError {
  return new TickwiseError('usage', message);
}

/**
 * Checks what costing captures needs (a kernel glob, rows per dispatch: one,
 * or one per capture) before any capture is read.
 */
export function checkCaptureOptions(engine: SplitEngine, o: { kernel?: string | undefined; rowsPerDispatch?: readonly number[] | undefined; captures: number; option?: string | undefined }): void {
  const opt = o.option ?? `--${engine}`;
  const rpd = o.rowsPerDispatch ?? [];
  if (!o.kernel) throw usage(`${opt} needs ${opt}-kernel GLOB (the GEMM kernels to cost)`);
  if (rpd.length === 0) throw usage(`${opt} needs ${opt}-rows-per-dispatch N (the rows one dispatch covers, e.g. the ubatch)`);
  if (rpd.length !== 1 && rpd.length !== o.captures) throw usage(`${opt}-rows-per-dispatch: give one value, or one per ${opt} input (${o.captures})`);
}

/** Per-group costs from capture inputs: one point per input at its rows per dispatch; one is a constant, several a curve. */
async function fromCaptures(engine: SplitEngine, o: EngineCostOptions, groupRows: number): Promise<{ cost: EngineCost; captures: CaptureCost[] }> {
  const opt = o.option ?? `--${engine}`;
  const inputs = o.captures ?? [];
  const rpd = o.rowsPerDispatch ?? [];
  checkCaptureOptions(engine, { ...o, captures: inputs.length });
  const kernel = o.kernel!;
  const sel = o.selection ?? {};
  const got: CaptureCost[] = [];
  for (let i = 0; i < inputs.length; i++) {
    const c = inputs[i]!;
    got.push(await captureCost(c.store, c.input, {
      kernel, rowsPerDispatch: rpd.length === 1 ? rpd[0]! : rpd[i]!, groupRows,
      captureId: sel.captureId, device: sel.device, reps: sel.reps, segment: sel.segment,
    }, { where: c.input, options: `${opt}-segment, ${opt}-reps` }));
  }
  const points: CostPoint[] = got.map((g) => ({ rows: g.cost.rows_per_dispatch, ms: g.cost.group_ms, p10_ms: g.cost.group_ms_p10, p90_ms: g.cost.group_ms_p90 }));
  const parts = got.map((g) => {
    const c = g.cost;
    return `${g.provenance.replace(/^# /, '')}: device ${c.device}, kernel ${c.kernel} (${c.matched_kernels.map((k) => k.kernel).join(', ')}), ` +
      `segment ${c.segment} (${c.segments_selected} selected), ${c.dispatch_count} dispatches of ${c.rows_per_dispatch} rows, ` +
      `mean ${formatMs(c.mean_dispatch_ns / 1e6)} ms -> ${formatMs(c.group_ms)} ms per ${c.group_rows}-row group (p10 ${formatMs(c.group_ms_p10)}, p90 ${formatMs(c.group_ms_p90)})`;
  });
  const details = got.map((g) => ({
    input: g.input, capture: g.capture, provenance: g.provenance, device: g.cost.device, kernel: g.cost.kernel,
    matched_kernels: g.cost.matched_kernels, segment: g.cost.segment, segments_selected: g.cost.segments_selected,
    dispatch_count: g.cost.dispatch_count, rows_per_dispatch: g.cost.rows_per_dispatch, mean_dispatch_ns: g.cost.mean_dispatch_ns,
    group_ms: g.cost.group_ms, group_ms_p10: g.cost.group_ms_p10, group_ms_p90: g.cost.group_ms_p90,
    excluded_dispatches: g.cost.excluded_dispatches, note: g.segment_note,
  }));
  const source: CostSource = { from: inputs.length === 1 ? 'capture' : 'captures', line: parts.join('; '), details: { captures: details } };
  if (points.length === 1) {
    const p = points[0]!;
    return { cost: constantCost(p.ms, { p10_ms: p.p10_ms, p90_ms: p.p90_ms, source, what: `${ENGINE_NAME[engine]} cost` }), captures: got };
  }
  return { cost: costCurve(points, { source, what: `${ENGINE_NAME[engine]} cost curve` }), captures: got };
}

/** The splittable fraction `auto`: the iGPU kernels' share of the prefill span (the capture whose rows per dispatch is nearest M). */
function autoFraction(gpu: readonly CaptureCost[], rows: number): { value: number; source: CostSource } {
  if (gpu.length === 0) throw usage('--splittable-fraction auto reads the prefill from the --gpu capture; give --gpu, or a number (0.6 or 60%)');
  const g = [...gpu].sort((a, b) => Math.abs(a.cost.rows_per_dispatch - rows) - Math.abs(b.cost.rows_per_dispatch - rows))[0]!;
  const share = g.prefill_share;
  if (share === null) throw new TickwiseError('no-span', `--splittable-fraction auto: ${g.input} has no prefill span for the selected segments; give the fraction as a number`);
  const value = Math.min(1, share.kernel_ns / share.span_ns);
  return {
    value,
    source: {
      from: 'capture',
      line: `auto: ${g.provenance.replace(/^# /, '')}: kernels ${g.cost.kernel} take ${formatMs(share.kernel_ns / 1e6)} ms of ${formatMs(share.span_ns / 1e6)} ms ` +
        `of prefill span over ${share.segments} segment${share.segments === 1 ? '' : 's'} (${g.cost.segment}) = ${formatFraction(value)} (summed kernel time over the device span)`,
      details: { input: g.input, capture_id: g.cost.capture_id, device: g.cost.device, kernel: g.cost.kernel, kernel_ns: share.kernel_ns, span_ns: share.span_ns, segments: share.segments },
    },
  };
}

/** The devices and kernels a derivation picks from. */
export interface DeriveFrom {
  readonly devices: readonly KindedDevice[];
  readonly kernels: readonly { readonly capture_id: number; readonly device: number; readonly kernel: string }[];
}

/** A device of the shared store, with its kind and the label lines name it by. */
export interface KindedDevice {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
  readonly label: string;
}

function isGemm(kernel: string): boolean {
  return /(matmul|gemm|mmt)/i.test(kernel) && gemmShapeFromName(kernel) !== null;
}

const fmt4 = (ms: number) => ms.toPrecision(4);

function derivedLine(what: string, c: CostResult, d: KindedDevice | undefined): string {
  const where = d ? d.label : `capture ${c.capture_id} device ${c.device}`;
  return `${what}: ${c.kernel} on ${where}, ${c.dispatch_count} dispatches of ${c.rows_per_dispatch} rows (segment ${c.segment}): ` +
    `${fmt4(c.group_ms)} ms per ${c.group_rows}-row group (p10 ${fmt4(c.group_ms_p10)}, p90 ${fmt4(c.group_ms_p90)})`;
}

/** The shared store's kernels per device, with the device's kind and label. */
async function storeKernels(store: Store): Promise<DeriveFrom> {
  const plan = await planSources(store);
  const KIND: Record<string, string> = { gpu: 'iGPU', npu: 'NPU', cpu: 'CPU' };
  const devices = plan.devices.map((d) => ({ capture_id: d.capture_id, device: d.device, kind: d.kind, label: `${KIND[d.kind] ?? d.kind} · ${d.label.split('/').pop()!} (capture ${d.capture_id}, device ${d.device})` }));
  const kernels = await store.query({ capture_id: 'number', device: 'number', kernel: 'string' },
    `SELECT DISTINCT capture_id, device, kernel FROM dispatches WHERE kernel IS NOT NULL ORDER BY capture_id, device, kernel`);
  return { devices, kernels };
}

/** One engine's cost derived from the shared store (the report): the given glob, else the GEMM pairing. */
async function derivedCost(
  store: Store, engine: SplitEngine, o: EngineCostOptions, groupRows: number, shared: DeriveFrom, missing: string[],
): Promise<{ cost: EngineCost; line: string } | null> {
  const { devices, kernels } = shared;
  const byKey = (c: number, d: number) => devices.find((x) => x.capture_id === c && x.device === d);
  const ofKind = (kind: string) => kernels.filter((k) => byKey(k.capture_id, k.device)?.kind === kind && isGemm(k.kernel));
  const npuK = ofKind('npu');
  const gpuK = ofKind('gpu');
  // the weight matrix shared by an NPU GEMM and iGPU GEMMs (same N x K)
  let pair: { npu: (typeof npuK)[number]; gpu: typeof gpuK } | null = null;
  for (const n of npuK) {
    const ns = gemmShapeFromName(n.kernel)!;
    const gs = gpuK.filter((g) => { const s = gemmShapeFromName(g.kernel)!; return s.n === ns.n && s.k === ns.k; });
    if (gs.length > 0) { pair = { npu: n, gpu: gs }; break; }
  }
  const given = o.kernel;
  const U0 = o.rowsPerDispatch?.[0];
  let glob = given;
  let where: { captureId: number; device: number } | null = null;
  let how = engine === 'gpu' ? 'iGPU (--gpu-kernel)' : 'NPU (--npu-kernel)';
  if (glob === undefined && pair) {
    if (engine === 'gpu') {
      const shape = gemmShapeFromName(pair.gpu[0]!.kernel)!;
      const sameM = pair.gpu.every((k) => gemmShapeFromName(k.kernel)!.m === shape.m);
      glob = pair.gpu.length === 1 || !sameM ? globLiteral(pair.gpu[0]!.kernel) : `*${shape.m}x${shape.n}x${shape.k}*`;
      where = { captureId: pair.gpu[0]!.capture_id, device: pair.gpu[0]!.device };
      how = `iGPU (derived: the GEMM with the NPU kernel's N x K = ${shape.n} x ${shape.k})`;
    } else {
      glob = globLiteral(pair.npu.kernel);
      how = 'NPU (derived: the NPU capture\'s GEMM)';
    }
  }
  if (glob === undefined) {
    missing.push(engine === 'gpu' ? 'the iGPU cost: --gpu-kernel GLOB (with --gpu-rows-per-dispatch N) or --gpu-group-ms MS' : 'the NPU tile: --npu-tile-ms MS, or an NPU capture in the store (--npu-kernel GLOB)');
    return null;
  }
  const matched = kernels.filter((k) => (engine === 'npu' ? byKey(k.capture_id, k.device)?.kind === 'npu' : byKey(k.capture_id, k.device)?.kind !== 'npu') && globMatch(glob!, k.kernel));
  const ms = [...new Set(matched.map((k) => gemmShapeFromName(k.kernel)?.m))];
  const fromName = ms.length === 1 && ms[0] !== undefined ? ms[0] : undefined;
  const U = U0 ?? fromName ?? (engine === 'npu' ? groupRows : undefined);
  if (U === undefined) {
    if (given !== undefined) throw usage(`--gpu-kernel ${given}: give --gpu-rows-per-dispatch N (the rows one dispatch covers; the kernel names do not say)`);
    missing.push('the iGPU rows per dispatch: --gpu-rows-per-dispatch N');
    return null;
  }
  const at = where ?? (matched[0] ? { captureId: matched[0].capture_id, device: matched[0].device } : null);
  const k = await kernelCost(store, {
    kernel: glob, rowsPerDispatch: U, groupRows, ...(at ?? {}),
    segment: o.selection?.segment, reps: o.selection?.reps,
  }, { where: at ? byKey(at.captureId, at.device)?.label ?? glob : glob, options: '--segment' });
  const c = k.cost;
  const line = derivedLine(how, c, byKey(c.capture_id, c.device));
  const source: CostSource = { from: 'capture', line };
  return { cost: constantCost(c.group_ms, { p10_ms: c.group_ms_p10, p90_ms: c.group_ms_p90, what: `${ENGINE_NAME[engine]} cost`, source }), line };
}

/**
 * The ceiling's inputs (see the module comment). Explicit options that fail
 * (a glob that matches nothing) are errors; with `derive`, derivations that
 * fail become the `missing` list (a report without ceiling inputs still
 * renders); without it, a missing input is a usage error.
 */
export async function ceilingInputs(store: Store | null, opts: CeilingInputOptions): Promise<CeilingInputs> {
  const G = opts.groupRows ?? 256;
  const found: string[] = [];
  const missing: string[] = [];
  const notes: string[] = [];
  const captures: { gpu: CaptureCost[]; npu: CaptureCost[] } = { gpu: [], npu: [] };
  const shared = !opts.derive || !store ? null : opts.derive === true ? await storeKernels(store) : opts.derive;
  const costs: Partial<Record<SplitEngine, EngineCost>> = {};
  for (const engine of ['gpu', 'npu'] as const) {
    const o = opts[engine] ?? {};
    let cost: EngineCost | null = null;
    if (o.number) {
      const n = o.number;
      cost = constantCost(n.ms, { p10_ms: n.p10_ms, p90_ms: n.p90_ms, what: n.what ?? `${ENGINE_NAME[engine]} cost`, source: { from: 'number', line: n.line } });
      found.push(`${ENGINE_NAME[engine]}: ${n.line}`);
    } else if (o.curve) {
      cost = o.curve;
      found.push(`${ENGINE_NAME[engine]}: ${o.curve.source?.line ?? 'a cost curve'}`);
    } else if (o.captures && o.captures.length > 0) {
      const r = await fromCaptures(engine, o, G);
      cost = r.cost;
      captures[engine] = r.captures;
      for (const c of r.captures) if (c.segment_note) notes.push(c.segment_note);
      found.push(r.cost.source!.line);
    } else if (shared && store) {
      const r = await derivedCost(store, engine, o, G, shared, missing);
      if (r) {
        cost = r.cost;
        found.push(r.line);
      }
    } else {
      missing.push(`the ${ENGINE_NAME[engine]} cost`);
    }
    if (cost) costs[engine] = cost;
  }

  let M = opts.rows;
  if (M !== undefined) found.push(`M: --rows ${M}`);
  else {
    const g = opts.gpu;
    if (g?.captures?.length === 1 && g.rowsPerDispatch?.length === 1) {
      M = g.rowsPerDispatch[0]!;
      notes.push(`M taken from --gpu-rows-per-dispatch (${M}): the GEMM as the iGPU runs it today`);
    } else if (opts.derive && store) {
      const prompts = (await store.rows(`SELECT DISTINCT n_prompt FROM wall_refs WHERE n_prompt > 0`)).map((r) => Number(r['n_prompt']));
      if (prompts.length === 1) {
        M = prompts[0]!;
        found.push(`M: ${M} rows, the prompt of the store's wall reference (llama-bench n_prompt)`);
      }
    }
    if (M === undefined) missing.push('the rows to split: --rows M (e.g. the prompt length, 8192)');
  }

  let fraction: { value: number; source: CostSource } | null = null;
  const f = opts.splittableFraction;
  if (f === 'auto') fraction = M === undefined ? null : autoFraction(captures.gpu, M);
  else if (f !== undefined) fraction = { value: f.value, source: { from: 'number', line: f.line } };

  if (!costs.gpu || !costs.npu || M === undefined) return { kind: 'missing', missing, found };
  return {
    kind: 'inputs',
    input: {
      rows: M,
      group_rows: G,
      gpu: costs.gpu,
      npu: costs.npu,
      target_speedup: opts.targetSpeedup ?? null,
      ...(fraction ? { splittable_fraction: fraction.value, splittable_fraction_source: fraction.source } : {}),
      ...(opts.syncOverheadMs !== undefined ? { sync_overhead_ms: opts.syncOverheadMs } : {}),
    },
    found,
    notes,
    captures,
  };
}
