/**
 * Seeded, deterministic generators of synthetic ireeperf-jsonl captures with
 * ground truth. The public API of scripts/gen/.
 *
 *   model (igpu-prefill / npu-tiles / hand-made list)
 *     -> TrueSubmission stream (true device ticks, host ns)
 *        -> IreeperfEmitter -> ireeperf-jsonl text (derived format, schema 15)
 *        -> TruthAccumulator -> truth JSON (true host ns through the TRUE clock)
 *
 * Entry points:
 * - generateIreeperf(opts): the iGPU prefill sample (text + truth) in memory.
 * - generateNpuTiles(igpu, opts): the NPU companion overlapping an iGPU run.
 * - generateFromDispatches(input): a tiny hand-made capture from a list of
 *   dispatches given in true host ns.
 * - writeBigIreeperf(opts): a >= N MB capture streamed to a file (benchmarks).
 * - writeSampleSet(dir, which): the files of captures/sample/.
 *
 * Nothing reads the clock or Math.random: same options, same bytes.
 */
import { closeSync, fstatSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FirstLastFit, planClockSamples } from './clock-samples';
import {
  IGPU_PREFILL_DEFAULTS,
  checkIgpuOptions,
  igpuCommandBuffers,
  igpuKernels,
  layerWeightParams,
  simulateIgpuPrefill,
  type IgpuKernels,
  type IgpuPrefillOptions,
} from './igpu-prefill';
import { IreeperfEmitter, type LineSink, type RecordCounts } from './ireeperf-emit';
import { jsonText } from './json-text';
import { llamaBench, type LlamaBenchReference } from './llama-bench';
import { NPU_TILES_DEFAULTS, npuKernel, simulateNpuTiles, type NpuTilesOptions } from './npu-tiles';
import { Rng } from './rng';
import {
  U32_NONE,
  tickToTrueNs,
  type CaptureSpec,
  type ClockSample,
  type DeviceClockTruth,
  type KernelDef,
  type TrueSubmission,
} from './timeline';
import { TruthAccumulator, round, type KernelTruth, type SegmentTruth, type TimelineTruth } from './truth';

export type { IgpuPrefillOptions } from './igpu-prefill';
export type { NpuTilesOptions } from './npu-tiles';
export type { CaptureSpec, ClockSample, DeviceClockTruth, KernelDef, TrueDispatch, TrueSubmission } from './timeline';
export type { TimelineTruth, SegmentTruth, KernelTruth, GapTruth } from './truth';
export { IGPU_PREFILL_DEFAULTS } from './igpu-prefill';
export { NPU_TILES_DEFAULTS } from './npu-tiles';
export { IreeperfEmitter } from './ireeperf-emit';
export { FirstLastFit } from './clock-samples';
export { IntervalSweep, TruthAccumulator, GAP_THRESHOLDS_NS } from './truth';
export { Rng } from './rng';

/** File names of the sample set in captures/sample/. */
export const SAMPLE_FILES = {
  igpu: 'igpu-prefill.ireeperf.jsonl',
  igpuTruth: 'igpu-prefill.truth.json',
  llamaBenchCsv: 'llama-bench.csv',
  llamaBenchJson: 'llama-bench.json',
  npu: 'npu-tiles.ireeperf.jsonl',
  npuTruth: 'npu-tiles.truth.json',
  readme: 'README.md',
} as const;

/** A generated capture: the file text, its truth, and the values behind them. */
export interface GeneratedCapture {
  /** ireeperf-jsonl text, one record per line. */
  readonly text: string;
  /** Ground truth document (what the *.truth.json file holds). */
  readonly truth: Record<string, unknown>;
  /** Rows written, by record_type. */
  readonly counts: RecordCounts;
  readonly spec: CaptureSpec;
  readonly submissions: readonly TrueSubmission[];
  /** Overall, per-segment and per-kernel numbers (also inside `truth`). */
  readonly timeline: { overall: TimelineTruth; segments: SegmentTruth[]; kernels: KernelTruth[] };
}

/** The iGPU sample: the capture plus its llama-bench reference. */
export interface GeneratedIgpu extends GeneratedCapture {
  readonly options: IgpuPrefillOptions;
  readonly llamaBench: LlamaBenchReference;
}

/** Options accepted by generateIreeperf: any subset of the defaults; clock fields merge. */
export type IgpuOptionsInput = Partial<Omit<IgpuPrefillOptions, 'clock'>> & { clock?: Partial<DeviceClockTruth> };

const RNG_KERNELS = 1;
const RNG_SIMULATION = 2;
const RNG_CLOCK = 3;
const RNG_WALL = 4;
const RNG_DEVICE = 5;

/** An independent RNG stream for (seed, label). */
function streamRng(seed: number, label: number): Rng {
  return new Rng((Math.imul((seed ^ 0x9e3779b9) >>> 0, 0x85ebca6b) + Math.imul(label, 0x27d4eb2f)) >>> 0);
}

function igpuOptions(input: IgpuOptionsInput): IgpuPrefillOptions {
  const o: IgpuPrefillOptions = {
    ...IGPU_PREFILL_DEFAULTS,
    ...input,
    clock: { ...IGPU_PREFILL_DEFAULTS.clock, ...(input.clock ?? {}) },
  };
  checkIgpuOptions(o);
  return o;
}

/** A sink that collects text in memory. */
class StringSink implements LineSink {
  private parts: string[] = [];
  write(text: string): void {
    this.parts.push(text);
  }
  text(): string {
    return this.parts.join('');
  }
}

