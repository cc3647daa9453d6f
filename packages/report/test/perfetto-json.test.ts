import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { NS_PER, TickwiseError, decimalToNs } from '@tickwise/time';
import { LaneAssigner, exportPerfettoJson, jsonInteger } from '../src/index';
import { SAMPLE_GPU, sampleStore, tickwise, tmp } from './sample-store';

interface Slice { cat: string; pid: number; tid: number; start_ns: bigint; dur_ns: bigint; args: Record<string, unknown>; name: string }

/**
 * Reads a written trace back: the whole file must be valid JSON, and each
 * "X" event's ts/dur are re-read EXACTLY from their decimal text (one event
 * per line), not from JSON.parse's doubles.
 */
function readTrace(path: string): { doc: { traceEvents: Record<string, unknown>[] }; slices: Slice[] } {
  const text = readFileSync(path, 'utf8');
  const doc = JSON.parse(text) as { traceEvents: Record<string, unknown>[] };
  const slices: Slice[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('"ph":"X"')) continue;
    const ev = JSON.parse(line.replace(/,$/, '')) as Record<string, unknown>;
    const ts = /"ts":([0-9.eE+-]+)/.exec(line)![1]!;
    const dur = /"dur":([0-9.eE+-]+)/.exec(line)![1]!;
    slices.push({
      cat: String(ev['cat']), pid: Number(ev['pid']), tid: Number(ev['tid']), name: String(ev['name']),
      start_ns: decimalToNs(ts, NS_PER.us)!, dur_ns: decimalToNs(dur, NS_PER.us)!, args: ev['args'] as Record<string, unknown>,
    });
  }
  return { doc, slices };
}

/** Length of the union of intervals (exact). */
function unionNs(iv: { start_ns: bigint; dur_ns: bigint }[]): bigint {
  const s = [...iv].sort((a, b) => (a.start_ns < b.start_ns ? -1 : a.start_ns > b.start_ns ? 1 : 0));
  let total = 0n;
  let curS = -1n;
  let curE = -1n;
  for (const x of s) {
    const e = x.start_ns + x.dur_ns;
    if (curE < 0n || x.start_ns > curE) {
      if (curE >= 0n) total += curE - curS;
      curS = x.start_ns;
      curE = e;
    } else if (e > curE) curE = e;
  }
  if (curE >= 0n) total += curE - curS;
  return total;
}

describe('perfetto-json export of the sample captures', () => {
  let db: string;
  let store: Store;
  let out: string;
  beforeAll(async () => {
    db = sampleStore();
    store = await Store.open(db, { readOnly: true });
    out = join(tmp(), 'trace.json');
    await exportPerfettoJson(store, out);
  });
  afterAll(async () => { await store.close(); });

  it('round-trips: same slice count, sum of durations and busy union per device as the store, to the nanosecond', async () => {
    const { slices } = readTrace(out);
    const dispatches = slices.filter((s) => s.cat === 'dispatch');
    const want = await store.rows(`SELECT capture_id, device, count(*) AS n, sum(end_ns - start_ns)::BIGINT AS sum_ns,
        min(start_ns) AS first_ns FROM dispatches WHERE valid AND start_ns IS NOT NULL GROUP BY ALL ORDER BY ALL`);
    expect(dispatches.length).toBe(Number(await store.count('dispatches', 'WHERE valid AND start_ns IS NOT NULL')));
    expect(dispatches.length).toBe(2292);
    for (const w of want) {
      const mine = dispatches.filter((s) => s.args['start_ns'] !== undefined && BigInt(String(s.args['start_ns'])) >= 0n)
        .filter((s) => sliceDevice(s) === `${String(w['capture_id'])}:${String(w['device'])}`);
      expect(BigInt(mine.length)).toBe(w['n']);
      expect(mine.reduce((a, s) => a + s.dur_ns, 0n)).toBe(w['sum_ns']);
      const busy = await store.scalar(`SELECT sum(greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns))))::BIGINT FROM (
          SELECT start_ns, end_ns, max(end_ns) OVER (ORDER BY start_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
          FROM dispatches WHERE valid AND start_ns IS NOT NULL AND capture_id = $1 AND device = $2)`, [w['capture_id'], w['device']]);
      expect(unionNs(mine)).toBe(busy);
      expect(mine.reduce((m, s) => (s.start_ns < m ? s.start_ns : m), mine[0]!.start_ns)).toBe(w['first_ns']);
    }
    // the ts/dur text is the args' exact ns, every one
    for (const s of dispatches) {
      expect(s.start_ns).toBe(BigInt(String(s.args['start_ns'])));
      expect(s.dur_ns).toBe(BigInt(String(s.args['dur_ns'])));
      expect(s.dur_ns >= 0n).toBe(true);
    }
  });

  function sliceDevice(s: Slice): string {
    return pidDevice.get(s.pid)!;
  }
  const pidDevice = new Map<number, string>();
  beforeAll(() => {
    const { doc } = readTrace(out);
    for (const e of doc.traceEvents) {
      if (e['ph'] === 'M' && e['name'] === 'process_labels') {
        const m = /capture_id=(\d+) device=(\d+)/.exec(String((e['args'] as Record<string, unknown>)['labels']))!;
        pidDevice.set(Number(e['pid']), `${m[1]}:${m[2]}`);
      }
    }
  });

  it('names a process per (capture, device), GPU first, and a thread per queue lane; slices of one thread never overlap', () => {
    const { doc, slices } = readTrace(out);
    // ts is in microseconds as the format says; no displayTimeUnit, which some trace processors read as the unit of ts
    expect(Object.keys(doc)).toEqual(['otherData', 'traceEvents']);
    const meta = doc.traceEvents.filter((e) => e['ph'] === 'M');
    const procs = meta.filter((e) => e['name'] === 'process_name').map((e) => String((e['args'] as Record<string, unknown>)['name']));
    expect(procs).toEqual([
      // the kind, not "iGPU": the store does not say the sample's GPU is integrated (an H200 is not an iGPU)
      'GPU · device 0 · igpu-prefill (capture 1)',
      'NPU · device 0 · npu-tiles (capture 2)',
    ]);
    const threads = meta.filter((e) => e['name'] === 'thread_name').map((e) => `${String(e['pid'])}/${String((e['args'] as Record<string, unknown>)['name'])}`);
    // the sample's ffn gate/up dispatches overlap at their tails: a second lane
    expect(new Set(threads)).toEqual(new Set(['1/queue 0', '1/queue 0 · lane 2', '1/queue 0 submissions', '2/queue 0', '2/queue 0 submissions']));
    expect(threads).toHaveLength(5);
    const byTid = new Map<number, Slice[]>();
    for (const s of slices) byTid.set(s.tid, [...(byTid.get(s.tid) ?? []), s]);
    for (const list of byTid.values()) {
      list.sort((a, b) => (a.start_ns < b.start_ns ? -1 : 1));
      for (let i = 1; i < list.length; i++) expect(list[i]!.start_ns >= list[i - 1]!.start_ns + list[i - 1]!.dur_ns).toBe(true);
    }
  });

  it('carries submission, kernel and raw ticks in the slice args', () => {
    const { slices } = readTrace(out);
    const s = slices.find((x) => x.cat === 'dispatch' && x.pid === 1)!;
    expect(Object.keys(s.args)).toEqual(expect.arrayContaining(['kernel', 'submission_id', 'start_tick', 'end_tick', 'start_ns', 'dur_ns', 'time_source', 'line']));
    expect(s.name).toBe(s.args['kernel']);
    expect(slices.filter((x) => x.cat === 'submission').length).toBe(266);
  });
});

