import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { ClockFit } from '@tickwise/time';
import { tableColumns, type DeviceKind, type Severity, type TimeSource } from '@tickwise/store';
import { AmdxdnaMapper } from './recorder-amdxdna';
import { CudaMapper } from './recorder-cuda';
import { EmptyRecordsFile, readRecorderProcess, recorderProcessDirs } from './recorder-file';
import { HipMapper } from './recorder-hip';
import { decodeRecord, RECORDER_KIND_NAME, RecorderKind } from './recorder-layout';
import { RowColumns, type ColumnarRows, type ProcessContext, type RecorderRows } from './recorder-map';

export { AmdxdnaMapper, RECORDER_NPU_DEVICE } from './recorder-amdxdna';
export { CudaApiClass, CudaApiDomain, CudaMapper, CudaMemcpyKind, CudaMemoryKind, CudaNameKind } from './recorder-cuda';
export { crc32, cudaNameKey, isRecorderDir, readRecorderProcess, recorderProcessDirs } from './recorder-file';
export { HipApi, HipMapper } from './recorder-hip';
export { decodeRecord, RECORD_LAYOUT, RecorderKind, TWR, TWR_STRUCTS, type RecordOf, type RecorderKindName } from './recorder-layout';

/**
 * Reader of the native recorder's capture directories (`native/FORMAT.md`
 * is the format; recorder-layout.ts is format.h's field table, tested
 * against native/layout.json and FORMAT.md).
 *
 *   run/                          readRecorderDir('run/')
 *     records.twr ─ file header ─┐
 *                 ─ chunks ──────┼─ CRC-32 checked, reading stops at the first bad
 *     meta.json ─────────────────┤   or partial chunk (a crash leaves one); a chunk
 *                                │   repeating an earlier one is skipped (said)
 *     proc-<pid>/ (each child) ──┘
 *            │  readRecorderProcess() (recorder-file.ts): chunks checked, records
 *            │  indexed by kind and byte offset, decoded by the field table of
 *            │  recorder-layout.ts (checked against native/layout.json)
 *            ▼
 *     per-backend mappers (recorder-hip.ts, recorder-amdxdna.ts,
 *     recorder-cuda.ts): rows in the canonical table shapes of @tickwise/store's
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
 *
 * A span whose end precedes its start (a launch's exit before its enter) is
 * kept with both raw bounds, `valid = false` and `dur_ns` NULL, and said.
 */

/** Clock domain ids (FORMAT.md "Clock domains"); device d of HIP is 16 + d. */
export const RecorderDomain = { host_monotonic: 0, host_boottime: 1, cupti: 2, hip_device0: 16 } as const;

/** The file header of records.twr. */
export interface RecorderFileHeader {
  readonly format_version: number;
  readonly pid: number;
  readonly host_start_ns: bigint;
  readonly boottime_minus_monotonic_ns: bigint;
  readonly parent_pid: number;
  readonly fork_child: boolean;
}

/** One process's capture (the root directory or a proc-<pid> child). */
export interface RecorderProcess {
  readonly dir: string;
  readonly header: RecorderFileHeader;
  /** The file's bytes; record i is the 64 bytes at `offsets[i]`, of kind `kinds[i]` (decode with `decodeRecord`). */
  readonly buf: Buffer;
  readonly view: DataView;
  readonly offsets: Uint32Array;
  readonly kinds: Uint16Array;
  readonly record_count: number;
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
  /** Chunks skipped as replays of earlier ones (same seq and payload, or the same payload again), and their records. */
  readonly duplicate_chunks: number;
  readonly duplicate_records: number;
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
  /** NULL when the end precedes the start (then valid = false). */
  readonly dur_ns: bigint | null;
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
  /** Rows of `dispatches` and `host_events` read (also those handed to `onBatch`). */
  readonly dispatch_count: number;
  readonly host_event_count: number;
  /** The device clock fits, by device number. */
  readonly fits: ReadonlyMap<number, ClockFit>;
}

