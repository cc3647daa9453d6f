import { join } from 'node:path';
import { fitClock, tickToNs } from '@tickwise/time';
import type { TimeSource } from '@tickwise/store';
import { cudaNameKey } from './recorder-file';
import { decodeRecord, RecorderKind } from './recorder-layout';
import { argsFields, argsText, deviceRow, span, type ProcessContext, type RecorderRows, FLUSH_EVERY } from './recorder-map';
import type { RecorderClockSampleRow } from './recorder-dir';

/**
 * The cuda backend's records (kinds 48-52, native/cuda/README.md) as rows: a
 * kernel is a `dispatches` row (device = CUDA ordinal, queue = CUPTI stream
 * id, submission_id = event_id = CUPTI correlation id, the name assembled from
 * CudaName fragments); a memcpy/memset a `host_events` row of kind
 * `cuda_memcpy`/`cuda_memset` with its device; an API call a `cuda_api` host
 * event (op = API name, submission_id = correlation id, name = its kernel's).
 * With CUPTI's timestamp callback their times are CLOCK_MONOTONIC already
 * (domain 0); otherwise (domain 2) they are mapped through the fit of the
 * process's CUPTI clock samples. Each CUDA device is a `gpu` row `cuda:<n>`
 * with `time_base = 'host_monotonic'` and the CUPTI samples' fit.
 */

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

/** CUpti_ActivityMemoryKind as Kineto names it in its memcpy/memset event names. */
const KINETO_MEMORY: Record<number, string> = {
  0: 'Unknown', 1: 'Pageable', 2: 'Pinned', 3: 'Device', 4: 'Array', 5: 'Managed', 6: 'Device Static', 7: 'Managed Static',
};

const INT32_MAX = 2 ** 31 - 1;
const HOST_MONOTONIC = 0;
const CUPTI = 2;
// `args` of a CUDA activity row: its fields but the raw start/end (in start_ns/end_ns)
const notStartEnd = (n: string) => n === 'start' || n === 'end';
const MEMCPY_ARGS = argsFields('cuda_memcpy', notStartEnd);
const MEMSET_ARGS = argsFields('cuda_memset', notStartEnd);

/** Start and end of a CUDA record on CLOCK_MONOTONIC, or raw (`mapped` false) when no mapping exists. */
interface CudaTimes {
  readonly start: bigint;
  readonly end: bigint;
  readonly mapped: boolean;
  readonly source: TimeSource;
}

/** The cuda mapper of one capture: devices and CUPTI clock samples across processes. */
export class CudaMapper {
  private readonly cudaDevices = new Set<number>();
  private readonly cuptiSamples: RecorderClockSampleRow[] = [];

