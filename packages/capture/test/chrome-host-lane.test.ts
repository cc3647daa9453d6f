/**
 * The Chrome reader's host lane: the native scanner sends X events of a host
 * category to parts of their own, which are loaded straight into
 * host_events. The scanner's rule (tw-jsonscan's `hostCategory`) must be the
 * SQL's (`CAT_CLASS` = 'host') for every ASCII category, a record it cannot
 * be sure of stays with the others, and an import stores the same rows in
 * the same order with the lane as without it (`TICKWISE_CHROME_LANE=0`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store, sqlString } from '@tickwise/store';
import { seededRng } from '@tickwise/time';
import { importInput, openSource, scanJsonRecords, type ScanOptions } from '../src/index';
import { nativeScanner } from '../src/json-records-native';
import { CAT_CLASS } from '../src/readers/chrome-trace';
import { tmp } from './helpers';

const BIN = nativeScanner();

afterEach(() => vi.unstubAllEnvs());

/** Scan options with a host lane (spec 1), as the Chrome reader asks; `cats` hears the lane's categories. */
function laneOptions(dir: string, cats: string[]): ScanOptions {
  const conv = { exactKeys: ['ts', 'dur'], exactText: false, convert: (_k: string, t: string) => t, nativeConvert: { kind: 'scale' as const, pow10: 0 } };
  return {
    mode: 'document',
    records: [
      { paths: [['traceEvents', '[]']], out: join(dir, 'ev.ndjson'), ...conv, hostLane: { to: 1, kindKey: 'ph', kind: 'X', catKey: 'cat', onCategory: (c) => cats.push(c) } },
      { paths: [], out: join(dir, 'lane.ndjson'), ...conv },
    ],
  };
}

/** The records of a spec's parts, one text each. */
function records(parts: readonly { path: string }[]): string[] {
  return parts.flatMap((p) => readFileSync(p.path, 'utf8').split('\n').slice(0, -1));
}

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
    const lane = records(scan.parts[1]!).map((t) => (JSON.parse(t) as { cat: string }).cat);
    const rest = records(scan.parts[0]!).map((t) => (JSON.parse(t) as { cat: string }).cat);
    expect(lane).toEqual(list.filter((c) => host.has(c)).flatMap((c) => [c, c]));
    expect(rest).toEqual(list.filter((c) => !host.has(c)).flatMap((c) => [c, c]));
    expect(scan.counts).toEqual([rest.length, lane.length]);
    // the lane's lines are its records' source lines (event i's two records are on lines 2 + 2i and 3 + 2i)
    expect(Array.from(scan.lines[1]!)).toEqual(list.flatMap((c, i) => (host.has(c) ? [2 + 2 * i, 3 + 2 * i] : [])));
  });

  it('keeps a record it cannot be sure of with the others: escaped, repeated, not a string, not ASCII, another phase', async () => {
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
    ];
    const sure = ['{"ph":"X","cat":"cpu_op","ts":1,"dur":1}', '{"cat":"python_function","ts":2,"ph":"X","args":{"ph":"B","cat":"kernel"}}'];
    writeFileSync(join(dir, 't.json'), `{"traceEvents":[\n${[...doubtful, ...sure].join(',\n')}\n]}\n`);
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    const heard: string[] = [];
    const scan = await scanJsonRecords(await openSource(join(dir, 't.json')), laneOptions(dir, heard));
    expect(scan.counts).toEqual([doubtful.length, sure.length]);
    expect(records(scan.parts[1]!).map((t) => (JSON.parse(t) as { _line: number })._line)).toEqual([2 + doubtful.length, 3 + doubtful.length]);
    expect(heard).toEqual(['cpu_op', 'python_function']);
  });

  it('an import stores the same rows with the lane and without it, strays and all; the spans written as the scan goes in the same order', { timeout: 240_000 }, async () => {
    const dir = tmp();
    const pad = 'p'.repeat(100);
    const ev: string[] = ['{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"GPU 0"}}'];
    for (let i = 0; i < 110_000; i++) {
      const ts = 1000 + i * 2;
      switch (i % 8) {
        case 0: ev.push(`{"ph":"X","cat":"kernel","name":"k","pid":7,"tid":3,"ts":${ts},"dur":1.5,"args":{"device":0,"stream":3,"correlation":${i}}}`); break;
        // host categories of several spellings, one of them on the GPU process (still host: the category decides)
        case 1: ev.push(`{"ph":"X","cat":"CPU_OP","name":"mm","pid":1,"tid":2,"ts":${ts},"dur":3,"args":{"correlation":${i},"pad":"${pad}"}}`); break;
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
    expect(laned.counts[1]).toBe(4 * 13_750);
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
        // the spans written as the scan goes are stored first, in line order: the plain host spans of the host cases
        // (all of CPU_OP and Trace, the runtime calls with a dur of 1, the python_functions in range)
        d['streamed'] = text(await store.rows(`SELECT * FROM host_events ORDER BY rowid LIMIT 2 * 13750 + 4583 + 6875`));
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
    expect(text((JSON.parse(on['streamed']!) as { line: string }[]).map((r) => Number(r.line)).every((l, i, a) => i === 0 || a[i - 1]! < l))).toBe('true');
    // known by construction (13,750 of each case): the host cases' spans, strays included; valid: a third of the
    // runtime calls (the others have no dur or a negative one), every python_function (5e18 ns was beyond what is
    // written while scanning, not beyond int64 after the shift); the GPU process's my_kind spans are dispatches
    expect(JSON.parse(on['counts']!)).toEqual([
      { op: 'CPU_OP', n: 13_750, valid: 13_750 }, { op: 'Trace', n: 13_750, valid: 13_750 },
      { op: 'cuda_runtime', n: 13_750, valid: 4_583 }, { op: 'cuda_sync', n: 13_750, valid: 13_750 }, { op: 'gpu_memcpy', n: 13_750, valid: 13_750 },
      { op: 'my_kind', n: 6_875, valid: 6_875 }, { op: 'python_function', n: 13_750, valid: 13_750 },
    ]);
  });
});
