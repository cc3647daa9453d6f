/**
 * The iGPU prefill model: a Llama-3.2-3B-shaped transformer (28 layers,
 * hidden 3072, FFN 8192, 24 query / 8 KV heads of 128) run through an
 * IREE-style runtime on a Radeon iGPU at a true 100 MHz device clock.
 *
 * Per prefill: prompt_tokens / ubatch_rows ubatches; per ubatch one
 * submission per layer (a reusable command buffer per layer, recorded on first
 * use), and after the last ubatch one "head" submission (final norm + lm_head
 * of the last row). The host waits for each submission before preparing and
 * submitting the next, so iGPU idle between submissions is host time (wake-up,
 * preparation, doorbell); inside a submission dispatches follow each other with
 * barrier bubbles of 1.2-4.5 us, except ffn_gate/ffn_up, which are independent
 * and overlap by 8-35 us at gate's tail. The first prefill is cold (when
 * cold_first_pass): weights touched the first time (ubatch 0 GEMMs 1.35-1.6x),
 * code objects loaded at first dispatch (+120-450 us), command buffers recorded
 * at first use (+0.6-2.5 ms host), slower host preparation.
 */
import type { Rng } from './rng';
import {
  nsToTickCeil,
  tickToTrueNs,
  type CommandBufferDef,
  type CommandOpDef,
  type DeviceClockTruth,
  type KernelDef,
  type KernelKind,
  type TrueDispatch,
  type TrueSubmission,
} from './timeline';

/** Shape and timing options of the iGPU prefill model. */
export interface IgpuPrefillOptions {
  readonly seed: number;
  readonly layers: number;
  readonly prompt_tokens: number;
  readonly ubatch_rows: number;
  readonly prefills: number;
  readonly cold_first_pass: boolean;
  readonly hidden: number;
  readonly ffn: number;
  readonly n_heads: number;
  readonly n_kv_heads: number;
  readonly head_dim: number;
  readonly vocab: number;
  readonly clock: DeviceClockTruth;
  /** Host time of session begin (iree_host_time_ns). */
  readonly session_begin_ns: number;
  /** From session begin to the first submission. */
  readonly first_submit_delay_ns: number;
  /** Host time from one prefill's last completion to the next prefill's first submission (+-3 %). */
  readonly inter_prefill_gap_ns: number;
  /** From the last completion to session end. */
  readonly session_tail_ns: number;
  /** Clock-correlation spacing. */
  readonly clock_interval_ns: number;
  readonly flush_every_submissions: number;
}

/** Defaults: the shipped sample capture. */
export const IGPU_PREFILL_DEFAULTS: IgpuPrefillOptions = {
  seed: 20260114,
  layers: 28,
  prompt_tokens: 2048,
  ubatch_rows: 512,
  prefills: 2,
  cold_first_pass: true,
  hidden: 3072,
  ffn: 8192,
  n_heads: 24,
  n_kv_heads: 8,
  head_dim: 128,
  vocab: 128256,
  clock: {
    ns_per_tick: 10,
    offset_ns: 759_269_498_807,
    tick_hz_declared: 99_810_000,
    driver_cpu_offset_ns: 1_482_311,
  },
  session_begin_ns: 1_283_446_102_117,
  first_submit_delay_ns: 35_000_000,
  inter_prefill_gap_ns: 150_000_000,
  session_tail_ns: 15_000_000,
  clock_interval_ns: 100_000_000,
  flush_every_submissions: 16,
};

/** The model's kernels, one executable each. */
export interface IgpuKernels {
  readonly gather: KernelDef;
  readonly rms_norm: KernelDef;
  readonly qkv: KernelDef;
  readonly rope: KernelDef;
  readonly attention: KernelDef;
  readonly attn_output: KernelDef;
  readonly ffn_gate: KernelDef;
  readonly ffn_up: KernelDef;
  readonly silu_mul: KernelDef;
  readonly ffn_down: KernelDef;
  readonly final_norm: KernelDef;
  readonly lm_head: KernelDef;
  /** In executable_id order. */
  readonly all: readonly KernelDef[];
}

