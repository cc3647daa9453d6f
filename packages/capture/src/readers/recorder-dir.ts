import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fitClock, tickToNs, type ClockFit } from '@tickwise/time';
import type { DeviceKind, Severity, TimeSource } from '@tickwise/store';

/**
 * Reader of the native recorder's capture directories (`native/FORMAT.md`
 * is the format; this file follows it field by field).
 *
 *   run/                          readRecorderDir('run/')
 *     records.twr ─ file header ─┐
 *                 ─ chunks ──────┼─ CRC-32 checked, reading stops at the first bad
 *     meta.json ─────────────────┤   or partial chunk (a crash leaves one)
 *     proc-<pid>/ (each child) ──┘
 *            │  decodeRecords(): 64-byte records -> RecorderRecord
 *            ▼
 *     rowsOf(): rows in the canonical table shapes of @tickwise/store's
 *     schema (devices, clock_samples, dispatches, host_events, provenance,
 *     diagnostics, conditions), every time a bigint on CLOCK_MONOTONIC ns.
 *
 * Time: host fields are CLOCK_MONOTONIC ns (the capture's timeline,
 * `host_monotonic`). rocprofiler-sdk dispatch times are CLOCK_BOOTTIME ns and
 * are shifted by the recorded BOOTTIME - MONOTONIC offset onto CLOCK_MONOTONIC
 * (`time_source = 'host_monotonic'`; the offset is in `conditions`). Device tick samples (hip:N) are kept raw
 * in `clock_samples` and fitted with `fitClock` for the `devices` row. NPU
 * commands have no device time: a dispatch row spans from the EXEC_CMD entry
 * (the command cannot start earlier) to the exit of the wait that covered its
 * seq (it cannot end later), `time_source = 'host_monotonic'`. Both bounds
 * are exact; the span is an upper bound of the execution (commands queued
 * behind others, or completed long before the host waited, look longer), and
 * the union over a device is an upper bound of its busy time.
 *
 * CUDA (the cuda backend's kinds 48-52, native/cuda/README.md): a kernel is a
 * `dispatches` row (device = CUDA ordinal, queue = CUPTI stream id,
 * submission_id = event_id = CUPTI correlation id, the name assembled from
 * CudaName fragments); a memcpy/memset a `host_events` row of kind
 * `cuda_memcpy`/`cuda_memset` with its device; an API call a `cuda_api` host
 * event (op = API name, submission_id = correlation id, name = its kernel's).
 * With CUPTI's timestamp callback their times are CLOCK_MONOTONIC already
 * (domain 0); otherwise (domain 2) they are mapped through the fit of the
 * process's CUPTI clock samples. Each CUDA device is a `gpu` row `cuda:<n>`
 * with `time_base = 'host_monotonic'` and the CUPTI samples' fit.
 */

/** Record kinds (FORMAT.md "Record kinds"). */
export const RecorderKind = {
  hip_launch: 1,
  hip_sync: 2,
  hip_dispatch: 3,
  xdna_device: 16,
  xdna_hwctx_create: 17,
  xdna_hwctx_destroy: 18,
  xdna_exec_cmd: 19,
  xdna_syncobj_timeline_wait: 20,
  xdna_wait_cmd: 21,
  xdna_sync_bo: 22,
  xdna_unknown_ioctl: 23,
  xdna_syncobj_wait: 24,
  clock_sample: 32,
  thread_stats: 33,
  cuda_kernel: 48,
  cuda_memcpy: 49,
  cuda_memset: 50,
  cuda_api: 51,
  cuda_name: 52,
} as const;
/** Key of {@link RecorderKind}. */
export type RecorderKind = keyof typeof RecorderKind;

/** HIP entry points (HipLaunch.api / HipSync.api). */
export const HipApi: Record<number, string> = {
  1: 'hipLaunchKernel',
  2: 'hipModuleLaunchKernel',
  3: 'hipExtModuleLaunchKernel',
  4: 'hipLaunchKernelExC',
  5: 'hipGraphLaunch',
  6: 'hipExtLaunchKernel',
  7: 'hipLaunchCooperativeKernel',
  32: 'hipDeviceSynchronize',
  33: 'hipStreamSynchronize',
};

/** Clock domain ids (FORMAT.md "Clock domains"); device d of HIP is 16 + d. */
export const RecorderDomain = { host_monotonic: 0, host_boottime: 1, cupti: 2, hip_device0: 16 } as const;

/** CudaApi.aux (FORMAT.md "51 CudaApi"). */
export const CudaApiClass: Record<number, string> = { 1: 'launch', 2: 'synchronize', 3: 'memcpy', 4: 'memset', 5: 'graph_launch' };

/** CudaApi.domain (CUpti_CallbackDomain). */
export const CudaApiDomain: Record<number, string> = { 1: 'driver', 2: 'runtime' };

/** CudaMemcpy.copy_kind (CUpti_ActivityMemcpyKind). */
export const CudaMemcpyKind: Record<number, string> = {
  0: 'unknown', 1: 'HtoD', 2: 'DtoH', 3: 'HtoA', 4: 'AtoH', 5: 'AtoA', 6: 'AtoD', 7: 'DtoA', 8: 'DtoD', 9: 'HtoH', 10: 'PtoP',
};

/** CudaMemcpy.src_kind/dst_kind, CudaMemset.memory_kind (CUpti_ActivityMemoryKind). */
export const CudaMemoryKind: Record<number, string> = {
  0: 'unknown', 1: 'pageable', 2: 'pinned', 3: 'device', 4: 'array', 5: 'managed', 6: 'device_static', 7: 'managed_static',
};

/** CudaName.aux (FORMAT.md "52 CudaName"): what a name names. */
export const CudaNameKind = { kernel: 1, api: 2 } as const;

/** Key of a CUDA name in {@link RecorderProcess.names}: `cuda-kernel:<name_key>` or `cuda-api:<domain << 32 | cbid>`. */
export function cudaNameKey(nameKind: number, key: bigint): string {
  return `${nameKind === CudaNameKind.api ? 'cuda-api' : nameKind === CudaNameKind.kernel ? 'cuda-kernel' : `cuda-${nameKind}`}:${key}`;
}

/** NPU device number in the canonical tables (GPUs are 0..15 by HIP ordinal). */
export const RECORDER_NPU_DEVICE = 100;

const FILE_MAGIC = 'TWRECv1\0';
const CHUNK_MAGIC = 0x4b435754;
const FILE_HEADER_BYTES = 64;
const CHUNK_HEADER_BYTES = 32;
const RECORD_BYTES = 64;

/** The file header of records.twr. */
export interface RecorderFileHeader {
  readonly format_version: number;
  readonly pid: number;
  readonly host_start_ns: bigint;
  readonly boottime_minus_monotonic_ns: bigint;
  readonly parent_pid: number;
  readonly fork_child: boolean;
}

/** One decoded record: its kind, the producing thread, and its fields by FORMAT.md name. */
export interface RecorderRecord {
  readonly kind: number;
  readonly aux: number;
  readonly tid: number;
  /** Kind-specific fields; 64-bit values are bigint, 32-bit ones number. */
  readonly f: Readonly<Record<string, bigint | number>>;
}

