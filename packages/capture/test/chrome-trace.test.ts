import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, type ImportOptions } from '../src/index';
import { importMemoryLimit } from '../src/capture-rows';
import { ROOT, tickwise, tmp } from './helpers';
import { KERNEL_TOTALS_SQL, expectGolden, fixture } from './trace-helpers';

async function load(file: string, opts: ImportOptions & { format?: string } = {}) {
  const store = await Store.open(':memory:');
  const result = await importInput(store, file, opts);
  return { store, result };
}

const PRECISION = fixture('chrome-trace', 'precision.json');
const KINETO = fixture('chrome-trace', 'kineto.pt.trace.json');

describe('Chrome trace JSON: units and precision', () => {
  it('kernel totals (diff test)', async () => {
    const { store, result } = await load(PRECISION);
    expect(result).toMatchObject({ format: 'chrome-trace', records: 22, dispatches: 8 });
    await expectGolden(store, fixture('chrome-trace', 'precision.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
  });

  it('converts microsecond floats from their decimal text: no phantom nanoseconds', async () => {
    const { store } = await load(PRECISION);
    const rows = await store.rows(`SELECT kernel, start_ns, end_ns, dur_ns FROM dispatches WHERE valid ORDER BY line`);
    expect(rows).toEqual([
      // 1700000000123.0004 us = ...123000.4 ns -> ...123000; a double multiply gives ...123000.5 -> ...123001.
      // The end is round(ts + dur) = round(...133001.8) = ...133002, not round(ts) + round(dur) = ...133001 (issue 17)
      { kernel: 'k_precise', start_ns: 1_700_000_000_123_000n, end_ns: 1_700_000_000_133_002n, dur_ns: 10_002n },
      // 1700000000123.4567 us = ...123456.7 ns -> ...123457; end ...123456.7 + 250000.5 = ...373457.2 -> ...373457
      { kernel: 'k_precise', start_ns: 1_700_000_000_123_457n, end_ns: 1_700_000_000_373_457n, dur_ns: 250_000n },
      // beyond 2^53 us: a double would say 9007199254740992 us
      { kernel: 'k_beyond_2^53', start_ns: 9_007_199_254_740_993_123n, end_ns: 9_007_199_254_740_994_123n, dur_ns: 1_000n },
      // ts written as a string, and in exponent notation
      { kernel: 'k_string_ts', start_ns: 1_700_000_000_124_500n, end_ns: 1_700_000_000_126_750n, dur_ns: 2_250n },
      { kernel: 'k_exponent', start_ns: 1_700_000_000_125_500n, end_ns: 1_700_000_000_125_515n, dur_ns: 15n },
    ]);
    // the trap this guards against
    expect(Math.round(Number('1700000000123.0004') * 1000)).toBe(1_700_000_000_123_001);
    expect(Number('9007199254740993.123') * 1000).toBe(9_007_199_254_740_994_000);
  });

  it('zero, negative and missing durations are kept invalid, each with a diagnostic at its line', async () => {
    const { store } = await load(PRECISION);
    expect(await store.rows(`SELECT kernel, dur_ns, valid, line FROM dispatches WHERE NOT valid ORDER BY line`)).toEqual([
      { kernel: 'k_zero', dur_ns: 0n, valid: false, line: 10n },
      { kernel: 'k_negative', dur_ns: -1_500n, valid: false, line: 11n },
      { kernel: 'k_no_dur', dur_ns: null, valid: false, line: 12n },
    ]);
    const diags = await store.rows(`SELECT severity, code, message, line FROM diagnostics ORDER BY line NULLS FIRST, code`);
    expect(diags.map((d) => [d['code'], d['line']])).toEqual([
      ['trace-clock-unknown', null],
      ['non-positive-duration', 10n],
      ['missing-field', 12n],
      ['unmatched-end', 18n],
      ['missing-field', 21n],
      ['raw-events', 22n],
      ['unterminated-array', 24n],
    ]);
    expect(diags.find((d) => d['line'] === 12n)!['message']).toBe('1 complete ("X") event(s) has no "dur" field: kept with valid = false');
    expect(diags.find((d) => d['line'] === 10n)!['message']).toBe('2 dispatch(es) have a zero or negative duration (end <= start): kept with valid = false');
  });

  it('a trace of whole ns converts its times by plain casts: the same rows as the exact SQL, both scanners, zero included', { timeout: 120_000 }, async () => {
    // every staged time of these traces is whole ns (Kineto writes at most 3 decimals of us), zero and negative ones
    // included (a zero was staged as "0.", which read as a fraction); the last has a time finer than 1 ns
    const ev = (ph: string, ts: string, dur: string, i: number) => `{"ph":"${ph}","cat":"${i % 2 ? 'kernel' : 'cpu_op'}","name":"e${i}","pid":${i % 3},"tid":1,"ts":${ts}${dur ? `,"dur":${dur}` : ''}}`;
    const whole = [ev('X', '0', '1.5', 1), ev('X', '0.000', '0', 2), ev('X', '-2.5', '3.001', 3), ev('B', '10', '', 4), ev('E', '12.25', '', 5),
      ev('i', '0', '', 6), ev('X', '9007199254740993.123', '1e3', 7), ev('C', '13', '', 8).replace('}', ',"args":{"v":2}}')];
    const dir = tmp();
    const files = [['whole.json', whole], ['fraction.json', [...whole, ev('X', '20.0005', '0.0015', 9)]]] as const;
    for (const [name, events] of files) {
      const file = join(dir, name);
      writeFileSync(file, `{"traceEvents":[\n${events.join(',\n')}\n]}`);
      const seen: string[] = [];
      for (const native of [false, true]) {
        for (const exact of ['0', '1']) {
          vi.stubEnv('TICKWISE_JSONSCAN', native ? 'always' : '0');
          vi.stubEnv('TICKWISE_CHROME_EXACT_SQL', exact);
          const { store } = await load(file);
          vi.unstubAllEnvs();
          const text = (rows: unknown) => JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
          seen.push(text(await store.rows(`SELECT kernel, start_ns, end_ns, dur_ns, valid, line FROM dispatches ORDER BY line`))
            + text(await store.rows(`SELECT kind, name, start_ns, end_ns, valid, line FROM host_events ORDER BY line, kind`))
            + text(await store.rows(`SELECT name, host_begin_ns, value, line FROM metric_samples ORDER BY line`))
            + text(await store.rows(`SELECT code, message, line FROM diagnostics ORDER BY line, code`)));
          await store.close();
        }
      }
      expect(new Set(seen).size, name).toBe(1);
      // the times themselves, by hand: 0 us, 0.000 us -> 0 ns; -2.5 us + 3.001 us ends at 501 ns; beyond 2^53 us, exact
      const d = JSON.parse(seen[0]!.slice(0, seen[0]!.indexOf(']') + 1)) as { kernel: string; start_ns: string; end_ns: string }[];
      expect(d.map((x) => [x.kernel, x.start_ns, x.end_ns])).toEqual(expect.arrayContaining([['e1', '0', '1500'], ['e3', '-2500', '501'], ['e7', '9007199254740993123', '9007199254741993123']]));
      if (name === 'fraction.json') expect(d.find((x) => x.kernel === 'e9')).toMatchObject({ start_ns: '20001', end_ns: '20002' });
    }
  });

  it('events without a usable ts: one diagnostic over spans and the rest, at the first line; the stage dropped or kept gives one store', async () => {
    // the stage (tw_ct) is dropped once the span table holds its X and B events: the missing-timestamp figure adds the
    // spans' and the other events' (instants, counters, E), and its line is the first of either
    const dir = tmp();
    const file = join(dir, 'no-ts.json');
    const ev = [
      '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":10,"dur":2}',
      '{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"dur":2}', // line 3: a span without ts
      '{"ph":"i","name":"m","pid":1,"tid":1,"ts":"soon"}', // line 4: an instant whose ts is no number
      '{"ph":"C","name":"c","pid":1,"tid":1,"args":{"v":1}}', // line 5: a counter without ts
      '{"ph":"X","cat":"cpu_op","name":"h","pid":1,"tid":1,"ts":"x","dur":1}', // line 6
      '{"ph":"i","name":"m2","pid":1,"tid":1,"ts":11}',
    ];
    // and 20 spans after them, so that the rest (instants, counters) is a small share of the stage and the stage is
    // dropped (TICKWISE_CHROME_KEEP_STAGE=0), else read through a view (=1)
    const spans = Array.from({ length: 20 }, (_, i) => `{"ph":"X","cat":"kernel","name":"s${i}","pid":1,"tid":2,"ts":${100 + i},"dur":1}`);
    const first = (order: string[]) => `{"traceEvents":[\n${[...order, ...spans].join(',\n')}]}`;
    const stores: string[] = [];
    for (const [text, line] of [[first(ev), 3n], [first([ev[0]!, ev[2]!, ev[1]!, ev[3]!, ev[4]!, ev[5]!]), 3n], [first([ev[0]!, ev[5]!, ev[4]!, ev[3]!]), 4n]] as const) {
      writeFileSync(file, text);
      for (const keep of ['0', '1']) {
        vi.stubEnv('TICKWISE_CHROME_KEEP_STAGE', keep);
        const { store } = await load(file);
        vi.unstubAllEnvs();
        const d = await store.rows(`SELECT message, line FROM diagnostics WHERE code = 'missing-timestamp'`);
        expect(d).toHaveLength(1);
        expect(d[0]!.line).toBe(line);
        stores.push(JSON.stringify(await store.rows(`SELECT * EXCLUDE (capture_id) FROM host_events ORDER BY line`), (_k, v) => (typeof v === 'bigint' ? String(v) : v))
          + JSON.stringify(await store.rows(`SELECT code, message, line FROM diagnostics ORDER BY line, code`), (_k, v) => (typeof v === 'bigint' ? String(v) : v))
          + JSON.stringify(await store.rows(`SELECT * EXCLUDE (capture_id) FROM metric_samples ORDER BY line`), (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
        await store.close();
      }
      expect(stores.at(-1)).toBe(stores.at(-2));
    }
    // 4 events without a usable ts in the first two traces (lines 3-6, the instant first in the second), 2 in the last (lines 4-5)
    expect(stores[0]).toMatch(/"message":"4 event\(s\)/);
    expect(stores[4]).toMatch(/"message":"2 event\(s\)/);
  });

  it('CPU events are host events: X and B/E pairs (nested, per thread), instants; counters are metric samples', async () => {
    const { store } = await load(PRECISION);
    expect(await store.rows(`SELECT kind, op, name, thread_id, start_ns, end_ns, valid, line FROM host_events ORDER BY line`)).toEqual([
      { kind: 'slice', op: 'user_annotation', name: 'decode_step', thread_id: 11n, start_ns: 1_700_000_000_100_001n, end_ns: 1_700_000_000_200_002n, valid: true, line: 13n },
      { kind: 'slice', op: 'cuda_runtime', name: 'hipLaunchKernel', thread_id: 11n, start_ns: 1_700_000_000_122_500n, end_ns: 1_700_000_000_122_900n, valid: true, line: 14n },
      { kind: 'slice', op: null, name: 'inner', thread_id: 11n, start_ns: 1_700_000_000_110_000n, end_ns: 1_700_000_000_111_250n, valid: true, line: 15n },
      { kind: 'instant', op: null, name: 'marker', thread_id: 11n, start_ns: 1_700_000_000_150_500n, end_ns: 1_700_000_000_150_500n, valid: true, line: 19n },
    ]);
    expect(await store.rows(`SELECT name, host_begin_ns, value FROM metric_samples`)).toEqual([{ name: 'gtt_mb', host_begin_ns: 1_700_000_000_150_500n, value: 1536.25 }]);
  });

  it('nothing is dropped: metadata, flows, an E without B and an event without ph keep their exact JSON text', async () => {
    const { store } = await load(PRECISION);
    const raw = await store.rows(`SELECT record_type, line, json FROM raw_records ORDER BY line`);
    expect(raw.map((r) => [r['record_type'], r['line']])).toEqual([
      ['chrome:M', 2n], ['chrome:M', 3n], ['chrome:M', 4n], ['chrome:E', 18n], ['chrome:?', 21n], ['chrome:s', 22n], ['chrome:f', 23n],
    ]);
    expect(raw.at(-1)!['json']).toBe('{"name": "flow", "cat": "ac2g", "ph": "f", "bp": "e", "id": 101, "ts": 1700000000123.0004, "pid": 2, "tid": 7}');
  });

  it('events of untabled phases routed by the native scanner are stored as the TypeScript scanner\'s path stores them (same text, line, type, diagnostics)', { timeout: 120_000 }, async () => {
    // a trace with the ways a "ph" can look: plain flows (one pretty-printed over CRLF lines), async, a unicode
    // phase, an escaped "\u0073", a number, none, and the tabled phases (an escaped key sends the whole scan to the
    // TypeScript scanner, a duplicate ph is a bad record: the scanner test covers their routing)
    const ev = (ph: string, i: number) => `{${ph}"name":"e${i}","cat":"c","pid":1,"tid":2,"ts":1700000000${i}.0005,"args":{"ph":"s","n":1.50}}`;
    const phases = ['"ph":"s",', '"ph":"f","bp":"e",', '"ph":"b","id":"0x1",', '"ph":"é",', '"ph":"\\u0073",', '"ph":7,', '', '"ph":"X","dur":1.25,', '"ph":"M",', '"ph":"i",', '"ph":"B",', '"ph":"E",', '"ph":"C",'];
    const events = phases.map((p, i) => ev(p, i));
    events.push('{\r\n  "ph": "t",\r\n  "id": 12345678901234567890,\r\n  "ts": 1.0e3\r\n}');
    const synthetic = join(tmp(), 'phases.json');
    writeFileSync(synthetic, `{"traceEvents":[\n${events.join(',\n')}\n]}`);
    // and a trace of flows only: nothing is staged when every event is routed
    const flowsOnly = join(tmp(), 'flows-only.json');
    writeFileSync(flowsOnly, `{"traceEvents":[\n${[ev('"ph":"s",', 1), ev('"ph":"f",', 2)].join(',\n')}\n]}`);
    const stored = async (file: string, native: boolean) => {
      vi.stubEnv('TICKWISE_JSONSCAN', native ? 'always' : '0'); // always: the native scanner for these small files too
      try {
        const { store, result } = await load(file);
        const raw = await store.rows(`SELECT record_type, line, json::VARCHAR AS json FROM raw_records ORDER BY line, record_type, json`);
        const diags = await store.rows(`SELECT severity, code, message, line FROM diagnostics ORDER BY ALL`);
        const counts = await store.rows(`SELECT (SELECT count(*) FROM dispatches) AS d, (SELECT count(*) FROM host_events) AS h, (SELECT record_count FROM captures) AS n`);
        await store.close();
        return { result: { ...result, capture_id: 0 }, raw, diags, counts };
      } finally {
        vi.unstubAllEnvs();
      }
    };
    // and two real Kineto traces (flows, metadata), where the shared fixtures are
    const real = ['hta_cuda_event_sync_multi_stream.json.gz', 'hta_nccl_data.json.gz'].map((f) => resolve(ROOT, '../shared/fixtures/external/chrome-trace', f));
    for (const file of [synthetic, flowsOnly, ...real.filter((f) => existsSync(f))]) {
      const js = await stored(file, false);
      const nat = await stored(file, true);
      expect(nat, file).toEqual(js);
      expect(js.raw.filter((r) => /^chrome:[sf]$/.test(String(r['record_type']))).length, file).toBeGreaterThan(file === synthetic || file === flowsOnly ? 1 : 40);
    }
  });

  it('B/E pairs from the native scan are the SQL\'s pairs; a trace the scan cannot be sure of is paired in SQL', { timeout: 120_000 }, async () => {
    // threads of two pids (1 written as a number and as a string: one thread, as DuckDB reads it), a null and an absent
    // tid (one thread), nesting, B and E at one time, an E closing nothing, a B never closed, fractional ts, other phases between
    const e = (ph: string, pid: string, tid: string | null, ts: string, name = '') =>
      `{"ph":"${ph}",${name ? `"name":"${name}",` : ''}"pid":${pid}${tid === null ? '' : `,"tid":${tid}`},"ts":${ts}}`;
    const inOrder = [
      e('E', '1', '7', '0.5'), e('B', '1', '7', '1', 'a'), e('B', '"1"', '7', '1.25', 'b'), e('i', '1', '7', '1.3', 'mark'), e('E', '1', '"7"', '2'),
      e('B', '2', 'null', '1.000000001', 'c'), e('B', '2', null, '1.000000001', 'd'), e('E', '2', 'null', '1.000000001'),
      e('B', '1', '7', '2', 'e'), e('E', '1', '7', '2'), e('X', '1', '7', '2.5', 'x').replace('}', ',"dur":1}'), e('E', '1', '7', '3.75'),
      e('B', '1', '8', '0.1', 'f'), e('B', '3', 'true', '5', 'g'), e('E', '3', '"true"', '6'), e('E', '2', null, '9'), e('E', '2', null, '10'),
    ];
    // thread 1/7 goes back in time: the scan cannot pair in file order
    const backwards = [e('B', '1', '7', '5', 'a'), e('B', '1', '7', '4', 'b'), e('E', '1', '7', '6'), e('E', '1', '7', '7')];
    // a pid that is not an integer: DuckDB's text for it is not the scan's to guess
    const oddPid = [e('B', '1.50', '7', '1', 'a'), e('E', '1.50', '7', '2')];
    const dir = tmp();
    const stored = async (file: string, native: boolean) => {
      vi.stubEnv('TICKWISE_JSONSCAN', native ? 'always' : '0');
      vi.stubEnv('TICKWISE_TRACE_SCAN', '1');
      const said: string[] = [];
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((x) => (said.push(String(x)), true));
      try {
        const { store } = await load(file);
        const rows = {
          host: await store.rows(`SELECT name, thread_id, start_ns, end_ns, valid, line FROM host_events ORDER BY line`),
          raw: await store.rows(`SELECT record_type, line FROM raw_records ORDER BY line`),
          diags: await store.rows(`SELECT code, message, line FROM diagnostics ORDER BY ALL`),
        };
        await store.close();
        return { rows, fromScan: said.some((x) => / B\/E pairs from the scan/.test(x)) };
      } finally {
        spy.mockRestore();
        vi.unstubAllEnvs();
      }
    };
    for (const [name, events, fromScan] of [['in-order', inOrder, true], ['backwards', backwards, false], ['odd-pid', oddPid, false]] as const) {
      const file = join(dir, `${name}.json`);
      writeFileSync(file, `{"traceEvents":[\n${events.join(',\n')}\n]}`);
      const js = await stored(file, false);
      const nat = await stored(file, true);
      expect(js.fromScan, name).toBe(false);
      expect(nat.fromScan, name).toBe(fromScan);
      expect(nat.rows, name).toEqual(js.rows);
    }
    // the in-order trace's pairs, by hand: a-e (1/7 nested), b-2, c and d at one time (d closed, c not), f never closed, g (1/"true"), 2/null's late E's close c, then nothing
    const js = await stored(join(dir, 'in-order.json'), false);
    expect(js.rows.host.filter((r) => r['name'] !== 'x' && r['name'] !== 'mark').map((r) => [r['name'], r['start_ns'], r['end_ns'], r['valid']])).toEqual([
      ['a', 1000n, 3750n, true], ['b', 1250n, 2000n, true], ['c', 1000n, 9000n, true], ['d', 1000n, 1000n, true],
      ['e', 2000n, 2000n, true], ['f', 100n, null, false], ['g', 5000n, 6000n, true],
    ]);
  });

  it('a minified trace (every event on line 1) gives the same rows: events are told apart by their index, not their line', async () => {
    // B/E pairs, flows, metadata and an unmatched E all on one line: pairing and raw_records once keyed events by line,
    // which multiplied B/E spans and copied every event of such a trace into raw_records
    const oneLine = join(tmp(), 'precision-one-line.json');
    writeFileSync(oneLine, readFileSync(PRECISION, 'utf8').replace(/\r?\n/g, ' '));
    const multi = await load(PRECISION);
    const one = await load(oneLine);
    expect(one.result).toMatchObject({ records: multi.result.records, dispatches: multi.result.dispatches });
    for (const sql of [
      `SELECT * EXCLUDE (line) FROM dispatches`,
      `SELECT * EXCLUDE (line) FROM host_events`,
      `SELECT * EXCLUDE (line) FROM metric_samples`,
      `SELECT record_type, json::VARCHAR AS json FROM raw_records`,
    ]) {
      const order = ' ORDER BY ALL';
      const a = await multi.store.rows(sql + order);
      expect(a.length, sql).toBeGreaterThan(0);
      expect(await one.store.rows(sql + order), sql).toEqual(a);
    }
    expect(await one.store.scalar(`SELECT count(DISTINCT line) FROM raw_records`)).toBe(1n);
  });

  it('displayTimeUnit is a display hint; --trace-time-unit ns reads ts/dur as ns and records the assumption', async () => {
    const plain = await load(fixture('chrome-trace', 'npu_same_run.json'));
    expect(await plain.store.rows(`SELECT code FROM diagnostics WHERE code = 'display-time-unit'`)).toHaveLength(1);
    expect(await plain.store.scalar(`SELECT min(dur_ns) FROM dispatches`)).toBe(1_800_000n);
    expect(await plain.store.rows(`SELECT key, value FROM conditions`)).toEqual([{ key: 'trace.display_time_unit', value: 'ns' }]);
    const ns = await load(fixture('chrome-trace', 'npu_same_run.json'), { traceTimeUnit: 'ns' });
    expect(await ns.store.scalar(`SELECT min(dur_ns) FROM dispatches`)).toBe(1_800n);
    expect(await ns.store.rows(`SELECT what, value FROM assumptions`)).toEqual([{ what: 'trace_time_unit', value: 'ns' }]);
    expect(await ns.store.count('diagnostics', `WHERE code = 'display-time-unit'`)).toBe(0);
  });
});

describe('Chrome trace JSON: PyTorch / Kineto', () => {
  it('kernel totals (diff test); kernels on the GPU, memcpy and CPU ops as host events', async () => {
    const { store, result } = await load(KINETO);
    await expectGolden(store, fixture('chrome-trace', 'kineto.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    // the name from the trace's deviceProperties (id 0), with the process label
    expect(await store.rows(`SELECT device, kind, name FROM devices`)).toEqual([{ device: 0, kind: 'gpu', name: 'AMD Radeon 8060S (GPU 0)' }]);
    expect(await store.rows(`SELECT kind, op, name, device FROM host_events ORDER BY start_ns`)).toEqual([
      { kind: 'slice', op: 'Trace', name: 'PyTorch Profiler (0)', device: null },
      { kind: 'gpu_memcpy', op: 'gpu_memcpy', name: 'Memcpy HtoD (Pinned -> Device)', device: 0 },
      { kind: 'slice', op: 'cpu_op', name: 'aten::mm', device: null },
      { kind: 'slice', op: 'cuda_runtime', name: 'hipLaunchKernel', device: null },
      { kind: 'instant', op: null, name: 'Record Window End', device: null },
    ]);
    expect(await store.rows(`SELECT event_id, queue, workgroup_count_x, workgroup_count_y FROM dispatches ORDER BY line LIMIT 1`)).toEqual([
      { event_id: 1001n, queue: 7, workgroup_count_x: 64, workgroup_count_y: 32 },
    ]);
  });

  it('a kernel\'s grid is its workgroup counts, each as args.grid[i] reads: an array\'s element that is a UINTEGER, else NULL', async () => {
    const grids = ['[64,32,1]', null, '{"0":5}', '["12","7","1"]', '[-1,5,8589934592]', '[[1],2,3]', '"[1,2,3]"', '[4294967295]', '[]'];
    const events = grids.map((g, i) => JSON.stringify({ ph: 'X', cat: 'kernel', name: `k${i}`, pid: 0, tid: 7, ts: 10 * i, dur: 5, args: { device: 0, correlation: i } })
      .replace(/\}\}$/, g === null ? '}}' : `,"grid":${g}}}`));
    const file = join(tmp(), 'grids.json');
    writeFileSync(file, `{"traceEvents":[\n${events.join(',\n')}\n]}`);
    const { store } = await load(file);
    const rows = await store.rows(`SELECT workgroup_count_x AS x, workgroup_count_y AS y, workgroup_count_z AS z FROM dispatches ORDER BY event_id`);
    expect(rows.map((r) => [r['x'], r['y'], r['z']])).toEqual([
      [64, 32, 1], [null, null, null], [null, null, null], [12, 7, 1], [null, 5, null], [null, 2, 3], [null, null, null], [4294967295, null, null], [null, null, null],
    ]);
  });

  it('baseTimeNanoseconds puts the trace on CLOCK_REALTIME, added exactly', async () => {
    const { store } = await load(KINETO);
    expect(await store.rows(`SELECT timeline, producer FROM captures`)).toEqual([{ timeline: 'realtime', producer: 'PyTorch profiler (Kineto) Chrome trace' }]);
    // ts 1800.0005 us after 1700000000000000000 ns
    expect(await store.scalar(`SELECT start_ns FROM dispatches WHERE event_id = 1004`)).toBe(1_700_000_000_001_800_001n);
    expect(await store.rows(`SELECT what, value FROM assumptions`)).toEqual([{ what: 'clock_relation', value: 'host_ns = ts_ns + 1700000000000000000' }]);
  });

  it('reads .pt.trace.json.gz as it is, with the same result', async () => {
    const dir = tmp();
    const gz = join(dir, 'rank0.pt.trace.json.gz');
    writeFileSync(gz, gzipSync(readFileSync(KINETO)));
    const { store, result } = await load(gz);
    expect(result.format).toBe('chrome-trace');
    await expectGolden(store, fixture('chrome-trace', 'kineto.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
  });
});

describe('Chrome trace JSON: the final inserts in one lane or two', () => {
  it('every table holds the same rows either way (real Kineto traces, B/E, counters, instants, flows, unmatched events)', { timeout: 120_000 }, async () => {
    const TABLES = ['captures', 'devices', 'dispatches', 'host_events', 'metric_samples', 'raw_records', 'assumptions', 'conditions', 'diagnostics'];
    const dump = async (file: string, lanes: '1' | '2') => {
      vi.stubEnv('TICKWISE_CHROME_LANES', lanes);
      const { store } = await load(file);
      try {
        const out: Record<string, unknown[]> = {};
        for (const t of TABLES) {
          const cols = (await store.rows(`SELECT column_name AS c FROM duckdb_columns() WHERE table_name = '${t}' AND column_name <> 'imported_at' ORDER BY column_index`)).map((r) => `${r['c']}::VARCHAR`);
          out[t] = await store.rows(`SELECT ${cols.join(', ')} FROM ${t} ORDER BY ALL`);
        }
        return out;
      } finally {
        vi.unstubAllEnvs();
        await store.close();
      }
    };
    const real = ['hta_cuda_event_sync_multi_stream.json.gz', 'hta_nccl_data.json.gz'].map((f) => resolve(ROOT, '../shared/fixtures/external/chrome-trace', f));
    let compared = 0;
    for (const file of [PRECISION, KINETO, ...real.filter((f) => existsSync(f))]) {
      const one = await dump(file, '1');
      const two = await dump(file, '2');
      expect(two, file).toEqual(one);
      expect(one['host_events']!.length + one['dispatches']!.length, file).toBeGreaterThan(0);
      compared++;
    }
    expect(compared).toBeGreaterThanOrEqual(2);
  });
});

describe('Chrome trace JSON: span classes judged once per category', () => {
  it('the same rows as judging every span, with few categories and with more than the lookup takes', { timeout: 120_000 }, async () => {
    const dir = tmp();
    // categories that are sync markers, copies, kernels by name, and others (a kernel only in a device process)
    const named = ['kernel', 'Kernel', 'kernels', 'gpu_kernel', 'npu_kernel', 'foo, kernel', 'cuda_sync', 'hip_sync', 'x,gpu_sync', 'gpu_memcpy',
      'Memset', 'cpu_op', 'python_function', 'user_annotation', 'cuda_runtime', 'ac2g', 'Trace', 'weird \'quoted\' cat', 'é unicode', ''];
    const trace = (cats: string[]) => {
      const ev: string[] = ['{"ph":"M","name":"process_name","pid":7,"args":{"name":"GPU 0"}}'];
      cats.forEach((cat, i) => {
        for (const pid of [7, 8]) {
          ev.push(JSON.stringify({ ph: 'X', cat, name: `e${i}`, pid, tid: 1, ts: 10 * i, dur: 3, args: { device: 0, stream: 7, correlation: i } }));
        }
      });
      ev.push('{"ph":"X","name":"no cat","pid":7,"tid":1,"ts":5,"dur":1}');
      return `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`;
    };
    const dump = async (file: string, lookUp: boolean) => {
      if (!lookUp) vi.stubEnv('TICKWISE_CHROME_CAT_LOOKUP', '0');
      const { store } = await load(file);
      try {
        return {
          dispatches: await store.rows(`SELECT kernel, line, device, queue FROM dispatches ORDER BY line`),
          host: await store.rows(`SELECT kind, op, name, line, device, queue FROM host_events ORDER BY line, name`),
        };
      } finally {
        vi.unstubAllEnvs();
        await store.close();
      }
    };
    for (const [label, cats] of [['few', named], ['many', [...named, ...Array.from({ length: 300 }, (_, i) => `cat_${i}`)]]] as const) {
      const file = join(dir, `${label}.json`);
      writeFileSync(file, trace(cats));
      const looked = await dump(file, true);
      const judged = await dump(file, false);
      expect(looked, label).toEqual(judged);
      // each class is there: kernels by category (both processes) and by process, copies, sync markers, host spans
      expect(looked.dispatches.length, label).toBeGreaterThan(10);
      expect(new Set(looked.host.map((h) => h['kind'])), label).toEqual(new Set(['slice', 'gpu_memcpy', 'memset', 'cuda_sync', 'hip_sync', 'x,gpu_sync']));
    }
    // and real traces (Kineto with cuda_sync markers and copies; MTIA; ROCm): the same rows both ways
    const real = ['hta_cuda_event_sync_multi_stream.json.gz', 'hta_mtia_inference_rank_0.json.gz', 'tracelens_mi300_owlv2.json.gz']
      .map((f) => resolve(ROOT, '../shared/fixtures/external/chrome-trace', f)).filter((f) => existsSync(f));
    if (real.length === 0) console.warn('../shared/fixtures/external absent: the category lookup is compared on generated traces only');
    for (const file of real) {
      const looked = await dump(file, true);
      expect(looked.dispatches.length + looked.host.length, file).toBeGreaterThan(0);
      expect(looked, file).toEqual(await dump(file, false));
    }
  });
});

describe('Chrome trace JSON: bad input', () => {
  it('a broken event stops with file and line (exit 2, no stack trace)', async () => {
    const dir = tmp();
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{"traceEvents": [\n{"ph": "X", "ts": 1, "dur": 2},\n{"ph": "X", "ts": 3 "dur": 4}\n]}\n');
    const err = await load(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).where()).toMatch(/broken\.json:3: bad record: /);
  });

  it('an event that is not UTF-8 stops with its own line, staged or routed (a flow), native scanner or not', { timeout: 60_000 }, async () => {
    // DuckDB names the line after a malformed record's own: the reader finds the record itself
    const dir = tmp();
    const ok = (ph: string) => Buffer.from(`{"ph":"${ph}","cat":"kernel","name":"k","pid":1,"tid":2,"ts":1,"dur":2,"id":1},\n`);
    for (const ph of ['X', 's']) {
      const bad = Buffer.concat([Buffer.from(`{"ph":"${ph}","cat":"kernel","name":"bad`), Buffer.from([0xff, 0xfe]), Buffer.from('","pid":1,"tid":2,"ts":1,"dur":2,"id":1},\n')]);
      const file = join(dir, `bad-utf8-${ph}.json`);
      writeFileSync(file, Buffer.concat([Buffer.from('{"traceEvents":[\n'), ok('X'), ok('s'), bad, ok('f'), ok('X'), Buffer.from('{"ph":"M","name":"process_name","pid":1,"args":{"name":"GPU 0"}}\n]}\n')]));
      // the routed flow's insert runs on the second connection when the final inserts run in two lanes
      for (const [native, lanes] of [[true, '1'], [true, '2'], [false, '1']] as const) {
        vi.stubEnv('TICKWISE_JSONSCAN', native ? 'always' : '0'); // always: the native scanner for these small files too
        vi.stubEnv('TICKWISE_CHROME_LANES', lanes);
        const err = await load(file).catch((e: unknown) => e);
        vi.unstubAllEnvs();
        expect(err, `${ph}, native ${native}, lanes ${lanes}`).toBeInstanceOf(TickwiseError);
        expect((err as TickwiseError).where(), `${ph}, native ${native}, lanes ${lanes}`).toMatch(/bad-utf8-[Xs]\.json:4: bad record: .*invalid UTF-8/);
      }
    }
  });

  it('a routed flow event: one DuckDB\'s JSON refuses (a lone surrogate) stops with its own line; one beyond read_csv\'s 2 MB line is stored as written', { timeout: 60_000 }, async () => {
    const dir = tmp();
    const ok = (ph: string) => `{"ph":"${ph}","cat":"kernel","name":"k","pid":1,"tid":2,"ts":1,"dur":2,"id":1},\n`;
    const trace = (flow: string) => `{"traceEvents":[\n${ok('X')}${ok('s')}${flow}${ok('f')}{"ph":"M","name":"process_name","pid":1,"args":{"name":"GPU 0"}}\n]}\n`;
    vi.stubEnv('TICKWISE_JSONSCAN', 'always');
    try {
      const surrogate = join(dir, 'surrogate.json');
      writeFileSync(surrogate, trace('{"ph":"s","cat":"ac2g","name":"\\ud800","pid":1,"tid":2,"ts":1,"id":2},\n'));
      const err = await load(surrogate).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TickwiseError);
      expect((err as TickwiseError).where(), (err as TickwiseError).where()).toMatch(/surrogate\.json:4: bad record: .*surrogate/);
      const long = join(dir, 'long-flow.json');
      const big = `{"ph":"s","cat":"ac2g","name":"big","pid":1,"tid":2,"ts":1,"id":3,"args":{"pad":"${'x'.repeat(3_000_000)}", "n": 1.50}},\n`;
      writeFileSync(long, trace(big));
      const { store } = await load(long);
      const rows = await store.query({ line: 'number', n: 'number' },
        `SELECT line, length(json::VARCHAR)::INTEGER AS n FROM raw_records WHERE record_type = 'chrome:s' ORDER BY line`);
      expect(rows).toEqual([{ line: 3, n: ok('s').length - 2 }, { line: 4, n: big.length - 2 }]);
      expect(String(await store.scalar(`SELECT json::VARCHAR FROM raw_records WHERE line = 4`))).toBe(big.slice(0, -2));
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a schemaVersion beyond INTEGER (2^64-1, found by the import fuzz) is kept as its text, the capture imported', async () => {
    const dir = tmp();
    const file = join(dir, 'schema.json');
    writeFileSync(file, readFileSync(KINETO, 'utf8').replace(/"schemaVersion":\s*\d+/, '"schemaVersion": 18446744073709551615'));
    const { store, result } = await load(file);
    expect(result.dispatches).toBeGreaterThan(0);
    expect(await store.rows(`SELECT schema_version FROM captures`)).toEqual([{ schema_version: null }]);
    expect(await store.rows(`SELECT value FROM conditions WHERE key = 'trace.schema_version'`)).toEqual([{ value: '18446744073709551615' }]);
  });

  it('a file with no events is refused', async () => {
    const dir = tmp();
    const file = join(dir, 'empty.json');
    writeFileSync(file, '{"traceEvents": [], "displayTimeUnit": "ms"}');
    const err = await load(file).catch((e: unknown) => e);
    expect((err as TickwiseError).message).toMatch(/no trace events/);
  });

  it('CLI: tickwise import exits 2 with file:line', () => {
    const dir = tmp();
    const file = join(dir, 'broken.json');
    writeFileSync(file, '[\n{"ph": "X", "ts": 1, "dur": 2},\n{"ph": "X", "ts": 3 "dur": 4}\n]\n');
    const r = tickwise(['import', file, '--db', join(dir, 'x.duckdb')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`tickwise: .*broken\\.json:3: bad record`));
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe('Chrome trace JSON: memory', () => {
  it('bounds DuckDB\'s memory by the trace\'s size: twice it, within read_json\'s need and 700 MB, beyond what the store held; TICKWISE_IMPORT_MEMORY overrides', async () => {
    const limits = { minMb: 318, capMb: 700 };
    expect(importMemoryLimit({ sizeBytes: 174_112_708, compression: 'none' }, limits, {})).toBe('348MB');
    expect(importMemoryLimit({ sizeBytes: 3_770, compression: 'none' }, limits, {})).toBe('318MB');
    expect(importMemoryLimit({ sizeBytes: 1_009_837_276, compression: 'none' }, limits, {})).toBe('700MB');
    // a compressed trace counts ten times its size on disk (a trace compresses 10-20x)
    expect(importMemoryLimit({ sizeBytes: 30_000_000, compression: 'gzip' }, limits, {})).toBe('600MB');
    expect(importMemoryLimit({ sizeBytes: 174_112_708, compression: 'none' }, limits, { TICKWISE_IMPORT_MEMORY: '4GB' })).toBe('4GB');
    // no input size (the ireeperf reader's fixed bound): the cap
    expect(importMemoryLimit(null, { minMb: 300, capMb: 1000 }, {})).toBe('1000MB');
    // a floor above the cap wins (read_json's buffers must fit)
    expect(importMemoryLimit({ sizeBytes: 1_000_000_000, compression: 'none' }, { minMb: 800, capMb: 700 }, {})).toBe('800MB');
    // what the store held when the import began comes on top (not with TICKWISE_IMPORT_MEMORY, a total)
    expect(importMemoryLimit({ sizeBytes: 174_112_708, compression: 'none' }, limits, {}, 310.4)).toBe('659MB');
    expect(importMemoryLimit({ sizeBytes: 174_112_708, compression: 'none' }, limits, { TICKWISE_IMPORT_MEMORY: '4GB' }, 310.4)).toBe('4GB');
    // the import sets it while it runs, and gives the store its own back (import-memory.test.ts: under load)
    const { store } = await load(KINETO);
    try {
      expect(String(await store.scalar(`SELECT current_setting('memory_limit')`))).not.toMatch(/^(318\.\d MB|303\.\d MiB)$/);
      expect(String(await store.scalar(`SELECT current_setting('temp_directory')`))).toMatch(/tickwise-duckdb-spill[^/]*\/\d+-\d+$/);
    } finally {
      await store.close();
    }
  });
});
