import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { ROOT, tmp } from './helpers';

/**
 * The Chrome reader's host spans land in file order, the same from one
 * import to the next. A trace of several parts has its host spans written
 * while the scan runs (X spans whose category makes them host spans): those
 * come first, in file order, then the others (copies, sync markers, spans
 * that needed the whole trace), in file order. DuckDB's LEFT JOIN emits a chunk's unmatched rows
 * after its matched ones, so a span whose process had no metadata row, or
 * no device row, once came out late within its chunk (90 of 332k host spans
 * of a 174 MB Kineto trace, a different order each import): the trace here
 * interleaves copies of a GPU process (which has a device and a name) with
 * CPU ops of a process the trace never names, in chunks of both.
 */
function trace(): string {
  const ev: string[] = ['{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"GPU 0"}}'];
  for (let i = 0; i < 12_000; i++) {
    const ts = 1_000_000 + i * 10;
    if (i % 3 === 0) ev.push(`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":1,"tid":7,"ts":${ts},"dur":4,"args":{"device":0,"stream":7}}`);
    else if (i % 3 === 1) ev.push(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":2,"tid":${20 + (i % 4)},"ts":${ts},"dur":3,"args":{"n":${i}}}`);
    else ev.push(`{"ph":"X","cat":"kernel","name":"gemm","pid":1,"tid":7,"ts":${ts},"dur":5,"args":{"device":0,"stream":7,"correlation":${i}}}`);
  }
  return `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`;
}

/** An import's host events in stored (rowid) order: their lines and kinds. */
async function stored(file: string): Promise<{ lines: number[]; kinds: string[]; dispatches: number }> {
  const store = await Store.open(':memory:');
  try {
    await importInput(store, file);
    const rows = await store.query({ line: 'number', kind: 'string' }, `SELECT line::BIGINT AS line, kind FROM host_events ORDER BY rowid`);
    return { lines: rows.map((r) => r.line), kinds: rows.map((r) => r.kind), dispatches: await store.count('dispatches') };
  } finally {
    await store.close();
  }
}

/**
 * Rows stored after a row of a later line (instants and counters are inserted after the spans: left out), but
 * `runs` - 1 of them: where the spans written while scanning give way to the others.
 */
function late(s: { lines: number[]; kinds: string[] }, runs = 1): number {
  const spans = s.lines.filter((_, i) => s.kinds[i] !== 'instant' && s.kinds[i] !== 'counter');
  return Math.max(0, spans.filter((l, i) => i > 0 && l < spans[i - 1]!).length - (runs - 1));
}

const REAL = ['hta_trace_diff_control.json.gz', 'tracelens_mi300_owlv2.json.gz'].map((f) => join(ROOT, '../shared/fixtures/external/chrome-trace', f));
if (!REAL.every((f) => existsSync(f))) console.warn('chrome-order: real-trace case skipped: ../shared/fixtures/external is absent');

describe('Chrome trace: host spans in file order', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('every host span in rowid order has a larger line than the one before; two imports store the same order', async () => {
    const file = join(tmp(), 'mixed.json');
    writeFileSync(file, trace());
    const [a, b] = [await stored(file), await stored(file)];
    expect(a.kinds.filter((k) => k === 'gpu_memcpy')).toHaveLength(4000); // a copy's kind is its category
    expect(a.lines).toHaveLength(8000);
    expect(a.dispatches).toBe(4000);
    expect(late(a), 'host spans stored out of file order').toBe(0);
    expect(b.lines).toEqual(a.lines);
    // written as the scan goes (a trace of one part is not, unless told): the CPU ops first, then the copies, each in file order
    vi.stubEnv('TICKWISE_CHROME_STREAM', '1');
    const [c, d] = [await stored(file), await stored(file)];
    expect(c.kinds.slice(0, 4000).every((k) => k === 'slice') && c.kinds.slice(4000).every((k) => k === 'gpu_memcpy')).toBe(true);
    expect(late(c, 2), 'host spans stored out of file order in either run').toBe(0);
    expect(d.lines).toEqual(c.lines);
    expect([...c.lines].sort((x, y) => x - y)).toEqual(a.lines);
  });

  it.skipIf(!REAL.every((f) => existsSync(f)))('real Kineto traces: the same, two imports each', async () => {
    for (const file of REAL) {
      const [a, b] = [await stored(file), await stored(file)];
      expect(a.lines.length, file).toBeGreaterThan(1000);
      expect(late(a, 2), file).toBe(0); // a trace of several parts: two runs, each in file order
      expect(b.lines, file).toEqual(a.lines);
    }
  }, 120_000);
});