/** One process's capture (the root directory or a proc-<pid> child). */
export interface RecorderProcess {
  readonly dir: string;
  readonly header: RecorderFileHeader;
  readonly records: readonly RecorderRecord[];
  /**
   * Names by `${key_kind}:${key}` (key as decimal) from strings chunks, and
   * the CUDA names assembled from CudaName fragments by {@link cudaNameKey}.
   */
  readonly names: ReadonlyMap<string, string>;
  readonly meta: RecorderMeta | null;
  readonly chunks: number;
  readonly file_bytes: number;
  readonly valid_bytes: number;
  /** Why reading stopped before the end of the file, or null. */
  readonly stopped: string | null;
}

/** The parts of meta.json this reader uses (FORMAT.md "meta.json"). */
export interface RecorderMeta {
  readonly format: string;
  readonly format_version: number;
  readonly producer?: { readonly name?: string; readonly version?: string; readonly library?: string };
  readonly complete: boolean;
  readonly end_reason: string | null;
  readonly pid: number;
  readonly parent_pid?: number;
  readonly fork_child?: boolean;
  readonly exe?: string;
  readonly command_line?: readonly string[];
  readonly boottime_minus_monotonic_ns?: string;
  readonly ring_records?: number;
  readonly clock_domains?: readonly RecorderClockDomain[];
  readonly backends?: readonly { readonly name: string; readonly state: string; readonly [k: string]: unknown }[];
  readonly threads?: readonly { readonly tid: number; readonly records_pushed: number; readonly records_dropped: number }[];
  readonly records_dropped_total?: number;
  readonly flush_timeouts?: readonly string[];
  readonly markers?: readonly string[];
  readonly provenance?: readonly RecorderProvenance[];
}

/** A clock domain of meta.json. */
export interface RecorderClockDomain {
  readonly id: number;
  readonly name: string;
  readonly kind: string;
  readonly unit: string;
  readonly device?: string;
  readonly tick_hz_declared?: number | null;
}

/** A provenance entry of meta.json. */
export interface RecorderProvenance {
  readonly path: string;
  readonly build_id: string | null;
  readonly file_found: boolean;
  readonly size_bytes?: number;
  readonly mtime_ns?: string;
  readonly loaded_at_end?: boolean;
  readonly markers: Readonly<Record<string, number>>;
}

// ---- rows in the canonical shapes (packages/store/src/schema.ts) -----------

/** A `devices` row. */
export interface RecorderDeviceRow {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: DeviceKind;
  readonly name: string;
  readonly tick_hz_declared: number | null;
  readonly tick_hz_fitted: number | null;
  readonly tick_hz_used: number | null;
  readonly time_base: TimeSource;
  readonly fit_method: string | null;
  readonly fit_domain: string | null;
  readonly fit_residual_max_ns: number | null;
  readonly fit_residual_rms_ns: number | null;
  readonly fit_uncertainty_ns: number | null;
  readonly fit_slope_uncertainty_ppm: number | null;
  readonly fit_bracket_min_ns: number | null;
  readonly fit_bracket_max_ns: number | null;
  readonly fit_base_tick: bigint | null;
  readonly fit_base_ns: bigint | null;
  readonly fit_ns_per_tick_num: bigint | null;
  readonly clock_samples: number;
}

/** A `clock_samples` row. */
export interface RecorderClockSampleRow {
  readonly capture_id: number;
  readonly device: number;
  readonly sample_id: bigint;
  readonly device_tick: bigint;
  readonly host_begin_ns: bigint;
  readonly host_end_ns: bigint;
  readonly host_cpu_ns: bigint | null;
  readonly host_domain: string;
  readonly residual_ns: number | null;
  readonly line: null;
}

/** A `dispatches` row. */
export interface RecorderDispatchRow {
  readonly capture_id: number;
  readonly device: number;
  readonly queue: number | null;
  readonly submission_id: bigint | null;
  readonly command_buffer_id: null;
  readonly command_index: null;
  readonly event_id: bigint | null;
  readonly executable_id: null;
  readonly function_ordinal: null;
  readonly kernel: string | null;
  readonly start_ns: bigint | null;
  readonly end_ns: bigint | null;
  readonly dur_ns: bigint | null;
  readonly start_tick: null;
  readonly end_tick: null;
  readonly source_dur_ns: null;
  readonly time_source: TimeSource;
  readonly valid: boolean;
  readonly workgroup_count_x: null;
  readonly workgroup_count_y: null;
  readonly workgroup_count_z: null;
  readonly rows: null;
  readonly line: null;
}

/** A `host_events` row. */
export interface RecorderHostEventRow {
  readonly capture_id: number;
  readonly device: number | null;
  readonly queue: number | null;
  readonly kind: string;
  readonly op: string | null;
  readonly name: string | null;
  readonly event_id: bigint | null;
  readonly submission_id: bigint | null;
  readonly command_buffer_id: null;
  readonly command_index: null;
  readonly thread_id: bigint;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly dur_ns: bigint;
  readonly time_source: TimeSource;
  readonly valid: boolean;
  /** JSON text; 64-bit integers as decimal strings. */
  readonly args: string;
  readonly line: null;
}

/** A `provenance` row. */
export interface RecorderProvenanceRow {
  readonly capture_id: number;
  readonly role: string;
  readonly name: string;
  readonly path: string;
  readonly size_bytes: number | null;
  readonly mtime_ns: bigint | null;
  readonly build_id: string | null;
  readonly sha256: null;
  /** JSON text: marker -> count. */
  readonly markers: string;
  readonly how_found: string;
}

/** A `diagnostics` row. */
export interface RecorderDiagnosticRow {
  readonly capture_id: number;
  readonly severity: Severity;
  readonly code: string;
  readonly message: string;
  readonly file: string;
  readonly line: number | null;
}

/** A `conditions` row. */
export interface RecorderConditionRow {
  readonly capture_id: number;
  readonly key: string;
  readonly value: string | null;
  readonly unit: string | null;
  readonly note: string | null;
}

/** What a capture directory turns into. */
export interface RecorderCapture {
  readonly dir: string;
  /** The `captures` row's fields this reader knows (path, sha256, ids: the importer's). */
  readonly capture: {
    readonly format: 'tickwise-recorder';
    readonly schema_version: number;
    readonly producer: string;
    readonly timeline: 'host_monotonic';
    readonly session_status: 'complete' | 'incomplete';
    readonly record_count: number;
  };
  readonly processes: readonly RecorderProcess[];
  readonly devices: readonly RecorderDeviceRow[];
  readonly clock_samples: readonly RecorderClockSampleRow[];
  readonly dispatches: readonly RecorderDispatchRow[];
  readonly host_events: readonly RecorderHostEventRow[];
  readonly provenance: readonly RecorderProvenanceRow[];
  readonly diagnostics: readonly RecorderDiagnosticRow[];
  readonly conditions: readonly RecorderConditionRow[];
  /** The device clock fits, by device number. */
  readonly fits: ReadonlyMap<number, ClockFit>;
}

/** Options of {@link readRecorderDir}. */
export interface RecorderReadOptions {
  /** `capture_id` of every row (default 0). */
  readonly captureId?: number;
}

// ---- binary decoding --------------------------------------------------------

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[i] = c >>> 0;
  }
  return t;
})();

