import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Generated captures with many devices, for many-devices.test.ts and
 * scripts/bench-scale: each writes a file into `dir` and returns its path.
 */

/**
 * A Kineto-style Chrome trace: one process per GPU (`process_name` "GPU p",
 * args.device = p), `kernels` kernels spread round-robin over them, 1 us
 * apart and 0.5 us long; `concurrent`: every device busy at once (kernel i
 * starts at i / devices us), as a data-parallel step. One host op.
 */
export function kinetoTrace(dir: string, devices: number, kernels: number, concurrent = false): string {
  const ev: object[] = [];
  for (let p = 0; p < devices; p++) ev.push({ ph: 'M', name: 'process_name', pid: 100 + p, tid: 0, args: { name: `GPU ${p}` } });
  for (let i = 0; i < kernels; i++) {
    const p = i % devices;
    const ts = concurrent ? 1000 + Math.floor(i / devices) : 1000 + i;
    ev.push({ ph: 'X', cat: 'kernel', name: `k${i % 3}`, pid: 100 + p, tid: 7, ts, dur: 0.5, args: { device: p, stream: 7, correlation: i } });
  }
  ev.push({ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 999, dur: 2 });
  const file = join(dir, `kineto-${devices}-${kernels}${concurrent ? '-concurrent' : ''}.json`);
  writeFileSync(file, JSON.stringify({ traceEvents: ev }));
  return file;
}

/** HeteroMosaic JSON lines: `stages` GEMM stages over `devices` device labels, and one CPU stage. */
export function heteromosaicTrace(dir: string, devices: number, stages: number): string {
  const lines: string[] = [];
  for (let i = 0; i < stages; i++) {
    lines.push(JSON.stringify({ run_id: 0, chunk_id: i, layer_id: 0, stage: 'gemm', device: `gpu${i % devices}`, start_ts_us: 10 * i, end_ts_us: 10 * i + 5 }));
  }
  lines.push(JSON.stringify({ run_id: 0, chunk_id: 0, layer_id: 0, stage: 'cpu_prep', start_ts_us: 1, end_ts_us: 2 }));
  const file = join(dir, `hm-${devices}-${stages}.jsonl`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** An hrx DeviceProfile file: `devices` profiles "npu<p>" of `intervals` intervals each; 100 MHz declared unless `declared` is false. */
export function hrxProfiles(dir: string, devices: number, intervals: number, declared = true): string {
  const profiles = Array.from({ length: devices }, (_, p) => ({
    device: `npu${p}`, kind: 'npu', ...(declared ? { frequency_hz: 100_000_000 } : {}),
    intervals: Array.from({ length: intervals }, (_, i) => ({ name: 'gemm', start_tick: 1000 + p + 2000 * i, end_tick: 2000 + p + 2000 * i, queue: 0 })),
  }));
  const file = join(dir, `hrx-${devices}-${intervals}${declared ? '' : '-undeclared'}.json`);
  writeFileSync(file, JSON.stringify({ profiles }));
  return file;
}

/**
 * An ireeperf-jsonl stream (schema 15): `devices` devices, each with two
 * clock samples (exactly 100 MHz; device p's host clock read p ns later)
 * and `dispatches` dispatches of 5 us, 10 us apart.
 */
export function ireeperfStream(dir: string, devices: number, dispatches: number): string {
  const v = 15;
  const recs: object[] = [
    { schema_version: v, record_type: 'schema', format: 'ireeperf-jsonl', contract: 'schema_versioned_interchange' },
    { schema_version: v, record_type: 'session', event: 'begin', session_id: 1, session_status: 'OK' },
    { schema_version: v, record_type: 'executable_function', executable_id: 1, function_ordinal: 0, name: 'gemm_a', workgroup_size: [64, 1, 1] },
  ];
  for (let d = 0; d < devices; d++) {
    recs.push(
      { schema_version: v, record_type: 'device', physical_device_ordinal: d, queue_count: 1 },
      { schema_version: v, record_type: 'queue', physical_device_ordinal: d, queue_ordinal: 0, stream_id: 1 },
      { schema_version: v, record_type: 'clock_correlation', sample_id: 1, physical_device_ordinal: d, device_tick: 1000, host_time_begin_ns: 999_990 + d, host_time_end_ns: 1_000_010 + d },
      { schema_version: v, record_type: 'clock_correlation', sample_id: 2, physical_device_ordinal: d, device_tick: 101_000, host_time_begin_ns: 1_999_990 + d, host_time_end_ns: 2_000_010 + d },
    );
    for (let i = 0; i < dispatches; i++) {
      recs.push({ schema_version: v, record_type: 'dispatch_event', physical_device_ordinal: d, queue_ordinal: 0, event_id: i + 1, submission_id: 7, command_buffer_id: 3,
        command_index: i, executable_id: 1, function_ordinal: 0, key: null, workgroup_count: [4, 1, 1], start_tick: 2000 + 1000 * i, end_tick: 2500 + 1000 * i,
        duration_ticks: 500, valid: true, duration_ns: 5000 });
    }
  }
  recs.push({ schema_version: v, record_type: 'session', event: 'end', session_id: 1, session_status: 'OK' });
  const file = join(dir, `iree-${devices}-${dispatches}.ireeperf.jsonl`);
  writeFileSync(file, `${recs.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return file;
}