/** Effective throughput of each weight GEMM, FLOP per ns (= TFLOP/s x 1000). */
const GEMM_FLOP_PER_NS = { qkv: 14_000, attn_output: 13_500, ffn_gate: 15_000, ffn_up: 15_000, ffn_down: 14_000 };
const GEMM_FIXED_NS = 6_000;
const ATTENTION_FLOP_PER_NS = 10_000;
const ATTENTION_FIXED_NS = 40_000;
/** Elementwise kernels per 512 rows. */
const PER_512_ROWS_NS = { gather: 9_000, rms_norm: 16_000, rope: 11_000, silu_mul: 22_000 };
const FINAL_NORM_NS = 4_000;
/** lm_head of one row is weight-bandwidth bound: bytes per ns. */
const LM_HEAD_BYTES_PER_NS = 230;

/** Builds the kernels of the model (keys like IREE dispatch names). */
export function igpuKernels(o: IgpuPrefillOptions, rng: Rng): IgpuKernels {
  const U = o.ubatch_rows;
  const H = o.hidden;
  const F = o.ffn;
  const qkvN = H + 2 * o.n_kv_heads * o.head_dim;
  let nextId = 1;
  const def = (
    name: string,
    kind: KernelKind,
    gemm: KernelDef['gemm'],
    wgs: [number, number, number],
    bindings: number,
    constants: number,
  ): KernelDef => {
    const id = nextId++;
    return {
      key: `prefill_dispatch_${id - 1}_${name}`,
      executable_id: id,
      function_ordinal: 0,
      kind,
      gemm,
      workgroup_size: wgs,
      binding_count: bindings,
      constant_count: constants,
      code_object_hash: rng.hex(16),
    };
  };
  const gather = def(`gather_${U}x${H}_f16`, 'gather', null, [256, 1, 1], 3, 2);
  const rms_norm = def(`rms_norm_${U}x${H}_f16`, 'norm', null, [256, 1, 1], 3, 2);
  const qkv = def(`matmul_${U}x${qkvN}x${H}_f16`, 'weight_gemm', { m: U, n: qkvN, k: H }, [256, 1, 1], 3, 4);
  const rope = def(`rope_${U}x${o.n_heads + o.n_kv_heads}x${o.head_dim}_f16`, 'elementwise', null, [128, 1, 1], 3, 3);
  const attention = def(`attention_${o.n_heads}x${U}xDx${o.head_dim}_f16`, 'attention', null, [256, 1, 1], 5, 6);
  const attn_output = def(`matmul_${U}x${H}x${H}_f16`, 'weight_gemm', { m: U, n: H, k: H }, [256, 1, 1], 4, 4);
  const ffn_gate = def(`matmul_${U}x${F}x${H}_f16`, 'weight_gemm', { m: U, n: F, k: H }, [256, 1, 1], 3, 4);
  const ffn_up = def(`matmul_${U}x${F}x${H}_f16`, 'weight_gemm', { m: U, n: F, k: H }, [256, 1, 1], 3, 4);
  const silu_mul = def(`silu_mul_${U}x${F}_f16`, 'elementwise', null, [256, 1, 1], 3, 2);
  const ffn_down = def(`matmul_${U}x${H}x${F}_f16`, 'weight_gemm', { m: U, n: H, k: F }, [256, 1, 1], 4, 4);
  const final_norm = def(`rms_norm_1x${H}_f16`, 'norm', null, [256, 1, 1], 3, 2);
  const lm_head = def(`matmul_1x${o.vocab}x${H}_f16`, 'head_gemm', { m: 1, n: o.vocab, k: H }, [256, 1, 1], 3, 4);
  return {
    gather, rms_norm, qkv, rope, attention, attn_output, ffn_gate, ffn_up, silu_mul, ffn_down, final_norm, lm_head,
    all: [gather, rms_norm, qkv, rope, attention, attn_output, ffn_gate, ffn_up, silu_mul, ffn_down, final_norm, lm_head],
  };
}

/** Weight parameters of the layers' GEMMs (what `2 x params x tokens` counts). */
export function layerWeightParams(o: IgpuPrefillOptions): number {
  const H = o.hidden;
  const qkvN = H + 2 * o.n_kv_heads * o.head_dim;
  return o.layers * (H * qkvN + H * H + 3 * H * o.ffn);
}

