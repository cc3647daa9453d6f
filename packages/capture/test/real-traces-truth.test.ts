/**
 * Every shared real Chrome trace / rocprofv3 file (../shared/fixtures/external/)
 * imported as a user would, and held to independent truth:
 *
 * - chrome-trace/: `truth.json` (computed from the JSON text with exact
 *   decimals by a separate script): per kernel name count and summed ns,
 *   copies/memsets and `cuda_sync` markers per category, and per device (pid)
 *   the kernels' busy union and span. Sync markers are not dispatches
 *   (issue 15.1); the MTIA trace's device spans are dispatches of a device of
 *   kind `other` (15.6). Every raw record (flows, metadata) is one of the
 *   file's own events of its phase, each once (JSON.parse of the file).
 * - rocprofv3-csv/, rocprofv3-json/: no truth file ships, so the truth is
 *   computed here from the file's own text (CSV cells and JSON integers read
 *   as BigInt, independent of the reader's DuckDB path): per kernel name
 *   count and summed (end - start), per agent busy union and span. Pointer
 *   queue handles (2024-07 layout) are kept, never queue 0 (15.7).
 *
 * Skipped with a message when ../shared/fixtures/external is absent.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { ROOT, tmp } from './helpers';

const EXT = resolve(ROOT, '../shared/fixtures/external');
const HAVE = existsSync(join(EXT, 'chrome-trace', 'truth.json'));
if (!HAVE) console.warn(`real-trace truth tests skipped: ${EXT} is absent`);

interface ChromeTruth {
  file: string;
  kernels: number;
  kernel_ns: number;
  per_name: Record<string, { count: number; sum_ns: number }>;
  by_category: Record<string, { count: number; sum_ns: number }>;
  per_device_pid: Record<string, { kernels: number; busy_union_ns: number; span_ns: number }>;
}

async function load(file: string) {
  const store = await Store.open(':memory:');
  const result = await importInput(store, file);
  return { store, result };
}

/** Busy union and span of [start, end) intervals (exact). */
function busyAndSpan(iv: readonly (readonly [bigint, bigint])[]): { busy: bigint; span: bigint } {
  const s = [...iv].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let busy = 0n;
  let cs = s[0]![0];
  let ce = s[0]![1];
  let last = ce;
  for (const [a, b] of s.slice(1)) {
    if (b > last) last = b;
    if (a > ce) {
      busy += ce - cs;
      cs = a;
      ce = b;
    } else if (b > ce) ce = b;
  }
  busy += ce - cs;
  return { busy, span: last - s[0]![0] };
}

async function perDevice(store: Store): Promise<Map<number, { n: number; busy: bigint; span: bigint }>> {
  const rows = await store.query({ device: 'number', start_ns: 'bigint', end_ns: 'bigint' },
    `SELECT device, start_ns, end_ns FROM dispatches WHERE valid ORDER BY device, start_ns`);
  const by = new Map<number, [bigint, bigint][]>();
  for (const r of rows) {
    if (!by.has(r.device)) by.set(r.device, []);
    by.get(r.device)!.push([r.start_ns, r.end_ns]);
  }
  return new Map([...by].map(([d, iv]) => [d, { n: iv.length, ...busyAndSpan(iv) }]));
}

async function perName(store: Store): Promise<Record<string, { count: number; sum_ns: number }>> {
  const rows = await store.query({ kernel: 'string', n: 'number', sum_ns: 'bigint' },
    `SELECT kernel, count(*)::INTEGER AS n, sum(dur_ns)::BIGINT AS sum_ns FROM dispatches WHERE valid GROUP BY kernel`);
  return Object.fromEntries(rows.map((r) => [r.kernel, { count: r.n, sum_ns: Number(r.sum_ns) }]));
}

const TRUTH: ChromeTruth[] = HAVE ? JSON.parse(readFileSync(join(EXT, 'chrome-trace', 'truth.json'), 'utf8')) as ChromeTruth[] : [];

