import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { tmp } from './helpers';

/**
 * The Chrome reader writes the host spans whose category decides their class
 * to host_events part by part while the scan runs, in one transaction, with
 * the clock shift added after the scan; TICKWISE_CHROME_STREAM=0 stages
 * every event and builds the span table of all of them (the path before).
 * Both must store the same rows.
 */

/** Every table's rows, sorted, as text (capture ids included: the second import of a store is capture 2). */
async function dump(store: Store): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of ['host_events', 'dispatches', 'raw_records', 'diagnostics', 'metric_samples', 'devices', 'assumptions']) {
    const rows = await store.rows(`SELECT * FROM ${t} ORDER BY ALL`);
    out[t] = JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  }
  return out;
}

/** Imports `files` into one in-memory store, the spans written as the scan goes (`stream` 1) or all staged (0). */
async function imported(files: string[], stream: '0' | '1'): Promise<Store> {
  vi.stubEnv('TICKWISE_CHROME_STREAM', stream);
  const store = await Store.open(':memory:');
  for (const f of files) await importInput(store, f);
  vi.unstubAllEnvs();
  return store;
}

const pad = 'p'.repeat(120);

/**
 * A Kineto-like trace of several parts (> 16 MiB): CPU ops (some with a time
 * finer than 1 ns), spans of a category that needs the process's kind (on the
 * GPU process: kernels; on the CPU one: host spans), kernels, copies, a sync
 * marker, B/E pairs, instants, counters, flows, spans without dur, negative
 * ones; `base` is its baseTimeNanoseconds. `overflow` CPU ops have a ts of
 * 1e15 us (1e18 ns: written while scanning, then put beyond int64 by a shift
 * of 9e18). `mostlyHost`: CPU ops in place of all but the kernels and
 * copies (a fifth of the events staged: every part written as it loads; else
 * the stage holds most events, and after the first part the parts go
 * straight into it).
 */