/** A sink that writes big buffered chunks to a file descriptor. */
class FileSink implements LineSink {
  private parts: string[] = [];
  private size = 0;
  bytes = 0;
  constructor(private readonly fd: number) {}
  write(text: string): void {
    this.parts.push(text);
    this.size += text.length;
    if (this.size >= 1 << 24) this.flush();
  }
  flush(): void {
    if (this.parts.length === 0) return;
    const chunk = this.parts.join('');
    this.parts = [];
    this.size = 0;
    this.bytes += writeSync(this.fd, chunk);
  }
}

/** Clock sampling for a session from begin to end (the last sample 2 ms before the end, wide if asked). */
function clockPlan(
  clock: DeviceClockTruth,
  beginNs: number,
  endNs: number,
  intervalNs: number,
  seed: number,
  lastWide: boolean,
): ClockSample[] {
  return planClockSamples(
    clock,
    {
      first_ns: beginNs + 30_000,
      last_ns: endNs - 2_000_000,
      interval_ns: intervalNs,
      jitter_ns: Math.min(4_000_000, intervalNs / 10),
      wide_probability: 0.08,
      last_sample_wide: lastWide,
    },
    streamRng(seed, RNG_CLOCK),
  );
}

function lastCompletionNs(clock: DeviceClockTruth, subs: Iterable<TrueSubmission>): number {
  let last = 0;
  for (const s of subs) {
    const ns = tickToTrueNs(clock, s.queue_end_tick);
    if (ns > last) last = ns;
  }
  return last;
}

function igpuSpec(o: IgpuPrefillOptions, k: IgpuKernels, endNs: number): CaptureSpec {
  return {
    session_id: 1,
    physical_device_ordinal: 0,
    queue_ordinal: 0,
    stream_id: 1,
    physical_device_uuid: streamRng(o.seed, RNG_DEVICE).hex(16),
    clock: o.clock,
    kernels: k.all,
    clock_samples: clockPlan(o.clock, o.session_begin_ns, endNs, o.clock_interval_ns, o.seed, true),
    session_begin_ns: o.session_begin_ns,
    session_end_ns: endNs,
    flush_every_submissions: o.flush_every_submissions,
  };
}

function emit(spec: CaptureSpec, subs: Iterable<TrueSubmission>, sink: LineSink): RecordCounts {
  const emitter = new IreeperfEmitter(spec, sink);
  emitter.begin();
  for (const s of subs) emitter.submission(s);
  emitter.end();
  return emitter.counts;
}

// ---------------------------------------------------------------------------
// Truth documents
// ---------------------------------------------------------------------------

/** What every number in a truth file means. */
const DEFINITIONS: Record<string, string> = {
  true_ns:
    'Every *_ns value is a TRUE host time or duration in iree_host_time_ns, computed from the generator\'s own integer device ticks through the TRUE clock: host_ns = clock.offset_ns + device_tick * clock.ns_per_tick_true (10 ns for 100 MHz). Not through the declared frequency, not through any fit, not re-read from the file.',
  dispatch_interval:
    'A dispatch is the half-open interval [start_ns, end_ns) of a dispatch_event row (start_tick/end_tick mapped as above). Its true duration is duration_ticks * ns_per_tick_true exactly.',
  busy_ns: 'Length of the UNION of dispatch intervals (time with >= 1 dispatch in flight). Not the sum.',
  sum_dur_ns: 'Plain sum of dispatch durations; sum_dur_ns - busy_ns is time counted twice by a sum.',
  span_ns: 'end_ns - start_ns: from the earliest dispatch start to the latest dispatch end of the set.',
  idle_ns: 'span_ns - busy_ns.',
  busy_fraction: 'busy_ns / span_ns, rounded to 6 decimals.',
  overlap_ns: 'Time with >= 2 dispatches in flight (here only ffn_gate/ffn_up tail overlaps inside one submission).',
  overlap_cross_submission_ns: 'Time with >= 2 dispatches of DIFFERENT submissions in flight (0 here: the host waits for each submission).',
  max_in_flight: 'Most dispatches in flight at one instant.',
  gaps:
    'Maximal idle intervals between busy blocks, from start_ns to end_ns of the set. Touching intervals (end == next start) leave no gap. count = number of gaps; idle_ns = their total (= idle_ns of the set); longer_than[i] counts gaps with gap_ns STRICTLY greater than threshold_ns and sums their idle.',
  overall: 'All dispatches of the capture (one device, one queue: devices[0] equals overall). Its gaps include the long host gap between prefills.',
  segments:
    'One segment per prefill, in order; segment 0 is the cold first pass when model.cold_first_pass. A segment holds the dispatches of that prefill\'s submissions; start_ns/end_ns are its first dispatch start and last dispatch end; its gaps are only those inside the segment.',
  kernels:
    'Per dispatch key: count of dispatch_event rows, total/mean/min/max true duration (mean_ns = total_ns / count, rounded to 3 decimals), and the same per segment.',
  row_groups:
    'Per weight GEMM (one dispatch per layer per ubatch of ubatch_rows rows; count = prefills x layers x ubatches): group_ns_steady = mean_dispatch_ns_steady * group_rows / ubatch_rows over the steady segments (all segments but a cold first one); group_ms_all the same over all segments. FLOP reading: weight_gemm_flops_per_prefill = 2 * weight_params * prompt_tokens; engine_tflops = that / (summed weight-GEMM dispatch time of one steady prefill); group_ms_from_flops = 2 * group_rows * n * k / engine rate.',
  steady_span_ns: 'Mean span_ns of the steady segments (the prefills after the cold one), rounded to 1 ns.',
  clock_fits:
    'iree_exporter: IREE\'s exporter fit through the first and last sample in the driver CPU domain (the derived *_driver_host_cpu_time_ns and duration_ns fields come from it). first_last_bracket_midpoint: a line through the first and last sample\'s (device_tick, bracket midpoint). weighted_least_squares_midpoint: least squares over all samples\' bracket midpoints, weights 1/width^2. error_ppm = (fitted - true) / true * 1e6.',
  dispatches:
    'Per dispatch_event row in file order: event_id, submission_id, kernel (index into keys), true start_ns and end_ns.',
  submissions:
    'segments[].submissions: queue submissions (queue_event rows) of the segment, ids first_submission_id..last_submission_id.',
  clock_samples:
    'bracket_width_ns = host_time_end_ns - host_time_begin_ns (= host_time_uncertainty_ns); wide_sample_ids: samples whose bracket is wider than 10 us. Every bracket contains the true latch time offset_ns + device_tick * ns_per_tick_true.',
  weight_params:
    'model.weight_params = layers * (hidden * (hidden + 2 * n_kv_heads * head_dim) + hidden * hidden + 3 * hidden * ffn): the weights of the per-layer GEMMs (qkv, attn_output, ffn gate/up/down); no embeddings, no lm_head.',
  wall_reference:
    'llama-bench.csv/.json: samples_ns as modelled; avg_ns = floor(mean(samples_ns)) and stddev_ns in llama-bench\'s integer arithmetic; avg_ts = mean of 1e9 * n_prompt / sample_ns; avg_ns_over_steady_span = avg_ns / steady_span_ns.',
};