describe.skipIf(!HAVE)('real Chrome traces (Kineto, TraceLens) against truth.json', () => {
  for (const t of TRUTH) {
    it(`${t.file}: per-name counts and sums, categories, per-device busy union and span`, { timeout: 120_000 }, async () => {
      const { store, result } = await load(join(EXT, 'chrome-trace', t.file));
      if (t.kernels === 0) {
        await store.close();
        return; // the MTIA trace: its own test below
      }
      expect(result.dispatches).toBe(t.kernels);
      expect(await perName(store)).toEqual(t.per_name);
      expect(await store.count('dispatches', 'WHERE NOT valid')).toBe(0);
      // copies/memsets and sync markers: host events of their category, with their device; never dispatches
      for (const [cat, want] of Object.entries(t.by_category)) {
        if (cat === 'kernel') continue;
        const got = await store.query({ n: 'number', sum_ns: 'bigint?', no_device: 'number', invalid: 'number' },
          `SELECT count(*)::INTEGER AS n, sum(dur_ns)::BIGINT AS sum_ns, count(*) FILTER (WHERE device IS NULL)::INTEGER AS no_device,
             count(*) FILTER (WHERE NOT valid)::INTEGER AS invalid FROM host_events WHERE kind = $1`, [cat]);
        expect({ cat, n: got[0]!.n, sum_ns: Number(got[0]!.sum_ns ?? 0n) }).toEqual({ cat, n: want.count, sum_ns: want.sum_ns });
        expect(got[0]!.no_device).toBe(0);
        expect(got[0]!.invalid).toBe(0);
      }
      // devices: one per pid holding kernels, in pid order
      const pids = Object.keys(t.per_device_pid).sort((a, b) => Number(a) - Number(b));
      const devs = await perDevice(store);
      const devIds = [...devs.keys()].sort((a, b) => a - b);
      expect(devIds).toHaveLength(pids.length);
      pids.forEach((pid, i) => {
        const want = t.per_device_pid[pid]!;
        const got = devs.get(devIds[i]!)!;
        expect({ pid, n: got.n, busy: Number(got.busy), span: Number(got.span) }).toEqual({ pid, n: want.kernels, busy: want.busy_union_ns, span: want.span_ns });
      });
      // no error or warning diagnostic on a well-formed real trace
      expect(await store.rows(`SELECT code, message FROM diagnostics WHERE severity <> 'info'`)).toEqual([]);
      // raw records: each is one of the file's events of its phase (by JSON.parse of the file), each of those once
      const text = gunzipSync(readFileSync(join(EXT, 'chrome-trace', t.file))).toString('utf8');
      const parsed = JSON.parse(text) as { traceEvents?: Record<string, unknown>[] } | Record<string, unknown>[];
      const events = Array.isArray(parsed) ? parsed : parsed.traceEvents ?? [];
      const want = new Map<string, number>();
      for (const e of events) {
        if (['X', 'B', 'E', 'i', 'I', 'R', 'C'].includes(String(e['ph']))) continue;
        const k = JSON.stringify(e);
        want.set(k, (want.get(k) ?? 0) + 1);
      }
      const raw = await store.query({ record_type: 'string', json: 'string' }, `SELECT record_type, json::VARCHAR AS json FROM raw_records WHERE record_type NOT IN ('chrome:E', 'chrome:C')`);
      expect(raw.length).toBe([...want.values()].reduce((a, n) => a + n, 0));
      for (const r of raw) {
        const k = JSON.stringify(JSON.parse(r.json));
        expect(r.record_type).toBe(`chrome:${String((JSON.parse(r.json) as Record<string, unknown>)['ph'] ?? '?')}`);
        expect(want.get(k) ?? 0, `${t.file}: a raw record that is no event of the file: ${r.json.slice(0, 120)}`).toBeGreaterThan(0);
        want.set(k, want.get(k)! - 1);
      }
      await store.close();
    });
  }

  it('hta_cuda_event_sync_multi_stream: 3 kernels, 369 us; 5 sync markers on their device and stream, valid, none in dispatches', async () => {
    const { store } = await load(join(EXT, 'chrome-trace', 'hta_cuda_event_sync_multi_stream.json.gz'));
    expect(await store.rows(`SELECT count(*)::INTEGER AS n, sum(dur_ns)::BIGINT AS ns FROM dispatches`)).toEqual([{ n: 3, ns: 369_000n }]);
    expect(await store.count('dispatches', `WHERE kernel LIKE '%Sync%' OR kernel LIKE '%Wait%'`)).toBe(0);
    const sync = await store.rows(`SELECT name, device, queue, dur_ns, valid FROM host_events WHERE kind = 'cuda_sync' ORDER BY start_ns`);
    expect(sync).toEqual([
      { name: 'Event Sync', device: 0, queue: null, dur_ns: 4000n, valid: true }, // waits on no stream (wait_on_stream -1)
      { name: 'Event Sync', device: 0, queue: 20, dur_ns: 4000n, valid: true }, // waits on stream 20
      { name: 'Stream Wait Event', device: 0, queue: 24, dur_ns: 2000n, valid: true }, // stream 24 waits
      { name: 'Event Sync', device: 0, queue: 28, dur_ns: 4000n, valid: true },
      { name: 'Context Sync', device: 0, queue: null, dur_ns: 19_000n, valid: true },
    ]);
    // the device is named from deviceProperties, not "GPU 0" alone
    expect(await store.rows(`SELECT kind, name FROM devices`)).toEqual([{ kind: 'gpu', name: 'NVIDIA A100-PG509-200 (GPU 0)' }]);
    await store.close();
  });

  it('zero-length sync markers are valid host events without a diagnostic (no invalid-events)', async () => {
    const dir = tmp();
    const file = join(dir, 'zero-sync.json');
    const ev = (name: string, ts: number, dur: number, cat: string, extra = '') =>
      `{"ph":"X","cat":"${cat}","name":"${name}","pid":0,"tid":7,"ts":${ts},"dur":${dur},"args":{"device":0,"stream":7${extra}}}`;
    writeFileSync(file, `{"schemaVersion":1,"traceEvents":[
{"name":"process_labels","ph":"M","pid":0,"tid":0,"args":{"labels":"GPU 0"}},
${ev('k', 100, 10, 'kernel')},
${ev('Stream Wait Event', 111, 0, 'cuda_sync', ',"wait_on_stream":9')},
${ev('Event Sync', 112, 0, 'cuda_sync')},
${ev('k', 120, 10, 'kernel')}]}`);
    const { store, result } = await load(file);
    expect(result.dispatches).toBe(2);
    expect(await store.rows(`SELECT name, queue, dur_ns, valid FROM host_events WHERE kind = 'cuda_sync' ORDER BY start_ns`)).toEqual([
      { name: 'Stream Wait Event', queue: 7, dur_ns: 0n, valid: true },
      { name: 'Event Sync', queue: 7, dur_ns: 0n, valid: true },
    ]);
    expect(await store.count('diagnostics', `WHERE severity <> 'info'`)).toBe(0);
    await store.close();
  });

  it('an end is round(ts + dur), not round(ts) + round(dur): 1700000000124.0005 us + 0.0015 us ends at ...124002 ns', async () => {
    const file = join(tmp(), 'exact-end.json');
    writeFileSync(file, `[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":1,"ts":1700000000124.0005,"dur":0.0015}]`);
    const { store } = await load(file);
    expect(await store.rows(`SELECT start_ns, end_ns, source_dur_ns FROM dispatches`)).toEqual([
      { start_ns: 1_700_000_000_124_001n, end_ns: 1_700_000_000_124_002n, source_dur_ns: 2n },
    ]);
    await store.close();
  });

  it('hta_mtia_inference_rank_0: 1313 mtia_ccp_events spans on process "MTIA 17" are dispatches of a device of kind other, named', async () => {
    const { store, result } = await load(join(EXT, 'chrome-trace', 'hta_mtia_inference_rank_0.json.gz'));
    expect(result.dispatches).toBe(1313);
    expect(await store.rows(`SELECT kind, name FROM devices`)).toEqual([{ kind: 'other', name: 'ARTEMIS (MTIA 17)' }]);
    expect(await store.count('dispatches', 'WHERE NOT valid')).toBe(0);
    // the host-side MTIA runtime calls (synchronize) stay host events
    expect(await store.count('host_events', `WHERE op = 'mtia_runtime'`)).toBe(823);
    expect(await store.count('diagnostics', `WHERE code = 'other-device' AND message LIKE '%MTIA 17%'`)).toBe(1);
    await store.close();
  });

  it('a capture with no device work is an error diagnostic "the capture holds no dispatches", not dropped records', async () => {
    const file = join(tmp(), 'cpu-only.json');
    writeFileSync(file, `{"traceEvents":[{"name":"process_labels","ph":"M","pid":1,"tid":0,"args":{"labels":"CPU"}},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":1,"dur":2}]}`);
    const { store } = await load(file);
    expect(await store.rows(`SELECT severity, code, message FROM diagnostics WHERE severity <> 'info'`)).toEqual([
      { severity: 'error', code: 'no-dispatches', message: expect.stringMatching(/^the capture holds no dispatches: /) },
    ]);
    await store.close();
  });
});