/** Per-layer command buffers plus the head command buffer. */
export function igpuCommandBuffers(o: IgpuPrefillOptions, k: IgpuKernels): CommandBufferDef[] {
  const U = o.ubatch_rows;
  const op = (kernel: KernelDef, wgc: [number, number, number]): CommandOpDef => ({ kernel, workgroup_count: wgc });
  const gemmWgc = (kernel: KernelDef): [number, number, number] => [
    Math.ceil(kernel.gemm!.n / 128),
    Math.ceil(kernel.gemm!.m / 128),
    1,
  ];
  const cbs: CommandBufferDef[] = [];
  for (let l = 0; l < o.layers; l++) {
    const ops: CommandOpDef[] = [];
    if (l === 0) ops.push(op(k.gather, [U, 1, 1]));
    ops.push(
      op(k.rms_norm, [U, 1, 1]),
      op(k.qkv, gemmWgc(k.qkv)),
      op(k.rope, [U, 1, 1]),
      op(k.attention, [Math.ceil(U / 64), o.n_heads, 1]),
      op(k.attn_output, gemmWgc(k.attn_output)),
      op(k.rms_norm, [U, 1, 1]),
      op(k.ffn_gate, gemmWgc(k.ffn_gate)),
      op(k.ffn_up, gemmWgc(k.ffn_up)),
      op(k.silu_mul, [Math.ceil((U * o.ffn) / 1024), 1, 1]),
      op(k.ffn_down, gemmWgc(k.ffn_down)),
    );
    cbs.push({ command_buffer_id: l + 1, ops });
  }
  cbs.push({
    command_buffer_id: o.layers + 1,
    ops: [op(k.final_norm, [1, 1, 1]), op(k.lm_head, [Math.ceil(o.vocab / 128), 1, 1])],
  });
  return cbs;
}

/** Validates option combinations the model cannot represent. */
export function checkIgpuOptions(o: IgpuPrefillOptions): void {
  if (!Number.isInteger(o.clock.ns_per_tick) || o.clock.ns_per_tick < 1) {
    throw new Error(`ns_per_tick must be a positive integer (got ${o.clock.ns_per_tick})`);
  }
  if (o.prompt_tokens % o.ubatch_rows !== 0) {
    throw new Error(`prompt_tokens (${o.prompt_tokens}) must be a multiple of ubatch_rows (${o.ubatch_rows})`);
  }
  if (o.layers < 1 || o.prefills < 1) throw new Error('layers and prefills must be >= 1');
}

/**
 * Simulates the run, yielding submissions in time order. Deterministic in
 * `rng`: two runs from equal seeds yield identical submissions (the big-file
 * writer runs it twice: once for the end time, once to write).
 */
