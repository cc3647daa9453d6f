/**
 * perfetto-json: host events as threads of a host process, launch -> kernel
 * flows, zero-length slices kept, exact ts/dur text (issues 15.8, 17), on
 * hand-made rows and on a real Kineto trace (imported by the CLI).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { NS_PER, decimalToNs } from '@tickwise/time';
import { exportPerfettoJson } from '../src/index';
import { ROOT, tickwise, tmp } from './sample-store';

interface Ev { ph: string; cat?: string; name: string; pid: number; tid: number; id?: number; bp?: string; args?: Record<string, unknown>; ts_ns?: bigint; dur_ns?: bigint }

/** The file must be one JSON document; each event is one line, its ts/dur re-read exactly from their text. */
function readEvents(path: string): Ev[] {
  const text = readFileSync(path, 'utf8');
  const doc = JSON.parse(text) as { traceEvents: unknown[] };
  const out: Ev[] = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{"ph"')) continue;
    const ev = JSON.parse(line.replace(/,$/, '')) as Ev;
    const ts = /"ts":([0-9.eE+-]+)/.exec(line)?.[1];
    const dur = /"dur":([0-9.eE+-]+)/.exec(line)?.[1];
    if (ts !== undefined) ev.ts_ns = decimalToNs(ts, NS_PER.us)!;
    if (dur !== undefined) ev.dur_ns = decimalToNs(dur, NS_PER.us)!;
    out.push(ev);
  }
  expect(out).toHaveLength(doc.traceEvents.length);
  return out;
}

function names(evs: Ev[], what: 'process_name' | 'thread_name'): Map<string, string> {
  return new Map(evs.filter((e) => e.ph === 'M' && e.name === what).map((e) => [`${e.pid}${what === 'thread_name' ? `/${e.tid}` : ''}`, String(e.args!['name'])]));
}

describe('perfetto-json export of host events and flows (hand-made rows)', () => {
  it('host process with one thread per host thread; copies and sync markers on the device; a flow per launch; zero-length slices kept; exact ends', async () => {
    const store = await Store.open(':memory:');
    try {
      await store.insertRows('captures', ['capture_id', 'path', 'format', 'label', 'timeline'], [[1, 'run.json', 'chrome-trace', 'run', 'realtime']]);
      await store.insertRows('devices', ['capture_id', 'device', 'kind', 'name', 'time_base'], [[1, 0, 'gpu', 'NVIDIA H200', 'host_other']]);
      const t = 1_700_000_000_124_000n;
      await store.insertRows('dispatches', ['capture_id', 'device', 'queue', 'event_id', 'kernel', 'start_ns', 'end_ns', 'dur_ns', 'time_source', 'valid'], [
        [1, 0, 7, 5n, 'gemm', t + 1n, t + 2n, 1n, 'host_other', true], // ends at ...124002 ns exactly
        [1, 0, 7, null, 'zero', t + 5_000n, t + 5_000n, 0n, 'host_other', false], // zero-length: kept, dur 0
        [1, 0, 7, null, 'backwards', t + 9_000n, t + 8_000n, -1_000n, 'host_other', true], // left out
      ]);
      await store.insertRows('host_events', ['capture_id', 'device', 'queue', 'kind', 'op', 'name', 'event_id', 'thread_id', 'start_ns', 'end_ns', 'dur_ns', 'time_source', 'valid', 'args'], [
        [1, null, null, 'slice', 'cpu_op', 'aten::mm', null, 11n, t - 3_000n, t + 500n, 3_500n, 'host_other', true, '{"pid": 1, "tid": 11}'],
        [1, null, null, 'slice', 'cuda_runtime', 'cudaLaunchKernel', 5n, 11n, t - 2_000n, t - 1_000n, 1_000n, 'host_other', true, null],
        [1, null, null, 'instant', null, 'marker', null, 12n, t, t, 0n, 'host_other', true, null],
        [1, 0, 7, 'gpu_memcpy', 'gpu_memcpy', 'Memcpy HtoD', null, 7n, t + 3_000n, t + 4_000n, 1_000n, 'host_other', true, null],
        [1, 0, null, 'cuda_sync', 'cuda_sync', 'Event Sync', null, null, t + 6_000n, t + 6_000n, 0n, 'host_other', true, null],
      ]);
      const out = join(tmp(), 'h.json');
      const s = await exportPerfettoJson(store, out);
      expect(s).toMatchObject({ dispatch_slices: 2, host_slices: 5, flows: 1, processes: 2, negative_duration_rows: 1 });
      const evs = readEvents(out);
      const procs = names(evs, 'process_name');
      expect([...procs.values()]).toEqual(['GPU NVIDIA H200 · device 0 · run (capture 1)', 'host · run (capture 1)']);
      const threads = names(evs, 'thread_name');
      const x = evs.filter((e) => e.ph === 'X');
      const where = (name: string) => {
        const e = x.find((v) => v.name === name)!;
        return `${procs.get(String(e.pid))!.split(' ·')[0]} | ${threads.get(`${e.pid}/${e.tid}`)}`;
      };
      expect(where('gemm')).toBe('GPU NVIDIA H200 | queue 7 · host-timed'); // Kineto's device times are host (CUPTI) clock
      expect(where('Memcpy HtoD')).toBe('GPU NVIDIA H200 | queue 7 · gpu_memcpy');
      expect(where('Event Sync')).toBe('GPU NVIDIA H200 | queue ? · cuda_sync');
      expect(where('aten::mm')).toBe('host | thread 11');
      expect(where('cudaLaunchKernel')).toBe('host | thread 11'); // nested in aten::mm on its own thread
      expect(where('marker')).toBe('host | thread 12');
      // exact: ts + dur text give the stored ends
      const gemm = x.find((e) => e.name === 'gemm')!;
      expect([gemm.ts_ns, gemm.ts_ns! + gemm.dur_ns!]).toEqual([t + 1n, t + 2n]);
      expect(readFileSync(out, 'utf8')).toContain('"ts":1700000000124.001,"dur":0.001');
      // zero-length slices are drawn with dur 0; the store's valid = false rides in args
      const zero = x.find((e) => e.name === 'zero')!;
      expect([zero.dur_ns, zero.args!['valid']]).toEqual([0n, false]);
      expect(x.find((e) => e.name === 'Event Sync')!.dur_ns).toBe(0n);
      expect(x.find((e) => e.name === 'backwards')).toBeUndefined();
      // the flow: s at the launch call (host thread), f (binding to the enclosing slice) at the kernel's start
      const sf = evs.filter((e) => e.ph === 's' || e.ph === 'f').sort((a, b) => (a.ph === 's' ? -1 : 1) - (b.ph === 's' ? -1 : 1)); // the file's event order is not fixed
      const launch = x.find((e) => e.name === 'cudaLaunchKernel')!;
      const id = sf[0]!.id;
      expect(typeof id).toBe('number');
      expect(sf.map((e) => ({ ph: e.ph, id: e.id, pid: e.pid, tid: e.tid, ts: e.ts_ns, bp: e.bp }))).toEqual([
        { ph: 's', id, pid: launch.pid, tid: launch.tid, ts: launch.ts_ns, bp: undefined },
        { ph: 'f', id, pid: gemm.pid, tid: gemm.tid, ts: gemm.ts_ns, bp: 'e' },
      ]);
      // host events' own args (Kineto's pid/tid/args) ride along as "source"
      expect(x.find((e) => e.name === 'aten::mm')!.args!['source']).toEqual({ pid: 1, tid: 11 });
    } finally {
      await store.close();
    }
  });

  it('--no host events: dispatches only, no host process, no flows', async () => {
    const store = await Store.open(':memory:');
    try {
      await store.insertRows('captures', ['capture_id', 'path', 'format', 'timeline'], [[1, 'x', 'test', 'realtime']]);
      await store.insertRows('devices', ['capture_id', 'device', 'kind', 'time_base'], [[1, 0, 'gpu', 'host_other']]);
      await store.insertRows('dispatches', ['capture_id', 'device', 'queue', 'event_id', 'kernel', 'start_ns', 'end_ns', 'dur_ns', 'time_source', 'valid'], [[1, 0, 0, 1n, 'k', 10n, 20n, 10n, 'host_other', true]]);
      await store.insertRows('host_events', ['capture_id', 'kind', 'op', 'name', 'event_id', 'thread_id', 'start_ns', 'end_ns', 'dur_ns', 'time_source', 'valid'], [[1, 'slice', 'cuda_runtime', 'cudaLaunchKernel', 1n, 3n, 1n, 5n, 4n, 'host_other', true]]);
      const out = join(tmp(), 'd.json');
      expect(await exportPerfettoJson(store, out, { hostEvents: false })).toMatchObject({ dispatch_slices: 1, host_slices: 0, flows: 0, processes: 1 });
      expect(await exportPerfettoJson(store, out)).toMatchObject({ dispatch_slices: 1, host_slices: 1, flows: 1, processes: 2 });
    } finally {
      await store.close();
    }
  });
});

