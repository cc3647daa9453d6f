/**
 * Writes the capture of domain.md's worked example of per-row-group cost:
 * a weight GEMM dispatched 1 792 times in a capture of 2 prefills (896 per
 * prefill = 28 layers x 32 ubatches of 512 rows), 1.20 ms per dispatch, so a
 * 256-row group costs 0.60 ms. Host-timed (exact ns), one submission per
 * (ubatch, layer) holding an rms_norm and the GEMM, 20 us host gaps between
 * submissions, 150 ms between the prefills. Deterministic; gzip (the reader
 * takes compressed input), written by `scripts/regen-goldens`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** Writes capture.ireeperf.jsonl.gz into `dir`. */
export function makeWorkedExample(dir: string): void {
  const v = 15;
  const lines: unknown[] = [
    { schema_version: v, record_type: 'schema', format: 'ireeperf-jsonl', contract: 'schema_versioned_interchange' },
    { schema_version: v, record_type: 'session', event: 'begin', session_id: 1, session_status: 'OK' },
    { schema_version: v, record_type: 'device', physical_device_ordinal: 0, queue_count: 1 },
    { schema_version: v, record_type: 'executable_function', executable_id: 1, function_ordinal: 0, name: 'prefill_rms_norm_512x3072', workgroup_size: [64, 1, 1] },
    { schema_version: v, record_type: 'executable_function', executable_id: 2, function_ordinal: 0, name: 'prefill_matmul_512x8192x3072_f16', workgroup_size: [256, 1, 1] },
  ];
  let t = 5_000_000_000;
  let sub = 0;
  let event = 0;
  const dispatch = (executable: number, key: string, dur: number) => {
    event++;
    lines.push({
      schema_version: v, record_type: 'host_execution_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: event,
      submission_id: sub, command_buffer_id: sub, command_index: event, executable_id: executable, function_ordinal: 0,
      op: 'dispatch', key, host_time_domain: 'iree_host_time_ns', start_host_time_ns: t, end_host_time_ns: t + dur, duration_ns: dur, valid: true,
    });
    t += dur;
  };
  for (let prefill = 0; prefill < 2; prefill++) {
    for (let ubatch = 0; ubatch < 32; ubatch++) {
      for (let layer = 0; layer < 28; layer++) {
        sub++;
        dispatch(1, 'prefill_rms_norm_512x3072', 16_000);
        t += 2_000;
        dispatch(2, 'prefill_matmul_512x8192x3072_f16', 1_200_000);
        t += 20_000;
      }
    }
    t += 150_000_000;
  }
  lines.push({ schema_version: v, record_type: 'session', event: 'end', session_id: 1, session_status: 'OK' });
  writeFileSync(join(dir, 'capture.ireeperf.jsonl.gz'), gzipSync(lines.map((l) => JSON.stringify(l)).join('\n') + '\n', { level: 9 }));
}