/** A reference fit the truth reports (how good each simple fit is on these samples). */
function clockTruth(clock: DeviceClockTruth, samples: readonly ClockSample[], exporter: FirstLastFit, intervalNs: number) {
  const trueHz = 1e9 / clock.ns_per_tick;
  const ppm = (hz: number): number => round(((hz - trueHz) / trueHz) * 1e6, 3);
  const mid = (s: ClockSample): number => s.host_time_begin_ns + Math.floor((s.host_time_end_ns - s.host_time_begin_ns) / 2);
  const first = samples[0]!;
  const last = samples[samples.length - 1]!;
  const midpointHz = 1e9 / ((mid(last) - mid(first)) / (last.device_tick - first.device_tick));
  // Weighted least squares on centred values (exact enough in doubles).
  const x0 = first.device_tick;
  const y0 = mid(first);
  let sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const s of samples) {
    const w = 1 / Math.max(1, s.host_time_end_ns - s.host_time_begin_ns) ** 2;
    const x = s.device_tick - x0;
    const y = mid(s) - y0;
    sw += w; sx += w * x; sy += w * y; sxx += w * x * x; sxy += w * x * y;
  }
  const slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  const widths = samples.map((s) => s.host_time_end_ns - s.host_time_begin_ns).sort((a, b) => a - b);
  return {
    tick_hz_true: trueHz,
    ns_per_tick_true: clock.ns_per_tick,
    offset_ns: clock.offset_ns,
    mapping: `host_ns = ${clock.offset_ns} + device_tick * ${clock.ns_per_tick} (iree_host_time_ns)`,
    tick_hz_declared: clock.tick_hz_declared,
    declared_vs_true_ppm: clock.tick_hz_declared === null ? null : ppm(clock.tick_hz_declared),
    driver_host_cpu_timestamp:
      `driver_host_cpu_timestamp_ns = latch_ns - ${clock.driver_cpu_offset_ns} +- 20 ns (the driver's raw monotonic clock runs ${clock.driver_cpu_offset_ns} ns behind iree_host_time_ns)`,
    samples: samples.length,
    nominal_interval_ns: intervalNs,
    bracket_width_ns: { min: widths[0]!, median: widths[Math.floor(widths.length / 2)]!, max: widths[widths.length - 1]! },
    wide_sample_ids: samples.filter((s) => s.host_time_end_ns - s.host_time_begin_ns > 10_000).map((s) => s.sample_id),
    fits: {
      iree_exporter: {
        domain: 'driver_host_cpu_timestamp_ns',
        first_sample_id: exporter.first_sample_id,
        last_sample_id: exporter.last_sample_id,
        device_tick_span: exporter.tick_span,
        time_span_ns: exporter.time_span_ns,
        tick_hz: round(exporter.tick_hz, 3),
        error_ppm: ppm(exporter.tick_hz),
      },
      first_last_bracket_midpoint: { tick_hz: round(midpointHz, 3), error_ppm: ppm(midpointHz) },
      weighted_least_squares_midpoint: { tick_hz: round(1e9 / slope, 3), error_ppm: ppm(1e9 / slope) },
    },
  };
}

function dispatchColumns(acc: TruthAccumulator, kernels: readonly KernelDef[]) {
  const c = acc.columns!;
  return {
    keys: kernels.map((k) => k.key),
    event_id: c.event_id,
    submission_id: c.submission_id,
    kernel: c.key_index,
    start_ns: c.start_ns,
    end_ns: c.end_ns,
  };
}

// ---------------------------------------------------------------------------
// iGPU prefill sample
// ---------------------------------------------------------------------------

/**
 * Generates the iGPU prefill capture (ireeperf-jsonl text), its ground truth
 * and its llama-bench reference, in memory. Defaults make the shipped sample;
 * any option can be overridden (layers, prompt_tokens, ubatch_rows, prefills,
 * cold_first_pass, clock, seed, ...).
 */
