/**
 * The NPU companion model: one GEMM split into 256-row tiles, each tile one
 * direct queue dispatch (no command buffer) of about 6 ms on the NPU, the host
 * waiting for each before submitting the next. Its own device clock (1 GHz,
 * declared exactly) and its own session, on the same host timeline
 * (iree_host_time_ns) as the iGPU capture it overlaps.
 */
import type { Rng } from './rng';
import {
  U32_NONE,
  nsToTickCeil,
  tickToTrueNs,
  type DeviceClockTruth,
  type KernelDef,
  type TrueSubmission,
} from './timeline';

/** Options of the NPU tile model. */
export interface NpuTilesOptions {
  readonly seed: number;
  readonly tiles: number;
  readonly tile_rows: number;
  /** The GEMM's output features and input features (the iGPU's ffn_gate by default). */
  readonly n: number;
  readonly k: number;
  /** Mean tile time. */
  readonly tile_ns: number;
  readonly clock: DeviceClockTruth;
  /** Host time of the NPU session begin. */
  readonly session_begin_ns: number;
  readonly first_submit_delay_ns: number;
  readonly session_tail_ns: number;
  readonly clock_interval_ns: number;
  readonly flush_every_submissions: number;
}

/** Defaults except the session begin, which is placed relative to the iGPU run. */
export const NPU_TILES_DEFAULTS: Omit<NpuTilesOptions, 'session_begin_ns'> = {
  seed: 20260115,
  tiles: 40,
  tile_rows: 256,
  n: 8192,
  k: 3072,
  tile_ns: 6_000_000,
  clock: {
    ns_per_tick: 1,
    offset_ns: 238_326_763_555,
    tick_hz_declared: 1_000_000_000,
    driver_cpu_offset_ns: 1_482_311,
  },
  first_submit_delay_ns: 60_000_000,
  session_tail_ns: 10_000_000,
  clock_interval_ns: 100_000_000,
  flush_every_submissions: 8,
};

/** The single NPU kernel. */
export function npuKernel(o: NpuTilesOptions, rng: Rng): KernelDef {
  return {
    key: `npu_prefill_dispatch_6_matmul_${o.tile_rows}x${o.n}x${o.k}_bf16`,
    executable_id: 1,
    function_ordinal: 0,
    kind: 'weight_gemm',
    gemm: { m: o.tile_rows, n: o.n, k: o.k },
    workgroup_size: [1, 1, 1],
    binding_count: 3,
    constant_count: 2,
    code_object_hash: rng.hex(16),
  };
}

/** Simulates the tiles, yielding one direct-dispatch submission per tile. */
export function* simulateNpuTiles(
  o: NpuTilesOptions,
  kernel: KernelDef,
  rng: Rng,
): Generator<TrueSubmission, void, undefined> {
  const clock = o.clock;
  const wgc: readonly [number, number, number] = [4, 8, 1];
  let hostNs = o.session_begin_ns + o.first_submit_delay_ns;
  for (let i = 0; i < o.tiles; i++) {
    if (i > 0) {
      const prep = rng.chance(0.03) ? rng.range(500_000, 1_500_000) : rng.range(40_000, 150_000);
      hostNs += Math.round(rng.range(10_000, 30_000) + prep);
    }
    const readyNs = hostNs + Math.round(rng.range(1_000, 3_000));
    const queueStart = nsToTickCeil(clock, readyNs + rng.range(15_000, 40_000));
    const start = queueStart + Math.round(rng.range(500, 2_000) / clock.ns_per_tick);
    let ns = o.tile_ns * (1 + 0.01 * rng.normal());
    if (rng.chance(0.03)) ns *= rng.range(1.05, 1.15);
    const end = start + Math.max(1, Math.round(ns / clock.ns_per_tick));
    const queueEnd = end + Math.round(rng.range(300, 1_500) / clock.ns_per_tick);
    yield {
      submission_id: i + 1,
      command_buffer_id: 0,
      new_command_buffer: null,
      segment: 0,
      host_submit_ns: hostNs,
      host_ready_ns: readyNs,
      wait_count: i === 0 ? 0 : 1,
      signal_count: 1,
      barrier_count: 0,
      dependency_strategy: 'inline',
      queue_start_tick: queueStart,
      queue_end_tick: queueEnd,
      dispatches: [{ event_id: i + 1, kernel, command_index: U32_NONE, workgroup_count: wgc, start_tick: start, end_tick: end }],
    };
    hostNs = tickToTrueNs(clock, queueEnd);
  }
}
