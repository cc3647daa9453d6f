/**
 * The generator's TRUE timeline: what really happened, before any producer
 * writes it down. Every model (iGPU prefill, NPU tiles, hand-made lists)
 * produces these shapes; the ireeperf-jsonl emitter and the ground-truth
 * accumulator both consume them, so the file and its truth come from the same
 * values.
 *
 * Units: device times are integer device ticks; host times are integer ns in
 * the `iree_host_time_ns` domain (CLOCK_MONOTONIC-like). The true clock maps a
 * tick to host time exactly: `host_ns = offset_ns + tick * ns_per_tick`, with
 * an integer `ns_per_tick` (10 for the 100 MHz iGPU, 1 for a 1 GHz NPU), so
 * every true time is an exact integer. All values stay below 2^53 (plain JS
 * numbers are exact here).
 */

/** What a kernel is, for the ground truth's per-kernel and row-group numbers. */
export type KernelKind =
  | 'weight_gemm'
  | 'head_gemm'
  | 'attention'
  | 'norm'
  | 'elementwise'
  | 'gather';

/** One executable with one function (IREE: one dispatch region per executable). */
export interface KernelDef {
  /** Dispatch key as IREE prints it (`key` of dispatch_event, `name` of executable_function). */
  readonly key: string;
  readonly executable_id: number;
  readonly function_ordinal: number;
  readonly kind: KernelKind;
  /** GEMM shape per dispatch: m rows (the ubatch), n output features, k input features. */
  readonly gemm: { readonly m: number; readonly n: number; readonly k: number } | null;
  readonly workgroup_size: readonly [number, number, number];
  readonly binding_count: number;
  readonly constant_count: number;
  /** 32 hex digits, or null when the producer gives no code-object hash. */
  readonly code_object_hash: string | null;
}

/** One operation recorded into a reusable command buffer. */
export interface CommandOpDef {
  readonly kernel: KernelDef;
  readonly workgroup_count: readonly [number, number, number];
}

/** A reusable command buffer (one per layer in the iGPU model). */
export interface CommandBufferDef {
  readonly command_buffer_id: number;
  readonly ops: readonly CommandOpDef[];
}

/** One dispatch execution on the device, in true device ticks. */
export interface TrueDispatch {
  /** dispatch_event `event_id` (unique in the capture). */
  readonly event_id: number;
  readonly kernel: KernelDef;
  /** Index into the command buffer, or 4294967295 for a direct queue dispatch. */
  readonly command_index: number;
  readonly workgroup_count: readonly [number, number, number];
  readonly start_tick: number;
  readonly end_tick: number;
}

/** One queue submission: a command-buffer execute, or one direct dispatch. */
export interface TrueSubmission {
  readonly submission_id: number;
  /** 0 for a direct queue dispatch (no command buffer). */
  readonly command_buffer_id: number;
  /** Set on the submission that first uses a command buffer: its metadata is written then. */
  readonly new_command_buffer: CommandBufferDef | null;
  /** Prefill (segment) index this submission belongs to. */
  readonly segment: number;
  /** Host time the queue operation was submitted (queue_event host_time_ns). */
  readonly host_submit_ns: number;
  /** Host time its waits were satisfied (queue_event ready_host_time_ns). */
  readonly host_ready_ns: number;
  readonly wait_count: number;
  readonly signal_count: number;
  readonly barrier_count: number;
  readonly dependency_strategy: 'inline' | 'device_barrier';
  /** Queue-visible device span (queue_device_event), in ticks. */
  readonly queue_start_tick: number;
  readonly queue_end_tick: number;
  /** In start order. */
  readonly dispatches: readonly TrueDispatch[];
}

/** The true device clock and what the producer declares about it. */
export interface DeviceClockTruth {
  /** Exact integer ns per tick (10 = 100 MHz). */
  readonly ns_per_tick: number;
  /** host_ns = offset_ns + tick * ns_per_tick. */
  readonly offset_ns: number;
  /** `timestamp_frequency_hz` on the device record (the derived format's addition), or null. */
  readonly tick_hz_declared: number | null;
  /**
   * The driver's CPU timestamp domain (`driver_host_cpu_timestamp_ns`, KFD's
   * raw monotonic clock) runs this many ns behind iree_host_time_ns.
   */
  readonly driver_cpu_offset_ns: number;
}

/** One clock_correlation sample as written. */
export interface ClockSample {
  readonly sample_id: number;
  readonly device_tick: number;
  /** True host time of the tick latch: offset_ns + device_tick * ns_per_tick. */
  readonly latch_ns: number;
  readonly host_cpu_timestamp_ns: number;
  readonly host_time_begin_ns: number;
  readonly host_time_end_ns: number;
}

/** Everything the emitter needs besides the submission stream. */
export interface CaptureSpec {
  readonly session_id: number;
  readonly physical_device_ordinal: number;
  readonly queue_ordinal: number;
  readonly stream_id: number;
  /** 32 hex digits, or null. */
  readonly physical_device_uuid: string | null;
  readonly clock: DeviceClockTruth;
  /** All executables, written at session start. */
  readonly kernels: readonly KernelDef[];
  /** Sorted by latch time; the first and last define the producer's fit. */
  readonly clock_samples: readonly ClockSample[];
  /** Host times of session begin/end (not written: IREE's session records carry no time). */
  readonly session_begin_ns: number;
  readonly session_end_ns: number;
  /** Flush a group of chunks every this many submissions. */
  readonly flush_every_submissions: number;
}

/** The u32 "none" sentinel IREE writes for absent ordinals and command indices. */
export const U32_NONE = 4294967295;

/** True host ns of a device tick. */
export function tickToTrueNs(clock: DeviceClockTruth, tick: number): number {
  return clock.offset_ns + tick * clock.ns_per_tick;
}

/** The first device tick at or after host time `ns`. */
export function nsToTickCeil(clock: DeviceClockTruth, ns: number): number {
  return Math.ceil((ns - clock.offset_ns) / clock.ns_per_tick);
}