export function generateIreeperf(input: IgpuOptionsInput = {}): GeneratedIgpu {
  const o = igpuOptions(input);
  const kernels = igpuKernels(o, streamRng(o.seed, RNG_KERNELS));
  const cbs = igpuCommandBuffers(o, kernels);
  const subs = [...simulateIgpuPrefill(o, kernels, cbs, streamRng(o.seed, RNG_SIMULATION))];
  const endNs = lastCompletionNs(o.clock, subs) + o.session_tail_ns;
  const spec = igpuSpec(o, kernels, endNs);
  const sink = new StringSink();
  const counts = emit(spec, subs, sink);
  const acc = new TruthAccumulator(o.clock, kernels.all, true);
  for (const s of subs) acc.add(s);
  const cold = o.cold_first_pass;
  const timeline = acc.result((seg) => (cold && seg === 0 ? 'cold first prefill' : `prefill ${seg}`));
  const steady = timeline.segments.filter((s) => !(cold && s.segment === 0));
  const steadySpan = Math.round(steady.reduce((a, s) => a + s.span_ns, 0) / Math.max(1, steady.length));

  const lb = llamaBench(
    {
      n_prompt: o.prompt_tokens,
      n_batch: o.prompt_tokens,
      n_ubatch: o.ubatch_rows,
      steady_span_ns: steadySpan,
      host_outside_span_ns: 180_000,
      repetitions: 5,
      noise: 0.0025,
      model_n_params: 3_212_749_824,
      model_size: 6_425_499_648,
    },
    streamRng(o.seed, RNG_WALL),
  );

  const fit = new FirstLastFit(spec.clock_samples);
  const truth = {
    synthetic: true,
    description:
      'Ground truth of the synthetic iGPU prefill capture igpu-prefill.ireeperf.jsonl (written by the same generator run from the same true values).',
    regenerate: 'scripts/gen-sample',
    generator: 'scripts/gen/ireeperf.ts generateIreeperf()',
    seed: o.seed,
    definitions: DEFINITIONS,
    capture: {
      file: SAMPLE_FILES.igpu,
      format: 'ireeperf-jsonl (derived: device.timestamp_frequency_hz)',
      schema_version: 15,
      records: counts,
      physical_device_ordinal: 0,
      queue_ordinal: 0,
      stream_id: 1,
      device_kind: 'gpu',
      session_begin_ns: o.session_begin_ns,
      session_end_ns: endNs,
    },
    clock: clockTruth(o.clock, spec.clock_samples, fit, o.clock_interval_ns),
    model: modelTruth(o),
    overall: timeline.overall,
    devices: [{ physical_device_ordinal: 0, queue_ordinal: 0, kind: 'gpu', ...timeline.overall }],
    segments: timeline.segments,
    steady_segments: steady.map((s) => s.segment),
    steady_span_ns: steadySpan,
    kernels: timeline.kernels,
    row_groups: rowGroupTruth(o, kernels, timeline.kernels, steady.map((s) => s.segment)),
    wall_reference: {
      files: [SAMPLE_FILES.llamaBenchCsv, SAMPLE_FILES.llamaBenchJson],
      test: `pp${o.prompt_tokens}`,
      samples_ns: lb.samples_ns,
      avg_ns: lb.avg_ns,
      stddev_ns: lb.stddev_ns,
      avg_ts: round(lb.avg_ts, 6),
      model:
        'each sample = (steady_span_ns + 180000 ns of host work inside llama-bench\'s timer) * (1 + 0.25 % noise)',
      avg_ns_over_steady_span: round(lb.avg_ns / steadySpan, 6),
    },
    dispatches: dispatchColumns(acc, kernels.all),
  };
  return { text: sink.text(), truth, counts, spec, submissions: subs, timeline, options: o, llamaBench: lb };
}

function modelTruth(o: IgpuPrefillOptions) {
  const ubatches = o.prompt_tokens / o.ubatch_rows;
  return {
    name: 'Llama-3.2-3B-shaped transformer, f16 weights',
    layers: o.layers,
    hidden: o.hidden,
    ffn: o.ffn,
    n_heads: o.n_heads,
    n_kv_heads: o.n_kv_heads,
    head_dim: o.head_dim,
    vocab: o.vocab,
    prompt_tokens: o.prompt_tokens,
    ubatch_rows: o.ubatch_rows,
    ubatches_per_prefill: ubatches,
    prefills: o.prefills,
    cold_first_pass: o.cold_first_pass,
    submissions_per_prefill: ubatches * o.layers + 1,
    submission_structure:
      'one submission per (ubatch, layer): a reusable command buffer per layer (layer 0 also gathers the embeddings), recorded on first use; then one head submission per prefill (final rms_norm + lm_head of the last row)',
    per_layer_ubatch_dispatches:
      'rms_norm, qkv matmul, rope, attention, attn_output matmul, rms_norm, ffn_gate matmul, ffn_up matmul, silu_mul, ffn_down matmul (rms_norm is one key dispatched twice)',
    host_model:
      'the host waits for each submission, then wakes (8-25 us), prepares (25-90 us; 4 % 180-650 us; +120-300 us at a ubatch boundary; x1.3-1.8 in the cold pass; +0.6-2.5 ms when a command buffer is recorded) and submits; the device starts 5-13 us after submission',
    device_model:
      'dispatches back to back with 1.2-4.5 us barrier bubbles; ffn_up starts 8-35 us before ffn_gate ends; GEMM durations from effective TFLOP/s (qkv 14, attn_output 13.5, gate/up 15, down 14) +- 1.2 %; cold pass: ubatch 0 GEMMs x1.35-1.6, first dispatch of each executable +120-450 us',
    weight_params: layerWeightParams(o),
    inter_prefill_gap_ns_nominal: o.inter_prefill_gap_ns,
  };
}