/** CRC-32 (IEEE), as zlib computes it. */
export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  let c = 0xffffffff;
  for (let i = start; i < end; i++) c = CRC_TABLE[(c ^ buf[i]!) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

type FieldType = 'u8' | 'u16' | 'u32' | 'i32' | 'u64' | 'i64';
type Layout = readonly (readonly [name: string, offset: number, type: FieldType])[];

const XDNA_PREFIX: Layout = [
  ['host_enter_ns', 8, 'u64'],
  ['host_exit_ns', 16, 'u64'],
  ['fd', 24, 'i32'],
  ['result', 28, 'i32'],
];

/** CudaKernel, CudaMemcpy, CudaMemset: bytes 8..39 (aux = time_domain of start/end). */
const CUDA_ACTIVITY_PREFIX: Layout = [
  ['start', 8, 'u64'],
  ['end', 16, 'u64'],
  ['correlation_id', 24, 'u32'],
  ['device_id', 28, 'u32'],
  ['stream_id', 32, 'u32'],
  ['context_id', 36, 'u32'],
];

/** Field layouts by kind (FORMAT.md "Record kinds"). */
const LAYOUTS: Readonly<Record<number, Layout>> = {
  [RecorderKind.hip_launch]: [
    ['host_enter_ns', 8, 'u64'], ['host_exit_ns', 16, 'u64'], ['launch_id', 24, 'u64'], ['function', 32, 'u64'],
    ['stream', 40, 'u64'], ['result', 48, 'i32'], ['grid_blocks', 52, 'u32'], ['block_threads', 56, 'u32'],
    ['shared_mem_bytes', 60, 'u32'],
  ],
  [RecorderKind.hip_sync]: [['host_enter_ns', 8, 'u64'], ['host_exit_ns', 16, 'u64'], ['stream', 24, 'u64'], ['result', 32, 'i32']],
  [RecorderKind.hip_dispatch]: [
    ['start', 8, 'u64'], ['end', 16, 'u64'], ['correlation_external', 24, 'u64'], ['dispatch_id', 32, 'u64'],
    ['agent_handle', 40, 'u64'], ['queue_handle', 48, 'u64'], ['kernel_id', 56, 'u64'],
  ],
  [RecorderKind.xdna_device]: [...XDNA_PREFIX, ['version_major', 32, 'u32'], ['version_minor', 36, 'u32'], ['version_patch', 40, 'u32']],
  [RecorderKind.xdna_hwctx_create]: [
    ...XDNA_PREFIX, ['hwctx', 32, 'u32'], ['syncobj', 36, 'u32'], ['max_opc', 40, 'u32'], ['num_tiles', 44, 'u32'],
    ['mem_size', 48, 'u32'], ['request_size', 52, 'u32'],
  ],
  [RecorderKind.xdna_hwctx_destroy]: [...XDNA_PREFIX, ['hwctx', 32, 'u32']],
  [RecorderKind.xdna_exec_cmd]: [
    ...XDNA_PREFIX, ['hwctx', 32, 'u32'], ['type', 36, 'u32'], ['seq', 40, 'u64'], ['cmd_count', 48, 'u32'],
    ['arg_count', 52, 'u32'], ['first_cmd_handle', 56, 'u32'], ['request_size', 60, 'u32'],
  ],
  [RecorderKind.xdna_syncobj_timeline_wait]: [
    ...XDNA_PREFIX, ['syncobj', 32, 'u32'], ['flags', 36, 'u32'], ['point', 40, 'u64'], ['timeout_abs_ns', 48, 'i64'],
    ['count_handles', 56, 'u32'], ['first_signaled', 60, 'u32'],
  ],
  [RecorderKind.xdna_syncobj_wait]: [
    ...XDNA_PREFIX, ['syncobj', 32, 'u32'], ['flags', 36, 'u32'], ['point', 40, 'u64'], ['timeout_abs_ns', 48, 'i64'],
    ['count_handles', 56, 'u32'], ['first_signaled', 60, 'u32'],
  ],
  [RecorderKind.xdna_wait_cmd]: [...XDNA_PREFIX, ['hwctx', 32, 'u32'], ['timeout_ms', 36, 'u32'], ['seq', 40, 'u64']],
  [RecorderKind.xdna_sync_bo]: [...XDNA_PREFIX, ['bo', 32, 'u32'], ['direction', 36, 'u32'], ['offset', 40, 'u64'], ['size', 48, 'u64']],
  [RecorderKind.xdna_unknown_ioctl]: [...XDNA_PREFIX, ['request', 32, 'u32'], ['nr', 36, 'u32'], ['size', 40, 'u32'], ['dir', 44, 'u32']],
  [RecorderKind.clock_sample]: [
    ['host_before_ns', 8, 'u64'], ['host_after_ns', 16, 'u64'], ['device_value', 24, 'u64'], ['tries', 32, 'u32'],
    ['reason', 36, 'u32'], ['sample_seq', 40, 'u64'],
  ],
  [RecorderKind.thread_stats]: [['host_ns', 8, 'u64'], ['pushed_total', 16, 'u64'], ['dropped_total', 24, 'u64'], ['ring_records', 32, 'u64']],
  [RecorderKind.cuda_kernel]: [
    ...CUDA_ACTIVITY_PREFIX, ['name_key', 40, 'u64'], ['grid_blocks', 48, 'u32'], ['block_threads', 52, 'u32'],
    ['shared_mem_bytes', 56, 'u32'], ['registers_per_thread', 60, 'u16'], ['flags', 62, 'u16'],
  ],
  [RecorderKind.cuda_memcpy]: [
    ...CUDA_ACTIVITY_PREFIX, ['bytes', 40, 'u64'], ['runtime_correlation_id', 48, 'u32'], ['copy_kind', 52, 'u8'],
    ['src_kind', 53, 'u8'], ['dst_kind', 54, 'u8'], ['cupti_flags', 55, 'u8'],
  ],
  [RecorderKind.cuda_memset]: [
    ...CUDA_ACTIVITY_PREFIX, ['bytes', 40, 'u64'], ['value', 48, 'u32'], ['memory_kind', 52, 'u16'], ['cupti_flags', 54, 'u16'],
  ],
  [RecorderKind.cuda_api]: [
    ['host_enter_ns', 8, 'u64'], ['host_exit_ns', 16, 'u64'], ['correlation_id', 24, 'u32'], ['cbid', 28, 'u32'],
    ['domain', 32, 'u32'], ['result', 36, 'i32'], ['stream', 40, 'u64'], ['flags', 48, 'u16'], ['time_domain', 50, 'u16'],
  ],
  // text[40] at 24 is bytes, not a field: readRecorderProcess assembles the names
  [RecorderKind.cuda_name]: [['key', 8, 'u64'], ['total_len', 16, 'u32'], ['offset', 20, 'u32']],
};

function readField(b: Buffer, at: number, t: FieldType): bigint | number {
  switch (t) {
    case 'u8': return b.readUInt8(at);
    case 'u16': return b.readUInt16LE(at);
    case 'u32': return b.readUInt32LE(at);
    case 'i32': return b.readInt32LE(at);
    case 'u64': return b.readBigUInt64LE(at);
    case 'i64': return b.readBigInt64LE(at);
  }
}

/** Decodes `count` records starting at byte `at`. */
export function decodeRecords(b: Buffer, at: number, count: number): RecorderRecord[] {
  const out: RecorderRecord[] = [];
  for (let i = 0; i < count; i++) {
    const o = at + i * RECORD_BYTES;
    const kind = b.readUInt16LE(o);
    const f: Record<string, bigint | number> = {};
    for (const [name, off, t] of LAYOUTS[kind] ?? []) f[name] = readField(b, o + off, t);
    out.push({ kind, aux: b.readUInt16LE(o + 2), tid: b.readUInt32LE(o + 4), f });
  }
  return out;
}

const big = (x: bigint | number | undefined): bigint => (typeof x === 'bigint' ? x : BigInt(x ?? 0));
const num = (x: bigint | number | undefined): number => (typeof x === 'number' ? x : Number(x ?? 0));

/** Reads one process's records.twr and meta.json. */
export async function readRecorderProcess(dir: string): Promise<RecorderProcess> {
  const b = await readFile(join(dir, 'records.twr'));
  let meta: RecorderMeta | null = null;
  try {
    meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as RecorderMeta;
  } catch {
    meta = null;
  }
  if (b.length < FILE_HEADER_BYTES || b.toString('latin1', 0, 8) !== FILE_MAGIC) {
    throw new Error(`${join(dir, 'records.twr')}: not a tickwise recorder file (bad magic)`);
  }
  if (crc32(b, 0, 60) !== b.readUInt32LE(60)) throw new Error(`${join(dir, 'records.twr')}: file header CRC mismatch`);
  const header: RecorderFileHeader = {
    format_version: b.readUInt32LE(8),
    pid: b.readUInt32LE(20),
    host_start_ns: b.readBigUInt64LE(24),
    boottime_minus_monotonic_ns: b.readBigInt64LE(32),
    parent_pid: b.readUInt32LE(40),
    fork_child: (b.readUInt32LE(44) & 1) === 1,
  };
  if (header.format_version !== 1 || b.readUInt32LE(12) !== RECORD_BYTES) {
    throw new Error(`${join(dir, 'records.twr')}: unsupported format version ${header.format_version}`);
  }
  const records: RecorderRecord[] = [];
  const names = new Map<string, string>();
  // CudaName fragments: cudaNameKey -> total_len and offset -> bytes
  const fragments = new Map<string, { total: number; parts: Map<number, Buffer> }>();
  let off = FILE_HEADER_BYTES;
  let chunks = 0;
  let stopped: string | null = null;
  let seq = 0n;
  while (off < b.length) {
    if (b.length - off < CHUNK_HEADER_BYTES) { stopped = `partial chunk header at byte ${off}`; break; }
    if (b.readUInt32LE(off) !== CHUNK_MAGIC || crc32(b, off, off + 28) !== b.readUInt32LE(off + 28)) { stopped = `bad chunk header at byte ${off}`; break; }
    const type = b.readUInt16LE(off + 4);
    const bytes = b.readUInt32LE(off + 8);
    const count = b.readUInt32LE(off + 12);
    const p = off + CHUNK_HEADER_BYTES;
    if (b.length - p < bytes) { stopped = `partial chunk payload at byte ${off}`; break; }
    if (crc32(b, p, p + bytes) !== b.readUInt32LE(off + 24)) { stopped = `chunk payload CRC mismatch at byte ${off}`; break; }
    if (b.readBigUInt64LE(off + 16) !== seq) { stopped = `chunk sequence gap at byte ${off}`; break; }
    seq++;
    if (type === 1) {
      if (bytes !== count * RECORD_BYTES) { stopped = `record chunk size mismatch at byte ${off}`; break; }
      decodeRecords(b, p, count).forEach((r, i) => {
        records.push(r);
        if (r.kind !== RecorderKind.cuda_name) return;
        const total = num(r.f['total_len']);
        const at = num(r.f['offset']);
        const k = cudaNameKey(r.aux, big(r.f['key']));
        const e = fragments.get(k) ?? { total, parts: new Map<number, Buffer>() };
        const o = p + i * RECORD_BYTES + 24;
        e.parts.set(at, b.subarray(o, o + Math.max(0, Math.min(40, total - at))));
        fragments.set(k, e);
      });
    } else if (type === 2) {
      let q = p;
      for (let i = 0; i < count && q + 16 <= p + bytes; i++) {
        const key = b.readBigUInt64LE(q);
        const keyKind = b.readUInt32LE(q + 8);
        const len = b.readUInt32LE(q + 12);
        names.set(`${keyKind}:${key}`, b.toString('utf8', q + 16, q + 16 + len));
        q += 16 + Math.ceil(len / 8) * 8;
      }
    }
    off = p + bytes;
    chunks++;
  }
  // a CUDA name is its fragments by offset; kept only when they cover all total_len bytes
  for (const [k, { total, parts }] of fragments) {
    const sorted = [...parts].sort((x, y) => x[0] - y[0]);
    let covered = 0;
    for (const [at, text] of sorted) if (at <= covered) covered = Math.max(covered, at + text.length);
    if (covered < total) continue;
    const whole = Buffer.alloc(total);
    for (const [at, text] of sorted) text.copy(whole, at);
    names.set(k, whole.toString('utf8'));
  }
  return { dir, header, records, names, meta, chunks, file_bytes: b.length, valid_bytes: off, stopped };
}

/** The process directories of a capture: the root and every proc-<pid>[.n] below it. */
export async function recorderProcessDirs(dir: string): Promise<string[]> {
  const out = [dir];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory() && /^proc-\d+(\.\d+)?$/.test(e.name)) out.push(join(dir, e.name));
  }
  const exists = await Promise.all(out.map((d) => stat(join(d, 'records.twr')).then(() => true, () => false)));
  return out.filter((_, i) => exists[i]);
}