export function* simulateIgpuPrefill(
  o: IgpuPrefillOptions,
  k: IgpuKernels,
  cbs: readonly CommandBufferDef[],
  rng: Rng,
): Generator<TrueSubmission, void, undefined> {
  const clock = o.clock;
  const npt = clock.ns_per_tick;
  const U = o.ubatch_rows;
  const ubatches = o.prompt_tokens / U;
  const toTicks = (ns: number): number => Math.max(1, Math.round(ns / npt));
  const usedCb = new Set<number>();
  const usedExe = new Set<number>();
  let submissionId = 0;
  let eventId = 0;
  let hostNs = o.session_begin_ns + o.first_submit_delay_ns;
  let lastEndNs = 0;

  const baseNs = (kernel: KernelDef, u: number): number => {
    const g = kernel.gemm;
    if (kernel === k.lm_head) return (2 * g!.n * g!.k) / LM_HEAD_BYTES_PER_NS;
    if (kernel.kind === 'weight_gemm') {
      const rate =
        kernel === k.qkv ? GEMM_FLOP_PER_NS.qkv
        : kernel === k.attn_output ? GEMM_FLOP_PER_NS.attn_output
        : kernel === k.ffn_gate ? GEMM_FLOP_PER_NS.ffn_gate
        : kernel === k.ffn_up ? GEMM_FLOP_PER_NS.ffn_up
        : GEMM_FLOP_PER_NS.ffn_down;
      return GEMM_FIXED_NS + (2 * g!.m * g!.n * g!.k) / rate;
    }
    if (kernel === k.attention) {
      const flops = 4 * o.n_heads * o.head_dim * U * (u * U + U / 2);
      return ATTENTION_FIXED_NS + flops / ATTENTION_FLOP_PER_NS;
    }
    if (kernel === k.final_norm) return FINAL_NORM_NS;
    const per512 =
      kernel === k.gather ? PER_512_ROWS_NS.gather
      : kernel === k.rope ? PER_512_ROWS_NS.rope
      : kernel === k.silu_mul ? PER_512_ROWS_NS.silu_mul
      : PER_512_ROWS_NS.rms_norm;
    return (per512 * U) / 512;
  };

  const durationTicks = (kernel: KernelDef, u: number, cold: boolean): number => {
    const gemm = kernel.kind === 'weight_gemm';
    let ns = baseNs(kernel, u) * Math.max(0.7, 1 + (gemm ? 0.012 : 0.04) * rng.normal());
    if (gemm && rng.chance(0.004)) ns *= rng.range(1.08, 1.25);
    if (cold) {
      if (u === 0) ns *= gemm ? rng.range(1.35, 1.6) : rng.range(1.1, 1.3);
      else ns *= 1.02;
    }
    if (!usedExe.has(kernel.executable_id)) {
      usedExe.add(kernel.executable_id);
      if (cold) ns += rng.range(120_000, 450_000);
    }
    return toTicks(ns);
  };

  for (let p = 0; p < o.prefills; p++) {
    const cold = o.cold_first_pass && p === 0;
    if (p > 0) hostNs = lastEndNs + Math.round(o.inter_prefill_gap_ns * rng.range(0.97, 1.03));
    for (let u = 0; u <= ubatches; u++) {
      // u === ubatches is the head submission after the last ubatch.
      const isHead = u === ubatches;
      for (let l = 0; l < (isHead ? 1 : o.layers); l++) {
        const cb = isHead ? cbs[o.layers]! : cbs[l]!;
        const first = u === 0 && l === 0;
        if (!first) {
          // The host saw the previous completion, woke, prepared this one.
          let prep = rng.chance(0.04) ? rng.range(180_000, 650_000) : rng.range(25_000, 90_000);
          if (l === 0 && !isHead) prep += rng.range(120_000, 300_000);
          if (cold) prep *= rng.range(1.3, 1.8);
          hostNs = lastEndNs + Math.round(rng.range(8_000, 25_000) + prep);
        }
        const isNewCb = !usedCb.has(cb.command_buffer_id);
        if (isNewCb) {
          usedCb.add(cb.command_buffer_id);
          hostNs += Math.round(rng.range(600_000, 2_500_000));
        }
        const readyNs = hostNs + Math.round(rng.range(1_000, 4_000));
        const queueStart = nsToTickCeil(clock, readyNs + rng.range(4_000, 9_000));
        let t = queueStart + rng.int(60, 150);
        const dispatches: TrueDispatch[] = [];
        let gateEnd = 0;
        for (let i = 0; i < cb.ops.length; i++) {
          const op = cb.ops[i]!;
          const dur = durationTicks(op.kernel, u, cold);
          let start = t;
          if (op.kernel === k.ffn_up && gateEnd > 0) {
            start = Math.max(dispatches[dispatches.length - 1]!.start_tick + 1, gateEnd - rng.int(800, 3_500));
          }
          const end = start + dur;
          dispatches.push({
            event_id: ++eventId,
            kernel: op.kernel,
            command_index: i,
            workgroup_count: op.workgroup_count,
            start_tick: start,
            end_tick: end,
          });
          if (op.kernel === k.ffn_gate) gateEnd = end;
          const busyUntil = op.kernel === k.ffn_up ? Math.max(end, gateEnd) : end;
          t = busyUntil + rng.int(120, 450);
        }
        let lastEnd = 0;
        for (const d of dispatches) if (d.end_tick > lastEnd) lastEnd = d.end_tick;
        const queueEnd = lastEnd + rng.int(30, 90);
        lastEndNs = tickToTrueNs(clock, queueEnd);
        yield {
          submission_id: ++submissionId,
          command_buffer_id: cb.command_buffer_id,
          new_command_buffer: isNewCb ? cb : null,
          segment: p,
          host_submit_ns: hostNs,
          host_ready_ns: readyNs,
          wait_count: first ? 0 : 1,
          signal_count: 1,
          barrier_count: first ? 0 : 1,
          dependency_strategy: first ? 'inline' : 'device_barrier',
          queue_start_tick: queueStart,
          queue_end_tick: queueEnd,
          dispatches,
        };
      }
    }
  }
}