function rowGroupTruth(o: IgpuPrefillOptions, k: IgpuKernels, kernels: KernelTruth[], steadySegments: number[]) {
  const G = 256;
  const U = o.ubatch_rows;
  const ubatches = o.prompt_tokens / U;
  const gemms = kernels.filter((kt) => kt.kind === 'weight_gemm');
  const steadySet = new Set(steadySegments);
  const steadyOf = (kt: KernelTruth) => {
    let count = 0;
    let total = 0;
    for (const s of kt.per_segment) if (steadySet.has(s.segment)) {
      count += s.count;
      total += s.total_ns;
    }
    return { count, total };
  };
  const steadyGemmNs = gemms.reduce((a, kt) => a + steadyOf(kt).total, 0) / Math.max(1, steadySegments.length);
  const flopsPerPrefill = 2 * layerWeightParams(o) * o.prompt_tokens;
  const flopPerNs = flopsPerPrefill / steadyGemmNs;
  const byKey = new Map(k.all.map((kd) => [kd.key, kd]));
  return {
    group_rows: G,
    ubatch_rows: U,
    steady_segments: steadySegments,
    kernels: gemms.map((kt) => {
      const g = byKey.get(kt.key)!.gemm!;
      const st = steadyOf(kt);
      const meanSteady = st.total / st.count;
      const groupSteady = (meanSteady * G) / U;
      const groupFromFlops = (2 * G * g.n * g.k) / flopPerNs;
      return {
        key: kt.key,
        gemm: g,
        count: kt.count,
        dispatches_per_prefill: kt.count / o.prefills,
        count_formula: `${o.prefills} prefills x ${o.layers} layers x ${ubatches} ubatches = ${o.prefills * o.layers * ubatches}`,
        mean_dispatch_ns_all: kt.mean_ns,
        mean_dispatch_ns_steady: round(meanSteady, 3),
        group_ns_steady: round(groupSteady, 3),
        group_ms_steady: round(groupSteady / 1e6, 6),
        group_ms_all: round((kt.mean_ns * G) / U / 1e6, 6),
        kernel_tflops_steady: round((2 * g.m * g.n * g.k) / meanSteady / 1e3, 3),
        group_ms_from_flops: round(groupFromFlops / 1e6, 6),
        mean_vs_flops_ratio: round(groupSteady / groupFromFlops, 4),
      };
    }),
    flops: {
      weight_params: layerWeightParams(o),
      tokens_per_prefill: o.prompt_tokens,
      weight_gemm_flops_per_prefill: flopsPerPrefill,
      gemm_time_ns_per_steady_prefill: Math.round(steadyGemmNs),
      engine_tflops: round(flopPerNs / 1e3, 4),
    },
  };
}

// ---------------------------------------------------------------------------
// NPU companion
// ---------------------------------------------------------------------------

/** Options of generateNpuTiles: any subset; session_begin_ns defaults to 120 ms into the iGPU's last prefill. */
export type NpuOptionsInput = Partial<Omit<NpuTilesOptions, 'clock'>> & { clock?: Partial<DeviceClockTruth> };

/**
 * Generates the NPU tile capture overlapping part of `igpu` on the same host
 * timeline, with truth including the cross-device overlap against `igpu`.
 */
