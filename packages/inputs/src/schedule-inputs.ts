/**
 * The schedule model's inputs from captures: the iGPU capture's stages,
 * structure (layers x micro-batches) and segments; the NPU's GEMM tiles (a
 * capture), or a typed tile time; the handoff between engines (typed, else
 * the NPU's measured host turnaround, else 0 with a note); power (typed,
 * else measured); and the capture span the all-iGPU model should reproduce.
 * `tickwise schedule` and `tickwise report --schedule` both call
 * {@link scheduleInputs}; the model is `@tickwise/ceiling`'s `scheduleModel`.
 *
 * ```
 *  store ──scheduleDevices (by kind, else by content)──> iGPU device, NPU device
 *        ──stageSamples (iGPU)──> stages, layers x ubatches, dispatches, power
 *  npu store (or the same) ──kernelSamples──> tile times per GEMM shape, host turnaround
 *    └─> measuredStages (tile matching, FLOP scaling) + handoff + power + capture span
 *    └─> ScheduleInputs { measured: MeasuredPrefill, capture, power, ... } ──> scheduleModel
 * ```
 */
import {
  captureFacts, kernelSamples, provenanceLine, segmentEnergy, stageSamples,
  type KernelSamplesResult, type SegmentEnergy, type StageSamplesResult,
} from '@tickwise/analyzer';
import { DEFAULT_GROUP_ROWS, type CaptureReference, type EnginePower, type MeasuredEnergy, type MeasuredPrefill, type StageKind } from '@tickwise/ceiling';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { CaptureSelection } from './ceiling-inputs';
import { scheduleDevices } from './schedule-devices';
import { enginePowers, measuredEnergy, pickEnergy, type PowerOptions } from './schedule-power';
import { measuredStages, type NpuTileNumber } from './schedule-stages';

const ENGINES = [{ id: 'gpu', name: 'iGPU' }, { id: 'npu', name: 'NPU' }] as const;

/** Options of {@link scheduleInputs}: which captures and devices, and the typed numbers (each with its source line). */
export interface ScheduleInputOptions {
  /** The iGPU capture in `store`. Without captureId/device: the store's GPU device. */
  readonly gpu?: CaptureSelection & {
    /** How the capture is named in source lines (default: the capture's label). */
    readonly input?: string | undefined;
    readonly rowsPerDispatch?: number | undefined;
    readonly layers?: number | undefined;
    readonly tokens?: number | undefined;
    /** Kernel globs per stage, replacing the stage's default rule. */
    readonly patterns?: Partial<Record<StageKind, readonly string[]>> | undefined;
  } | undefined;
  /**
   * The NPU capture: in its own store (a second input) or in `store`. In
   * `store` without captureId/device, the NPU device is found by kind (or,
   * when no device says npu, by its kernels). Omitted: no NPU capture.
   */
  readonly npu?: CaptureSelection & {
    readonly store?: Store | undefined;
    readonly input?: string | undefined;
    /** Glob of the tile kernels (default `*`). */
    readonly kernel?: string | undefined;
    readonly rowsPerDispatch?: number | undefined;
  } | undefined;
  /** Instead of an NPU capture: a typed tile time. */
  readonly npuTile?: NpuTileNumber | undefined;
  /** What-ifs: the NPU runs a stage at this factor x the iGPU's time. */
  readonly npuFactors?: ReadonlyMap<StageKind, number> | undefined;
  /** Rows per micro-batch (default: the capture's rows per dispatch). */
  readonly microbatch?: number | undefined;
  readonly groupRows?: number | undefined;
  /** The handoff between engines, ms, with its source line. */
  readonly handoff?: { readonly ms: number; readonly line: string } | undefined;
  readonly power?: PowerOptions | undefined;
}

/** Everything the schedule model takes from measurements, with where each number came from. */
export interface ScheduleInputs {
  readonly measured: MeasuredPrefill;
  readonly capture: CaptureReference;
  readonly power: EnginePower[];
  readonly measuredEnergy: MeasuredEnergy | null;
  readonly handoffSource: string;
  readonly notes: string[];
  /** `# iGPU input: ...`, `# NPU input: ...`. */
  readonly provenance: string[];
  readonly captures: unknown[];
  readonly gpu: StageSamplesResult;
  readonly npu: KernelSamplesResult | null;
}