  /** Maps the cuda records of one process. */
  async mapProcess(ctx: ProcessContext): Promise<void> {
    const { p, pid, capture_id, rows } = ctx;
    const dv = p.view;
    // pass 1: CUPTI clock samples (domain 2); by correlation id the device, stream and kernel name of an activity
    const samples: RecorderClockSampleRow[] = [];
    const byCorrelation = new Map<number, { device: number; stream: number; kernel: string | null }>();
    const kernelNames = new Map<number, Set<string | null>>();
    let any = false;
    for (let i = 0; i < p.record_count; i++) {
      const kind = p.kinds[i]!;
      const at = p.offsets[i]!;
      if (kind === RecorderKind.clock_sample) {
        const r = decodeRecord(dv, at, 'clock_sample');
        if (r.domain !== CUPTI) continue;
        samples.push({
          capture_id, device: -1, sample_id: r.sample_seq, device_tick: r.device_value, host_begin_ns: r.host_before_ns, host_end_ns: r.host_after_ns,
          host_cpu_ns: null, host_domain: 'CLOCK_MONOTONIC', residual_ns: null, line: null,
        });
      } else if (kind === RecorderKind.cuda_kernel || kind === RecorderKind.cuda_memcpy || kind === RecorderKind.cuda_memset) {
        any = true;
        const r = decodeRecord(dv, at, 'cuda_memset'); // the activity prefix, common to the three
        if (!byCorrelation.has(r.correlation_id)) byCorrelation.set(r.correlation_id, { device: r.device_id, stream: r.stream_id, kernel: null });
        if (kind === RecorderKind.cuda_kernel) {
          const names = kernelNames.get(r.correlation_id) ?? new Set<string | null>();
          names.add(p.names.get(cudaNameKey(CudaNameKind.kernel, decodeRecord(dv, at, 'cuda_kernel').name_key)) ?? null);
          kernelNames.set(r.correlation_id, names);
        }
      } else if (kind === RecorderKind.cuda_api) any = true;
    }
    for (const s of samples) this.cuptiSamples.push(s); // not push(...samples): a large chunk would overflow the call stack
    // the launch call's name: its kernel's, when all of its kernels (a graph launch has several) share one
    for (const [corr, names] of kernelNames) if (names.size === 1) byCorrelation.get(corr)!.kernel = [...names][0]!;
    samples.sort((a, b) => (a.host_begin_ns < b.host_begin_ns ? -1 : a.host_begin_ns > b.host_begin_ns ? 1 : 0));
    const fit = fitClock(samples).fit;
    const one = samples.length === 1 ? samples[0]! : null;
    const toHost = (v: bigint, domain: number): bigint | null => {
      if (domain === HOST_MONOTONIC) return v;
      if (domain !== CUPTI) return null;
      if (fit) return tickToNs(fit, v);
      if (one) return v + (one.host_begin_ns + one.host_end_ns) / 2n - one.device_tick;
      return null;
    };
    const times = (start: bigint, end: bigint, domain: number): CudaTimes => {
      const s = toHost(start, domain);
      const e = toHost(end, domain);
      return s === null || e === null ? { start, end, mapped: false, source: 'host_other' } : { start: s, end: e, mapped: true, source: 'host_monotonic' };
    };

    let untimed = 0;
    let unnamed = 0;
    let wideStreams = 0;
    const streamQueue = (stream: number): number | null => {
      if (stream <= INT32_MAX) return stream;
      wideStreams++;
      return null;
    };
    // pass 2: rows
    for (let i = 0; any && i < p.record_count; i++) {
      if (i % FLUSH_EVERY === FLUSH_EVERY - 1) await ctx.flushIfFull();
      const kind = p.kinds[i]!;
      const at = p.offsets[i]!;
      switch (kind) {
        case RecorderKind.cuda_kernel: {
          const r = decodeRecord(dv, at, 'cuda_kernel');
          const t = times(r.start, r.end, r.time_domain);
          if (!t.mapped) untimed++;
          const kernel = p.names.get(cudaNameKey(CudaNameKind.kernel, r.name_key)) ?? null;
          if (kernel === null) unnamed++;
          this.cudaDevices.add(r.device_id);
          const correlation = BigInt(r.correlation_id);
          const dur = span(ctx, 'CUDA kernel', t.start, t.end);
          rows.dispatches.push({
            capture_id, device: r.device_id, queue: streamQueue(r.stream_id), submission_id: correlation, command_buffer_id: null,
            command_index: null, event_id: correlation, executable_id: null, function_ordinal: null, kernel,
            start_ns: t.start, end_ns: t.end, dur_ns: dur, start_tick: null, end_tick: null, source_dur_ns: null,
            // the format records grid_blocks as x*y*z only, not the three grid dimensions
            time_source: t.source, valid: t.mapped && dur !== null,
            workgroup_count_x: null, workgroup_count_y: null, workgroup_count_z: null, rows: null, line: null,
          });
          break;
        }
        case RecorderKind.cuda_memcpy:
        case RecorderKind.cuda_memset: {
          const memcpy = kind === RecorderKind.cuda_memcpy;
          const r = decodeRecord(dv, at, 'cuda_memset');
          const t = times(r.start, r.end, r.time_domain);
          if (!t.mapped) untimed++;
          this.cudaDevices.add(r.device_id);
          let op: string, name: string, extra: string;
          const mem = (k: number) => KINETO_MEMORY[k] ?? 'Unknown';
          const async = `,"async":${(memcpy ? decodeRecord(dv, at, 'cuda_memcpy').cupti_flags : r.cupti_flags) & 1 ? 'true' : 'false'}`;
          if (memcpy) {
            const c = decodeRecord(dv, at, 'cuda_memcpy');
            op = CudaMemcpyKind[c.copy_kind] ?? `kind_${c.copy_kind}`;
            name = `Memcpy ${op} (${mem(c.src_kind)} -> ${mem(c.dst_kind)})`;
            extra = `,"copy_kind_name":${JSON.stringify(op)},"src_kind_name":${JSON.stringify(CudaMemoryKind[c.src_kind] ?? null)},"dst_kind_name":${JSON.stringify(CudaMemoryKind[c.dst_kind] ?? null)}`;
          } else {
            op = 'memset';
            name = `Memset (${mem(r.memory_kind)})`;
            extra = `,"memory_kind_name":${JSON.stringify(CudaMemoryKind[r.memory_kind] ?? null)}`;
          }
          const dur = span(ctx, memcpy ? 'CUDA memcpy' : 'CUDA memset', t.start, t.end);
          rows.host_events.push({
            // named as Kineto (also CUPTI) names them, so that captures of both compare by name
            capture_id, device: r.device_id, queue: streamQueue(r.stream_id), kind: memcpy ? 'cuda_memcpy' : 'cuda_memset', op, name,
            event_id: null, submission_id: BigInt(r.correlation_id), command_buffer_id: null, command_index: null,
            thread_id: BigInt(r.tid), start_ns: t.start, end_ns: t.end, dur_ns: dur, time_source: t.source, valid: t.mapped && dur !== null,
            args: argsText(dv, at, memcpy ? MEMCPY_ARGS : MEMSET_ARGS, `"pid":${pid},"time_domain":${r.time_domain}${async}${extra}`),
            line: null,
          });
          break;
        }
        case RecorderKind.cuda_api: {
          const r = decodeRecord(dv, at, 'cuda_api');
          const t = times(r.host_enter_ns, r.host_exit_ns, r.time_domain);
          if (!t.mapped) untimed++;
          const op = p.names.get(cudaNameKey(CudaNameKind.api, (BigInt(r.domain) << 32n) | BigInt(r.cbid))) ?? null;
          if (op === null) unnamed++;
          const act = byCorrelation.get(r.correlation_id);
          const dur = span(ctx, 'CUDA API call', t.start, t.end);
          rows.host_events.push({
            capture_id, device: act?.device ?? null, queue: act && act.stream <= INT32_MAX ? act.stream : null, kind: 'cuda_api', op,
            name: act?.kernel ?? null, event_id: null, submission_id: BigInt(r.correlation_id), command_buffer_id: null, command_index: null,
            thread_id: BigInt(r.tid), start_ns: t.start, end_ns: t.end, dur_ns: dur, time_source: t.source,
            valid: t.mapped && r.result === 0 && dur !== null,
            args: JSON.stringify({
              api_class: CudaApiClass[r.api_class] ?? `class_${r.api_class}`, correlation_id: r.correlation_id, cbid: r.cbid,
              domain: CudaApiDomain[r.domain] ?? `domain_${r.domain}`, result: r.result, stream: r.stream.toString(),
              timed_by: (r.flags & 1) === 1 ? 'cupti_activity' : 'callback', time_domain: r.time_domain,
              ...(act ? { stream_id: act.stream } : {}), pid,
            }),
            line: null,
          });
          break;
        }
      }
    }
    if (untimed)
      ctx.diag('warning', 'recorder-cuda-untimed', `pid ${pid}: ${untimed} CUDA record(s) on CUPTI's clock with no clock samples to map it onto CLOCK_MONOTONIC: kept with their raw times (time_source host_other, valid false)`, ctx.file);
    if (unnamed) ctx.diag('warning', 'recorder-cuda-unnamed', `pid ${pid}: ${unnamed} CUDA kernel or API record(s) whose name fragments are missing or incomplete`, ctx.file);
    if (wideStreams)
      ctx.diag('info', 'recorder-cuda-stream', `pid ${pid}: ${wideStreams} CUDA record(s) with a CUPTI stream id beyond INTEGER: queue is NULL (host_events.args.stream_id has it)`, ctx.file);

    const cudaMeta = p.meta?.backends?.find((x) => x.name === 'cuda');
    if (cudaMeta && cudaMeta.state === 'enabled') {
      const metaFile = join(p.dir, 'meta.json');
      const n = (k: string) => (typeof cudaMeta[k] === 'number' ? (cudaMeta[k] as number) : 0);
      if (cudaMeta['status'] !== 'active') ctx.diag('info', 'recorder-cuda-inactive', `pid ${pid}: the cuda backend's status is ${String(cudaMeta['status'] ?? 'unknown')}`, metaFile);
      if (n('cupti_dropped_records')) ctx.diag('warning', 'recorder-cupti-drops', `pid ${pid}: CUPTI dropped ${n('cupti_dropped_records')} activity records`, metaFile);
      if (n('cupti_buffer_alloc_failures')) ctx.diag('warning', 'recorder-cupti-drops', `pid ${pid}: ${n('cupti_buffer_alloc_failures')} CUPTI activity buffer(s) could not be allocated (their records are lost)`, metaFile);
      if (cudaMeta['api_mode'] === 'off') ctx.diag('info', 'recorder-cuda-no-api', `pid ${pid}: TICKWISE_CUDA_API=off: CUDA kernels have no launch calls`, metaFile);
    }
  }