export function generateNpuTiles(igpu: GeneratedIgpu, input: NpuOptionsInput = {}): GeneratedCapture {
  const lastSeg = igpu.timeline.segments[igpu.timeline.segments.length - 1]!;
  const o: NpuTilesOptions = {
    ...NPU_TILES_DEFAULTS,
    session_begin_ns: lastSeg.start_ns + 120_000_000,
    ...input,
    clock: { ...NPU_TILES_DEFAULTS.clock, ...(input.clock ?? {}) },
  };
  const kernel = npuKernel(o, streamRng(o.seed, RNG_KERNELS));
  const subs = [...simulateNpuTiles(o, kernel, streamRng(o.seed, RNG_SIMULATION))];
  const endNs = lastCompletionNs(o.clock, subs) + o.session_tail_ns;
  const spec: CaptureSpec = {
    session_id: 1,
    physical_device_ordinal: 0,
    queue_ordinal: 0,
    stream_id: 1,
    physical_device_uuid: null,
    clock: o.clock,
    kernels: [kernel],
    clock_samples: clockPlan(o.clock, o.session_begin_ns, endNs, o.clock_interval_ns, o.seed, false),
    session_begin_ns: o.session_begin_ns,
    session_end_ns: endNs,
    flush_every_submissions: o.flush_every_submissions,
  };
  const sink = new StringSink();
  const counts = emit(spec, subs, sink);
  const acc = new TruthAccumulator(o.clock, [kernel], true);
  for (const s of subs) acc.add(s);
  const timeline = acc.result(() => 'npu tiles');
  const kt = timeline.kernels[0]!;

  // Cross-device: union of iGPU dispatches vs union of NPU dispatches, true host ns.
  const igpuCols = igpu.truth.dispatches as { start_ns: number[]; end_ns: number[] };
  const npuCols = acc.columns!;
  const igpuUnion = unionOf(igpuCols.start_ns, igpuCols.end_ns);
  const npuUnion = unionOf(npuCols.start_ns, npuCols.end_ns);
  const both = intersectLength(igpuUnion, npuUnion);
  const npuSpanStart = timeline.overall.start_ns;
  const npuSpanEnd = timeline.overall.end_ns;
  const igpuBusyInNpuSpan = intersectLength(igpuUnion, [[npuSpanStart, npuSpanEnd]]);
  const igpuRowGroups = igpu.truth.row_groups as { kernels: { key: string; gemm: { n: number; k: number }; group_ms_steady: number }[] };
  const sameGemm = igpuRowGroups.kernels.find((g) => g.gemm.n === o.n && g.gemm.k === o.k) ?? null;

  const truth = {
    synthetic: true,
    description:
      'Ground truth of the synthetic NPU tile capture npu-tiles.ireeperf.jsonl: 256-row tiles of one GEMM, one direct dispatch each, overlapping part of igpu-prefill.ireeperf.jsonl on the same host timeline.',
    regenerate: 'scripts/gen-sample --npu',
    generator: 'scripts/gen/ireeperf.ts generateNpuTiles()',
    seed: o.seed,
    definitions: {
      ...DEFINITIONS,
      cross_device:
        'Against igpu-prefill.ireeperf.jsonl: overlap_ns = length of (union of iGPU dispatches) INTERSECT (union of NPU dispatches) on the common iree_host_time_ns timeline; igpu_busy_overlapped_fraction = overlap_ns / iGPU busy_ns (whole capture); npu_busy_overlapped_fraction = overlap_ns / NPU busy_ns; igpu_busy_in_npu_span_ns = iGPU busy inside [NPU start_ns, NPU end_ns).',
      split_inputs:
        't_ms = mean NPU tile (256 rows) time; g_ms = the iGPU\'s steady group_ms of the GEMM with the same n and k (row_groups of the iGPU truth).',
    },
    capture: {
      file: SAMPLE_FILES.npu,
      format: 'ireeperf-jsonl (derived: device.timestamp_frequency_hz)',
      schema_version: 15,
      records: counts,
      physical_device_ordinal: 0,
      queue_ordinal: 0,
      stream_id: 1,
      device_kind: 'npu',
      direct_dispatches: 'command_buffer_id 0, command_index 4294967295 (none), queue_event op "dispatch"',
      session_begin_ns: o.session_begin_ns,
      session_end_ns: endNs,
    },
    clock: clockTruth(o.clock, spec.clock_samples, new FirstLastFit(spec.clock_samples), o.clock_interval_ns),
    model: {
      tiles: o.tiles,
      tile_rows: o.tile_rows,
      gemm: { m: o.tile_rows, n: o.n, k: o.k },
      tile_ns_nominal: o.tile_ns,
      host_model: 'the host waits for each tile, wakes (10-30 us), prepares (40-150 us; 3 % 0.5-1.5 ms), submits; the NPU starts 16-42 us after submission',
    },
    overall: timeline.overall,
    devices: [{ physical_device_ordinal: 0, queue_ordinal: 0, kind: 'npu', ...timeline.overall }],
    segments: timeline.segments,
    kernels: timeline.kernels,
    cross_device: {
      against: SAMPLE_FILES.igpu,
      igpu_busy_ns: igpu.timeline.overall.busy_ns,
      npu_busy_ns: timeline.overall.busy_ns,
      overlap_ns: both,
      igpu_busy_overlapped_fraction: round(both / igpu.timeline.overall.busy_ns, 6),
      npu_busy_overlapped_fraction: round(both / timeline.overall.busy_ns, 6),
      igpu_busy_in_npu_span_ns: igpuBusyInNpuSpan,
      npu_span_within_igpu_segment: lastSeg.segment,
    },
    split_inputs: {
      t_ms: round(kt.mean_ns / 1e6, 6),
      igpu_gemm_key: sameGemm?.key ?? null,
      g_ms: sameGemm?.group_ms_steady ?? null,
      group_rows: o.tile_rows,
    },
    dispatches: dispatchColumns(acc, [kernel]),
  };
  return { text: sink.text(), truth, counts, spec, submissions: subs, timeline };
}

function unionOf(starts: readonly number[], ends: readonly number[]): [number, number][] {
  const idx = starts.map((_, i) => i).sort((a, b) => starts[a]! - starts[b]!);
  const out: [number, number][] = [];
  for (const i of idx) {
    const s = starts[i]!;
    const e = ends[i]!;
    const last = out[out.length - 1];
    if (last && s <= last[1]) {
      if (e > last[1]) last[1] = e;
    } else out.push([s, e]);
  }
  return out;
}

function intersectLength(a: readonly (readonly [number, number])[], b: readonly (readonly [number, number])[]): number {
  let i = 0;
  let j = 0;
  let total = 0;
  while (i < a.length && j < b.length) {
    const lo = Math.max(a[i]![0], b[j]![0]);
    const hi = Math.min(a[i]![1], b[j]![1]);
    if (hi > lo) total += hi - lo;
    if (a[i]![1] < b[j]![1]) i++;
    else j++;
  }
  return total;
}

// ---------------------------------------------------------------------------
// Hand-made captures
// ---------------------------------------------------------------------------

/** One dispatch of a hand-made capture, in true host ns. */
export interface HandMadeDispatch {
  readonly key: string;
  readonly start_ns: number;
  readonly end_ns: number;
  /** Dispatches with equal numbers form one submission (default: one submission each). */
  readonly submission?: number;
  /** Segment (prefill) index for the truth (default 0). */
  readonly segment?: number;
  /** Workgroup counts of the launch (default [1, 1, 1]): the work it carries. */
  readonly workgroup_count?: readonly [number, number, number];
}

/** Input of generateFromDispatches. */
export interface HandMadeInput {
  readonly dispatches: readonly HandMadeDispatch[];
  /** Defaults: 10 ns per tick, offset 759269498807 ns, declared null (no timestamp_frequency_hz). */
  readonly clock?: Partial<DeviceClockTruth>;
  readonly seed?: number;
  readonly clock_interval_ns?: number;
}

/**
 * A tiny capture from a hand-made list of dispatches (true host ns; snapped
 * to the tick grid: truth reports the snapped times). Each submission is a
 * direct queue dispatch sequence (command_buffer_id 0). Clock samples run from
 * 1 ms before the first dispatch to 3 ms after the last, every
 * clock_interval_ns (default 100 ms), the last one wide.
 */
