/**
 * The Perfetto export builds each slice's text in SQL, leaving out the
 * per-row tests a profile of the rows shows are never needed (a column set
 * in no row or in every row, integers all within or all beyond 2^53) and
 * looking the microseconds' fraction up in a list. Here every slice's whole
 * line is compared with the text written in JavaScript from the row
 * (nsToUsDecimal, jsonObject), on rows made so that every column is in one
 * of the regimes (none, all, some set; all safe, all beyond, mixed), with
 * every fraction of a microsecond, negative times and times beyond 2^53.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { nsToUsDecimal, seededRng } from '@tickwise/time';
import { LaneAssigner, SOURCES, exportPerfettoJson, jsonObject, profileFields } from '../src/index';
import { ROOT, tickwise, tmp } from './sample-store';

const BIG = 2n ** 53n;

/** The line of each "X" event by its args.line (every row has a distinct one). */
function linesByRow(path: string): Map<number, string> {
  const out = new Map<number, string>();
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.replace(/,$/, '');
    if (!line.startsWith('{"ph":"X"')) continue;
    const m = /,"line":(\d+)[,}]/.exec(line);
    out.set(Number(m![1]), line);
  }
  return out;
}

/** The head of a slice's line (pid and tid taken from the written line: the layout is tested elsewhere). */
function head(cat: string, name: string, line: string, startNs: bigint, endNs: bigint): string {
  const pid = /"pid":(\d+)/.exec(line)![1];
  const tid = /"tid":(\d+)/.exec(line)![1];
  return `{"ph":"X","cat":${JSON.stringify(cat)},"name":${JSON.stringify(name)},"pid":${pid},"tid":${tid},"ts":${nsToUsDecimal(startNs)},"dur":${nsToUsDecimal(endNs - startNs)},"args":`;
}

type Row = Record<string, unknown>;

/** The line JavaScript writes for a dispatch row (`line` is the written one, for its pid and tid). */
function dispatchLine(d: Row, line: string): string {
  const s = BigInt(d['start_ns'] as bigint);
  const e = BigInt(d['end_ns'] as bigint);
  const wg = d['workgroup_count_x'] === null ? null : `${String(d['workgroup_count_x'])}x${String(d['workgroup_count_y'] ?? '?')}x${String(d['workgroup_count_z'] ?? '?')}`;
  const args = jsonObject([
    ['kernel', d['kernel']], ['submission_id', d['submission_id']], ['command_buffer_id', d['command_buffer_id']], ['command_index', d['command_index']],
    ['event_id', d['event_id']], ['executable_id', d['executable_id']], ['function_ordinal', d['function_ordinal']], ['start_tick', d['start_tick']],
    ['end_tick', d['end_tick']], ['start_ns', s], ['end_ns', e], ['dur_ns', e - s], ['time_source', d['time_source']], ['workgroup_count', wg],
    ['rows', d['rows']], ['line', d['line']], ['valid', d['valid'] ? null : false],
  ]);
  return `${head('dispatch', (d['kernel'] ?? 'dispatch') as string, line, s, e)}${args}}`;
}

/** The line JavaScript writes for a host_events row (its JSON `args` as text, line breaks made spaces). */
function hostLine(h: Row, line: string): string {
  const s = BigInt(h['start_ns'] as bigint);
  const e = BigInt(h['end_ns'] as bigint);
  const source = h['args'] === null ? '' : `,"source":${(h['args'] as string).replace(/[\n\r]/g, ' ')}`;
  const args = jsonObject([
    ['kind', h['kind']], ['op', h['op']], ['queue', h['queue']], ['event_id', h['event_id']], ['submission_id', h['submission_id']],
    ['command_buffer_id', h['command_buffer_id']], ['thread_id', h['thread_id']], ['start_ns', s], ['end_ns', e], ['dur_ns', e - s],
    ['time_source', h['time_source']], ['line', h['line']], ['valid', h['valid'] === false ? false : null],
  ]);
  return `${head(h['kind'] as string, (h['name'] ?? h['op'] ?? h['kind']) as string, line, s, e)}${args.slice(0, -1)}${source}}}`;
}