/** Options of {@link readRecorderDir}. */
export interface RecorderReadOptions {
  /** `capture_id` of every row (default 0). */
  readonly captureId?: number;
  /**
   * Takes the dispatches and host_events rows in batches while the capture
   * is read (each batch about `batchRows` rows, in file order), so they are
   * never all held at once: as columns, the ones {@link batchColumns} names
   * (`RowColumns`: no row object outlives its record). The returned
   * capture's `dispatches` and `host_events` are then empty
   * (`dispatch_count`, `host_event_count` say how many were handed over).
   */
  readonly onBatch?: (batch: RecorderBatch) => Promise<void>;
  /** The columns (name and store type, as `tableColumns` gives them) of each table's batches. */
  readonly batchColumns?: {
    readonly dispatches: readonly { readonly name: string; readonly type: string }[];
    readonly host_events: readonly { readonly name: string; readonly type: string }[];
  };
  /** Rows per batch for {@link onBatch} (default 16384). */
  readonly batchRows?: number;
}

/** A batch of rows of {@link RecorderReadOptions.onBatch}. */
export interface RecorderBatch {
  readonly dispatches: ColumnarRows;
  readonly host_events: ColumnarRows;
}

/**
 * Reads a capture directory (and its proc-<pid> children) into canonical
 * rows. All processes share the host timeline (CLOCK_MONOTONIC is
 * system-wide), so their rows are merged; `host_events.args.pid` says which
 * process a row came from. A child whose records.twr is empty is left out
 * with a diagnostic; a capture with no readable process is an error.
 */
