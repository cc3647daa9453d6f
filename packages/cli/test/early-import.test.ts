/**
 * `tickwise import`'s early start (src/early.ts): the built CLI's entry reads
 * the command line without yargs and starts a large Chrome trace's or
 * rocprofv3 JSON's scan before the CLI loads. What it reads of a command line; that the reader
 * takes the run over and the store is the one an import without it writes;
 * that a run the import never takes (a usage error) is stopped and its
 * folder removed at exit; that nothing starts while another process holds
 * the store's lock.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeLockPath } from '@tickwise/store';
import { earlyImportOf } from '../src/early';

const root = resolve(import.meta.dirname, '../../..');
const bundle = join(root, 'packages/cli/dist/tickwise.mjs');
const work = mkdtempSync(join(tmpdir(), 'tickwise-early-test-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the command line the early start reads', () => {
  const of = (line: string) => earlyImportOf(line.split(' '));

  it('the first input and the store, whatever the options around them', () => {
    expect(of('import t.json --db s.duckdb')).toEqual({ input: 't.json', db: 's.duckdb' });
    expect(of('import --label run --db=s.db --json t.json u.json')).toEqual({ input: 't.json', db: 's.db' });
    expect(of('import --json false t.json --conditions-from-host --db s.duckdb')).toEqual({ input: 't.json', db: 's.duckdb' });
    expect(of('import --no-json --lock-wait 5s t.json --db s.duckdb')).toEqual({ input: 't.json', db: 's.duckdb' });
    expect(of('import --db s.duckdb -- --odd-name.json')).toEqual({ input: '--odd-name.json', db: 's.duckdb' });
    // the time unit goes into the scan's plan
    expect(of('import t.json --db s.duckdb --trace-time-unit ns')).toEqual({ input: 't.json', db: 's.duckdb', traceTimeUnit: 'ns' });
    expect(of('import t.json --db s.duckdb --traceTimeUnit=ms --input-format chrome-trace')).toEqual({ input: 't.json', db: 's.duckdb', traceTimeUnit: 'ms', format: 'chrome-trace' });
    expect(of('import r.json --input-format=rocprofv3-json --db s.duckdb')).toEqual({ input: 'r.json', db: 's.duckdb', format: 'rocprofv3-json' });
  });

  it('nothing for another verb, --help, a short option, no store, stdin, another format or a unit yargs refuses', () => {
    for (const line of [
      'kernels t.json --db s.duckdb', 'import t.json --db s.duckdb --help', 'import t.json --db s.duckdb --version', 'import -h t.json --db s.duckdb',
      'import t.json', 'import t.json --db s.txt', 'import --db s.duckdb', 'import - --db s.duckdb',
      'import t.json --db s.duckdb --input-format ireeperf-jsonl', 'import t.json --db s.duckdb --trace-time-unit min',
    ]) expect(of(line), line).toBeNull();
  });
});

describe('the built CLI starts a large Chrome trace\'s scan before it loads', () => {
  const trace = join(work, 'trace.json');
  // the scan of a trace this small starts early as a large one's does: streamed, by the native scanner
  const env = { ...process.env, TICKWISE_TRACE_SCAN: '1', TICKWISE_JSONSCAN: 'always', TICKWISE_CHROME_STREAM: '1' };
  const run = (args: string[], extra: Record<string, string> = {}) => spawnSync('node', [bundle, ...args], { encoding: 'utf8', env: { ...env, ...extra } });
  const early = (stderr: string) => stderr.split('\n').filter((l) => l.includes('early scan'));
  /** The scan folders a CLI process of this pid made (named with it). */
  const foldersOf = (pid: number) => readdirSync(tmpdir()).filter((n) => n.startsWith(`tickwise-chrome-${pid}-`));

  beforeAll(() => {
    // the wrapper builds when the build is missing or older than a source
    execFileSync(join(root, 'scripts/tickwise'), ['--version']);
    const ev = ['{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"GPU 0"}}'];
    for (let i = 0; i < 20_000; i++) {
      const ts = 1000 + i * 3;
      ev.push(i % 2 === 0
        ? `{"ph":"X","cat":"kernel","name":"k${i % 5}","pid":7,"tid":3,"ts":${ts},"dur":2,"args":{"device":0,"stream":3,"correlation":${i}}}`
        : `{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":${ts}.5,"dur":4,"args":{"External id":${i}}}`);
    }
    writeFileSync(trace, `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`);
  }, 300_000);

  /** The dispatches' and host events' counts and sums of an import of `file` with the early start, and without it (`TICKWISE_SCAN_EARLY=0`). */
  const both = (file: string, name: string): string[] => {
    const dump = 'SELECT (SELECT count(*) FROM dispatches) AS k, (SELECT sum(dur_ns) FROM dispatches) AS kd, (SELECT count(*) FROM host_events) AS h, (SELECT sum(end_ns) FROM host_events) AS he';
    const stores: string[] = [];
    for (const off of [false, true]) {
      const db = join(work, `${name}-${off ? 'late' : 'early'}.duckdb`);
      const r = run(['import', file, '--db', db], off ? { TICKWISE_SCAN_EARLY: '0' } : {});
      expect(r.status, r.stderr).toBe(0);
      // TICKWISE_SCAN_EARLY=0: no early scan, neither at the entry nor once the store's lock is held
      expect(early(r.stderr)).toEqual(off ? [] : [`tw-jsonscan: the early scan of ${file} started before the CLI loaded`, `tw-jsonscan: the early scan of ${file} taken over`]);
      stores.push(execFileSync('node', [bundle, 'sql', db, dump, '--format', 'json'], { encoding: 'utf8' }));
    }
    return stores;
  };

  it('the import takes the run over, and stores what an import without it stores', { timeout: 120_000 }, () => {
    const stores = both(trace, 'chrome');
    expect(JSON.parse(stores[0]!)).toEqual([{ k: 10_000, kd: 20_000_000, h: 10_000, he: expect.any(Number) }]);
    expect(stores[0]).toBe(stores[1]);
  });

  it('real traces: two Kineto traces large enough to stream (gzip) and the rocprofv3 JSON fixture, the same stores either way', { timeout: 240_000 }, () => {
    const external = join(root, '../shared/fixtures/external');
    for (const f of ['chrome-trace/hta_trace_diff_control.json.gz', 'chrome-trace/tracelens_mi300_owlv2.json.gz', 'rocprofv3-json/tracelens_908_results.json.gz']) {
      const stores = both(join(external, f), f.replace(/\W/g, '_'));
      expect(Number(JSON.parse(stores[0]!)[0].k), f).toBeGreaterThan(1000);
      expect(stores[0], f).toBe(stores[1]);
    }
  });

  it('a rocprofv3 JSON\'s too', { timeout: 120_000 }, () => {
    const file = join(work, 'results.json');
    const kd: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      kd.push(`{"size":96,"kind":2,"correlation_id":{"internal":${i + 1},"external":0},"start_timestamp":${1_000_000 + i * 100},"end_timestamp":${1_000_000 + i * 100 + 40 + (i % 7)},`
        + `"dispatch_info":{"size":64,"agent_id":{"handle":2},"queue_id":{"handle":3},"kernel_id":${1 + (i % 3)},"dispatch_id":${i + 1},"workgroup_size":{"x":64,"y":1,"z":1},"grid_size":{"x":4096,"y":1,"z":1}}}`);
    }
    writeFileSync(file, `{"rocprofiler-sdk-tool":[{"metadata":{"pid":42},"agents":[{"id":{"handle":1},"type":1,"node_id":0,"logical_node_id":0,"name":"cpu"},`
      + `{"id":{"handle":2},"type":2,"node_id":1,"logical_node_id":1,"name":"gfx942","product_name":"AMD Instinct MI300X"}],`
      + `"kernel_symbols":[${[1, 2, 3].map((k) => `{"kernel_id":${k},"kernel_name":"k${k}","formatted_kernel_name":"k${k}"}`).join(',')}],`
      + `"buffer_records":{"kernel_dispatch":[\n${kd.join(',\n')}\n]}}]}\n`);
    const stores = both(file, 'rocprof');
    expect(JSON.parse(stores[0]!)).toEqual([{ k: 20_000, kd: expect.any(Number), h: 0, he: null }]);
    expect(stores[0]).toBe(stores[1]);
  });

  it('a run the import never takes (a usage error) is stopped and its folder removed at exit', { timeout: 60_000 }, () => {
    const r = run(['import', trace, '--db', join(work, 'never.duckdb'), '--bogus-option']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown option --bogus-option/);
    expect(early(r.stderr)).toEqual([`tw-jsonscan: the early scan of ${trace} started before the CLI loaded`, `tw-jsonscan: the early scan of ${trace} stopped at exit (no reader took it)`]);
    expect(foldersOf(r.pid!)).toEqual([]);
    expect(existsSync(join(work, 'never.duckdb'))).toBe(false);
  });

  it('nothing starts while another process holds the store\'s lock', { timeout: 60_000 }, () => {
    const db = join(work, 'locked.duckdb');
    // held by a live process (this one)
    writeFileSync(storeLockPath(db), String(process.pid));
    try {
      const r = run(['import', trace, '--db', db, '--lock-wait', '0s']);
      expect(r.status).toBe(2);
      // started, the run would have been stopped unread: "the early scan of ... stopped (no reader took it)"
      expect(early(r.stderr)).toEqual([]);
      expect(foldersOf(r.pid!)).toEqual([]);
    } finally {
      rmSync(storeLockPath(db), { force: true });
    }
  });
});
