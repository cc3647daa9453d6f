/**
 * A Chrome trace's (or rocprofv3 JSON's) native scan started before the
 * store opens (the CLI does it while DuckDB loads: `startImportEarly`): the reader takes the run over
 * when it asks for the same plan on the same version of the file, and the
 * store is the one a scan started by the reader gives; any other plan or
 * version, and the early run is stopped and the scan starts afresh; a run no
 * reader takes is stopped and its files removed (`discardEarlyScans`).
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { discardEarlyScans, importInput, startImportEarly } from '../src/index';
import { earlyScanDir, nativeScanner } from '../src/json-records-native';
import { tmp } from './helpers';

const BIN = nativeScanner();

afterEach(async () => {
  await discardEarlyScans();
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** What the scan says of early runs (TICKWISE_TRACE_SCAN) from here on. */
function heard(): string[] {
  vi.stubEnv('TICKWISE_TRACE_SCAN', '1');
  const said: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    const text = String(chunk);
    if (text.includes('early scan')) said.push(text.replace(/ of \S+/, '').trim());
    return (write as (c: string | Uint8Array, ...r: unknown[]) => boolean)(chunk, ...rest);
  });
  return said;
}

/** A Kineto-like trace: kernels, CPU ops (the host lane), runtime calls, flows; `shift` moves every time. */
function trace(file: string, events: number, shift = 0): void {
  const ev: string[] = ['{"ph":"M","name":"process_name","pid":7,"tid":0,"args":{"name":"GPU 0"}}'];
  for (let i = 0; i < events; i++) {
    const ts = 1000 + shift + i * 3;
    switch (i % 4) {
      case 0: ev.push(`{"ph":"X","cat":"kernel","name":"k${i % 5}","pid":7,"tid":3,"ts":${ts},"dur":2,"args":{"device":0,"stream":3,"correlation":${i}}}`); break;
      case 1: ev.push(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":2,"ts":${ts}.5,"dur":4,"args":{"External id":${i},"Input Dims":[[8,8],[8,8]]}}`); break;
      case 2: ev.push(`{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":2,"ts":${ts},"dur":1,"args":{"correlation":${i - 2}}}`); break;
      default: ev.push(`{"ph":"f","id":${i},"cat":"ac2g","name":"ac2g","pid":7,"tid":3,"ts":${ts},"bp":"e"}`);
    }
  }
  writeFileSync(file, `{"traceEvents":[\n${ev.join(',\n')}\n],"baseTimeNanoseconds":1700000000000000000}\n`);
}

/** A generated trace of `events` events, streamed and natively scanned (the early scan's case); this process's scan folders before. */
function streamedTrace(name: string, events: number): { file: string; before: string[] } {
  vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
  vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
  const file = join(tmp(), name);
  trace(file, events);
  return { file, before: scanDirs() };
}

/** Every table's rows (in a fixed order) and the stored order of host_events and dispatches. */
async function dump(file: string): Promise<string> {
  const store = await Store.open(':memory:');
  try {
    await importInput(store, file);
    const out: unknown[] = [];
    for (const t of ['captures', 'devices', 'dispatches', 'host_events', 'raw_records', 'diagnostics', 'conditions']) {
      out.push(await store.rows(`SELECT * EXCLUDE (${t === 'captures' ? 'imported_at' : 'capture_id'}) FROM ${t} ORDER BY ALL`));
    }
    out.push(await store.rows('SELECT line FROM host_events ORDER BY rowid'), await store.rows('SELECT line FROM dispatches ORDER BY rowid'));
    return JSON.stringify(out, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  } finally {
    await store.close();
  }
}

/** This process's Chrome scan folders. */
const scanDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`tickwise-chrome-${process.pid}-`));

/** Waits until the early scan of `file` has written its last output (the run is then wholly ahead of its reader). */
async function scanned(file: string): Promise<void> {
  const dir = earlyScanDir(file)!;
  for (let i = 0; i < 600 && !existsSync(join(dir, 'captured')); i++) await new Promise((r) => setTimeout(r, 50));
  expect(existsSync(join(dir, 'captured'))).toBe(true);
}