function trace(n: number, base: string, overflow: number, mostlyHost = false): string {
  const ev: string[] = ['{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"GPU 0"}}'];
  for (let i = 0; i < n; i++) {
    const ts = 1000 + i * 2;
    switch (mostlyHost && i % 10 !== 0 && i % 10 !== 3 ? 9 : i % 10) {
      case 0: ev.push(`{"ph":"X","cat":"kernel","name":"gemm","pid":7,"tid":3,"ts":${ts},"dur":1.5,"args":{"device":0,"stream":3,"correlation":${i}}}`); break;
      case 1: ev.push(`{"ph":"X","cat":"my_kind","name":"g${i % 7}","pid":7,"tid":4,"ts":${ts},"dur":1}`); break;
      case 2: ev.push(`{"ph":"X","cat":"my_kind","name":"c${i % 7}","pid":1,"tid":4,"ts":${ts},"dur":1,"args":{"pad":"${pad}"}}`); break;
      case 3: ev.push(`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":7,"tid":3,"ts":${ts},"dur":0.75,"args":{"device":0,"stream":3}}`); break;
      case 4: ev.push(`{"ph":"B","name":"region","pid":1,"tid":9,"ts":${ts}}`, `{"ph":"E","pid":1,"tid":9,"ts":${ts + 1}}`); break;
      case 5: ev.push(`{"ph":"s","id":${i},"name":"flow","cat":"ac2g","pid":1,"tid":2,"ts":${ts}}`); break;
      case 6: ev.push(`{"ph":"i","name":"mark","pid":1,"tid":2,"ts":${ts},"s":"t"}`, `{"ph":"C","name":"mem","pid":1,"ts":${ts},"args":{"used":${i}}}`); break;
      default: {
        // CPU ops: a time finer than 1 ns in one of 7, no dur or a negative one now and then
        const t = i % 70 === 7 ? `${ts}.0006` : String(ts);
        const dur = i % 90 === 8 ? '' : `,"dur":${i % 110 === 9 ? -1 : 3}`;
        ev.push(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":${2 + (i % 3)},"ts":${t}${dur},"args":{"External id":${i},"correlation":${i},"pad":"${pad}"}}`);
      }
    }
  }
  ev.push('{"ph":"X","cat":"cuda_runtime","name":"cudaStreamSynchronize","pid":1,"tid":2,"ts":5,"dur":1,"args":{"correlation":1}}');
  ev.push('{"ph":"X","cat":"cuda_sync","name":"Stream Sync","pid":7,"tid":3,"ts":6,"dur":1,"args":{"device":0,"stream":3}}');
  for (let i = 0; i < overflow; i++) ev.push(`{"ph":"X","cat":"cpu_op","name":"late","pid":1,"tid":2,"ts":${1e15 + i},"dur":1}`);
  return `{"schemaVersion":1,"deviceProperties":[{"id":0,"name":"Test GPU"}],"traceEvents":[\n${ev.join(',\n')}\n],"baseTimeNanoseconds":${base}}\n`;
}

describe('Chrome trace: host spans written as the scan goes', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('store the rows the staged path stores: several parts, fractions of a ns, device-class spans, B/E, a shift beyond int64', async () => {
    const dir = tmp();
    const big = join(dir, 'big.json');
    writeFileSync(big, trace(120_000, '1700000000000000000', 0));
    const shifted = join(dir, 'shifted.json');
    writeFileSync(shifted, trace(2000, '9000000000000000000', 25));
    const mostly = join(dir, 'host.json');
    writeFileSync(mostly, trace(100_000, '1700000000000000000', 0, true));
    const files = [big, shifted, mostly];
    const [a, b] = [await imported(files, '0'), await imported(files, '1')];
    try {
      const [da, db] = [await dump(a), await dump(b)];
      for (const t of Object.keys(da)) expect(db[t], t).toBe(da[t]);
      // known by construction: of each 10 events, 3 CPU ops, 1 CPU span of a device class and 1 B/E pair are slices; 1 copy
      const host = await b.rows(`SELECT capture_id, count(*) FILTER (WHERE kind = 'slice')::INTEGER AS slices,
          count(*) FILTER (WHERE kind = 'gpu_memcpy')::INTEGER AS copies, count(*) FILTER (WHERE kind = 'cuda_sync')::INTEGER AS syncs
        FROM host_events GROUP BY ALL ORDER BY ALL`);
      expect(host).toEqual([
        { capture_id: 1, slices: 12_000 * 5 + 1, copies: 12_000, syncs: 1 },
        { capture_id: 2, slices: 200 * 5 + 1 + 25, copies: 200, syncs: 1 },
        { capture_id: 3, slices: 80_000 + 1, copies: 10_000, syncs: 1 },
      ]);
      // the mostly-host trace: its spans written while scanning, every part (the first 10k rows stored are all slices, then the copies)
      expect(await b.rows(`SELECT count(*)::INTEGER AS n FROM (SELECT kind FROM host_events WHERE capture_id = 3 ORDER BY rowid LIMIT 70000) WHERE kind <> 'slice'`)).toEqual([{ n: 0 }]);
      expect(Number(await b.scalar(`SELECT count(*) FROM dispatches WHERE capture_id = 1`))).toBe(24_000); // kernels and GPU-process spans
      // the 25 CPU ops at 1e18 ns were written in range and the shift of 9e18 put them beyond int64: NULL, not valid, one diagnostic
      expect(await b.rows(`SELECT count(*)::INTEGER AS n FROM host_events WHERE capture_id = 2 AND name = 'late' AND start_ns IS NULL AND NOT valid`)).toEqual([{ n: 25 }]);
      expect(await b.rows(`SELECT message FROM diagnostics WHERE capture_id = 2 AND code = 'time-out-of-range'`)).toEqual([{ message: expect.stringMatching(/^25 event/) }]);
      // a time finer than 1 ns is rounded once, exactly: event 7 (line 12) at 1000 + 7*2 us + 0.6 ns, shifted by the base
      expect(await b.rows(`SELECT start_ns::VARCHAR AS s, dur_ns::INTEGER AS d FROM host_events WHERE capture_id = 1 AND line = 12`)).toEqual([{ s: "1700000000001014001", d: 3000 }]);
      // the spans written as the scan went come first, in file order: the first stored host event is a CPU op
      expect(await b.rows(`SELECT op FROM host_events WHERE capture_id = 1 ORDER BY rowid LIMIT 1`)).toEqual([{ op: 'cpu_op' }]);
    } finally {
      await a.close();
      await b.close();
    }
  }, 240_000);

  it('a failed import leaves none of its host spans in the store (the parts\' transaction rolled back)', async () => {
    const dir = tmp();
    const file = join(dir, 'bad.json');
    // a valid trace of several parts, then an event that is not UTF-8 in its last part
    const text = trace(100_000, '0', 0).replace(/\n\],"baseTimeNanoseconds":0\}\n$/, '');
    writeFileSync(file, Buffer.concat([Buffer.from(`${text},\n{"ph":"X","cat":"cpu_op","name":"bad`), Buffer.from([0xff]), Buffer.from('","pid":1,"tid":2,"ts":1,"dur":1}\n]}\n')]));
    const store = await Store.open(':memory:');
    try {
      const err = await importInput(store, file).then(() => undefined, (e: unknown) => e as { line?: number });
      expect(err?.line).toBe(text.split('\n').length + 1);
      expect(Number(await store.scalar('SELECT count(*) FROM host_events'))).toBe(0);
      expect(Number(await store.scalar('SELECT count(*) FROM raw_records'))).toBe(0);
    } finally {
      await store.close();
    }
  }, 240_000);
});