/** True when `path` is a recorder capture directory. */
export async function isRecorderDir(path: string): Promise<boolean> {
  try {
    const head = await readFile(join(path, 'records.twr'));
    return head.toString('latin1', 0, 8) === FILE_MAGIC;
  } catch {
    return false;
  }
}

// ---- rows ---------------------------------------------------------------------

const KIND_NAME: Record<number, string> = Object.fromEntries(Object.entries(RecorderKind).map(([k, v]) => [v, k]));

function argsJson(f: Readonly<Record<string, bigint | number>>, extra: Record<string, unknown> = {}): string {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) if (!k.startsWith('host_')) o[k] = typeof v === 'bigint' ? v.toString() : v;
  return JSON.stringify({ ...o, ...extra });
}

function nameOf(p: RecorderProcess, api: number, fn: bigint): string | null {
  const keyKind = api === 2 || api === 3 ? 1 : 2;
  return p.names.get(`${keyKind}:${fn}`) ?? null;
}

const INT32_MAX = 2 ** 31 - 1;

/** CUpti_ActivityMemoryKind as Kineto names it in its memcpy/memset event names. */
const KINETO_MEMORY: Record<number, string> = {
  0: 'Unknown', 1: 'Pageable', 2: 'Pinned', 3: 'Device', 4: 'Array', 5: 'Managed', 6: 'Device Static', 7: 'Managed Static',
};

/** `args` of a CUDA activity row: its fields but the raw start/end (in start_ns/end_ns), 64-bit values as strings. */
function cudaArgs(f: Readonly<Record<string, bigint | number>>, extra: Record<string, unknown>): string {
  const o: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) if (k !== 'start' && k !== 'end') o[k] = typeof v === 'bigint' ? v.toString() : v;
  return JSON.stringify({ ...o, ...extra });
}

/** Start and end of a CUDA record on CLOCK_MONOTONIC, or raw (`mapped` false) when no mapping exists. */
interface CudaTimes {
  readonly start: bigint;
  readonly end: bigint;
  readonly mapped: boolean;
  readonly source: TimeSource;
}

/**
 * One process's CUDA context: its CUPTI clock samples (domain 2) and the
 * mapping of record times onto CLOCK_MONOTONIC (identity for domain 0, the
 * fit of the process's domain-2 samples for domain 2, their one offset when
 * there is a single sample), and, by correlation id, the device, stream and
 * kernel name of the activity that a CudaApi call issued.
 */