function mean(xs: readonly bigint[]): number {
  return xs.reduce((a, x) => a + Number(x), 0) / xs.length / 1e6;
}

/** Reads the captures into the schedule model's inputs (see the module comment). */
export async function scheduleInputs(store: Store, opts: ScheduleInputOptions): Promise<ScheduleInputs> {
  const groupRows = opts.groupRows ?? DEFAULT_GROUP_ROWS;
  if (opts.npu !== undefined && opts.npuTile !== undefined) throw new TickwiseError('usage', 'give the NPU cost one way: --npu CAPTURE or --npu-tile-ms X, not both');
  const notes: string[] = [];
  const provenance: string[] = [];
  const captures: unknown[] = [];
  const g0 = opts.gpu ?? {};
  const n0 = opts.npu;
  const npuStore = n0?.store ?? store;

  // devices: given, else by kind in a store that holds both
  let gpuAt = { captureId: g0.captureId, device: g0.device };
  let npuAt = n0 ? { captureId: n0.captureId, device: n0.device } : null;
  const shared = n0 !== undefined && npuStore === store;
  if ((g0.captureId === undefined && g0.device === undefined && shared) || (npuAt && shared && npuAt.captureId === undefined && npuAt.device === undefined)) {
    const found = await scheduleDevices(store, true);
    if (g0.captureId === undefined && g0.device === undefined) gpuAt = { captureId: found.gpu.capture_id, device: found.gpu.device };
    if (npuAt && npuAt.captureId === undefined && npuAt.device === undefined && found.npu) npuAt = { captureId: found.npu.capture_id, device: found.npu.device };
    if (found.note) notes.push(found.note);
  }

  // the iGPU capture: stages, structure, segments, power
  const gpu = await stageSamples(store, {
    ...gpuAt, segment: g0.segment, reps: g0.reps, rowsPerDispatch: g0.rowsPerDispatch, layers: g0.layers, tokens: g0.tokens, patterns: g0.patterns ?? {},
  });
  const gpuInput = g0.input ?? gpu.label;
  provenance.push((await provenanceLine(store, gpu.capture_id)).replace(/^# /, '# iGPU input: '));
  captures.push({ role: 'gpu', input: gpuInput, capture: (await captureFacts(store, [gpu.capture_id]))[0] ?? null });
  const gpuEnergy = await segmentEnergy(store, gpu.capture_id, gpu.segments, gpu.all_segments);
  notes.unshift(...gpu.notes);
  const gpuLabel = `${gpuInput} (capture ${gpu.capture_id} device ${gpu.device}, segment ${gpu.segment}: ${gpu.segments.length} prefill${gpu.segments.length === 1 ? '' : 's'})`;
  const microbatch = opts.microbatch ?? gpu.rows_per_dispatch;
  if (opts.microbatch === undefined) notes.push(`--microbatch not given: ${microbatch} rows, the capture's rows per dispatch`);
  if (microbatch !== gpu.rows_per_dispatch) {
    notes.push(`micro-batch ${microbatch} rows differs from the capture's ${gpu.rows_per_dispatch} rows per dispatch: costs are scaled linearly in rows (attention by its fitted line), not measured at ${microbatch}`);
  }

  // the NPU: a capture, a number, or nothing
  let npu: KernelSamplesResult | null = null;
  let npuEnergy: { metrics: SegmentEnergy[]; skipped: string[] } | null = null;
  let npuInput: string | undefined;
  if (n0 !== undefined) {
    npu = await kernelSamples(npuStore, { ...npuAt, segment: n0.segment, reps: n0.reps, kernel: n0.kernel ?? '*', kind: 'npu' });
    npuInput = n0.input ?? npu.label;
    provenance.push((await provenanceLine(npuStore, npu.capture_id)).replace(/^# /, '# NPU input: '));
    captures.push({ role: 'npu', input: npuInput, capture: (await captureFacts(npuStore, [npu.capture_id]))[0] ?? null });
    npuEnergy = await segmentEnergy(npuStore, npu.capture_id, npu.segments, npu.all_segments);
    notes.push(...npu.notes);
    if (!npu.kernels.some((k) => k.shape !== null)) {
      throw new TickwiseError('usage', `--npu ${npuInput}: no kernel name carries an MxNxK GEMM shape, so its tiles cannot be matched to the model's GEMMs; narrow --npu-kernel to the GEMM tiles, or give the tile time with --npu-tile-ms X (--npu-tile-shape NxK)`);
    }
  }
  const hasNpu = npu !== null || opts.npuTile !== undefined;
  if (!hasNpu) notes.push('no NPU given (--npu CAPTURE or --npu-tile-ms X): only the iGPU runs, so every strategy is the all-iGPU schedule');

  const stages = measuredStages({
    gpu, gpuLabel, npu, npuInput, npuRowsPerDispatch: n0?.rowsPerDispatch, npuTile: opts.npuTile, factors: opts.npuFactors ?? new Map(), groupRows,
  }, notes);

  // handoff: given, else the NPU's host turnaround, else 0
  let handoffMs = 0;
  let handoffSource: string;
  if (opts.handoff !== undefined) {
    handoffMs = opts.handoff.ms;
    handoffSource = opts.handoff.line;
  } else if (npu !== null && npu.median_gap_ns !== null) {
    handoffMs = npu.median_gap_ns / 1e6;
    handoffSource = `measured: median idle between consecutive NPU dispatches in ${npuInput} (${npu.gaps} gaps): the host's turnaround from one completion to the next start (--handoff to change)`;
  } else {
    handoffSource = hasNpu ? 'not given and not measured: 0 (optimistic; give --handoff 100us or an NPU capture)' : 'one engine: no handoff';
    if (hasNpu) notes.push('handoff 0: no --handoff and no NPU capture to measure it from, so engine changes are free in this answer (optimistic)');
  }

  // the capture the all-iGPU model should reproduce
  const nSeg = gpu.segments.length;
  const capture: CaptureReference = {
    span_ms: mean(gpu.segments.map((s) => s.span_ns)),
    busy_ms: mean(gpu.segments.map((s) => s.busy_ns)),
    sum_ms: mean(gpu.segments.map((s) => s.sum_dur_ns)),
    unmodelled: gpu.unmatched.map((u) => ({ kernel: u.kernel, ms: u.ns_per_prefill / 1e6 })),
    segments: nSeg,
    rows_per_dispatch: gpu.rows_per_dispatch,
    source: `${gpuLabel}: mean span of segment${nSeg === 1 ? '' : 's'} ${gpu.segments.map((s) => s.segment).join(', ')}`,
  };

  // power: typed, else measured
  const gE = pickEnergy(gpuEnergy.metrics, gpu.device);
  const nE = npuEnergy && npu ? pickEnergy(npuEnergy.metrics, npu.device) : null;
  for (const s of [...gpuEnergy.skipped, ...(npuEnergy?.skipped ?? [])]) notes.push(`power metric ${s}: not a power unit tickwise reads (W, mW, uW), left out of the energy`);
  const power = enginePowers(opts.power ?? {}, { gpu: { e: gE, input: gpuInput }, npu: hasNpu ? { e: nE, input: npuInput } : null });

  return {
    measured: {
      layers: gpu.layers,
      prompt_rows: gpu.prompt_rows,
      microbatch_rows: microbatch,
      group_rows: groupRows,
      engines: hasNpu ? [...ENGINES] : [ENGINES[0]],
      reference_engine: 'gpu',
      stages,
      handoff: { default_ms: handoffMs },
    },
    capture,
    power,
    measuredEnergy: measuredEnergy(gE, gpuInput),
    handoffSource,
    notes,
    provenance,
    captures,
    gpu,
    npu,
  };
}