  /** The conditions of a process's cuda backend (meta.json), and its devices. */
  conditions(ctx: ProcessContext, cond: (key: string, value: string, unit?: string | null) => void): void {
    const cudaMeta = ctx.p.meta?.backends?.find((x) => x.name === 'cuda');
    if (!cudaMeta || cudaMeta.state !== 'enabled') return;
    for (const k of ['status', 'api_mode', 'timestamp_callback', 'cupti_api_version', 'cuda_driver_version'])
      if (cudaMeta[k] !== undefined) cond(`recorder.cuda.${k}`, String(cudaMeta[k]));
    for (const d of (cudaMeta['devices'] ?? []) as { id: number; [k: string]: unknown }[]) {
      this.cudaDevices.add(d.id);
      for (const k of ['name', 'compute_capability', 'sm_count', 'global_memory_bytes'])
        if (d[k] !== undefined && d[k] !== null) cond(`cuda:${d.id}.${k}`, String(d[k]), k === 'global_memory_bytes' ? 'bytes' : null);
    }
  }

  /**
   * One `gpu` row per CUDA device (not a HIP device's number), each with the
   * CUPTI clock samples and their fit (one clock for all of them).
   */
  devices(capture_id: number, rows: RecorderRows, hipIds: ReadonlySet<number>, diag: (message: string) => void): void {
    this.cuptiSamples.sort((a, b) => (a.host_begin_ns < b.host_begin_ns ? -1 : a.host_begin_ns > b.host_begin_ns ? 1 : 0));
    const fit = fitClock(this.cuptiSamples).fit;
    for (const device of [...this.cudaDevices].sort((a, b) => a - b)) {
      if (hipIds.has(device)) {
        diag(`CUDA device ${device} has the number of a HIP device: one devices row (hip:${device}) for both`);
        continue;
      }
      this.cuptiSamples.forEach((s, i) => rows.clock_samples.push({ ...s, device, residual_ns: fit?.residuals_ns[i] ?? null }));
      rows.devices.push(deviceRow(capture_id, device, 'gpu', `cuda:${device}`, null, fit ?? null, this.cuptiSamples.length));
    }
  }
}