/** A CSV line's cells (quoted cells may hold commas; "" is a quote). */
function csvCells(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let v = '';
      i++;
      while (i < line.length) {
        if (line[i] === '"' && line[i + 1] === '"') { v += '"'; i += 2; } else if (line[i] === '"') { i++; break; } else v += line[i++];
      }
      out.push(v);
      i++; // the comma
    } else {
      const j = line.indexOf(',', i);
      const end = j < 0 ? line.length : j;
      out.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return out;
}

/** Independent truth of a rocprofv3 kernel trace CSV: per name count/sum, per agent busy/span. */
function csvTruth(text: string) {
  const lines = text.split(/\r?\n/).filter((l) => l.length > 0);
  const head = csvCells(lines[0]!).map((h) => h.toLowerCase());
  const at = (c: string) => head.indexOf(c);
  const perName: Record<string, { count: number; sum_ns: number }> = {};
  const agents = new Map<string, [bigint, bigint][]>();
  const queues = new Set<string>();
  for (const l of lines.slice(1)) {
    const c = csvCells(l);
    const s = BigInt(c[at('start_timestamp')]!);
    const e = BigInt(c[at('end_timestamp')]!);
    const name = c[at('kernel_name')]!;
    const p = (perName[name] ??= { count: 0, sum_ns: 0 });
    p.count++;
    p.sum_ns += Number(e - s);
    const agent = c[at('agent_id')]!;
    if (!agents.has(agent)) agents.set(agent, []);
    agents.get(agent)!.push([s, e]);
    queues.add(c[at('queue_id')]!);
  }
  return { rows: lines.length - 1, perName, agents, queues };
}

