/**
 * Writes a true timeline as ireeperf-jsonl, schema_version 15, in the record
 * shapes and key order of IREE's `iree-profile export` (see
 * ../shared/fixtures/iree/fixture_smoke.ireeperf.jsonl), plus the derived
 * format's `timestamp_frequency_hz` on the `device` record.
 *
 *   begin(): schema, session begin, device, queue, executables, functions
 *   submission() x N, flushed in groups of chunks, each chunk one
 *     source_record_index: command_buffer, command_operation (first use of a
 *     command buffer), clock_correlation (samples taken so far), queue_event,
 *     queue_device_event, dispatch_event
 *   end(): the rest, remaining clock samples, session end
 *
 * Device events carry the exporter's derived fields from its first/last fit
 * of the driver CPU timestamps (FirstLastFit), as IREE computes them.
 */
import { FirstLastFit } from './clock-samples';
import type {
  CaptureSpec,
  ClockSample,
  CommandBufferDef,
  KernelDef,
  TrueDispatch,
  TrueSubmission,
} from './timeline';

/** Where lines go. Each call gets whole lines (ending in "\n"). */
export interface LineSink {
  write(text: string): void;
}

/** Rows written, by record_type. */
export type RecordCounts = Record<string, number>;

const V = '{"schema_version":15,"record_type":';
const U32_NONE = 4294967295;

const SCHEMA_LINE =
  '{"schema_version":15,"record_type":"schema","format":"ireeperf-jsonl","contract":"schema_versioned_interchange","row_key":"record_type","source_format":"ireeprof","source_version_major":1,"source_version_minor":6,"time_domains":{"iree_host_time_ns":"iree_time_now monotonic nanoseconds","device_tick":"raw physical-device timestamp ticks","driver_host_cpu_timestamp_ns":"driver-sampled CPU timestamp nanoseconds","driver_host_system_timestamp":"driver-sampled system timestamp units scaled by host_system_frequency_hz","device_tick_duration_ns":"duration nanoseconds derived from device_tick clock fit"},"clock_fit":{"basis":"first_last_clock_correlation","rounding":"nearest_integer_nanosecond"}}\n';

/** Streams one capture: begin(), submission() in time order, end(). */
export class IreeperfEmitter {
  /** Rows written so far, by record_type. */
  readonly counts: RecordCounts = {};
  private readonly fit: FirstLastFit;
  private recordIndex = 0;
  private nextClock = 0;
  private queueEventId = 0;
  private pending: TrueSubmission[] = [];
  private readonly devicePrefix: string;
  private readonly derivedMid: string;
  /** Cached `"executable_id":..."workgroup_size":[..]` parts, by flags, kernel and workgroup count. */
  private readonly kernelParts = [0, 1].map(() => new Map<KernelDef, WeakMap<readonly number[], string>>());
  private readonly fitTail: string;

  constructor(
    private readonly spec: CaptureSpec,
    private readonly sink: LineSink,
  ) {
    this.fit = new FirstLastFit(spec.clock_samples);
    this.devicePrefix = `"physical_device_ordinal":${spec.physical_device_ordinal},"queue_ordinal":${spec.queue_ordinal},"stream_id":${spec.stream_id}`;
    this.derivedMid =
      ',"valid":true,"derived_time_available":true,"derived_time_domain":"driver_host_cpu_timestamp_ns","derived_time_basis":"first_last_clock_correlation"';
    this.fitTail = `,"clock_fit_first_sample_id":${this.fit.first_sample_id},"clock_fit_last_sample_id":${this.fit.last_sample_id},"start_driver_host_cpu_time_ns":`;
  }

  /** The exporter's fit the derived fields come from. */
  get exporterFit(): FirstLastFit {
    return this.fit;
  }