export function generateFromDispatches(input: HandMadeInput): GeneratedCapture {
  const clock: DeviceClockTruth = {
    ns_per_tick: 10,
    offset_ns: IGPU_PREFILL_DEFAULTS.clock.offset_ns,
    tick_hz_declared: null,
    driver_cpu_offset_ns: IGPU_PREFILL_DEFAULTS.clock.driver_cpu_offset_ns,
    ...(input.clock ?? {}),
  };
  const seed = input.seed ?? 1;
  if (input.dispatches.length === 0) throw new Error('a hand-made capture needs at least one dispatch');
  const sorted = [...input.dispatches].sort((a, b) => a.start_ns - b.start_ns);
  const kernels: KernelDef[] = [];
  const byKey = new Map<string, KernelDef>();
  for (const d of sorted) {
    if (byKey.has(d.key)) continue;
    const m = /matmul_(\d+)x(\d+)x(\d+)/.exec(d.key);
    const kd: KernelDef = {
      key: d.key,
      executable_id: kernels.length + 1,
      function_ordinal: 0,
      kind: m ? 'weight_gemm' : 'elementwise',
      gemm: m ? { m: Number(m[1]), n: Number(m[2]), k: Number(m[3]) } : null,
      workgroup_size: [256, 1, 1],
      binding_count: 3,
      constant_count: 0,
      code_object_hash: null,
    };
    kernels.push(kd);
    byKey.set(d.key, kd);
  }
  const toTick = (ns: number): number => Math.round((ns - clock.offset_ns) / clock.ns_per_tick);
  const subs: TrueSubmission[] = [];
  let eventId = 0;
  let i = 0;
  while (i < sorted.length) {
    const group = [sorted[i]!];
    const subNo = sorted[i]!.submission;
    i++;
    while (i < sorted.length && subNo !== undefined && sorted[i]!.submission === subNo) group.push(sorted[i++]!);
    const dispatches = group.map((d) => {
      const start = toTick(d.start_ns);
      return {
        event_id: ++eventId,
        kernel: byKey.get(d.key)!,
        command_index: U32_NONE,
        workgroup_count: d.workgroup_count ?? ([1, 1, 1] as const),
        start_tick: start,
        end_tick: Math.max(start, toTick(d.end_ns)),
      };
    });
    const qStart = dispatches[0]!.start_tick - 1;
    const qEnd = Math.max(...dispatches.map((d) => d.end_tick)) + 1;
    const submitNs = tickToTrueNs(clock, qStart) - 10_000;
    subs.push({
      submission_id: subs.length + 1,
      command_buffer_id: 0,
      new_command_buffer: null,
      segment: group[0]!.segment ?? 0,
      host_submit_ns: submitNs,
      host_ready_ns: submitNs + 1_000,
      wait_count: 0,
      signal_count: 1,
      barrier_count: 0,
      dependency_strategy: 'inline',
      queue_start_tick: qStart,
      queue_end_tick: qEnd,
      dispatches,
    });
  }
  const beginNs = sorted[0]!.start_ns - 1_000_000;
  const endNs = lastCompletionNs(clock, subs) + 5_000_000;
  const spec: CaptureSpec = {
    session_id: 1,
    physical_device_ordinal: 0,
    queue_ordinal: 0,
    stream_id: 1,
    physical_device_uuid: null,
    clock,
    kernels,
    clock_samples: clockPlan(clock, beginNs, endNs, input.clock_interval_ns ?? 100_000_000, seed, false),
    session_begin_ns: beginNs,
    session_end_ns: endNs,
    flush_every_submissions: 16,
  };
  const sink = new StringSink();
  const counts = emit(spec, subs, sink);
  const acc = new TruthAccumulator(clock, kernels, true);
  for (const s of subs) acc.add(s);
  const timeline = acc.result((seg) => `segment ${seg}`);
  const truth = {
    synthetic: true,
    generator: 'scripts/gen/ireeperf.ts generateFromDispatches()',
    definitions: DEFINITIONS,
    capture: { records: counts },
    clock: clockTruth(clock, spec.clock_samples, new FirstLastFit(spec.clock_samples), input.clock_interval_ns ?? 100_000_000),
    overall: timeline.overall,
    segments: timeline.segments,
    kernels: timeline.kernels,
    dispatches: dispatchColumns(acc, kernels),
  };
  return { text: sink.text(), truth, counts, spec, submissions: subs, timeline };
}

// ---------------------------------------------------------------------------
// Big files
// ---------------------------------------------------------------------------

/** Options of writeBigIreeperf. */
export interface BigOptions {
  /** Output path (overwritten). */
  readonly path: string;
  /** The file will hold at least this many MB (10^6 bytes). */
  readonly mb: number;
  readonly seed?: number;
  /** Also write the streamed truth (no per-dispatch columns) here. */
  readonly truth_path?: string;
  /** Host gap between prefills (default 25 ms: a benchmark loop). */
  readonly inter_prefill_gap_ns?: number;
}

/** What writeBigIreeperf wrote. */
export interface BigResult {
  readonly path: string;
  readonly bytes: number;
  readonly prefills: number;
  readonly counts: RecordCounts;
}

/**
 * Streams a >= `mb` MB capture of the iGPU model (many prefills; mostly
 * dispatch_event rows of realistic length) to `path` with big buffered writes.
 * Runs the seeded simulation twice: once for the session end (the exporter's
 * first/last clock fit needs the last sample before any event is written),
 * once to write.
 */
