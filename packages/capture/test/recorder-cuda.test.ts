import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { crc32, readRecorderDir, type RecorderCapture, type RecorderDispatchRow } from '../src/readers/recorder-dir';
import { ROOT, tmp } from './helpers';

// The real H200 capture of captures/h200 (the recorder's cuda backend, CUPTI
// timestamp callback on, API times from CUPTI's API activity), read with the
// reader directly. Ground truth: meta.json's record counts, the check of the
// same directory by native/cuda/twr_cuda.py (an independent decoder, in
// Python), and torch.profiler's kernels of the same prefill in a second process.
const BASE = join(ROOT, 'captures/h200/prefill-bf16-l4-d1024-s512');

interface Window { label: string; start_ns: number; end_ns: number; compare: boolean }
interface Profiler { kernels: number; kernel_sum_ns: number; by_name: Record<string, { count: number; sum_ns: number }> }
interface Check {
  windows: { label: string; kernels: number; kernel_sum_ns: number }[];
  recorder_totals: { kernels: number; kernel_sum_ns: number };
  interval_check: { kernels_with_launch: number };
}

const json = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;
const windows = json<{ windows: Window[] }>(`${BASE}.windows.json`).windows;
const prof = json<Profiler>(`${BASE}.torch-profiler.json`);
const check = json<Check>(`${BASE}.check.json`);
const cudaMeta = json<{ backends: { name: string; [k: string]: unknown }[] }>(join(BASE, 'meta.json')).backends.find((b) => b.name === 'cuda')!;

describe('recorder cuda records (kinds 48-52) of a real H200 capture', () => {
  let c: RecorderCapture;
  /** The enter of each kernel's launch call (the earliest cuda_api row of its correlation id). */
  const launchStart = new Map<bigint, bigint>();
  const inWindow = (d: RecorderDispatchRow, w: Window) => {
    const l = launchStart.get(d.submission_id!);
    // CLOCK_MONOTONIC ns from Python's time.monotonic_ns(): exact as doubles (below 2^53)
    return l !== undefined && l >= BigInt(w.start_ns) && l <= BigInt(w.end_ns);
  };

  beforeAll(async () => {
    c = await readRecorderDir(BASE, { captureId: 3 });
    for (const e of c.host_events) {
      if (e.kind !== 'cuda_api' || e.submission_id === null) continue;
      const prev = launchStart.get(e.submission_id);
      if (prev === undefined || e.start_ns < prev) launchStart.set(e.submission_id, e.start_ns);
    }
  });

  it('one cuda:0 GPU on the host timeline, its CUPTI clock samples fitted (the timestamp callback: CUPTI = CLOCK_MONOTONIC)', () => {
    expect(c.devices).toHaveLength(1);
    const d = c.devices[0]!;
    expect(d).toMatchObject({ capture_id: 3, device: 0, kind: 'gpu', name: 'cuda:0', time_base: 'host_monotonic', tick_hz_declared: null, clock_samples: 4 });
    // with the callback a sample's value is CLOCK_MONOTONIC itself: 0-1 ns from its bracket's midpoint (check.json)
    expect(d.fit_residual_max_ns!).toBeLessThan(2);
    expect(Math.abs(d.tick_hz_fitted! / 1e9 - 1)).toBeLessThan(1e-6);
    expect(c.clock_samples.map((s) => s.device)).toEqual([0, 0, 0, 0]);
    expect(c.conditions.find((x) => x.key === 'cuda:0.name')?.value).toBe('NVIDIA H200');
  });

  it('every record is read: no skipped kinds, no warnings; row counts equal meta.json and the python check', () => {
    expect(c.diagnostics).toEqual([]);
    expect(c.dispatches).toHaveLength(cudaMeta['kernel_records'] as number);
    expect(c.dispatches).toHaveLength(check.interval_check.kernels_with_launch);
    const kinds = (k: string) => c.host_events.filter((e) => e.kind === k).length;
    expect(kinds('cuda_memcpy')).toBe(cudaMeta['memcpy_records']);
    expect(kinds('cuda_memset')).toBe(cudaMeta['memset_records']);
    expect(kinds('cuda_api')).toBe(246); // captures/h200/README.md: 246 API calls
    expect(c.host_events).toHaveLength(kinds('cuda_memcpy') + kinds('cuda_memset') + kinds('cuda_api'));
  });

  it('kernels are named, valid dispatches on stream 7 that start after their launch call began', () => {
    for (const d of c.dispatches) {
      expect(d).toMatchObject({ device: 0, queue: 7, time_source: 'host_monotonic', valid: true });
      expect(d.kernel).toBeTruthy();
      expect(d.event_id).toBe(d.submission_id);
      expect(d.dur_ns).toBe(d.end_ns! - d.start_ns!);
      expect(d.start_ns! > launchStart.get(d.submission_id!)!).toBe(true);
    }
    const launches = c.host_events.filter((e) => e.kind === 'cuda_api' && e.name !== null);
    expect(launches).toHaveLength(c.dispatches.length);
    expect(new Set(launches.map((e) => e.op))).toEqual(new Set(['cudaLaunchKernel_v7000', 'cuLaunchKernelEx']));
    const copy = c.host_events.find((e) => e.kind === 'cuda_memcpy')!;
    expect(copy).toMatchObject({ device: 0, op: 'HtoD', name: 'Memcpy HtoD (Pageable -> Device)', time_source: 'host_monotonic', valid: true });
    expect(JSON.parse(copy.args)).toMatchObject({ bytes: '2048', copy_kind: 1, async: true });
  });

  it('per repetition window: kernel count and summed ns equal the python check exactly', () => {
    for (const w of windows) {
      const ks = c.dispatches.filter((d) => inWindow(d, w));
      const want = check.windows.find((x) => x.label === w.label)!;
      expect({ label: w.label, kernels: ks.length, sum_ns: ks.reduce((s, d) => s + d.dur_ns!, 0n) })
        .toEqual({ label: w.label, kernels: want.kernels, sum_ns: BigInt(want.kernel_sum_ns) });
    }
  });

  it("the compared repetitions' kernels equal torch.profiler's in count and names; summed time within 1 %", () => {
    const compared = windows.filter((w) => w.compare);
    const ks = c.dispatches.filter((d) => compared.some((w) => inWindow(d, w)));
    expect(ks).toHaveLength(prof.kernels);
    const counts: Record<string, number> = {};
    for (const d of ks) counts[d.kernel!] = (counts[d.kernel!] ?? 0) + 1;
    expect(counts).toEqual(Object.fromEntries(Object.entries(prof.by_name).map(([k, v]) => [k, v.count])));
    const sum = Number(ks.reduce((s, d) => s + d.dur_ns!, 0n));
    expect(sum).toBe(check.recorder_totals.kernel_sum_ns);
    expect(Math.abs(sum - prof.kernel_sum_ns) / prof.kernel_sum_ns).toBeLessThan(0.01);
  });
});

