import { join } from 'node:path';
import { fitClock, type ClockFit } from '@tickwise/time';
import { decodeRecord, RECORD_LAYOUT, RecorderKind } from './recorder-layout';
import { argsFields, argsText, deviceRow, span, type ProcessContext, type RecorderRows, FLUSH_EVERY } from './recorder-map';
import type { RecorderClockSampleRow } from './recorder-dir';

/**
 * The hip backend's records (kinds 1-3, and ClockSample of the hip:N
 * domains) as rows: a launch or synchronize call is a `host_events` row
 * (`hip_launch`/`hip_sync`), a rocprofiler-sdk kernel dispatch a `dispatches`
 * row on CLOCK_MONOTONIC (its BOOTTIME stamps shifted by the header's
 * offset), named by its launch; each HIP device a `gpu` row `hip:<n>` with the
 * fit of its clock samples.
 */

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

const GRAPH_LAUNCH = 5;
const LAUNCH_ID = RECORD_LAYOUT.hip_launch.fields.launch_id[0];
const LAUNCH_API = RECORD_LAYOUT.hip_launch.fields.api[0];
const LAUNCH_FUNCTION = RECORD_LAYOUT.hip_launch.fields.function[0];
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const HIP_DEVICE0 = 16;
const HOST_BOOTTIME = 1;
const LAUNCH_ARGS = argsFields('hip_launch', (n) => n.startsWith('host_'));
const SYNC_ARGS = argsFields('hip_sync', (n) => n.startsWith('host_'));

/** The hip mapper of one capture: devices across processes. */
export class HipMapper {
  private readonly samplesByDevice = new Map<number, RecorderClockSampleRow[]>();
  private readonly declaredHz = new Map<number, number | null>();
  private readonly agentIndex = new Map<bigint, number>();