const B200 = resolve(ROOT, '../shared/fixtures/external/chrome-trace/tracelens_b200_eager_trace.json.gz');

describe.skipIf(!existsSync(B200))('perfetto-json export of a real Kineto trace (B200)', () => {
  it('every host event is a slice of the host process; every kernel and copy has its launch flow, bound to slice starts', { timeout: 120_000 }, async () => {
    const dir = tmp();
    const db = join(dir, 'b200.duckdb');
    tickwise(['import', B200, '--db', db]);
    const store = await Store.open(db, { readOnly: true });
    const out = join(dir, 'b200.json');
    let want: { host: number; kernels: number; copies: number };
    try {
      const s = await exportPerfettoJson(store, out);
      want = {
        host: await store.count('host_events', 'WHERE start_ns IS NOT NULL AND end_ns >= start_ns'),
        kernels: await store.count('dispatches'),
        copies: await store.count('host_events', `WHERE kind = 'gpu_memcpy'`),
      };
      // 21587 host events (CPU ops, runtime calls, 161 copies); 768 kernels and 161 copies, each launched by a linked call
      expect(s).toMatchObject({ dispatch_slices: 768, host_slices: want.host, flows: want.kernels + want.copies });
      expect(want).toEqual({ host: 21_587, kernels: 768, copies: 161 });
    } finally {
      await store.close();
    }
    const evs = readEvents(out);
    const starts = new Set(evs.filter((e) => e.ph === 'X').map((e) => `${e.pid}/${e.tid}/${e.ts_ns}`));
    const flows = evs.filter((e) => e.ph === 's' || e.ph === 'f');
    expect(flows).toHaveLength(2 * (want.kernels + want.copies));
    for (const f of flows) expect(starts.has(`${f.pid}/${f.tid}/${f.ts_ns}`), `${f.ph} ${f.id}`).toBe(true);
    const procs = [...names(evs, 'process_name').values()];
    expect(procs).toEqual(['GPU NVIDIA B200 (pid 0) · device 0 · tracelens_b200_eager_trace.json.gz (capture 1)', 'host · tracelens_b200_eager_trace.json.gz (capture 1)']);
  });
});