function cudaContext(p: RecorderProcess, capture_id: number) {
  const samples: RecorderClockSampleRow[] = [];
  const byCorrelation = new Map<number, { device: number; stream: number; kernel: string | null }>();
  const kernelNames = new Map<number, Set<string | null>>();
  for (const r of p.records) {
    const f = r.f;
    if (r.kind === RecorderKind.clock_sample && r.aux === RecorderDomain.cupti) {
      samples.push({
        capture_id, device: -1, sample_id: big(f['sample_seq']), device_tick: big(f['device_value']),
        host_begin_ns: big(f['host_before_ns']), host_end_ns: big(f['host_after_ns']), host_cpu_ns: null,
        host_domain: 'CLOCK_MONOTONIC', residual_ns: null, line: null,
      });
    } else if (r.kind === RecorderKind.cuda_kernel || r.kind === RecorderKind.cuda_memcpy || r.kind === RecorderKind.cuda_memset) {
      const corr = num(f['correlation_id']);
      if (!byCorrelation.has(corr)) byCorrelation.set(corr, { device: num(f['device_id']), stream: num(f['stream_id']), kernel: null });
      if (r.kind === RecorderKind.cuda_kernel) {
        const names = kernelNames.get(corr) ?? new Set<string | null>();
        names.add(p.names.get(cudaNameKey(CudaNameKind.kernel, big(f['name_key']))) ?? null);
        kernelNames.set(corr, names);
      }
    }
  }
  // the launch call's name: its kernel's, when all of its kernels (a graph launch has several) share one
  for (const [corr, names] of kernelNames) if (names.size === 1) byCorrelation.get(corr)!.kernel = [...names][0]!;
  samples.sort((a, b) => (a.host_begin_ns < b.host_begin_ns ? -1 : a.host_begin_ns > b.host_begin_ns ? 1 : 0));
  const fit = fitClock(samples).fit;
  const one = samples.length === 1 ? samples[0]! : null;
  const toHost = (v: bigint, domain: number): bigint | null => {
    if (domain === RecorderDomain.host_monotonic) return v;
    if (domain !== RecorderDomain.cupti) return null;
    if (fit) return tickToNs(fit, v);
    if (one) return v + (one.host_begin_ns + one.host_end_ns) / 2n - one.device_tick;
    return null;
  };
  const times = (start: bigint, end: bigint, domain: number): CudaTimes => {
    const s = toHost(start, domain);
    const e = toHost(end, domain);
    return s === null || e === null ? { start, end, mapped: false, source: 'host_other' } : { start: s, end: e, mapped: true, source: 'host_monotonic' };
  };
  return { samples, byCorrelation, times };
}

/**
 * Reads a capture directory (and its proc-<pid> children) into canonical
 * rows. All processes share the host timeline (CLOCK_MONOTONIC is
 * system-wide), so their rows are merged; `host_events.args.pid` says which
 * process a row came from.
 */