export function writeBigIreeperf(opts: BigOptions): BigResult {
  const targetBytes = Math.ceil(opts.mb * 1e6);
  const seed = opts.seed ?? IGPU_PREFILL_DEFAULTS.seed;
  const gap = opts.inter_prefill_gap_ns ?? 25_000_000;
  // Bytes of one warm prefill, measured on a 3-prefill in-memory run.
  const probe = generateIreeperf({ seed, prefills: 3, inter_prefill_gap_ns: gap });
  const probe2 = generateIreeperf({ seed, prefills: 2, inter_prefill_gap_ns: gap });
  const perPrefill = Buffer.byteLength(probe.text) - Buffer.byteLength(probe2.text);
  const base = Buffer.byteLength(probe2.text) - 2 * perPrefill;
  const prefills = Math.max(1, Math.ceil(((targetBytes - base) * 1.01) / perPrefill) + 1);

  const o = igpuOptions({ seed, prefills, inter_prefill_gap_ns: gap });
  const kernels = igpuKernels(o, streamRng(o.seed, RNG_KERNELS));
  const cbs = igpuCommandBuffers(o, kernels);
  const endNs = lastCompletionNs(o.clock, simulateIgpuPrefill(o, kernels, cbs, streamRng(o.seed, RNG_SIMULATION))) + o.session_tail_ns;
  const spec = igpuSpec(o, kernels, endNs);
  const acc = opts.truth_path ? new TruthAccumulator(o.clock, kernels.all, false) : null;
  const fd = openSync(opts.path, 'w');
  let counts: RecordCounts;
  let bytes: number;
  try {
    const sink = new FileSink(fd);
    const stream = simulateIgpuPrefill(o, kernels, cbs, streamRng(o.seed, RNG_SIMULATION));
    const tap = acc
      ? (function* () {
          for (const s of stream) {
            acc.add(s);
            yield s;
          }
        })()
      : stream;
    counts = emit(spec, tap, sink);
    sink.flush();
    bytes = fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
  if (bytes < targetBytes) throw new Error(`big capture came out at ${bytes} bytes, below the ${targetBytes} asked for`);
  if (acc && opts.truth_path) {
    const t = acc.result((seg) => (seg === 0 ? 'cold first prefill' : `prefill ${seg}`));
    writeFileSync(
      opts.truth_path,
      jsonText({
        synthetic: true,
        generator: 'scripts/gen/ireeperf.ts writeBigIreeperf()',
        seed,
        definitions: DEFINITIONS,
        capture: { file: opts.path, bytes, records: counts },
        clock: clockTruth(o.clock, spec.clock_samples, new FirstLastFit(spec.clock_samples), o.clock_interval_ns),
        model: modelTruth(o),
        overall: t.overall,
        segments_count: t.segments.length,
        kernels: t.kernels.map((k) => ({ ...k, per_segment: undefined })),
      }),
    );
  }
  return { path: opts.path, bytes, prefills, counts };
}

// ---------------------------------------------------------------------------
// The sample set
// ---------------------------------------------------------------------------

const README = `# Sample captures (synthetic)

Every file here is SYNTHETIC: written by the seeded generator in scripts/gen/
(no hardware, no clock, no randomness beyond the seed), byte-identical when
regenerated; scripts/gen/test/gen.test.ts regenerates them and compares.
\`scripts/gen-sample --all\` rewrites them all. The iGPU capture models a
28-layer Llama-3.2-3B-shaped f16 prefill of 2048 tokens in 512-row ubatches,
twice (a cold first pass, then a steady one), on a device clock that truly
runs at 100.0 MHz while the device record declares 99.81 MHz; the truth files
say exactly how each number is defined.

- ${SAMPLE_FILES.igpu}: synthetic iGPU prefill capture (ireeperf-jsonl, schema 15, derived format with device.timestamp_frequency_hz); regenerate: \`scripts/gen-sample\`
- ${SAMPLE_FILES.igpuTruth}: synthetic ground truth of that capture (definitions inside); regenerate: \`scripts/gen-sample\`
- ${SAMPLE_FILES.llamaBenchCsv}: synthetic llama-bench-style wall reference (-o csv) for that capture's steady prefill; regenerate: \`scripts/gen-sample\`
- ${SAMPLE_FILES.llamaBenchJson}: the same reference as llama-bench -o json (with samples_ns); regenerate: \`scripts/gen-sample\`
- ${SAMPLE_FILES.npu}: synthetic NPU tile capture (ireeperf-jsonl) overlapping part of the iGPU capture on the same host timeline; regenerate: \`scripts/gen-sample --npu\`
- ${SAMPLE_FILES.npuTruth}: synthetic ground truth of the NPU capture, with the cross-device overlap; regenerate: \`scripts/gen-sample --npu\`
- ${SAMPLE_FILES.readme}: this file; regenerate: \`scripts/gen-sample\` (either mode writes it)
`;

/** Which parts of the sample set to write. */
export interface SampleSetWhich {
  readonly igpu: boolean;
  readonly npu: boolean;
}

/** Writes the sample set into `dir` (created if missing); returns the paths written. */
export function writeSampleSet(dir: string, which: SampleSetWhich): string[] {
  mkdirSync(dir, { recursive: true });
  const written: string[] = [];
  const put = (name: string, text: string): void => {
    const p = join(dir, name);
    writeFileSync(p, text);
    written.push(p);
  };
  const igpu = generateIreeperf();
  if (which.igpu) {
    put(SAMPLE_FILES.igpu, igpu.text);
    put(SAMPLE_FILES.igpuTruth, jsonText(igpu.truth));
    put(SAMPLE_FILES.llamaBenchCsv, igpu.llamaBench.csv);
    put(SAMPLE_FILES.llamaBenchJson, igpu.llamaBench.json);
  }
  if (which.npu) {
    const npu = generateNpuTiles(igpu);
    put(SAMPLE_FILES.npu, npu.text);
    put(SAMPLE_FILES.npuTruth, jsonText(npu.truth));
  }
  put(SAMPLE_FILES.readme, README);
  return written;
}

/** Truth JSON text as the sample files hold it. */
export { jsonText } from './json-text';