export async function readRecorderDir(dir: string, opts: RecorderReadOptions = {}): Promise<RecorderCapture> {
  const capture_id = opts.captureId ?? 0;
  const { onBatch } = opts;
  const columnar = onBatch && {
    dispatches: new RowColumns<RecorderDispatchRow>('dispatches', opts.batchColumns?.dispatches ?? tableColumns('dispatches')),
    host_events: new RowColumns<RecorderHostEventRow>('host_events', opts.batchColumns?.host_events ?? tableColumns('host_events')),
  };
  const rows: RecorderRows = {
    devices: [], clock_samples: [], dispatches: columnar ? columnar.dispatches : [], host_events: columnar ? columnar.host_events : [],
    provenance: [], diagnostics: [], conditions: [],
  };
  const diag = (severity: Severity, code: string, message: string, file: string) =>
    rows.diagnostics.push({ capture_id, severity, code, message, file, line: null });
  const processes: RecorderProcess[] = [];
  const empty: string[] = [];
  const dirs = await recorderProcessDirs(dir);
  for (const d of dirs) {
    try {
      processes.push(await readRecorderProcess(d));
    } catch (e) {
      if (!(e instanceof EmptyRecordsFile)) throw e;
      empty.push(join(d, 'records.twr'));
    }
  }
  if (processes.length === 0) {
    throw new Error(empty.length ? `${empty.join(', ')}: empty records.twr (no process of the capture wrote anything)` : `${dir}: no records.twr (not a recorder capture directory)`);
  }
  for (const f of empty)
    diag('warning', 'recorder-empty-process', `${f} is empty (its process wrote no file header): left out, the capture's ${processes.length} other process(es) read`, f);

  let dispatch_count = 0;
  let host_event_count = 0;
  const batchRows = opts.batchRows ?? 16384;
  const flush = async (force: boolean) => {
    const n = rows.dispatches.length + rows.host_events.length;
    if (!columnar || n === 0 || (!force && n < batchRows)) return;
    dispatch_count += rows.dispatches.length;
    host_event_count += rows.host_events.length;
    await onBatch!({ dispatches: columnar.dispatches.take(), host_events: columnar.host_events.take() });
  };

  const queueIndex = new Map<string, number>();
  const hip = new HipMapper();
  const xdna = new AmdxdnaMapper();
  const cuda = new CudaMapper();
  let complete = true;
  let producer = 'tickwise-recorder';
  let recordCount = 0;

  for (const p of processes) {
    const file = join(p.dir, 'records.twr');
    const metaFile = join(p.dir, 'meta.json');
    const pid = p.header.pid;
    recordCount += p.record_count;
    if (p.meta?.producer?.version) producer = `tickwise-recorder ${p.meta.producer.version}`;
    if (p.stopped) diag('warning', 'recorder-truncated', `records.twr of pid ${pid} read up to byte ${p.valid_bytes} of ${p.file_bytes}: ${p.stopped}`, file);
    if (p.duplicate_chunks)
      diag('warning', 'recorder-duplicate-chunk', `records.twr of pid ${pid}: ${p.duplicate_chunks} chunk(s) repeat an earlier chunk (same sequence number or payload): skipped, their ${p.duplicate_records} record(s) read once`, file);
    if (!p.meta) diag('warning', 'recorder-no-meta', `pid ${pid} has no readable meta.json`, metaFile);
    else if (!p.meta.complete) {
      const next = nextImageDir(dir, p.dir, pid);
      if (next !== null) {
        // exec(2) replaces an image without running its exit path: not a crash (native/FORMAT.md: proc-<pid>/, proc-<pid>.<n>/)
        diag('info', 'recorder-exec', `pid ${pid}'s image ended in exec (replaced by the program recorded in ${basename(next)}/, not a crash): its records up to its last complete chunk before the exec are kept`, metaFile);
      } else {
        complete = false;
        diag('warning', 'recorder-incomplete', `pid ${pid}'s capture did not finish (crash or SIGKILL): records up to the last complete chunk`, metaFile);
      }
    }
    for (const t of p.meta?.flush_timeouts ?? []) diag('warning', 'recorder-flush-timeout', `pid ${pid}: the ${t} backend's final flush timed out; its buffered device records are lost`, metaFile);
    threadDrops(p, (m) => diag('warning', 'recorder-drops', m, file));

    const inverted = new Map<string, number>();
    const ctx: ProcessContext = {
      capture_id, p, pid, file, rows, queueIndex, diag,
      inverted: (what) => inverted.set(what, (inverted.get(what) ?? 0) + 1),
      flushIfFull: () => flush(false),
    };
    await hip.mapProcess(ctx);
    await xdna.mapProcess(ctx);
    await cuda.mapProcess(ctx);
    const unknownKinds = new Map<number, number>();
    for (let i = 0; i < p.record_count; i++) {
      const k = p.kinds[i]!;
      if (!RECORDER_KIND_NAME.has(k)) unknownKinds.set(k, (unknownKinds.get(k) ?? 0) + 1);
    }
    for (const [kind, n] of unknownKinds) diag('info', 'recorder-unknown-kind', `pid ${pid}: ${n} record(s) of kind ${kind} not read by this reader`, file);
    for (const [what, n] of inverted)
      diag('warning', 'recorder-end-before-start', `pid ${pid}: ${n} ${what} record(s) end before they start (exit before enter): stored with valid = false and no dur_ns`, file);

    // provenance, conditions
    const markers = p.meta?.markers ?? [];
    const recorderLib = p.meta?.producer?.library ?? '';
    // a size or mtime a damaged meta.json gives beyond its column (int64) is left NULL, with one diagnostic
    const unusable: string[] = [];
    const int64 = (v: unknown, what: string): bigint | null => {
      if (v === undefined || v === null) return null;
      const x = typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : typeof v === 'string' && /^-?\d{1,25}$/.test(v) ? BigInt(v) : null;
      if (x === null || x < -(2n ** 63n) || x >= 2n ** 63n) {
        unusable.push(`${what} ${String(v)}`);
        return null;
      }
      return x;
    };
    const size = (v: unknown, what: string): number | null => {
      if (v === undefined || v === null) return null;
      if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
      unusable.push(`${what} ${String(v)}`);
      return null;
    };
    (p.meta?.provenance ?? []).forEach((e, i) => {
      rows.provenance.push({
        capture_id,
        role: e.path === recorderLib ? 'recorder' : i === 0 ? 'executable' : 'library',
        name: e.path.split('/').pop() ?? e.path, path: e.path,
        size_bytes: e.file_found ? size(e.size_bytes, `size_bytes of ${e.path}`) : null,
        mtime_ns: e.file_found ? int64(e.mtime_ns, `mtime_ns of ${e.path}`) : null,
        build_id: e.build_id, sha256: null,
        markers: JSON.stringify(Object.fromEntries(markers.map((m) => [m, e.markers[m] ?? 0]))),
        how_found: `dl_iterate_phdr (pid ${pid})`,
      });
    });
    if (unusable.length > 0) {
      diag('warning', 'value-out-of-range', `pid ${pid}: meta.json provenance: ${unusable.slice(0, 3).join(', ')}${unusable.length > 3 ? ', ...' : ''} out of range: stored as NULL`, metaFile);
    }
    const cond = (key: string, value: string | null, unit: string | null = null, note: string | null = null) =>
      rows.conditions.push({ capture_id, key: processes.length > 1 ? `${key}@${pid}` : key, value, unit, note });
    cond('recorder.pid', String(pid));
    if (p.header.fork_child) cond('recorder.parent_pid', String(p.header.parent_pid), null, 'forked child');
    if (p.meta?.command_line) cond('command_line', p.meta.command_line.join(' '));
    cond('recorder.boottime_minus_monotonic_ns', p.header.boottime_minus_monotonic_ns.toString(), 'ns', 'CLOCK_BOOTTIME - CLOCK_MONOTONIC at capture start');
    if (p.meta?.ring_records) cond('recorder.ring_records', String(p.meta.ring_records), 'records');
    cuda.conditions(ctx, cond);
  }

  // devices: one GPU per HIP device seen, one per CUDA device, one NPU if any amdxdna activity
  const fits = new Map<number, ClockFit>();
  hip.devices(capture_id, rows, fits);
  cuda.devices(capture_id, rows, hip.deviceIds(), (m) => diag('warning', 'recorder-device-clash', m, join(dir, 'records.twr')));
  xdna.devices(capture_id, rows);
  await flush(true);
  dispatch_count += rows.dispatches.length;
  host_event_count += rows.host_events.length;

  return {
    dir,
    capture: { format: 'tickwise-recorder', schema_version: 1, producer, timeline: 'host_monotonic', session_status: complete ? 'complete' : 'incomplete', record_count: recordCount },
    processes, ...rows, dispatches: columnar ? [] : rows.dispatches as RecorderDispatchRow[], host_events: columnar ? [] : rows.host_events as RecorderHostEventRow[],
    dispatch_count, host_event_count, fits,
  };
}