export async function readRecorderDir(dir: string, opts: RecorderReadOptions = {}): Promise<RecorderCapture> {
  const capture_id = opts.captureId ?? 0;
  const processes: RecorderProcess[] = [];
  for (const d of await recorderProcessDirs(dir)) processes.push(await readRecorderProcess(d));
  if (processes.length === 0) throw new Error(`${dir}: no records.twr (not a recorder capture directory)`);

  const diagnostics: RecorderDiagnosticRow[] = [];
  const diag = (severity: Severity, code: string, message: string, file: string) =>
    diagnostics.push({ capture_id, severity, code, message, file, line: null });
  const host_events: RecorderHostEventRow[] = [];
  const dispatches: RecorderDispatchRow[] = [];
  const clock_samples: RecorderClockSampleRow[] = [];
  const provenance: RecorderProvenanceRow[] = [];
  const conditions: RecorderConditionRow[] = [];
  const samplesByDevice = new Map<number, RecorderClockSampleRow[]>();
  const declaredHz = new Map<number, number | null>();
  const queueIndex = new Map<string, number>();
  const agentIndex = new Map<bigint, number>();
  let npuSeen = false;
  // CUDA (kinds 48-52): devices by CUDA ordinal, CUPTI clock samples (domain 2) of every process
  const cudaDevices = new Set<number>();
  const cuptiSamples: RecorderClockSampleRow[] = [];
  let complete = true;
  let producer = 'tickwise-recorder';
  let recordCount = 0;

  for (const p of processes) {
    const file = join(p.dir, 'records.twr');
    const pid = p.header.pid;
    const bootOff = p.header.boottime_minus_monotonic_ns;
    recordCount += p.records.length;
    if (p.meta?.producer?.version) producer = `tickwise-recorder ${p.meta.producer.version}`;
    if (p.stopped) diag('warning', 'recorder-truncated', `records.twr of pid ${pid} read up to byte ${p.valid_bytes} of ${p.file_bytes}: ${p.stopped}`, file);
    if (!p.meta) diag('warning', 'recorder-no-meta', `pid ${pid} has no readable meta.json`, join(p.dir, 'meta.json'));
    else if (!p.meta.complete) {
      complete = false;
      diag('warning', 'recorder-incomplete', `pid ${pid}'s capture did not finish (crash or SIGKILL): records up to the last complete chunk`, join(p.dir, 'meta.json'));
    }
    for (const t of p.meta?.flush_timeouts ?? []) diag('warning', 'recorder-flush-timeout', `pid ${pid}: the ${t} backend's final flush timed out; its buffered device records are lost`, join(p.dir, 'meta.json'));
    for (const d of p.meta?.clock_domains ?? []) {
      if (d.kind === 'device_tick' && d.id >= RecorderDomain.hip_device0) declaredHz.set(d.id - RecorderDomain.hip_device0, d.tick_hz_declared ?? null);
    }
    const hip = p.meta?.backends?.find((x) => x.name === 'hip');
    const rocp = hip?.['rocprofiler'] as { status?: string; sdk_dropped_records?: number } | undefined;
    if (rocp && rocp.status !== 'active') diag('info', 'recorder-no-device-times', `pid ${pid}: rocprofiler-sdk ${rocp.status ?? 'absent'}; HIP launches have host times only`, join(p.dir, 'meta.json'));
    if (rocp?.sdk_dropped_records) diag('warning', 'recorder-sdk-drops', `pid ${pid}: rocprofiler-sdk dropped ${rocp.sdk_dropped_records} dispatch records`, join(p.dir, 'meta.json'));

    // thread totals: the last ThreadStats of each tid
    const totals = new Map<number, { pushed: bigint; dropped: bigint }>();
    for (const r of p.records) if (r.kind === RecorderKind.thread_stats) totals.set(r.tid, { pushed: big(r.f['pushed_total']), dropped: big(r.f['dropped_total']) });
    let dropped = 0n;
    for (const [tid, t] of totals) {
      if (t.dropped > 0n) diag('warning', 'recorder-drops', `pid ${pid} thread ${tid}: ${t.dropped} records dropped (ring full), ${t.pushed} kept`, file);
      dropped += t.dropped;
    }
    const metaDrops = BigInt(p.meta?.records_dropped_total ?? 0);
    if (metaDrops > dropped) diag('warning', 'recorder-drops', `pid ${pid}: ${metaDrops} records dropped in all`, file);

    // launches by id, for dispatch names
    const launches = new Map<bigint, RecorderRecord>();
    for (const r of p.records) if (r.kind === RecorderKind.hip_launch) launches.set(big(r.f['launch_id']), r);
    const cuda = cudaContext(p, capture_id);
    cuptiSamples.push(...cuda.samples);
    let cudaUntimed = 0;
    let cudaUnnamed = 0;
    let cudaWideStreams = 0;
    const streamQueue = (stream: number): number | null => {
      if (stream <= INT32_MAX) return stream;
      cudaWideStreams++;
      return null;
    };
    const unknownKinds = new Map<number, number>();
    const syncobjToHwctx = new Map<string, number>();
    const waitsBySyncobj = new Map<string, bigint>(); // `${fd}:${syncobj}:${point}` -> wait exit
    const waitsByHwctx = new Map<string, bigint>(); // `${fd}:${hwctx}:${seq}` -> WAIT_CMD exit

    for (const r of p.records) {
      const f = r.f;
      const kindName = KIND_NAME[r.kind] ?? `kind_${r.kind}`;
      switch (r.kind) {
        case RecorderKind.hip_launch:
        case RecorderKind.hip_sync: {
          const enter = big(f['host_enter_ns']);
          const exit = big(f['host_exit_ns']);
          const api = r.aux;
          host_events.push({
            capture_id, device: 0, queue: null, kind: kindName, op: HipApi[api] ?? `api_${api}`,
            name: r.kind === RecorderKind.hip_launch && api !== 5 ? nameOf(p, api, big(f['function'])) : null,
            event_id: null, submission_id: r.kind === RecorderKind.hip_launch ? big(f['launch_id']) : null,
            command_buffer_id: null, command_index: null, thread_id: BigInt(r.tid), start_ns: enter, end_ns: exit, dur_ns: exit - enter,
            time_source: 'host_monotonic', valid: num(f['result']) === 0, args: argsJson(f, { pid }), line: null,
          });
          break;
        }
        case RecorderKind.hip_dispatch: {
          const domain = r.aux;
          const shift = domain === RecorderDomain.host_boottime ? bootOff : 0n;
          const start = big(f['start']) - shift;
          const end = big(f['end']) - shift;
          const launch = launches.get(big(f['correlation_external']));
          const agent = big(f['agent_handle']);
          if (!agentIndex.has(agent)) agentIndex.set(agent, agentIndex.size);
          const qk = `hip:${pid}:${big(f['queue_handle'])}`;
          if (!queueIndex.has(qk)) queueIndex.set(qk, queueIndex.size);
          dispatches.push({
            capture_id, device: agentIndex.get(agent)!, queue: queueIndex.get(qk)!,
            submission_id: launch ? big(launch.f['launch_id']) : null, command_buffer_id: null, command_index: null,
            event_id: big(f['dispatch_id']), executable_id: null, function_ordinal: null,
            kernel: launch && launch.aux !== 5 ? nameOf(p, launch.aux, big(launch.f['function'])) : null,
            start_ns: start, end_ns: end, dur_ns: end - start, start_tick: null, end_tick: null, source_dur_ns: null,
            // BOOTTIME stamps were shifted by the recorded offset above: they are on CLOCK_MONOTONIC now
            time_source: 'host_monotonic', valid: end >= start,
            workgroup_count_x: null, workgroup_count_y: null, workgroup_count_z: null, rows: null, line: null,
          });
          break;
        }
        case RecorderKind.clock_sample: {
          // host clocks: the header's offset covers them; cupti (domain 2): cudaContext
          if (r.aux < RecorderDomain.hip_device0) break;
          const device = r.aux - RecorderDomain.hip_device0;
          const row: RecorderClockSampleRow = {
            capture_id, device, sample_id: big(f['sample_seq']), device_tick: big(f['device_value']),
            host_begin_ns: big(f['host_before_ns']), host_end_ns: big(f['host_after_ns']), host_cpu_ns: null,
            host_domain: 'CLOCK_MONOTONIC', residual_ns: null, line: null,
          };
          const list = samplesByDevice.get(device) ?? [];
          list.push(row);
          samplesByDevice.set(device, list);
          break;
        }
        case RecorderKind.thread_stats:
        case RecorderKind.cuda_name: // assembled into p.names by readRecorderProcess
          break;
        case RecorderKind.cuda_kernel: {
          const t = cuda.times(big(f['start']), big(f['end']), r.aux);
          if (!t.mapped) cudaUntimed++;
          const kernel = p.names.get(cudaNameKey(CudaNameKind.kernel, big(f['name_key']))) ?? null;
          if (kernel === null) cudaUnnamed++;
          const device = num(f['device_id']);
          cudaDevices.add(device);
          const correlation = BigInt(num(f['correlation_id']));
          dispatches.push({
            capture_id, device, queue: streamQueue(num(f['stream_id'])), submission_id: correlation, command_buffer_id: null,
            command_index: null, event_id: correlation, executable_id: null, function_ordinal: null, kernel,
            start_ns: t.start, end_ns: t.end, dur_ns: t.end - t.start, start_tick: null, end_tick: null, source_dur_ns: null,
            // the format records grid_blocks as x*y*z only, not the three grid dimensions
            time_source: t.source, valid: t.mapped && t.end >= t.start,
            workgroup_count_x: null, workgroup_count_y: null, workgroup_count_z: null, rows: null, line: null,
          });
          break;
        }
        case RecorderKind.cuda_memcpy:
        case RecorderKind.cuda_memset: {
          const t = cuda.times(big(f['start']), big(f['end']), r.aux);
          if (!t.mapped) cudaUntimed++;
          const device = num(f['device_id']);
          cudaDevices.add(device);
          const memcpy = r.kind === RecorderKind.cuda_memcpy;
          const copyKind = CudaMemcpyKind[num(f['copy_kind'])] ?? `kind_${num(f['copy_kind'])}`;
          const mem = (k: bigint | number | undefined) => KINETO_MEMORY[num(k)] ?? 'Unknown';
          host_events.push({
            capture_id, device, queue: streamQueue(num(f['stream_id'])), kind: kindName, op: memcpy ? copyKind : 'memset',
            // named as Kineto (also CUPTI) names them, so that captures of both compare by name
            name: memcpy ? `Memcpy ${copyKind} (${mem(f['src_kind'])} -> ${mem(f['dst_kind'])})` : `Memset (${mem(f['memory_kind'])})`,
            event_id: null, submission_id: BigInt(num(f['correlation_id'])), command_buffer_id: null, command_index: null,
            thread_id: BigInt(r.tid), start_ns: t.start, end_ns: t.end, dur_ns: t.end - t.start, time_source: t.source,
            valid: t.mapped && t.end >= t.start,
            args: cudaArgs(f, {
              pid, time_domain: r.aux, async: (num(f['cupti_flags']) & 1) === 1,
              ...(memcpy
                ? { copy_kind_name: copyKind, src_kind_name: CudaMemoryKind[num(f['src_kind'])] ?? null, dst_kind_name: CudaMemoryKind[num(f['dst_kind'])] ?? null }
                : { memory_kind_name: CudaMemoryKind[num(f['memory_kind'])] ?? null }),
            }),
            line: null,
          });
          break;
        }
        case RecorderKind.cuda_api: {
          const domain = num(f['time_domain']);
          const t = cuda.times(big(f['host_enter_ns']), big(f['host_exit_ns']), domain);
          if (!t.mapped) cudaUntimed++;
          const correlation = num(f['correlation_id']);
          const apiDomain = num(f['domain']);
          const cbid = num(f['cbid']);
          const op = p.names.get(cudaNameKey(CudaNameKind.api, (BigInt(apiDomain) << 32n) | BigInt(cbid))) ?? null;
          if (op === null) cudaUnnamed++;
          const act = cuda.byCorrelation.get(correlation);
          host_events.push({
            capture_id, device: act?.device ?? null, queue: act && act.stream <= INT32_MAX ? act.stream : null, kind: kindName, op,
            name: act?.kernel ?? null, event_id: null, submission_id: BigInt(correlation), command_buffer_id: null, command_index: null,
            thread_id: BigInt(r.tid), start_ns: t.start, end_ns: t.end, dur_ns: t.end - t.start, time_source: t.source,
            valid: t.mapped && num(f['result']) === 0 && t.end >= t.start,
            args: JSON.stringify({
              api_class: CudaApiClass[r.aux] ?? `class_${r.aux}`, correlation_id: correlation, cbid,
              domain: CudaApiDomain[apiDomain] ?? `domain_${apiDomain}`, result: num(f['result']), stream: big(f['stream']).toString(),
              timed_by: (num(f['flags']) & 1) === 1 ? 'cupti_activity' : 'callback', time_domain: domain,
              ...(act ? { stream_id: act.stream } : {}), pid,
            }),
            line: null,
          });
          break;
        }
        default: {
          if (r.kind < RecorderKind.xdna_device || r.kind > RecorderKind.xdna_syncobj_wait) {
            unknownKinds.set(r.kind, (unknownKinds.get(r.kind) ?? 0) + 1);
            break;
          }
          npuSeen = true;
          const enter = big(f['host_enter_ns']);
          const exit = big(f['host_exit_ns']);
          const fd = num(f['fd']);
          let queue: number | null = null;
          if (r.kind === RecorderKind.xdna_hwctx_create) syncobjToHwctx.set(`${fd}:${num(f['syncobj'])}`, num(f['hwctx']));
          if ('hwctx' in f) queue = num(f['hwctx']);
          if ('syncobj' in f) queue = syncobjToHwctx.get(`${fd}:${num(f['syncobj'])}`) ?? null;
          if (r.kind === RecorderKind.xdna_syncobj_timeline_wait && num(f['result']) === 0) waitsBySyncobj.set(`${fd}:${num(f['syncobj'])}:${big(f['point'])}`, exit);
          if (r.kind === RecorderKind.xdna_wait_cmd && num(f['result']) === 0) waitsByHwctx.set(`${fd}:${num(f['hwctx'])}:${big(f['seq'])}`, exit);
          if (r.kind === RecorderKind.xdna_unknown_ioctl)
            diag('info', 'recorder-unknown-ioctl', `pid ${pid}: amdxdna request nr 0x${num(f['nr']).toString(16)} size ${num(f['size'])} not in the known table`, file);
          host_events.push({
            capture_id, device: RECORDER_NPU_DEVICE, queue, kind: kindName.replace(/^xdna_/, 'npu_'), op: kindName, name: null,
            event_id: null, submission_id: 'seq' in f ? big(f['seq']) : null, command_buffer_id: null, command_index: null,
            thread_id: BigInt(r.tid), start_ns: enter, end_ns: exit, dur_ns: exit - enter, time_source: 'host_monotonic',
            valid: num(f['result']) >= 0, args: argsJson(f, { pid, pair_index: r.kind === RecorderKind.xdna_syncobj_timeline_wait ? r.aux : undefined }), line: null,
          });
        }
      }
    }

    for (const [kind, n] of unknownKinds)
      diag('info', 'recorder-unknown-kind', `pid ${pid}: ${n} record(s) of kind ${kind} not read by this reader`, file);
    if (cudaUntimed)
      diag('warning', 'recorder-cuda-untimed', `pid ${pid}: ${cudaUntimed} CUDA record(s) on CUPTI's clock with no clock samples to map it onto CLOCK_MONOTONIC: kept with their raw times (time_source host_other, valid false)`, file);
    if (cudaUnnamed)
      diag('warning', 'recorder-cuda-unnamed', `pid ${pid}: ${cudaUnnamed} CUDA kernel or API record(s) whose name fragments are missing or incomplete`, file);
    if (cudaWideStreams)
      diag('info', 'recorder-cuda-stream', `pid ${pid}: ${cudaWideStreams} CUDA record(s) with a CUPTI stream id beyond INTEGER: queue is NULL (host_events.args.stream_id has it)`, file);
    const cudaMeta = p.meta?.backends?.find((x) => x.name === 'cuda');
    if (cudaMeta && cudaMeta.state === 'enabled') {
      const metaFile = join(p.dir, 'meta.json');
      const n = (k: string) => (typeof cudaMeta[k] === 'number' ? (cudaMeta[k] as number) : 0);
      if (cudaMeta['status'] !== 'active') diag('info', 'recorder-cuda-inactive', `pid ${pid}: the cuda backend's status is ${String(cudaMeta['status'] ?? 'unknown')}`, metaFile);
      if (n('cupti_dropped_records')) diag('warning', 'recorder-cupti-drops', `pid ${pid}: CUPTI dropped ${n('cupti_dropped_records')} activity records`, metaFile);
      if (n('cupti_buffer_alloc_failures')) diag('warning', 'recorder-cupti-drops', `pid ${pid}: ${n('cupti_buffer_alloc_failures')} CUPTI activity buffer(s) could not be allocated (their records are lost)`, metaFile);
      if (cudaMeta['api_mode'] === 'off') diag('info', 'recorder-cuda-no-api', `pid ${pid}: TICKWISE_CUDA_API=off: CUDA kernels have no launch calls`, metaFile);
    }

    // NPU commands: in flight from submission to the completion the host saw.
    const execs = p.records.filter((r) => r.kind === RecorderKind.xdna_exec_cmd && num(r.f['result']) === 0);
    execs.sort((a, b) => (big(a.f['host_enter_ns']) < big(b.f['host_enter_ns']) ? -1 : 1));
    let unobserved = 0;
    for (const e of execs) {
      const fd = num(e.f['fd']);
      const hwctx = num(e.f['hwctx']);
      const seq = big(e.f['seq']);
      let syncobj: number | null = null;
      for (const [k, v] of syncobjToHwctx) if (v === hwctx && k.startsWith(`${fd}:`)) syncobj = Number(k.split(':')[1]);
      const seen = waitsByHwctx.get(`${fd}:${hwctx}:${seq}`) ?? (syncobj !== null ? waitsBySyncobj.get(`${fd}:${syncobj}:${seq}`) : undefined) ?? null;
      const start = big(e.f['host_enter_ns']);
      if (seen === null) unobserved++;
      const qk = `npu:${pid}:${fd}:${hwctx}`;
      if (!queueIndex.has(qk)) queueIndex.set(qk, queueIndex.size);
      dispatches.push({
        capture_id, device: RECORDER_NPU_DEVICE, queue: queueIndex.get(qk)!, submission_id: seq, command_buffer_id: null,
        command_index: null, event_id: seq, executable_id: null, function_ordinal: null, kernel: null,
        start_ns: start, end_ns: seen, dur_ns: seen !== null ? seen - start : null, start_tick: null, end_tick: null,
        source_dur_ns: null, time_source: 'host_monotonic', valid: seen !== null,
        workgroup_count_x: null, workgroup_count_y: null, workgroup_count_z: null, rows: null, line: null,
      });
    }
    if (unobserved) diag('warning', 'recorder-npu-unobserved', `pid ${pid}: ${unobserved} NPU command(s) with no observed completion (no wait covered their seq)`, file);

    // provenance, conditions
    const markers = p.meta?.markers ?? [];
    const recorderLib = p.meta?.producer?.library ?? '';
    (p.meta?.provenance ?? []).forEach((e, i) => {
      provenance.push({
        capture_id,
        role: e.path === recorderLib ? 'recorder' : i === 0 ? 'executable' : 'library',
        name: e.path.split('/').pop() ?? e.path, path: e.path,
        size_bytes: e.file_found ? e.size_bytes ?? null : null,
        mtime_ns: e.file_found && e.mtime_ns !== undefined ? BigInt(e.mtime_ns) : null,
        build_id: e.build_id, sha256: null,
        markers: JSON.stringify(Object.fromEntries(markers.map((m) => [m, e.markers[m] ?? 0]))),
        how_found: `dl_iterate_phdr (pid ${pid})`,
      });
    });
    const cond = (key: string, value: string | null, unit: string | null = null, note: string | null = null) =>
      conditions.push({ capture_id, key: processes.length > 1 ? `${key}@${pid}` : key, value, unit, note });
    cond('recorder.pid', String(pid));
    if (p.header.fork_child) cond('recorder.parent_pid', String(p.header.parent_pid), null, 'forked child');
    if (p.meta?.command_line) cond('command_line', p.meta.command_line.join(' '));
    cond('recorder.boottime_minus_monotonic_ns', bootOff.toString(), 'ns', 'CLOCK_BOOTTIME - CLOCK_MONOTONIC at capture start');
    if (p.meta?.ring_records) cond('recorder.ring_records', String(p.meta.ring_records), 'records');
    if (cudaMeta && cudaMeta.state === 'enabled') {
      for (const k of ['status', 'api_mode', 'timestamp_callback', 'cupti_api_version', 'cuda_driver_version'])
        if (cudaMeta[k] !== undefined) cond(`recorder.cuda.${k}`, String(cudaMeta[k]));
      for (const d of (cudaMeta['devices'] ?? []) as { id: number; [k: string]: unknown }[]) {
        cudaDevices.add(d.id);
        for (const k of ['name', 'compute_capability', 'sm_count', 'global_memory_bytes'])
          if (d[k] !== undefined && d[k] !== null) cond(`cuda:${d.id}.${k}`, String(d[k]), k === 'global_memory_bytes' ? 'bytes' : null);
      }
    }
  }

  // devices: one GPU per HIP device seen, one NPU if any amdxdna activity
  const fits = new Map<number, ClockFit>();
  const devices: RecorderDeviceRow[] = [];
  const gpuIds = new Set<number>([...samplesByDevice.keys(), ...declaredHz.keys(), ...agentIndex.values()]);
  for (const device of [...gpuIds].sort((a, b) => a - b)) {
    const samples = (samplesByDevice.get(device) ?? []).sort((a, b) => (a.host_begin_ns < b.host_begin_ns ? -1 : 1));
    const { fit } = fitClock(samples);
    if (fit) fits.set(device, fit);
    samples.forEach((s, i) => clock_samples.push({ ...s, residual_ns: fit?.residuals_ns[i] ?? null }));
    devices.push({
      capture_id, device, kind: 'gpu', name: `hip:${device}`, tick_hz_declared: declaredHz.get(device) ?? null,
      tick_hz_fitted: fit?.tick_hz_fitted ?? null, tick_hz_used: null, time_base: 'host_monotonic',
      fit_method: fit?.method ?? null, fit_domain: fit ? 'CLOCK_MONOTONIC' : null,
      fit_residual_max_ns: fit?.residual_max_ns ?? null, fit_residual_rms_ns: fit?.residual_rms_ns ?? null,
      fit_uncertainty_ns: fit?.uncertainty_ns ?? null, fit_slope_uncertainty_ppm: fit?.slope_uncertainty_ppm ?? null,
      fit_bracket_min_ns: fit?.bracket_min_ns ?? null, fit_bracket_max_ns: fit?.bracket_max_ns ?? null,
      fit_base_tick: fit?.base_tick ?? null, fit_base_ns: fit?.base_ns ?? null, fit_ns_per_tick_num: fit?.ns_per_tick_num ?? null,
      clock_samples: samples.length,
    });
  }
  // CUDA devices: times are CLOCK_MONOTONIC (the timestamp callback) or mapped through the CUPTI clock's
  // samples, which every CUDA device row carries (one clock for all of them); the fit reports their residuals.
  cuptiSamples.sort((a, b) => (a.host_begin_ns < b.host_begin_ns ? -1 : a.host_begin_ns > b.host_begin_ns ? 1 : 0));
  const cuptiFit = fitClock(cuptiSamples).fit;
  for (const device of [...cudaDevices].sort((a, b) => a - b)) {
    if (gpuIds.has(device)) {
      diag('warning', 'recorder-device-clash', `CUDA device ${device} has the number of a HIP device: one devices row (hip:${device}) for both`, join(dir, 'records.twr'));
      continue;
    }
    cuptiSamples.forEach((s, i) => clock_samples.push({ ...s, device, residual_ns: cuptiFit?.residuals_ns[i] ?? null }));
    devices.push({
      capture_id, device, kind: 'gpu', name: `cuda:${device}`, tick_hz_declared: null,
      tick_hz_fitted: cuptiFit?.tick_hz_fitted ?? null, tick_hz_used: null, time_base: 'host_monotonic',
      fit_method: cuptiFit?.method ?? null, fit_domain: cuptiFit ? 'CLOCK_MONOTONIC' : null,
      fit_residual_max_ns: cuptiFit?.residual_max_ns ?? null, fit_residual_rms_ns: cuptiFit?.residual_rms_ns ?? null,
      fit_uncertainty_ns: cuptiFit?.uncertainty_ns ?? null, fit_slope_uncertainty_ppm: cuptiFit?.slope_uncertainty_ppm ?? null,
      fit_bracket_min_ns: cuptiFit?.bracket_min_ns ?? null, fit_bracket_max_ns: cuptiFit?.bracket_max_ns ?? null,
      fit_base_tick: cuptiFit?.base_tick ?? null, fit_base_ns: cuptiFit?.base_ns ?? null, fit_ns_per_tick_num: cuptiFit?.ns_per_tick_num ?? null,
      clock_samples: cuptiSamples.length,
    });
  }
  if (npuSeen) {
    devices.push({
      capture_id, device: RECORDER_NPU_DEVICE, kind: 'npu', name: 'amdxdna', tick_hz_declared: null, tick_hz_fitted: null,
      tick_hz_used: null, time_base: 'host_monotonic', fit_method: null, fit_domain: null, fit_residual_max_ns: null,
      fit_residual_rms_ns: null, fit_uncertainty_ns: null, fit_slope_uncertainty_ppm: null, fit_bracket_min_ns: null,
      fit_bracket_max_ns: null, fit_base_tick: null, fit_base_ns: null, fit_ns_per_tick_num: null, clock_samples: 0,
    });
  }

  return {
    dir,
    capture: { format: 'tickwise-recorder', schema_version: 1, producer, timeline: 'host_monotonic', session_status: complete ? 'complete' : 'incomplete', record_count: recordCount },
    processes, devices, clock_samples, dispatches, host_events, provenance, diagnostics, conditions, fits,
  };
}
