/**
 * The Chrome reader's host lane: the native scanner writes X events of a
 * host category as tab-separated rows of their own, which are loaded
 * straight into host_events. The scanner's rule (tw-jsonscan's
 * `hostCategory`) must be the SQL's (`CAT_CLASS` = 'host') for every ASCII
 * category, a record whose values it cannot be sure of stays with the
 * others, and an import stores the same rows with the lane as without it
 * (`TICKWISE_CHROME_LANE=0`), odd values and all.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store, sqlString } from '@tickwise/store';
import { seededRng } from '@tickwise/time';
import { importInput, openSource, scanJsonRecords, type ScanOptions } from '../src/index';
import { nativeScanner } from '../src/json-records-native';
import { CAT_CLASS } from '../src/readers/chrome-trace';
import { ROOT, tmp } from './helpers';

const BIN = nativeScanner();

afterEach(() => vi.unstubAllEnvs());

/** Scan options with a host lane (spec 1), as the Chrome reader asks; `cats` hears the lane's categories. */
function laneOptions(dir: string, cats: string[]): ScanOptions {
  // (the reader's conversion: us to ns text, exact to the femtosecond)
  const conv = { exactKeys: ['ts', 'dur'], exactText: false, convert: (_k: string, t: string) => t, nativeConvert: { kind: 'fs' as const, pow10: 9 } };
  return {
    mode: 'document',
    records: [
      {
        paths: [['traceEvents', '[]']], out: join(dir, 'ev.ndjson'), ...conv, hostLane: {
          to: 1, kindKey: 'ph', kind: 'X', catKey: 'cat', nameKey: 'name', pidKey: 'pid', tidKey: 'tid', argsKey: 'args', corrKey: 'correlation',
          tsKey: 'ts', durKey: 'dur', onCategory: (c) => cats.push(c),
        },
      },
      { paths: [], out: join(dir, 'lane.tsv') },
    ],
  };
}

/** The records (or rows) of a spec's parts, one text each. */
function records(parts: readonly { path: string }[]): string[] {
  return parts.flatMap((p) => readFileSync(p.path, 'utf8').split('\n').slice(0, -1));
}

/** A lane row's fields. */
const fields = (row: string) => row.split('\t');