describe('tickwise export of the sample capture file', () => {
  it('round-trips through the CLI: slice count, summed durations and busy union equal the store\'s, to the ns', async () => {
    const out = join(tmp(), 'trace.json');
    tickwise(['export', SAMPLE_GPU, '--format', 'perfetto-json', '--out', out]);
    const { slices } = readTrace(out);
    const dispatches = slices.filter((x) => x.cat === 'dispatch');
    const store = await Store.open(sampleStore({ npu: false }), { readOnly: true });
    try {
      const want = (await store.rows(`SELECT count(*) AS n, sum(end_ns - start_ns)::BIGINT AS sum_ns FROM dispatches WHERE valid AND start_ns IS NOT NULL`))[0]!;
      expect(BigInt(dispatches.length)).toBe(want['n']);
      expect(dispatches.reduce((a, x) => a + x.dur_ns, 0n)).toBe(want['sum_ns']);
      const busy = await store.scalar(`SELECT sum(greatest(0, end_ns - greatest(start_ns, coalesce(pm, start_ns))))::BIGINT FROM (
          SELECT start_ns, end_ns, max(end_ns) OVER (ORDER BY start_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm
          FROM dispatches WHERE valid AND start_ns IS NOT NULL)`);
      expect(unionNs(dispatches)).toBe(busy);
      // the truth file's busy time is the TRUE one (before the clock fit): the fitted store is within 0.01 %
      const truth = JSON.parse(readFileSync(join(import.meta.dirname, '../../../captures/sample/igpu-prefill.truth.json'), 'utf8')) as { overall: { busy_ns: number; dispatches: number } };
      expect(dispatches.length).toBe(truth.overall.dispatches);
      expect(Math.abs(Number(unionNs(dispatches)) / truth.overall.busy_ns - 1)).toBeLessThan(1e-4);
    } finally {
      await store.close();
    }
  });

  it('--format parquet through the CLI; usage errors exit 2', () => {
    const dir = join(tmp(), 'pq');
    tickwise(['export', SAMPLE_GPU, '--format', 'parquet', '--out', dir, '--partition']);
    expect(JSON.parse(readFileSync(join(dir, 'tickwise-export.json'), 'utf8')).tables.length).toBeGreaterThan(10);
    let status = 0;
    let stderr = '';
    try {
      tickwise(['export', SAMPLE_GPU, '--format', 'perfetto-json', '--out', join(dir, 'x.json'), '--partition']);
    } catch (e) {
      status = (e as { status: number }).status;
      stderr = String((e as { stderr: string }).stderr);
    }
    expect(status).toBe(2);
    expect(stderr).toBe('tickwise: --partition goes with --format parquet\n');
    // a folder as --out: one line, exit 2 (it was an internal error with a stack trace, exit 70)
    try {
      tickwise(['export', SAMPLE_GPU, '--format', 'perfetto-json', '--out', dir]);
      status = 0;
    } catch (e) {
      status = (e as { status: number }).status;
      stderr = String((e as { stderr: string }).stderr);
    }
    expect(status).toBe(2);
    expect(stderr).toBe(`tickwise: ${dir}: cannot write ${dir}: it is a folder; give the trace a file name (e.g. trace.json) (nothing written)\n`);
  });
});