// Without CUPTI's timestamp callback the records carry CUPTI's clock (domain
// 2, CLOCK_REALTIME on Linux): a hand-built records.twr (FORMAT.md byte by
// byte) whose CUPTI clock runs at host + 1.7e18 ns exactly.
describe('recorder cuda records on CUPTI\'s own clock (domain 2)', () => {
  const OFFSET = 1_700_000_000_000_000_000n;
  const rec = (kind: number, aux: number, fill: (b: Buffer) => void) => {
    const b = Buffer.alloc(64);
    b.writeUInt16LE(kind, 0);
    b.writeUInt16LE(aux, 2);
    b.writeUInt32LE(4242, 4);
    fill(b);
    return b;
  };
  const clock = (seq: number, host: bigint) => rec(32, 2, (b) => {
    b.writeBigUInt64LE(host, 8);
    b.writeBigUInt64LE(host + 40n, 16);
    b.writeBigUInt64LE(host + 20n + OFFSET, 24);
    b.writeBigUInt64LE(BigInt(seq), 40);
  });
  const name = (aux: number, key: bigint, text: string) => {
    const bytes = Buffer.from(text, 'utf8');
    const out: Buffer[] = [];
    for (let at = 0; at < bytes.length; at += 40) {
      out.push(rec(52, aux, (b) => {
        b.writeBigUInt64LE(key, 8);
        b.writeUInt32LE(bytes.length, 16);
        b.writeUInt32LE(at, 20);
        bytes.copy(b, 24, at, Math.min(at + 40, bytes.length));
      }));
    }
    return out.reverse(); // fragments in any order
  };
  const activity = (kind: number, start: bigint, end: bigint, corr: number, fill: (b: Buffer) => void = () => {}) => rec(kind, 2, (b) => {
    b.writeBigUInt64LE(start + OFFSET, 8);
    b.writeBigUInt64LE(end + OFFSET, 16);
    b.writeUInt32LE(corr, 24);
    b.writeUInt32LE(1, 28); // device 1
    b.writeUInt32LE(0x9000_0000, 32); // a stream id beyond INTEGER
    fill(b);
  });
  const api = (enter: bigint, exit: bigint, corr: number) => rec(51, 1, (b) => {
    b.writeBigUInt64LE(enter + OFFSET, 8);
    b.writeBigUInt64LE(exit + OFFSET, 16);
    b.writeUInt32LE(corr, 24);
    b.writeUInt32LE(211, 28);
    b.writeUInt32LE(2, 32);
    b.writeUInt16LE(1, 48);
    b.writeUInt16LE(2, 50);
  });
  const write = (records: Buffer[]) => {
    const dir = join(tmp('tickwise-cuda-'), 'run');
    mkdirSync(dir);
    const head = Buffer.alloc(64);
    head.write('TWRECv1\0', 0, 'latin1');
    head.writeUInt32LE(1, 8);
    head.writeUInt32LE(64, 12);
    head.writeUInt32LE(64, 16);
    head.writeUInt32LE(777, 20);
    head.writeUInt32LE(crc32(head, 0, 60), 60);
    const payload = Buffer.concat(records);
    const chunk = Buffer.alloc(32);
    chunk.writeUInt32LE(0x4b435754, 0);
    chunk.writeUInt16LE(1, 4);
    chunk.writeUInt16LE(32, 6);
    chunk.writeUInt32LE(payload.length, 8);
    chunk.writeUInt32LE(records.length, 12);
    chunk.writeUInt32LE(crc32(payload), 24);
    chunk.writeUInt32LE(crc32(chunk, 0, 28), 28);
    writeFileSync(join(dir, 'records.twr'), Buffer.concat([head, chunk, payload]));
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ format: 'tickwise-recorder', format_version: 1, complete: true, end_reason: 'exit', pid: 777 }));
    return dir;
  };
  const KERNEL = 'void gemm_bf16<128, 64>(float const*, float*, int) [a name of several 40-byte fragments: ü]';
  const body = [
    ...name(1, 0xabcdefn, KERNEL), ...name(2, (2n << 32n) | 211n, 'cudaLaunchKernel_v7000'),
    api(1_000_000n, 1_004_000n, 9),
    activity(48, 1_010_000n, 1_030_000n, 9, (b) => b.writeBigUInt64LE(0xabcdefn, 40)),
    activity(49, 1_040_000n, 1_041_000n, 10, (b) => { b.writeBigUInt64LE(4096n, 40); b.writeUInt8(2, 52); b.writeUInt8(3, 53); b.writeUInt8(2, 54); }),
  ];

  it('maps kernel, copy and API times through the fit of the CUPTI clock samples onto CLOCK_MONOTONIC', async () => {
    const c = await readRecorderDir(write([clock(0, 900_000n), ...body, clock(1, 2_000_000n)]));
    expect(c.dispatches).toEqual([expect.objectContaining({
      device: 1, queue: null, submission_id: 9n, kernel: KERNEL, start_ns: 1_010_000n, end_ns: 1_030_000n, dur_ns: 20_000n,
      time_source: 'host_monotonic', valid: true,
    })]);
    const [launch, copy] = c.host_events;
    expect(launch).toMatchObject({ kind: 'cuda_api', op: 'cudaLaunchKernel_v7000', name: KERNEL, submission_id: 9n, device: 1, start_ns: 1_000_000n, end_ns: 1_004_000n, valid: true });
    expect(JSON.parse(launch!.args)).toMatchObject({ api_class: 'launch', domain: 'runtime', timed_by: 'cupti_activity', time_domain: 2, stream_id: 0x9000_0000 });
    expect(copy).toMatchObject({ kind: 'cuda_memcpy', op: 'DtoH', name: 'Memcpy DtoH (Device -> Pinned)', device: 1, queue: null, start_ns: 1_040_000n, end_ns: 1_041_000n });
    expect(JSON.parse(copy!.args)).toMatchObject({ bytes: '4096', stream_id: 0x9000_0000 });
    expect(c.devices).toEqual([expect.objectContaining({ device: 1, name: 'cuda:1', time_base: 'host_monotonic', clock_samples: 2, fit_residual_max_ns: 0 })]);
    expect(c.clock_samples.map((s) => [s.device, s.device_tick - OFFSET])).toEqual([[1, 900_020n], [1, 2_000_020n]]);
    expect(c.diagnostics.map((d) => d.code)).toEqual(['recorder-cuda-stream']);
  });

  it('without clock samples the records keep their raw times, marked host_other and invalid, with a warning', async () => {
    const c = await readRecorderDir(write(body));
    expect(c.dispatches[0]).toMatchObject({ start_ns: 1_010_000n + OFFSET, time_source: 'host_other', valid: false });
    expect(c.host_events.every((e) => e.time_source === 'host_other' && !e.valid)).toBe(true);
    expect(c.devices).toEqual([expect.objectContaining({ device: 1, name: 'cuda:1', fit_method: null, clock_samples: 0 })]);
    expect(c.diagnostics.find((d) => d.code === 'recorder-cuda-untimed')).toMatchObject({ severity: 'warning' });
  });
});