describe('perfetto-json: slice text from profiled SQL = the text JavaScript writes', () => {
  it('every dispatch and host-event line, in every regime of NULLs and integer sizes, with every fraction of a microsecond', async () => {
    const rng = seededRng(20261205);
    const pick = <T,>(xs: readonly T[]): T => xs[rng.int(xs.length)]!;
    const u64 = () => (BigInt(rng.int(2 ** 31)) << 33n) | BigInt(rng.int(2 ** 31)) | 1n; // beyond 2^53 mostly, up to 2^64
    const huge = () => BIG + 1n + BigInt(rng.int(1e9));
    const store = await Store.open(':memory:');
    try {
      await store.insertRows('captures', ['capture_id', 'path', 'format', 'timeline'], [[1, 'x.jsonl', 'test', 'host_monotonic']]);
      await store.insertRows('devices', ['capture_id', 'device', 'kind', 'time_base'], [[1, 0, 'gpu', 'host_monotonic'], [1, 1, 'npu', 'host_monotonic']]);
      const names = ['gemm', 'say "hi"', 'tab\there', 'line\nbreak', 'µ-kernel ✓', 'back\\slash', '<b>'];
      const dispatches: Record<string, unknown>[] = [];
      for (let i = 0; i < 2400; i++) {
        // start: negative, small or beyond 2^53; every fraction 0-999 ns appears (i % 1000)
        const base = pick([-(BigInt(rng.int(1e9)) * 1000n), BigInt(rng.int(1e9)) * 1000n, 1_700_000_000_000_000_000n + BigInt(rng.int(1e9)) * 1000n]);
        const start = base + BigInt(i % 1000);
        const zero = rng.int(20) === 0;
        const end = zero ? start : start + BigInt(rng.int(5_000_000));
        const wg = rng.int(3);
        dispatches.push({
          capture_id: 1, device: i % 2, queue: rng.int(2), kernel: pick(names),
          submission_id: pick([null, BigInt(rng.int(1000)), u64()]), // some set, mixed sizes
          command_buffer_id: null, // none
          command_index: rng.int(100), // all, small
          event_id: huge(), // all, all beyond 2^53
          executable_id: BigInt(rng.int(50)), // all, all safe
          function_ordinal: rng.int(2) ? rng.int(9) : null,
          start_tick: rng.int(3) ? u64() : null, end_tick: rng.int(3) ? u64() : null,
          start_ns: start, end_ns: end, dur_ns: end - start, time_source: 'host_monotonic',
          valid: zero ? rng.int(2) === 0 : true,
          workgroup_count_x: wg ? 1 + rng.int(64) : null, workgroup_count_y: wg === 2 ? 1 + rng.int(8) : null, workgroup_count_z: wg === 2 ? 1 : null,
          rows: null, line: i + 1,
        });
      }
      await store.append('dispatches', dispatches as never);
      const hosts: Record<string, unknown>[] = [];
      for (let i = 0; i < 600; i++) {
        const start = 1_700_000_000_000_000_000n + BigInt(i) * 7_777n + BigInt(rng.int(1000));
        const end = start + BigInt(rng.int(100_000));
        hosts.push({
          capture_id: 1, device: null, queue: null, kind: pick(['slice', 'cuda_api', 'marker']), op: pick([null, 'cuda_runtime', 'x"y']),
          name: pick([null, 'cudaLaunchKernel', 'n\nl']), event_id: pick([null, BigInt(i), huge()]), submission_id: null, command_buffer_id: null,
          thread_id: pick([null, BigInt(rng.int(100)), huge()]), start_ns: start, end_ns: end, dur_ns: end - start, time_source: 'host_monotonic',
          valid: true, args: pick([null, '{"a":1}', '{"b":\n"two lines"}']), line: 100_000 + i,
        });
      }
      await store.append('host_events', hosts as never);

      // the profiles are not vacuous: every regime occurs
      const prof = new Map((await profileFields(store, SOURCES[0]!)).map((p, i) => [SOURCES[0]!.args[i]![0], p]));
      expect(prof.get('command_buffer_id')!.set).toBe('none');
      expect(prof.get('kernel')!.set).toBe('all');
      expect(prof.get('submission_id')).toEqual({ set: 'some', safe: 'some' });
      expect(prof.get('event_id')).toEqual({ set: 'all', safe: 'none' });
      expect(prof.get('executable_id')).toEqual({ set: 'all', safe: 'all' });
      expect(prof.get('start_ns')).toEqual({ set: 'all', safe: 'some' });
      expect(prof.get('valid')!.set).toBe('some');

      const out = join(tmp(), 'profiled.json');
      const summary = await exportPerfettoJson(store, out);
      const lines = linesByRow(out);
      expect(summary.dispatch_slices).toBe(dispatches.length);
      expect(summary.host_slices).toBe(hosts.length);
      expect(lines.size).toBe(dispatches.length + hosts.length);
      let checked = 0;
      for (const d of dispatches) {
        expect(lines.get(d['line'] as number), `dispatch line ${String(d['line'])}`).toBe(dispatchLine(d, lines.get(d['line'] as number)!));
        checked++;
      }
      for (const h of hosts) {
        expect(lines.get(h['line'] as number), `host line ${String(h['line'])}`).toBe(hostLine(h, lines.get(h['line'] as number)!));
        checked++;
      }
      expect(checked).toBe(3000);
    } finally {
      await store.close();
    }
  });

  const REAL = ['hta_trace_diff_control.json.gz', 'tracelens_mi300_owlv2.json.gz', 'tracelens_b200_eager_trace.json.gz']
    .map((f) => join(ROOT, '../shared/fixtures/external/chrome-trace', f));
  if (!REAL.every((f) => existsSync(f))) console.warn('perfetto-args-profile: real-trace case skipped: ../shared/fixtures/external is absent');
  it.skipIf(!REAL.every((f) => existsSync(f)))('real Kineto traces: every slice line = the text JavaScript writes from its stored row', { timeout: 300_000 }, async () => {
    const DRAWN = (valid: string) => `start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns AND (${valid} OR end_ns = start_ns)`;
    for (const file of REAL) {
      const db = join(tmp(), 'real.duckdb');
      tickwise(['import', file, '--db', db]);
      const store = await Store.open(db, { readOnly: true });
      try {
        const dispatches = await store.rows(`SELECT * FROM dispatches WHERE ${DRAWN('valid')}`);
        const hosts = await store.rows(`SELECT * REPLACE (args::VARCHAR AS args) FROM host_events WHERE ${DRAWN('coalesce(valid, true)')}`);
        const out = join(tmp(), 'real.json');
        const summary = await exportPerfettoJson(store, out);
        const lines = linesByRow(out);
        expect(summary.dispatch_slices, file).toBe(dispatches.length);
        expect(summary.host_slices, file).toBe(hosts.length);
        expect(lines.size, `${file}: one line per slice, each row's line distinct`).toBe(dispatches.length + hosts.length);
        expect(dispatches.length, file).toBeGreaterThan(100);
        for (const d of dispatches) expect(lines.get(Number(d['line'])), `${file} dispatch line ${String(d['line'])}`).toBe(dispatchLine(d, lines.get(Number(d['line']))!));
        for (const h of hosts) expect(lines.get(Number(h['line'])), `${file} host line ${String(h['line'])}`).toBe(hostLine(h, lines.get(Number(h['line']))!));
      } finally {
        await store.close();
      }
    }
  });

  it('lanes: each slice on the lane greedy partitioning in start order gives it (runs of two in SQL, longer runs in JS), per thread: two queues, and two device-bound host kinds on one queue', async () => {
    for (const seed of [1, 2, 3]) {
      const rng = seededRng(seed);
      const store = await Store.open(':memory:');
      try {
        await store.insertRows('captures', ['capture_id', 'path', 'format', 'timeline'], [[1, 'x.jsonl', 'test', 'host_monotonic']]);
        await store.insertRows('devices', ['capture_id', 'device', 'kind', 'time_base'], [[1, 0, 'gpu', 'host_monotonic']]);
        // one thread's slices: mostly apart; a start before the last end (runs of two), bursts of 3-6 in flight, touching ends, equal starts
        let line = 0;
        const slices = (n: number) => {
          const out: { start_ns: bigint; end_ns: bigint; line: number }[] = [];
          let t = 1_000_000n;
          for (let i = 0; i < n; i++) {
            const r = rng.int(20);
            const burst = r === 0 ? 3 + rng.int(4) : 1;
            for (let b = 0; b < burst; b++) {
              const start = r === 1 ? t - BigInt(1 + rng.int(500)) : r === 2 ? t : r === 3 && b === 0 ? t - 0n : t + BigInt(rng.int(3000));
              const end = start + BigInt(rng.int(4) === 0 ? 0 : 100 + rng.int(2000));
              out.push({ start_ns: start, end_ns: end, line: ++line });
              if (burst === 1 || b === burst - 1) t = end > t ? end : t;
            }
          }
          return out;
        };
        const threads: { start_ns: bigint; end_ns: bigint; line: number }[][] = [];
        const rows: Record<string, unknown>[] = [];
        for (const queue of [0, 1]) {
          const mine = slices(1500);
          threads.push(mine);
          for (const r of mine) rows.push({ capture_id: 1, device: 0, queue, kernel: 'k', ...r, dur_ns: r.end_ns - r.start_ns, time_source: 'host_monotonic', valid: true });
        }
        await store.append('dispatches', rows as never);
        // copies and memsets on queue 0 over the same times: each kind its own thread, its lanes apart from the other's
        const host: Record<string, unknown>[] = [];
        for (const kind of ['gpu_memcpy', 'gpu_memset']) {
          const mine = slices(400);
          threads.push(mine);
          for (const r of mine) host.push({ capture_id: 1, device: 0, queue: 0, kind, op: kind, ...r, dur_ns: r.end_ns - r.start_ns, time_source: 'host_monotonic', valid: true });
        }
        await store.append('host_events', host as never);
        const want = new Map<number, number>();
        for (const mine of threads) {
          const sorted = [...mine].sort((a, b) =>
            a.start_ns !== b.start_ns ? (a.start_ns < b.start_ns ? -1 : 1) : a.end_ns !== b.end_ns ? (a.end_ns < b.end_ns ? -1 : 1) : a.line - b.line);
          const lanes = new LaneAssigner();
          for (const r of sorted) want.set(r.line, lanes.assign(r.start_ns, r.end_ns));
        }
        const out = join(tmp(), `lanes-${seed}.json`);
        await exportPerfettoJson(store, out);
        const doc = JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: Record<string, unknown>[] };
        const laneOfTid = new Map<number, number>();
        const nameOfTid = new Map<number, string>();
        for (const e of doc.traceEvents) {
          if (e['name'] !== 'thread_name') continue;
          const name = String((e['args'] as Record<string, unknown>)['name']);
          laneOfTid.set(Number(e['tid']), Number(/ · lane (\d+)$/.exec(name)?.[1] ?? 1) - 1);
          nameOfTid.set(Number(e['tid']), name);
        }
        const got = new Map<number, number>();
        for (const e of doc.traceEvents) {
          if (e['ph'] !== 'X') continue;
          const a = e['args'] as Record<string, unknown>;
          const l = Number(a['line'] ?? (a['source'] as Record<string, unknown> | undefined)?.['line']);
          got.set(l, laneOfTid.get(Number(e['tid']))!);
          // a host slice is on a thread of its own kind
          if (a['kind'] !== undefined) expect(nameOfTid.get(Number(e['tid']))).toContain(String(a['kind']));
        }
        expect(got.size).toBe(rows.length + host.length);
        expect(Math.max(...want.values()), `seed ${seed}: runs longer than two occur`).toBeGreaterThanOrEqual(3);
        expect([...want.values()].filter((l) => l === 1).length, `seed ${seed}`).toBeGreaterThan(50);
        expect(got, `seed ${seed}`).toEqual(want);
      } finally {
        await store.close();
      }
    }
  });
});