/** Drop warnings from the last ThreadStats of each thread, and meta.json's total. */
function threadDrops(p: RecorderProcess, warn: (message: string) => void): void {
  const pid = p.header.pid;
  const totals = new Map<number, { pushed: bigint; dropped: bigint }>();
  for (let i = 0; i < p.record_count; i++) {
    if (p.kinds[i] !== RecorderKind.thread_stats) continue;
    const r = decodeRecord(p.view, p.offsets[i]!, 'thread_stats');
    totals.set(r.tid, { pushed: r.pushed_total, dropped: r.dropped_total });
  }
  let dropped = 0n;
  for (const [tid, t] of totals) {
    if (t.dropped > 0n) warn(`pid ${pid} thread ${tid}: ${t.dropped} records dropped (ring full), ${t.pushed} kept`);
    dropped += t.dropped;
  }
  const metaDrops = BigInt(p.meta?.records_dropped_total ?? 0);
  if (metaDrops > dropped) warn(`pid ${pid}: ${metaDrops} records dropped in all`);
}

/**
 * The image directory that follows `imageDir` for the same pid, if any: an
 * image that called exec(2) is replaced without running its exit path (its
 * meta.json never says complete), and the recorder in the new image writes
 * `proc-<pid>/` (after the top directory), then `proc-<pid>.<n>/`.
 */
export function nextImageDir(captureDir: string, imageDir: string, pid: number): string | null {
  const top = resolve(imageDir) === resolve(captureDir);
  const m = /^proc-(\d+)(?:\.(\d+))?$/.exec(basename(imageDir));
  const next = top ? `proc-${pid}` : m && Number(m[1]) === pid ? `proc-${pid}.${m[2] === undefined ? 1 : Number(m[2]) + 1}` : null;
  return next !== null && existsSync(join(captureDir, next, 'meta.json')) ? join(captureDir, next) : null;
}