describe('a scan started early', () => {
  it('the scanner is built (scripts/setup builds native/jsonscan)', () => {
    expect(BIN).not.toBeNull();
  });

  it('is taken over by the reader: the same store as a scan the reader starts, nothing left behind', { timeout: 120_000 }, async () => {
    const { file, before } = streamedTrace('early.json', 60_000);
    const reference = await dump(file);
    expect(JSON.parse(reference)[2].length).toBe(15_000); // the kernels
    const said = heard();

    // started and finished before the reader asks (every line waits), and started just before it asks
    await startImportEarly([file], new Map());
    expect(earlyScanDir(file)).toBeDefined();
    await scanned(file);
    expect(await dump(file)).toBe(reference);
    expect(earlyScanDir(file)).toBeUndefined();
    await startImportEarly([file], new Map(), { format: 'chrome-trace' });
    const dir = earlyScanDir(file)!;
    expect(await dump(file)).toBe(reference);
    expect(existsSync(dir)).toBe(false); // the reader's folder, removed with it
    expect(scanDirs()).toEqual(before);
    expect(said).toEqual(['tw-jsonscan: the early scan taken over', 'tw-jsonscan: the early scan taken over']);
  });

  it('of another plan or another version of the file is stopped, and the reader scans afresh', { timeout: 120_000 }, async () => {
    const { file, before } = streamedTrace('changed.json', 20_000);
    const reference = await dump(file);
    const said = heard();
    // another time unit: another conversion in the plan
    await startImportEarly([file], new Map(), { traceTimeUnit: 'ns' });
    expect(earlyScanDir(file)).toBeDefined();
    expect(await dump(file)).toBe(reference);
    // the file rewritten after the early start: the reader reads what is there now
    await startImportEarly([file], new Map());
    await scanned(file);
    trace(file, 20_000, 7);
    const moved = await dump(file);
    expect(moved).not.toBe(reference);
    vi.stubEnv('TICKWISE_SCAN_EARLY', '0');
    await startImportEarly([file], new Map());
    expect(earlyScanDir(file)).toBeUndefined(); // (turned off: nothing starts)
    expect(await dump(file)).toBe(moved);
    expect(scanDirs()).toEqual(before);
    expect(said).toEqual(['tw-jsonscan: the early scan stopped (another plan, or the file changed)',
      'tw-jsonscan: the early scan stopped (another plan, or the file changed)']);
  });

  it('of a rocprofv3 JSON is taken over by its reader: the same store as a scan the reader starts', { timeout: 120_000 }, async () => {
    vi.stubEnv('TICKWISE_JSONSCAN', BIN!);
    const file = join(tmp(), 'results.json');
    const kd = Array.from({ length: 5000 }, (_, i) => `{"correlation_id":{"internal":${i + 1},"external":0},"start_timestamp":${1e6 + i * 100},"end_timestamp":${1e6 + i * 100 + 40},`
      + `"dispatch_info":{"agent_id":{"handle":2},"queue_id":{"handle":3},"kernel_id":${1 + (i % 2)},"dispatch_id":${i + 1},"workgroup_size":{"x":64,"y":1,"z":1},"grid_size":{"x":256,"y":1,"z":1}}}`);
    writeFileSync(file, `{"rocprofiler-sdk-tool":[{"metadata":{"pid":7},"agents":[{"id":{"handle":2},"type":2,"node_id":1,"logical_node_id":1,"name":"gfx942"}],`
      + `"kernel_symbols":[{"kernel_id":1,"kernel_name":"a"},{"kernel_id":2,"kernel_name":"b"}],"buffer_records":{"kernel_dispatch":[\n${kd.join(',\n')}\n]}}]}\n`);
    const reference = await dump(file);
    expect(JSON.parse(reference)[2].length).toBe(5000);
    const said = heard();
    await startImportEarly([file], new Map());
    expect(earlyScanDir(file)).toBeDefined();
    await scanned(file);
    expect(await dump(file)).toBe(reference);
    expect(said).toEqual(['tw-jsonscan: the early scan taken over']);
  });

  it('that no reader takes is stopped and its folder removed; one the native scanner would not read never starts', { timeout: 60_000 }, async () => {
    const { file, before } = streamedTrace('left.json', 20_000);
    await startImportEarly([file], new Map());
    const dir = earlyScanDir(file)!;
    expect(existsSync(dir)).toBe(true);
    await discardEarlyScans();
    expect(earlyScanDir(file)).toBeUndefined();
    expect(existsSync(dir)).toBe(false);
    expect(scanDirs()).toEqual(before);
    // not streamed (one part: staged whole), not a Chrome trace, stdin: nothing starts
    vi.stubEnv('TICKWISE_CHROME_STREAM', '0');
    await startImportEarly([file], new Map());
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    await startImportEarly([file], new Map(), { format: 'ireeperf-jsonl' });
    await startImportEarly(['-'], new Map());
    expect(earlyScanDir(file)).toBeUndefined();
    expect(scanDirs()).toEqual(before);
  });
});