  /** Maps the hip records of one process (every record kind 1-3, ClockSample of domain >= 16). */
  async mapProcess(ctx: ProcessContext): Promise<void> {
    const { p, pid, capture_id, rows } = ctx;
    const dv = p.view;
    for (const d of p.meta?.clock_domains ?? []) {
      if (d.kind !== 'device_tick' || !(d.id >= HIP_DEVICE0)) continue;
      // a record's domain is 16 bits (FORMAT.md): a larger id in a damaged meta.json (found by the import fuzz) names no device
      if (!Number.isInteger(d.id) || d.id > 0xffff) {
        ctx.diag('warning', 'value-out-of-range', `pid ${pid}: meta.json clock domain ${String(d.id)} (${String(d.name)}) is beyond the 16-bit domain ids of the records: ignored`, join(p.dir, 'meta.json'));
        continue;
      }
      this.declaredHz.set(d.id - HIP_DEVICE0, d.tick_hz_declared ?? null);
    }
    const hip = p.meta?.backends?.find((x) => x.name === 'hip');
    const rocp = hip?.['rocprofiler'] as { status?: string; sdk_dropped_records?: number } | undefined;
    const metaFile = join(p.dir, 'meta.json');
    if (rocp && rocp.status !== 'active') ctx.diag('info', 'recorder-no-device-times', `pid ${pid}: rocprofiler-sdk ${rocp.status ?? 'absent'}; HIP launches have host times only`, metaFile);
    if (rocp?.sdk_dropped_records) ctx.diag('warning', 'recorder-sdk-drops', `pid ${pid}: rocprofiler-sdk dropped ${rocp.sdk_dropped_records} dispatch records`, metaFile);

    // kernel names by (api, function): strings chunks key them by hipFunction_t (api 2, 3) or host stub
    // (cached by the handle itself, a bigint key per key kind: no text made per launch)
    const nameCache = [new Map<bigint, string | null>(), new Map<bigint, string | null>()] as const;
    const nameOf = (api: number, fn: bigint): string | null => {
      const kind = api === 2 || api === 3 ? 1 : 2;
      const cache = nameCache[kind - 1];
      let name = cache.get(fn);
      if (name === undefined) cache.set(fn, (name = p.names.get(`${kind}:${fn}`) ?? null));
      return name;
    };
    // launches by id: the launch's kernel name, or null (a graph launch, an unnamed function), for its
    // dispatches (a dispatch may precede its launch in the file); ids below 2^53 keyed as numbers
    const launchName = new Map<number | bigint, string | null>();
    const idKey = (id: bigint): number | bigint => (id <= MAX_SAFE ? Number(id) : id);
    for (let i = 0; i < p.record_count; i++) {
      if (p.kinds[i] !== RecorderKind.hip_launch) continue;
      const at = p.offsets[i]!;
      const api = dv.getUint16(at + LAUNCH_API, true);
      launchName.set(idKey(dv.getBigUint64(at + LAUNCH_ID, true)), api === GRAPH_LAUNCH ? null : nameOf(api, dv.getBigUint64(at + LAUNCH_FUNCTION, true)));
    }
    // thread ids as bigint, queue and agent numbers: a cache of the last one (they repeat in runs)
    const tids = new Map<number, bigint>();
    const tidOf = (tid: number): bigint => {
      let t = tids.get(tid);
      if (t === undefined) tids.set(tid, (t = BigInt(tid)));
      return t;
    };
    let lastQueue: bigint | null = null;
    let lastQueueIndex = 0;
    let lastAgent: bigint | null = null;
    let lastAgentIndex = 0;
    const pidArg = `"pid":${pid}`;

    for (let i = 0; i < p.record_count; i++) {
      if (i % FLUSH_EVERY === FLUSH_EVERY - 1) await ctx.flushIfFull();
      const kind = p.kinds[i]!;
      const at = p.offsets[i]!;
      if (kind === RecorderKind.hip_launch || kind === RecorderKind.hip_sync) {
        const launch = kind === RecorderKind.hip_launch ? decodeRecord(dv, at, 'hip_launch') : null;
        const r = launch ?? decodeRecord(dv, at, 'hip_sync');
        const dur = span(ctx, launch ? 'HIP launch' : 'HIP synchronize', r.host_enter_ns, r.host_exit_ns);
        rows.host_events.push({
          capture_id, device: 0, queue: null, kind: launch ? 'hip_launch' : 'hip_sync', op: HipApi[r.api] ?? `api_${r.api}`,
          name: launch && launch.api !== GRAPH_LAUNCH ? nameOf(launch.api, launch.function) : null,
          event_id: null, submission_id: launch ? launch.launch_id : null,
          command_buffer_id: null, command_index: null, thread_id: tidOf(r.tid), start_ns: r.host_enter_ns, end_ns: r.host_exit_ns, dur_ns: dur,
          time_source: 'host_monotonic', valid: r.result === 0 && dur !== null, args: argsText(dv, at, launch ? LAUNCH_ARGS : SYNC_ARGS, pidArg), line: null,
        });
      } else if (kind === RecorderKind.hip_dispatch) {
        const r = decodeRecord(dv, at, 'hip_dispatch');
        const shift = r.time_domain === HOST_BOOTTIME ? p.header.boottime_minus_monotonic_ns : 0n;
        const start = r.start - shift;
        const end = r.end - shift;
        const kernel = launchName.get(idKey(r.correlation_external));
        if (r.agent_handle !== lastAgent) {
          if (!this.agentIndex.has(r.agent_handle)) this.agentIndex.set(r.agent_handle, this.agentIndex.size);
          lastAgent = r.agent_handle;
          lastAgentIndex = this.agentIndex.get(r.agent_handle)!;
        }
        if (r.queue_handle !== lastQueue) {
          const qk = `hip:${pid}:${r.queue_handle}`;
          if (!ctx.queueIndex.has(qk)) ctx.queueIndex.set(qk, ctx.queueIndex.size);
          lastQueue = r.queue_handle;
          lastQueueIndex = ctx.queueIndex.get(qk)!;
        }
        const dur = span(ctx, 'HIP kernel', start, end);
        rows.dispatches.push({
          capture_id, device: lastAgentIndex, queue: lastQueueIndex,
          submission_id: kernel !== undefined ? r.correlation_external : null, command_buffer_id: null, command_index: null,
          event_id: r.dispatch_id, executable_id: null, function_ordinal: null, kernel: kernel ?? null,
          start_ns: start, end_ns: end, dur_ns: dur, start_tick: null, end_tick: null, source_dur_ns: null,
          // BOOTTIME stamps were shifted by the recorded offset above: they are on CLOCK_MONOTONIC now
          time_source: 'host_monotonic', valid: dur !== null,
          workgroup_count_x: null, workgroup_count_y: null, workgroup_count_z: null, rows: null, line: null,
        });
      } else if (kind === RecorderKind.clock_sample) {
        // host clocks: the header's offset covers them; cupti (domain 2): the cuda mapper
        const r = decodeRecord(dv, at, 'clock_sample');
        if (r.domain < HIP_DEVICE0) continue;
        const device = r.domain - HIP_DEVICE0;
        const list = this.samplesByDevice.get(device) ?? [];
        list.push({
          capture_id, device, sample_id: r.sample_seq, device_tick: r.device_value, host_begin_ns: r.host_before_ns, host_end_ns: r.host_after_ns,
          host_cpu_ns: null, host_domain: 'CLOCK_MONOTONIC', residual_ns: null, line: null,
        });
        this.samplesByDevice.set(device, list);
      }
    }
  }

  /** The HIP devices' numbers: every device with samples, a declared rate or a dispatch agent. */
  deviceIds(): Set<number> {
    return new Set<number>([...this.samplesByDevice.keys(), ...this.declaredHz.keys(), ...this.agentIndex.values()]);
  }

  /** One `gpu` row per HIP device and its fitted clock samples; returns the fits by device. */
  devices(capture_id: number, rows: RecorderRows, fits: Map<number, ClockFit>): void {
    for (const device of [...this.deviceIds()].sort((a, b) => a - b)) {
      const samples = (this.samplesByDevice.get(device) ?? []).sort((a, b) => (a.host_begin_ns < b.host_begin_ns ? -1 : 1));
      const { fit } = fitClock(samples);
      if (fit) fits.set(device, fit);
      samples.forEach((s, i) => rows.clock_samples.push({ ...s, residual_ns: fit?.residuals_ns[i] ?? null }));
      rows.devices.push(deviceRow(capture_id, device, 'gpu', `hip:${device}`, this.declaredHz.get(device) ?? null, fit ?? null, samples.length));
    }
  }
}