  /** Writes the header rows: schema, session begin, device, queue, executables. */
  begin(): void {
    const s = this.spec;
    let out = SCHEMA_LINE;
    out += `${V}"session","source_record_index":${this.recordIndex++},"event":"begin","session_id":${s.session_id},"stream_id":0,"event_id":0,"session_status_code":0,"session_status":"OK"}\n`;
    const uuid = s.physical_device_uuid;
    const declared = s.clock.tick_hz_declared === null ? '' : `,"timestamp_frequency_hz":${s.clock.tick_hz_declared}`;
    out += `${V}"device","source_record_index":${this.recordIndex++},"physical_device_ordinal":${s.physical_device_ordinal},"flags":${uuid ? 1 : 0},"queue_count":1,"physical_device_uuid_present":${uuid ? 'true' : 'false'},"physical_device_uuid":${uuid ? `"${uuid}"` : 'null'}${declared}}\n`;
    out += `${V}"queue","source_record_index":${this.recordIndex++},"physical_device_ordinal":${s.physical_device_ordinal},"queue_ordinal":${s.queue_ordinal},"stream_id":${s.stream_id}}\n`;
    this.count('schema', 1);
    this.count('session', 1);
    this.count('device', 1);
    this.count('queue', 1);
    const exeIndex = this.recordIndex++;
    for (const k of s.kernels) {
      const hash = k.code_object_hash;
      out += `${V}"executable","source_record_index":${exeIndex},"executable_id":${k.executable_id},"flags":${hash ? 1 : 0},"function_count":1,"code_object_hash_present":${hash ? 'true' : 'false'},"code_object_hash":${hash ? `"${hash}"` : 'null'}}\n`;
    }
    const fnIndex = this.recordIndex++;
    for (const k of s.kernels) {
      out += `${V}"executable_function","source_record_index":${fnIndex},"executable_id":${k.executable_id},"function_ordinal":${k.function_ordinal},"flags":0,"name":${JSON.stringify(k.key)},"constant_count":${k.constant_count},"binding_count":${k.binding_count},"parameter_count":0,"workgroup_size":[${k.workgroup_size.join(',')}],"function_hash_present":false,"function_hash":null}\n`;
    }
    this.count('executable', s.kernels.length);
    this.count('executable_function', s.kernels.length);
    this.sink.write(out);
  }

  /** Queues one submission; flushes a chunk group every `flush_every_submissions`. */
  submission(sub: TrueSubmission): void {
    this.pending.push(sub);
    if (this.pending.length >= this.spec.flush_every_submissions) this.flush();
  }

  /** Flushes what is pending, the remaining clock samples and the session end. */
  end(): void {
    this.flush();
    this.flushClock(Number.POSITIVE_INFINITY);
    this.sink.write(
      `${V}"session","source_record_index":${this.recordIndex++},"event":"end","session_id":${this.spec.session_id},"stream_id":0,"event_id":0,"session_status_code":0,"session_status":"OK"}\n`,
    );
    this.count('session', 1);
  }

  private count(type: string, n: number): void {
    this.counts[type] = (this.counts[type] ?? 0) + n;
  }

  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    const s = this.spec;

    const newCbs: CommandBufferDef[] = [];
    for (const sub of batch) if (sub.new_command_buffer) newCbs.push(sub.new_command_buffer);
    if (newCbs.length > 0) {
      const idx = this.recordIndex++;
      let out = '';
      for (const cb of newCbs) {
        out += `${V}"command_buffer","source_record_index":${idx},"command_buffer_id":${cb.command_buffer_id},"flags":0,"physical_device_ordinal":${s.physical_device_ordinal},"mode":0,"command_categories":3,"queue_affinity":1}\n`;
      }
      const opIdx = this.recordIndex++;
      let ops = 0;
      for (const cb of newCbs) {
        cb.ops.forEach((op, i) => {
          const k = op.kernel;
          out += `${V}"command_operation","source_record_index":${opIdx},"command_buffer_id":${cb.command_buffer_id},"command_index":${i},"op":"dispatch","key":${JSON.stringify(k.key)},"flags":8,"block_structure":false,"block_ordinal":${U32_NONE},"block_command_ordinal":${U32_NONE},"executable_id":${k.executable_id},"function_ordinal":${k.function_ordinal},"binding_count":${k.binding_count},"workgroup_count":[${op.workgroup_count.join(',')}],"workgroup_size":[${k.workgroup_size.join(',')}],"source_ordinal":${U32_NONE},"target_ordinal":${U32_NONE},"source_offset":0,"target_offset":0,"length":0,"target_block_ordinal":${U32_NONE},"alternate_block_ordinal":${U32_NONE}}\n`;
          ops++;
        });
      }
      this.sink.write(out);
      this.count('command_buffer', newCbs.length);
      this.count('command_operation', ops);
    }

    let flushTime = 0;
    for (const sub of batch) {
      const done = s.clock.offset_ns + sub.queue_end_tick * s.clock.ns_per_tick;
      if (done > flushTime) flushTime = done;
    }
    this.flushClock(flushTime);

    // queue_event rows.
    let out = '';
    const qIdx = this.recordIndex++;
    const firstQueueEventId = this.queueEventId + 1;
    for (const sub of batch) {
      const direct = sub.command_buffer_id === 0;
      out += `${V}"queue_event","source_record_index":${qIdx},"event_id":${++this.queueEventId},"op":"${direct ? 'dispatch' : 'execute'}","type_value":${direct ? 2 : 3},"flags":0,"dependency_strategy":"${sub.dependency_strategy}","submission_id":${sub.submission_id},"command_buffer_id":${sub.command_buffer_id},"allocation_id":0,"physical_device_ordinal":${s.physical_device_ordinal},"queue_ordinal":${s.queue_ordinal},"stream_id":${s.stream_id},"host_time_ns":${sub.host_submit_ns},"ready_host_time_ns":${sub.host_ready_ns},"host_time_domain":"iree_host_time_ns","wait_count":${sub.wait_count},"signal_count":${sub.signal_count},"barrier_count":${sub.barrier_count},"operation_count":${sub.dispatches.length},"payload_length":0}\n`;
    }
    this.count('queue_event', batch.length);