describe('the allocator setting for a large Chrome trace or rocprofv3 JSON', () => {
  const SHORT_DECAY = 'narenas:1,dirty_decay_ms:10,muzzy_decay_ms:0';
  const PROMPT_FREE = 'dirty_decay_ms:0,muzzy_decay_ms:0';
  const ONE_ARENA = 'narenas:1';

  it('takes a trace for B/E from its head: B and E events at least as many as the others, metadata not counted', async () => {
    const { beginEndHeavy } = await import('../src/readers/chrome-scan');
    const ev = (ph: string) => `{"name":"a","ph" : "${ph}","pid":1,"tid":1,"ts":1}`;
    const head = (...phs: string[]) => `{"traceEvents":[${phs.map(ev).join(',\n')}`;
    expect(beginEndHeavy(head('M', 'M', 'M', 'B', 'E', 'X'))).toBe(true);
    expect(beginEndHeavy(head('B', 'E', 'X', 'X', 'i'))).toBe(false);
    expect(beginEndHeavy(head('X', 'X', 'C'))).toBe(false);
    expect(beginEndHeavy(head('M', 'M'))).toBe(false);
    expect(beginEndHeavy('')).toBe(false);
    // a head cut inside an event: the events whole before it count
    expect(beginEndHeavy(`${head('B', 'E', 'B')},{"ph":"X`)).toBe(true);
  });

  it('is made for a Chrome trace or rocprofv3 JSON of 64 MB or more, not for a smaller one or another format, and never over a value the user set', async () => {
    const { freeMemoryPromptlyFor } = await import('../src/index');
    const { truncateSync } = await import('node:fs');
    const dir = tmp();
    // sparse files: the size is what counts, the head says the format
    const sized = (name: string, head: string, bytes: number) => {
      const f = join(dir, name);
      writeFileSync(f, head);
      truncateSync(f, bytes);
      return f;
    };
    const chromeHead = '{"traceEvents":[\n{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1}';
    const big = sized('big.json', chromeHead, 70e6);
    const small = sized('small.json', chromeHead, 60e6);
    const jsonl = sized('run.ireeperf.jsonl', '{"record_type":"session","schema_version":1}\n', 70e6);
    const env = (): Record<string, string | undefined> => ({});
    const e1 = env();
    expect(await freeMemoryPromptlyFor([small, big], new Map(), undefined, e1)).toBe(true);
    // a short decay (the native scanner's host lane keeps the peak down); without that scanner, under 200 MB freed
    // memory is given back at once (the peak under twice the trace), from 200 MB the short decay
    expect(e1['DUCKDB_JE_MALLOC_CONF']).toBe(SHORT_DECAY);
    const e1js = { TICKWISE_JSONSCAN: '0' } as Record<string, string | undefined>;
    expect(await freeMemoryPromptlyFor([small, big], new Map(), undefined, e1js)).toBe(true);
    expect(e1js['DUCKDB_JE_MALLOC_CONF']).toBe(PROMPT_FREE);
    const huge = sized('huge.json', chromeHead, 250e6);
    const e0 = env();
    expect(await freeMemoryPromptlyFor([huge], new Map(), undefined, e0)).toBe(true);
    expect(e0['DUCKDB_JE_MALLOC_CONF']).toBe(SHORT_DECAY);
    // a trace whose head is mostly B/E gets the prompt one, alone or beside another (the setting is the process's)
    const beHead = `{"traceEvents":[\n{"ph":"M","name":"process_name","pid":1,"args":{"name":"p"}},\n${'{"ph":"B","name":"a","pid":1,"tid":1,"ts":1},\n{"ph":"E","pid":1,"tid":1,"ts":2},\n'.repeat(50)}`;
    const bigBe = sized('big-be.json', beHead, 250e6);
    for (const order of [[bigBe], [huge, bigBe], [bigBe, huge]]) {
      const e = env();
      expect(await freeMemoryPromptlyFor(order, new Map(), undefined, e)).toBe(true);
      expect(e['DUCKDB_JE_MALLOC_CONF']).toBe(PROMPT_FREE);
    }
    const e2 = env();
    expect(await freeMemoryPromptlyFor([small, jsonl, '-'], new Map(), undefined, e2)).toBe(false);
    expect(e2['DUCKDB_JE_MALLOC_CONF']).toBeUndefined();
    const e3 = { DUCKDB_JE_MALLOC_CONF: 'dirty_decay_ms:10000' };
    expect(await freeMemoryPromptlyFor([big], new Map(), undefined, e3)).toBe(false);
    expect(e3.DUCKDB_JE_MALLOC_CONF).toBe('dirty_decay_ms:10000');
    // a gzip is counted at ten times its size, whatever its name: 8 MB of a compressed trace is large
    const { gzipSync } = await import('node:zlib');
    const gz = join(dir, 'trace-gz.json');
    writeFileSync(gz, gzipSync(Buffer.from(`${chromeHead},\n${'{"ph":"i","name":"m","pid":1,"tid":1,"ts":1},\n'.repeat(2000)}{"ph":"i","name":"m","pid":1,"tid":1,"ts":1}]}`)));
    const { appendFileSync } = await import('node:fs');
    appendFileSync(gz, Buffer.alloc(8e6)); // trailing bytes: the size on disk is what counts here
    const e5 = { TICKWISE_JSONSCAN: '0' } as Record<string, string | undefined>;
    expect(await freeMemoryPromptlyFor([gz], new Map(), undefined, e5)).toBe(true);
    expect(e5['DUCKDB_JE_MALLOC_CONF']).toBe(PROMPT_FREE); // (counted at ~80 MB: under 200, and no native scanner)
    // rocprofv3 JSON gets one arena and jemalloc's decay (no peak goal below 1 GB); beside a Chrome trace the
    // trace's setting; a format given (--input-format) is taken as it is
    const rocprof = sized('big-rocprof.json', '{"rocprofiler-sdk-tool":[{"metadata":{}}', 70e6);
    const e6 = env();
    expect(await freeMemoryPromptlyFor([rocprof], new Map(), undefined, e6)).toBe(true);
    expect(e6['DUCKDB_JE_MALLOC_CONF']).toBe(ONE_ARENA);
    const e7 = env();
    expect(await freeMemoryPromptlyFor([rocprof, bigBe], new Map(), undefined, e7)).toBe(true);
    expect(e7['DUCKDB_JE_MALLOC_CONF']).toBe(PROMPT_FREE);
    for (const order of [[rocprof, huge], [huge, rocprof]]) {
      const e = env();
      expect(await freeMemoryPromptlyFor(order, new Map(), undefined, e)).toBe(true);
      expect(e['DUCKDB_JE_MALLOC_CONF']).toBe(SHORT_DECAY);
    }
    const e4 = env();
    expect(await freeMemoryPromptlyFor([big], new Map(), 'rocprofv3-csv', e4)).toBe(false);
  });

  it('is made by a verb given the trace itself (openInputs), before its store opens', async () => {
    const { openInputs } = await import('../src/open-inputs');
    const { truncateSync } = await import('node:fs');
    const dir = tmp();
    const big = join(dir, 'big.json');
    writeFileSync(big, '{"traceEvents":[\n{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":1}');
    truncateSync(big, 70e6); // the rest is zero bytes: the import itself fails, after the setting
    const before = process.env['DUCKDB_JE_MALLOC_CONF'];
    vi.stubEnv('DUCKDB_JE_MALLOC_CONF', undefined);
    try {
      await expect(openInputs([big])).rejects.toThrow();
      expect(process.env['DUCKDB_JE_MALLOC_CONF']).toBe(SHORT_DECAY);
    } finally {
      vi.unstubAllEnvs();
    }
    expect(process.env['DUCKDB_JE_MALLOC_CONF']).toBe(before);
  });
});