describe('the Chrome host lane', () => {
  it('the scanner is built (scripts/setup builds native/jsonscan)', () => {
    expect(BIN).not.toBeNull();
  });

  it('sends a category to the lane exactly when the SQL class is host (seeded categories of the rule\'s words)', async () => {
    const words = ['cuda_sync', 'hip_sync', 'gpu_sync', 'memcpy', 'memset', 'kernel', 'kernels', 'gpu_kernel', 'npu_kernel', 'cpu_op', 'python',
      'user', 'annotation', 'runtime', 'driver', 'ac2g', 'flow', 'overhead', 'trace', 'Kernel', 'CUDA_SYNC', 'Cpu_Op', 'x', 'gpu', 'sync', '_', ' ',
      ',', ', ', 'cuda', 'hip', 'mem', 'cpy', 'nel'];
    const r = seededRng(20261206);
    const cats = new Set<string>();
    while (cats.size < 600) {
      let c = '';
      for (let k = 1 + r.int(4); k > 0; k--) c += words[r.int(words.length)];
      cats.add(c);
    }
    const list = [...cats];
    const dir = tmp();
    const events = list.flatMap((c, i) => [0, 1].map((k) => JSON.stringify({ ph: 'X', cat: c, name: `e${i}.${k}`, pid: 1, tid: 1, ts: i, dur: 1 })));
    writeFileSync(join(dir, 't.json'), `{"traceEvents":[\n${events.join(',\n')}\n]}\n`);
    const heard: string[] = [];
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    const scan = await scanJsonRecords(await openSource(join(dir, 't.json')), laneOptions(dir, heard));
    // the SQL's class of each
    const store = await Store.open(':memory:');
    let host: Set<string>;
    try {
      const rows = await store.query({ c: 'string', cls: 'string' },
        `SELECT c, ${CAT_CLASS} AS cls FROM (SELECT c, lower(c) AS lcat FROM (VALUES ${list.map((c) => `(${sqlString(c)})`).join(', ')}) t(c))`);
      host = new Set(rows.filter((x) => x.cls === 'host').map((x) => x.c));
    } finally {
      await store.close();
    }
    // both answers are common
    expect(host.size).toBeGreaterThan(100);
    expect(list.length - host.size).toBeGreaterThan(100);
    // each host category heard once, in the order first seen; its two records in the lane, the others' in the spec
    expect(heard).toEqual(list.filter((c) => host.has(c)));
    const lane = records(scan.parts[1]!).map((t) => fields(t)[2]!);
    const rest = records(scan.parts[0]!).map((t) => (JSON.parse(t) as { cat: string }).cat);
    expect(lane).toEqual(list.filter((c) => host.has(c)).flatMap((c) => [c, c]));
    expect(rest).toEqual(list.filter((c) => !host.has(c)).flatMap((c) => [c, c]));
    expect(scan.counts).toEqual([rest.length, lane.length]);
    // the lane's lines are its records' source lines (event i's two records are on lines 2 + 2i and 3 + 2i)
    expect(Array.from(scan.lines[1]!)).toEqual(list.flatMap((c, i) => (host.has(c) ? [2 + 2 * i, 3 + 2 * i] : [])));
  });

  it('keeps a record it cannot be sure of with the others: escaped, repeated, a value read_json would not give back as written, not ASCII, another phase', async () => {
    const dir = tmp();
    const doubtful = [
      '{"ph":"X","cat":"cpu\\u005fop","ts":1,"dur":1}',
      '{"ph":"X","cat":"cpu_op","cat":"cpu_op","ts":1,"dur":1}',
      '{"ph":"X","ph":"X","cat":"cpu_op","ts":1,"dur":1}',
      '{"ph":"\\u0058","cat":"cpu_op","ts":1,"dur":1}',
      '{"ph":"X","cat":7,"ts":1,"dur":1}',
      '{"ph":"X","cat":null,"ts":1,"dur":1}',
      '{"ph":"X","ts":1,"dur":1}',
      '{"ph":"X","cat":"cpu_op_\u00e9","ts":1,"dur":1}',
      '{"ph":"B","cat":"cpu_op","ts":1}',
      '{"cat":"cpu_op","ts":1,"dur":1}',
      '{"ph":"X","args":{"cat":"cpu_op"},"ts":1,"dur":1}',
      // no dur; a key the staged record appends; a value not written back as it is; a row's key twice; a byte beyond ASCII
      '{"ph":"X","cat":"cpu_op","ts":1}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"_line":3}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"name":5}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"pid":1.5}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"tid":true}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"pid":1234567890123456789}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"name":"a\\"b"}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{"x":1.0}}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{"x":[1e3]}}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{"x":"a\\/b"}}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{"x\\u0041":1}}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{"x":-0}}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{},"args":{}}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"name":"a","name":"a"}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"other":"\u00e9"}',
      // a ts or dur that is not a whole number of ns under 2^62 (the SQL's exact arithmetic is the staged path's)
      '{"ph":"X","cat":"cpu_op","ts":1.0000001,"dur":1}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":0.0000005}',
      '{"ph":"X","cat":"cpu_op","ts":4611686018427388,"dur":1}',
      '{"ph":"X","cat":"cpu_op","ts":-4611686018427388,"dur":1}',
      `{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"args":{"big":"${'x'.repeat(1 << 20)}"}}`,
    ];
    const sure = [
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1}', '{"cat":"python_function","ts":2,"dur":1,"ph":"X","args":{"ph":"B","cat":"kernel"}}',
      // odd values read_json gives back as written, a pretty-printed record, a repeated key that is none of the row's
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"name":null,"pid":"p 1","tid":null,"args":[1,"a/b",[],{},true,null,-12,0]}',
      '{\n "ph" : "X",\n "cat" : "cpu_op", "ts" : 1 , "dur" : 1 ,\n "args" : { "a b" : [ 1 , 2 ] ,\n "correlation" : 7 }\n}',
      '{"ph":"X","cat":"cpu_op","ts":1,"dur":1,"other":1,"other":2,"args":"text"}',
      // whole ns under 2^62, a negative dur among them (the SQL's stray), a fraction that makes whole ns
      '{"ph":"X","cat":"cpu_op","ts":4611686018427387,"dur":-2}',
      '{"ph":"X","cat":"cpu_op","ts":-4611686018427387,"dur":0.001}',
    ];
    const text = `{"traceEvents":[\n${[...doubtful, ...sure].join(',\n')}\n]}\n`;
    writeFileSync(join(dir, 't.json'), text);
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    const heard: string[] = [];
    const scan = await scanJsonRecords(await openSource(join(dir, 't.json')), laneOptions(dir, heard));
    expect(scan.counts).toEqual([doubtful.length, sure.length]);
    // each sure event's row, at the line its `{` is on
    const lineOf = (event: string) => text.slice(0, text.indexOf(event)).split('\n').length;
    expect(records(scan.parts[1]!).map((t) => Number(fields(t)[0]))).toEqual(sure.map(lineOf));
    expect(heard).toEqual(['cpu_op', 'python_function']);
  });

  it('an import stores the same rows with the lane and without it, strays and all; the spans written as the scan goes in the same order', { timeout: 240_000 }, async () => {
    const dir = tmp();
    const pad = 'p'.repeat(100);
    const ev: string[] = ['{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"GPU 0"}}'];
    // cases 2 to 4: the runtime calls with a dur (a negative one too: a stray of the SQL's) and the python_functions
    // in range; a time with a fraction of a ns (case 2), one beyond 2^62 ns and one without a dur stay with the others;
    // case 1's below
    let laneRows = 2 * 4_583 + 6_875;
    for (let i = 0; i < 110_000; i++) {
      const ts = 1000 + i * 2;
      switch (i % 8) {
        case 0: ev.push(`{"ph":"X","cat":"kernel","name":"k","pid":7,"tid":3,"ts":${ts},"dur":1.5,"args":{"device":0,"stream":3,"correlation":${i}}}`); break;
        // host categories of several spellings, one of them on the GPU process (still host: the category decides)
        case 1: {
          // values of every shape the lane's row takes: what it holds must be what read_json gives the staged record
          const odd = [
            `"name":"mm","pid":1,"tid":2,"args":{"correlation":${i},"pad":"${pad}"}`,
            '"name":null,"pid":"p 1","tid":null,"args":[1,"a/b",[],{},true,null,-12,0]',
            `"pid":-3,"tid":"x","args":{ "a b" : [ 1 ,\n 2 ] , "correlation" : "${i}" }`,
            '"name":"","tid":0,"args":"text"',
            `"name":"d","pid":1,"tid":2,"args":{"correlation":-5,"k":{"correlation":1}}`,
            `"name":"d","pid":1,"tid":2,"args":{"correlation":${i},"correlation":7}`,
            '"name":"n","pid":1,"tid":2,"args":null',
            '"name":"f","pid":1,"tid":2,"args":{"x":1.5,"correlation":3}',
            `"name":"e","pid":1,"tid":2,"args":{"s":"\u00e9","correlation":${i}}`,
          ][(i >> 3) % 9]!;
          // (the last two stay with the others: a number and a string read_json would not give back as written)
          if ((i >> 3) % 9 < 7) laneRows++;
          ev.push(`{"ph":"X","cat":"CPU_OP",${odd},"ts":${ts},"dur":3}`);
          break;
        }
        case 2: ev.push(`{"ph":"X","cat":"Trace","name":"t","pid":7,"tid":2,"ts":${ts}.0004,"dur":0.0007}`); break;
        // strays: a host category but no dur, a negative dur, a time beyond 2^62 ns
        case 3: ev.push(`{"ph":"X","cat":"cuda_runtime","name":"r","pid":1,"tid":2,"ts":${ts}${i % 24 === 3 ? '' : i % 24 === 11 ? ',"dur":-2' : ',"dur":1'}}`); break;
        case 4: ev.push(`{"ph":"X","cat":"python_function","name":"p","pid":1,"tid":2,"ts":${i % 16 === 4 ? '5e15' : ts},"dur":1}`); break;
        // not host: a device-class category on either process, a sync marker, a copy
        case 5: ev.push(`{"ph":"X","cat":"my_kind","name":"d","pid":${i % 16 === 5 ? 7 : 1},"tid":4,"ts":${ts},"dur":1}`); break;
        case 6: ev.push(`{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":7,"tid":3,"ts":${ts},"dur":1,"args":{"device":0,"stream":3}}`); break;
        default: ev.push(`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy","pid":7,"tid":3,"ts":${ts},"dur":1,"args":{"device":0,"stream":3}}`, `{"ph":"s","id":${i},"cat":"ac2g","pid":1,"tid":2,"ts":${ts}}`);
      }
    }
    const file = join(dir, 'lane.json');
    writeFileSync(file, `{"traceEvents":[\n${ev.join(',\n')}\n],"baseTimeNanoseconds":1700000000000000000}\n`);
    // streamed, natively scanned, and its lane holds the host cases' events (the strays among them)
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    const laned = await scanJsonRecords(await openSource(file), laneOptions(tmp(), []));
    expect(laned.counts[1]).toBe(laneRows);
    const text = (rows: unknown) => JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    const dumps: Record<string, string>[] = [];
    for (const lane of ['1', '0', '1']) {
      vi.stubEnv('TICKWISE_CHROME_LANE', lane);
      const store = await Store.open(':memory:');
      try {
        await importInput(store, file);
        const d: Record<string, string> = {};
        for (const t of ['host_events', 'dispatches', 'raw_records', 'diagnostics', 'devices']) {
          d[t] = text(await store.rows(`SELECT * FROM ${t} ORDER BY ALL`));
          d[`${t} stored`] = text(await store.rows(`SELECT * FROM ${t} ORDER BY rowid`));
        }
        // the spans written as the scan goes are stored first: the plain host spans of the host cases (all of CPU_OP
        // and Trace, the runtime calls with a dur of 1, the python_functions in range); in line order but where a
        // span the lane does not take comes from its own part (a CPU_OP of an odd value, a Trace span with a
        // fraction of a ns: the spec's parts' and the lane's in the order the parts come)
        const streamed = `SELECT * FROM host_events ORDER BY rowid LIMIT 2 * 13750 + 4583 + 6875`;
        d['streamed'] = text(await store.rows(`SELECT * FROM (${streamed}) ORDER BY ALL`));
        d['streamed lane rows in line order'] = text(await store.rows(`SELECT count(*)::INTEGER AS n FROM (
          SELECT line, lag(line) OVER (ORDER BY rowid) AS prev FROM (SELECT rowid, * FROM host_events ORDER BY rowid LIMIT 2 * 13750 + 4583 + 6875)
          WHERE coalesce(name, '') NOT IN ('f', 'e', 't')) WHERE prev > line`));
        d['counts'] = text(await store.rows(`SELECT op, count(*)::INTEGER AS n, count(*) FILTER (WHERE valid)::INTEGER AS valid FROM host_events GROUP BY op ORDER BY op`));
        dumps.push(d);
      } finally {
        await store.close();
      }
    }
    const [on, off, again] = dumps as [Record<string, string>, Record<string, string>, Record<string, string>];
    // the same rows; a lane stray (no dur, a negative one, a time beyond 2^62 ns) is staged as its part loads, so the
    // span table's rows may come in another order than without the lane, the same at each import
    for (const t of Object.keys(off)) {
      if (t.endsWith(' stored')) expect(again[t], t).toBe(on[t]);
      else expect(on[t], t).toBe(off[t]);
    }
    expect(on['streamed lane rows in line order']).toBe('[{"n":0}]');
    // known by construction (13,750 of each case): the host cases' spans, strays included; valid: a third of the
    // runtime calls (the others have no dur or a negative one), every python_function (5e18 ns was beyond what is
    // written while scanning, not beyond int64 after the shift); the GPU process's my_kind spans are dispatches
    expect(JSON.parse(on['counts']!)).toEqual([
      { op: 'CPU_OP', n: 13_750, valid: 13_750 }, { op: 'Trace', n: 13_750, valid: 13_750 },
      { op: 'cuda_runtime', n: 13_750, valid: 4_583 }, { op: 'cuda_sync', n: 13_750, valid: 13_750 }, { op: 'gpu_memcpy', n: 13_750, valid: 13_750 },
      { op: 'my_kind', n: 6_875, valid: 6_875 }, { op: 'python_function', n: 13_750, valid: 13_750 },
    ]);
  });

  it('an old Kineto trace (no base time) whose epoch times are only in its host lane is still taken as realtime', { timeout: 60_000 }, async () => {
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    const timeline = async (t0: number) => {
      const ev = Array.from({ length: 20_000 }, (_v, i) => JSON.stringify({ ph: 'X', cat: 'cpu_op', name: 'mm', pid: 1, tid: 1, ts: t0 + i * 10, dur: 5 }));
      const file = join(tmp(), 'old.json');
      writeFileSync(file, `{"deviceProperties":[{"id":0,"name":"GPU"}],"traceEvents":[\n${ev.join(',\n')}\n]}\n`);
      const store = await Store.open(':memory:');
      try {
        await importInput(store, file);
        return await store.rows('SELECT timeline FROM captures');
      } finally {
        await store.close();
      }
    };
    // 2022 in epoch microseconds, and times from 0
    expect(await timeline(1_661_203_463_354_161)).toEqual([{ timeline: 'realtime' }]);
    expect(await timeline(1000)).toEqual([{ timeline: 'unknown' }]);
  });

  it('real traces (Kineto of CUDA, ROCm, MTIA, NCCL; HTA\'s and TraceLens\'s) store the same rows with the lane and without it', { timeout: 240_000 }, async () => {
    const dir = resolve(ROOT, '../shared/fixtures/external/chrome-trace');
    const files = existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.json.gz')).map((n) => join(dir, n)) : [];
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    let laned = 0;
    for (const file of files) {
      const dumps: string[] = [];
      for (const lane of ['1', '0']) {
        vi.stubEnv('TICKWISE_CHROME_LANE', lane);
        const store = await Store.open(':memory:');
        try {
          await importInput(store, file);
          const out: string[] = [];
          for (const t of ['host_events', 'dispatches', 'raw_records', 'metric_samples', 'devices', 'diagnostics', 'assumptions']) {
            out.push(JSON.stringify(await store.rows(`SELECT * FROM ${t} ORDER BY ALL`), (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
          }
          dumps.push(out.join('\n'));
        } finally {
          await store.close();
        }
      }
      expect(dumps[0], file).toBe(dumps[1]);
      laned += (await scanJsonRecords(await openSource(file), laneOptions(tmp(), []))).counts[1] ?? 0;
    }
    // (the shared fixtures are beside the repository in the dev setup and in CI)
    if (files.length > 0) expect(laned).toBeGreaterThan(10_000);
  });

  it('loads on a connection of its own beside the staged parts: every span shifted by the base time, the same rows as on one connection and with the staged parts loaded as they come, one stored order', { timeout: 120_000 }, async () => {
    // the lane holds every host span (whole ns), the staged parts none (kernels, flows) or some (a fraction of a ns):
    // what the two connections' loads count, commit and shift must add up whichever part loads first
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    const text = (rows: unknown) => JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
    for (const fraction of ['', '.0004']) {
      const ev = ['{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"GPU 0"}}'];
      for (let i = 0; i < 40_000; i++) {
        const ts = 1000 + i * 3;
        ev.push(i % 3 === 0 ? `{"ph":"X","cat":"kernel","name":"k","pid":7,"tid":3,"ts":${ts},"dur":2,"args":{"device":0,"stream":3,"correlation":${i}}}`
          : i % 3 === 1 ? `{"ph":"X","cat":"cpu_op","name":"mm","pid":1,"tid":2,"ts":${ts}${i % 7 === 1 ? fraction : ''},"dur":1,"args":{"External id":${i}}}`
            : `{"ph":"f","id":${i},"cat":"ac2g","name":"ac2g","pid":7,"tid":3,"ts":${ts},"bp":"e"}`);
      }
      const file = join(tmp(), 'conn.json');
      writeFileSync(file, `{"traceEvents":[\n${ev.join(',\n')}\n],"baseTimeNanoseconds":1700000000000000000}\n`);
      const runs: Record<string, string>[] = [];
      // (the last: the staged parts loaded as they come, not held while the lane is behind: LaneFirst)
      for (const [conn, first] of [['1', '1'], ['1', '1'], ['1', '1'], ['0', '1'], ['1', '0']] as const) {
        vi.stubEnv('TICKWISE_CHROME_LANE_CONN', conn);
        vi.stubEnv('TICKWISE_CHROME_LANE_FIRST', first);
        const store = await Store.open(':memory:');
        try {
          await importInput(store, file);
          runs.push({
            rows: text(await store.rows('SELECT * FROM host_events ORDER BY ALL')),
            stored: text(await store.rows('SELECT line FROM host_events ORDER BY rowid')),
            unshifted: text(await store.rows('SELECT count(*) AS n FROM host_events WHERE start_ns < 1700000000000000000')),
            spans: text(await store.rows("SELECT count(*) AS n FROM host_events WHERE op = 'cpu_op'")),
          });
        } finally {
          await store.close();
        }
      }
      const [a, b, c, one, asTheyCome] = runs as [Record<string, string>, Record<string, string>, Record<string, string>, Record<string, string>, Record<string, string>];
      expect(a.unshifted, fraction).toBe('[{"n":"0"}]');
      expect(a.spans, fraction).toBe('[{"n":"13333"}]');
      for (const r of [b, c, asTheyCome]) expect(r, fraction).toEqual(a);
      expect(one.rows, fraction).toBe(a.rows);
    }
  });

  it('a part DuckDB refuses while the lane loads on its own connection: one error with its line, nothing left, the store usable after', { timeout: 120_000 }, async () => {
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    const ev: string[] = [];
    for (let i = 0; i < 60_000; i++) {
      ev.push(i % 2 === 0 ? `{"ph":"X","cat":"cpu_op","name":"mm","pid":1,"tid":2,"ts":${1000 + i},"dur":1,"args":{"External id":${i}}}`
        : `{"ph":"X","cat":"kernel","name":"k","pid":7,"tid":3,"ts":${1000 + i},"dur":1,"args":{"device":0,"stream":3}}`);
    }
    const bad = 40_001; // a kernel (staged) whose name is not UTF-8: DuckDB refuses its part
    const dir = tmp();
    const file = join(dir, 'bad.json');
    const text = Buffer.from(`{"traceEvents":[\n${ev.join(',\n')}\n]}\n`, 'utf8');
    const at = text.indexOf('"name":"k"', text.indexOf(`"ts":${1000 + bad},`) - 80);
    text[at + 8] = 0xff;
    writeFileSync(file, text);
    const store = await Store.open(':memory:');
    try {
      const e = await importInput(store, file).catch((x: unknown) => x);
      expect((e as { code?: string }).code).toBe('bad-record');
      expect((e as { line?: number }).line).toBe(bad + 2);
      for (const t of ['host_events', 'dispatches', 'raw_records', 'captures']) expect(await store.scalar(`SELECT count(*) FROM ${t}`), t).toBe(0n);
      // no transaction left open on the store's connection: a good trace imports after
      const good = join(dir, 'good.json');
      writeFileSync(good, `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`);
      await importInput(store, good);
      expect(await store.scalar(`SELECT count(*) FROM host_events WHERE op = 'cpu_op'`)).toBe(30_000n);
    } finally {
      await store.close();
    }
  });

  it('after an import that held DuckDB at one thread past the scan (the lane\'s commit and the flows\' insert on connections of their own), the store has its own thread count back, the import done or failed', { timeout: 120_000 }, async () => {
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    const dir = tmp();
    const ev: string[] = [];
    // over STAGE_PART_BYTES (16 MiB): the part loader sets DuckDB to one thread while scanning
    const pad = 'f'.repeat(500);
    for (let i = 0; i < 60_000; i++) {
      ev.push(i % 2 === 0
        ? `{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":${1000 + i},"dur":1,"args":{"External id":${i},"Call stack":"${pad}"}}`
        : `{"ph":"f","id":${i},"cat":"ac2g","name":"ac2g","pid":1,"tid":2,"ts":${1000 + i},"bp":"e"}`);
    }
    const good = join(dir, 'good.json');
    writeFileSync(good, `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`);
    // a flow DuckDB's JSON refuses (a lone surrogate): the flows' insert fails after the scan
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, `{"traceEvents":[\n${ev.join(',\n')},\n{"ph":"s","cat":"ac2g","name":"\\ud800","pid":1,"tid":2,"ts":1,"id":2}\n]}\n`);
    // and real Kineto traces large enough to stream (gzip: a tenth of the part size), which hold it too
    const real = ['hta_trace_diff_control.json.gz', 'tracelens_mi300_owlv2.json.gz'].map((f) => resolve(ROOT, '../shared/fixtures/external/chrome-trace', f));
    for (const [file, fails] of [[good, false], [bad, true], ...real.map((f) => [f, false] as const)] as const) {
      const store = await Store.open(':memory:');
      try {
        await store.run('SET threads = 3');
        const done = await importInput(store, file).then(() => true, (e: unknown) => e);
        if (fails) expect(String(done)).toMatch(/bad record: .*surrogate/);
        else expect(done).toBe(true);
        expect(String(await store.scalar(`SELECT current_setting('threads')`)), file).toBe('3');
        // the import's rows: 30k host spans by the lane, 30k flows routed (none of a failed one's)
        if (real.includes(file)) continue;
        expect(Number(await store.scalar('SELECT count(*) FROM host_events')), file).toBe(fails ? 0 : 30_000);
        expect(Number(await store.scalar('SELECT count(*) FROM raw_records')), file).toBe(fails ? 0 : 30_000);
      } finally {
        await store.close();
      }
    }
  });
});