/** An in-memory store with capture 1 and its GPU 0 on the given time base. */
async function handMadeStore(timeBase: string): Promise<Store> {
  const store = await Store.open(':memory:');
  await store.insertRows('captures', ['capture_id', 'path', 'format', 'timeline'], [[1, 'x.jsonl', 'test', 'host_monotonic']]);
  await store.insertRows('devices', ['capture_id', 'device', 'kind', 'time_base'], [[1, 0, 'gpu', timeBase]]);
  return store;
}

describe('perfetto-json export of hand-made rows', () => {
  it('writes ticks beyond 2^53 as strings, leaves out rows that end before they start, escapes names', async () => {
    const store = await handMadeStore('device_tick_fit');
    try {
      const big = 2n ** 60n + 7n;
      await store.insertRows('dispatches', ['capture_id', 'device', 'queue', 'kernel', 'start_ns', 'end_ns', 'dur_ns', 'start_tick', 'end_tick', 'time_source', 'valid'], [
        [1, 0, 0, '<script>alert(1)</script> "q"', 1_000_000_001n, 1_000_002_500n, 2_499n, big, big + 250n, 'device_tick_fit', true],
        [1, 0, 0, 'backwards', 2_000_000_000n, 1_999_999_000n, -1000n, 1n, 0n, 'device_tick_fit', true],
      ]);
      const out = join(tmp(), 't.json');
      const s = await exportPerfettoJson(store, out);
      expect(s.dispatch_slices).toBe(1);
      expect(s.negative_duration_rows).toBe(1);
      const { slices } = readTrace(out);
      expect(slices).toHaveLength(1);
      expect(slices[0]!.start_ns).toBe(1_000_000_001n);
      expect(slices[0]!.dur_ns).toBe(2_499n);
      expect(slices[0]!.args['start_tick']).toBe(big.toString());
      expect(slices[0]!.name).toBe('<script>alert(1)</script> "q"');
      expect(readFileSync(out, 'utf8')).toContain('"ts":1000000.001,"dur":2.499');
    } finally {
      await store.close();
    }
  });
});

describe('perfetto-json export onto an existing path', () => {
  it('replaces an earlier trace (moved aside, not renamed over) and leaves nothing else; onto a folder: cannot-write at once, the folder kept', async () => {
    const store = await handMadeStore('host_monotonic');
    try {
      await store.insertRows('dispatches', ['capture_id', 'device', 'queue', 'kernel', 'start_ns', 'end_ns', 'dur_ns', 'time_source', 'valid', 'line'], [
        [1, 0, 0, 'k', 1_000n, 3_500n, 2_500n, 'host_monotonic', true, 1],
      ]);
      const dir = tmp();
      const out = join(dir, 'again.json');
      writeFileSync(out, 'an older trace');
      const s = await exportPerfettoJson(store, out);
      expect(s.dispatch_slices).toBe(1);
      expect(readFileSync(out, 'utf8')).toContain('"ts":1,"dur":2.5');
      expect(readdirSync(dir).filter((f) => f.startsWith('again.json'))).toEqual(['again.json']);
      const folder = join(dir, 'a-folder');
      mkdirSync(folder);
      writeFileSync(join(folder, 'kept'), 'x');
      const err = await exportPerfettoJson(store, folder).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TickwiseError);
      expect((err as TickwiseError).code).toBe('cannot-write');
      expect((err as TickwiseError).message).toMatch(/a-folder: it is a folder; give the trace a file name/);
      expect(readdirSync(folder)).toEqual(['kept']);
      expect(readdirSync(dir).filter((f) => f.startsWith('a-folder'))).toEqual(['a-folder']);
    } finally {
      await store.close();
    }
  });
});

describe('pieces', () => {
  it('jsonInteger: numbers up to 2^53, strings beyond', () => {
    expect(jsonInteger(2n ** 53n)).toBe('9007199254740992');
    expect(jsonInteger(2n ** 53n + 1n)).toBe('"9007199254740993"');
    expect(jsonInteger(-5)).toBe('-5');
  });
  it('LaneAssigner uses as many lanes as the most intervals in flight; touching intervals share one', () => {
    const l = new LaneAssigner();
    expect([l.assign(0n, 10n), l.assign(5n, 12n), l.assign(10n, 20n), l.assign(12n, 13n), l.assign(12n, 30n)]).toEqual([0, 1, 0, 1, 2]);
    expect(l.lanes).toBe(3);
  });
});