const CSV_FILES = HAVE ? ['sdkdocs_2024-07_c798a92f_kernel_trace.csv', 'sdkdocs_2025-06_1562e457_kernel_trace.csv',
  'sdkdocs_2025-06_1562e457_kernel_trace_truncated.csv', 'hpctraining_rocpd2csv_out_kernel_trace_head.csv'] : [];

describe.skipIf(!HAVE)('real rocprofv3 files against truth computed from their own text', () => {
  for (const f of CSV_FILES) {
    it(`${f}: per-name counts and sums, per-agent busy union and span`, async () => {
      const path = join(EXT, 'rocprofv3-csv', f);
      const truth = csvTruth(readFileSync(path, 'utf8'));
      const { store, result } = await load(path);
      expect(result.dispatches).toBe(truth.rows);
      expect(await perName(store)).toEqual(truth.perName);
      const devs = await perDevice(store);
      expect(devs.size).toBe(truth.agents.size);
      const wantByAgent = [...truth.agents].sort((a, b) => Number(/\d+$/.exec(a[0])![0]) - Number(/\d+$/.exec(b[0])![0])).map(([, iv]) => busyAndSpan(iv));
      const got = [...devs.keys()].sort((a, b) => a - b).map((d) => ({ busy: devs.get(d)!.busy, span: devs.get(d)!.span }));
      expect(got).toEqual(wantByAgent);
      // queues: as many as the file has, never a pointer handle collapsed to queue 0
      const queues = await store.query({ queue: 'number' }, `SELECT DISTINCT queue FROM dispatches ORDER BY queue`);
      expect(queues).toHaveLength(truth.queues.size);
      const pointers = [...truth.queues].filter((q) => BigInt(q) > 2147483647n);
      if (pointers.length > 0) {
        expect(queues.map((q) => q.queue)).not.toContain(0);
        const kept = await store.query({ value: 'string' }, `SELECT value FROM conditions WHERE key LIKE 'queue_handle.%' ORDER BY key`);
        expect(kept.map((k) => k.value).sort()).toEqual(pointers.sort());
      } else {
        expect(queues.map((q) => String(q.queue)).sort()).toEqual([...truth.queues].sort());
      }
      await store.close();
    });
  }

  it('sdkdocs_2025-06_1562e457_memory_copy_trace.csv is not a kernel trace: refused (exit 2), not read as one', async () => {
    const store = await Store.open(':memory:');
    await expect(importInput(store, join(EXT, 'rocprofv3-csv', 'sdkdocs_2025-06_1562e457_memory_copy_trace.csv')))
      .rejects.toThrow(/cannot tell the format|missing column\(s\) kernel_name/);
    await store.close();
  });

  it('a header-only kernel trace CSV says the capture holds no dispatches (file:line), not "empty file"', async () => {
    const file = join(tmp(), 'kernel_trace.csv');
    writeFileSync(file, readFileSync(join(EXT, 'rocprofv3-csv', 'sdkdocs_2024-07_c798a92f_kernel_trace.csv'), 'utf8').split('\n')[0] + '\n');
    const store = await Store.open(':memory:');
    await expect(importInput(store, file)).rejects.toMatchObject({ message: expect.stringMatching(/^the capture holds no dispatches/), line: 2 });
    await store.close();
  });

  it('tracelens_908_results.json (rocprofv3 JSON, 43 915 dispatches): per-name counts and sums, per-agent busy and span, agent names', { timeout: 120_000 }, async () => {
    const path = join(EXT, 'rocprofv3-json', 'tracelens_908_results.json.gz');
    // independent truth: the JSON's integers are < 2^53 here (checked), so JSON.parse reads them exactly
    const doc = JSON.parse(gunzipSync(readFileSync(path)).toString('utf8')) as { 'rocprofiler-sdk-tool': {
      agents: { id: { handle: number }; logical_node_id: number; product_name: string }[];
      kernel_symbols: { kernel_id: number; formatted_kernel_name: string }[];
      buffer_records: { kernel_dispatch: { start_timestamp: number; end_timestamp: number; dispatch_info: { agent_id: { handle: number }; kernel_id: number } }[] };
    }[] };
    const tool = doc['rocprofiler-sdk-tool'][0]!;
    const names = new Map(tool.kernel_symbols.map((k) => [k.kernel_id, k.formatted_kernel_name]));
    const node = new Map(tool.agents.map((a) => [a.id.handle, a.logical_node_id]));
    const perNameTruth: Record<string, { count: number; sum_ns: number }> = {};
    const byNode = new Map<number, [bigint, bigint][]>();
    for (const k of tool.buffer_records.kernel_dispatch) {
      expect(Number.isSafeInteger(k.start_timestamp) && Number.isSafeInteger(k.end_timestamp)).toBe(true);
      const p = (perNameTruth[names.get(k.dispatch_info.kernel_id)!] ??= { count: 0, sum_ns: 0 });
      p.count++;
      p.sum_ns += k.end_timestamp - k.start_timestamp;
      const n = node.get(k.dispatch_info.agent_id.handle)!;
      if (!byNode.has(n)) byNode.set(n, []);
      byNode.get(n)!.push([BigInt(k.start_timestamp), BigInt(k.end_timestamp)]);
    }
    const { store, result } = await load(path);
    expect(result.dispatches).toBe(43_915);
    expect(await perName(store)).toEqual(perNameTruth);
    const devs = await perDevice(store);
    expect([...devs.keys()].sort()).toEqual([...byNode.keys()].sort());
    for (const [n, iv] of byNode) expect({ n, ...busyAndSpan(iv) }).toEqual({ n, busy: devs.get(n)!.busy, span: devs.get(n)!.span });
    const devNames = await store.query({ device: 'number', kind: 'string', name: 'string?' }, `SELECT device, kind, name FROM devices WHERE device IN (SELECT device FROM dispatches)`);
    expect(devNames.every((d) => d.kind === 'gpu' && d.name === 'AMD Instinct MI350X')).toBe(true);
    // stored in the file's order, though every record is on line 1 (the import sorts only when its joins reordered rows)
    const stored = await store.numbers(`SELECT start_ns FROM dispatches ORDER BY rowid`);
    expect(Array.from(stored)).toEqual(tool.buffer_records.kernel_dispatch.map((k) => k.start_timestamp));
    await store.close();
  });
});