    // queue_device_event rows: same event ids as their queue_event (separate stream).
    const qdIdx = this.recordIndex++;
    let qdId = firstQueueEventId;
    for (const sub of batch) {
      const direct = sub.command_buffer_id === 0;
      out += `${V}"queue_device_event","source_record_index":${qdIdx},${this.devicePrefix},"event_id":${qdId++},"submission_id":${sub.submission_id},"command_buffer_id":${sub.command_buffer_id},"allocation_id":0,"op":"${direct ? 'dispatch' : 'execute'}","type_value":${direct ? 2 : 3},"flags":0,"payload_length":0,"operation_count":${sub.dispatches.length},"device_tick_domain":"device_tick"${this.ticksAndDerived(sub.queue_start_tick, sub.queue_end_tick)}\n`;
    }
    this.count('queue_device_event', batch.length);

    // dispatch_event rows.
    const dIdx = this.recordIndex++;
    let n = 0;
    for (const sub of batch) {
      const subPart = `{"schema_version":15,"record_type":"dispatch_event","source_record_index":${dIdx},${this.devicePrefix},"event_id":`;
      const subPart2 = `,"submission_id":${sub.submission_id},"command_buffer_id":${sub.command_buffer_id},"command_index":`;
      const flags = sub.command_buffer_id === 0 ? 0 : 1;
      for (const d of sub.dispatches) {
        out += `${subPart}${d.event_id}${subPart2}${d.command_index},${this.kernelPart(d, flags)},"device_tick_domain":"device_tick"${this.ticksAndDerived(d.start_tick, d.end_tick)}\n`;
        n++;
      }
      if (out.length > 1 << 22) {
        this.sink.write(out);
        out = '';
      }
    }
    this.count('dispatch_event', n);
    this.sink.write(out);
  }

  private flushClock(untilNs: number): void {
    const samples = this.spec.clock_samples;
    if (this.nextClock >= samples.length || samples[this.nextClock]!.host_time_end_ns > untilNs) return;
    const idx = this.recordIndex++;
    let out = '';
    while (this.nextClock < samples.length && samples[this.nextClock]!.host_time_end_ns <= untilNs) {
      out += this.clockLine(idx, samples[this.nextClock]!);
      this.nextClock++;
      this.count('clock_correlation', 1);
    }
    this.sink.write(out);
  }

  private clockLine(idx: number, c: ClockSample): string {
    return `${V}"clock_correlation","source_record_index":${idx},"sample_id":${c.sample_id},"flags":11,"physical_device_ordinal":${this.spec.physical_device_ordinal},"device_tick_domain":"device_tick","device_tick":${c.device_tick},"host_cpu_timestamp_domain":"driver_host_cpu_timestamp_ns","host_cpu_timestamp_ns":${c.host_cpu_timestamp_ns},"host_system_timestamp_domain":"driver_host_system_timestamp","host_system_timestamp":0,"host_system_frequency_hz":0,"host_time_domain":"iree_host_time_ns","host_time_begin_ns":${c.host_time_begin_ns},"host_time_end_ns":${c.host_time_end_ns},"host_time_uncertainty_ns":${c.host_time_end_ns - c.host_time_begin_ns}}\n`;
  }

  /** `,"start_tick":..."duration_ns":N}` for a device span. */
  private ticksAndDerived(start: number, end: number): string {
    const startNs = this.fit.mapTick(start);
    const endNs = this.fit.mapTick(end);
    return `,"start_tick":${start},"end_tick":${end},"duration_ticks":${end - start}${this.derivedMid}${this.fitTail}${startNs},"end_driver_host_cpu_time_ns":${endNs},"duration_time_domain":"device_tick_duration_ns","duration_ns":${endNs - startNs}}`;
  }

  private kernelPart(d: TrueDispatch, flags: number): string {
    const byKernel = this.kernelParts[flags]!;
    let byWgc = byKernel.get(d.kernel);
    if (!byWgc) {
      byWgc = new WeakMap();
      byKernel.set(d.kernel, byWgc);
    }
    let part = byWgc.get(d.workgroup_count);
    if (part === undefined) {
      const k = d.kernel;
      part = `"executable_id":${k.executable_id},"function_ordinal":${k.function_ordinal},"key":${JSON.stringify(k.key)},"flags":${flags},"workgroup_count":[${d.workgroup_count.join(',')}],"workgroup_size":[${k.workgroup_size.join(',')}]`;
      byWgc.set(d.workgroup_count, part);
    }
    return part;
  }
}
