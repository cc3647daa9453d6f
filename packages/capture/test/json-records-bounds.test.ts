/**
 * The JSON record scanner under hostile input (issue 17): malformed JSON that
 * the old scanner let through is refused with file:line, a record beyond the
 * size limit stops the scan with its line, bytes that are not JSON stop it
 * at once.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { DEFAULT_MAX_RECORD_BYTES, importInput, maxRecordBytesOf, openSource, scanJsonRecords } from '../src/index';
import { MAX_DOCUMENT_DEPTH } from '../src/json-records';
import { tickwise, tmp } from './helpers';
import { fixture } from './trace-helpers';

async function importError(file: string): Promise<TickwiseError> {
  const store = await Store.open(':memory:');
  try {
    const r = await importInput(store, file).catch((e: unknown) => e);
    if (!(r instanceof TickwiseError)) throw new Error(`expected a TickwiseError, got ${JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
    return r;
  } finally {
    await store.close();
  }
}

/** The rocprofv3 fixture with one line replaced (1-based). */
function rocprofWith(dir: string, edits: Record<number, (line: string) => string>): string {
  const lines = readFileSync(fixture('rocprofv3', 'results.json'), 'utf8').split('\n');
  for (const [n, f] of Object.entries(edits)) {
    const before = lines[Number(n) - 1]!;
    lines[Number(n) - 1] = f(before);
    expect(lines[Number(n) - 1], `edit of line ${n}`).not.toBe(before);
  }
  const file = join(dir, 'results.json');
  writeFileSync(file, lines.join('\n'));
  expect(() => JSON.parse(lines.join('\n'))).toThrow(SyntaxError);
  return file;
}

describe('malformed rocprofv3 JSON is refused with file:line (issue 17.3)', () => {
  it('brackets balanced in the wrong places: } and ] swapped between two records', async () => {
    const dir = tmp();
    // line 86 closes the first dispatch's grid_size, dispatch_info and record ("}}},"); line 105 closes the kernel_dispatch array
    const file = rocprofWith(dir, { 86: (l) => l.replace('"z": 1}}},', '"z": 1}]},'), 105: (l) => l.replace(']', '}') });
    const err = await importError(file);
    expect(err.line).toBe(86);
    expect(err.message).toMatch(/malformed JSON/);
  });

  it('"key": value inside an array', async () => {
    const dir = tmp();
    const file = rocprofWith(dir, { 107: (l) => l.replace('{"size": 56', '"stray": 1, {"size": 56') });
    const err = await importError(file);
    expect(err.line).toBe(107);
    expect(err.message).toMatch(/malformed JSON: unexpected ":" where "," or "\]" was expected in an array/);
  });

  it('CLI: exit 2 with file:line, no stack trace', () => {
    const dir = tmp();
    const file = rocprofWith(dir, { 86: (l) => l.replace('"z": 1}}},', '"z": 1}]},'), 105: (l) => l.replace(']', '}') });
    const r = tickwise(['import', file, '--db', join(dir, 'x.duckdb')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/tickwise: .*results\.json:86: .*malformed JSON/);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
  });
});

describe('bounded memory: the record size limit', () => {
  it('a record beyond the limit stops the scan with the line it starts on', async () => {
    const dir = tmp();
    const file = join(dir, 'big.json');
    const big = `{"ph": "X", "ts": 1, "dur": 2, "name": "${'x'.repeat(50_000)}"}`;
    writeFileSync(file, `{"traceEvents": [\n{"ph": "X", "ts": 1, "dur": 2},\n${big}\n]}\n`);
    const src = await openSource(file);
    const scan = (maxRecordBytes: number) =>
      scanJsonRecords(src, { mode: 'document', records: [{ paths: [['traceEvents', '[]']], out: join(dir, 'o.ndjson') }], chunkBytes: 1024, maxRecordBytes });
    const err = await scan(10_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).line).toBe(3);
    expect((err as TickwiseError).message).toMatch(/beyond the limit of 10000 bytes/);
    // under a limit that fits it, the same file reads
    expect((await scan(100_000)).counts).toEqual([2]);
  });

  it('one long line of no JSON (a 1 MiB single-line value) stops at the limit, not at the end of the input', async () => {
    const dir = tmp();
    const file = join(dir, 'line.json');
    writeFileSync(file, `{"traceEvents": [], "otherData": "${'y'.repeat(1 << 20)}`);
    const src = await openSource(file);
    const err = await scanJsonRecords(src, { mode: 'document', records: [{ paths: [['traceEvents', '[]']], out: join(dir, 'o.ndjson') }], chunkBytes: 4096, maxRecordBytes: 64 << 10 })
      .catch((e: unknown) => e);
    expect((err as TickwiseError).message).toMatch(/beyond the limit of 65536 bytes/);
    expect((err as TickwiseError).line).toBe(1);
  });

  it('zero bytes (what /dev/zero gives) stop at the first byte', async () => {
    const dir = tmp();
    const file = join(dir, 'zero.json');
    writeFileSync(file, Buffer.alloc(8 << 20));
    const err = await importError(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).line).toBe(1);
  });

  it('nesting outside the records deeper than MAX_DOCUMENT_DEPTH stops at the level that goes beyond (memory stays bounded); at the limit it is read', async () => {
    const dir = tmp();
    const deep = (levels: number) => `{"traceEvents":[{"ph":"i","name":"a","ts":1}],"x":\n${'['.repeat(levels - 1)}${']'.repeat(levels - 1)}}`;
    const file = join(dir, 'deep.json');
    const specs = { mode: 'document' as const, records: [{ paths: [['traceEvents', '[]']], out: join(dir, 'ev.ndjson') }] };
    // the root object is level 1, "x" opens level 2 and so on
    writeFileSync(file, deep(MAX_DOCUMENT_DEPTH));
    expect((await scanJsonRecords(await openSource(file), specs)).counts).toEqual([1]);
    writeFileSync(file, deep(MAX_DOCUMENT_DEPTH + 1));
    const err = await scanJsonRecords(await openSource(file), specs).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).message).toMatch(/nested more than 10000 deep outside the records/);
    expect((err as TickwiseError).line).toBe(2);
    // 5 million levels: one error in bounded memory (each level was a frame held until the end)
    writeFileSync(file, `{"traceEvents":[${'['.repeat(5_000_000)}`);
    const big = await importError(file);
    expect(big.message).toMatch(/nested more than 10000 deep/);
  });

  it('exponents of any size: a 100-byte file with "ts": 1e999999999, and 2000 events of 1e999999, import with their times unusable, never a billion-digit number', async () => {
    const dir = tmp();
    const ev = (ts: string) => `{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":1,"ts":${ts},"dur":2}`;
    for (const [name, events] of [['one.json', [ev('1e999999999')]], ['many.json', Array.from({ length: 2000 }, () => ev('1e999999'))]] as const) {
      const file = join(dir, name);
      writeFileSync(file, `{"traceEvents":[\n${events.join(',\n')}]}`);
      // before: "Maximum BigInt size exceeded" (one event), DuckDB out of memory on 2 GB of digits (2000)
      const store = await Store.open(':memory:');
      try {
        const r = await importInput(store, file);
        expect(r.dispatches).toBe(events.length);
        expect(await store.rows(`SELECT count(*)::INTEGER AS n, count(start_ns)::INTEGER AS timed FROM dispatches WHERE valid`)).toEqual([{ n: 0, timed: 0 }]);
        expect(await store.rows(`SELECT code, line FROM diagnostics WHERE code = 'missing-timestamp'`)).toEqual([{ code: 'missing-timestamp', line: 2n }]);
      } finally {
        await store.close();
      }
    }
  });

  it('the limit: 64 MiB, or TICKWISE_MAX_RECORD_BYTES with or without a unit; nonsense refused', () => {
    expect(DEFAULT_MAX_RECORD_BYTES).toBe(64 * 1024 * 1024);
    expect(maxRecordBytesOf({}, {})).toBe(DEFAULT_MAX_RECORD_BYTES);
    expect(maxRecordBytesOf({}, { TICKWISE_MAX_RECORD_BYTES: '1000' })).toBe(1000);
    expect(maxRecordBytesOf({}, { TICKWISE_MAX_RECORD_BYTES: '256MiB' })).toBe(256 << 20);
    expect(maxRecordBytesOf({}, { TICKWISE_MAX_RECORD_BYTES: '1 GiB' })).toBe(1 << 30);
    expect(maxRecordBytesOf({ maxRecordBytes: 5 }, { TICKWISE_MAX_RECORD_BYTES: '1000' })).toBe(5);
    expect(() => maxRecordBytesOf({}, { TICKWISE_MAX_RECORD_BYTES: 'lots' })).toThrow(/TICKWISE_MAX_RECORD_BYTES/);
  });
});

describe('captured metadata beyond the capture limit', () => {
  it('is skipped with a warning (a string or a container), and the records are still read', async () => {
    const dir = tmp();
    const file = join(dir, 'meta.json');
    writeFileSync(file, `{"traceName": "${'n'.repeat(5000)}", "deviceProperties": [${'{"id": 0}, '.repeat(500)}{"id": 1}],\n"displayTimeUnit": "ms", "traceEvents": [{"ph": "X", "ts": 1, "dur": 2}]}`);
    const r = await scanJsonRecords(await openSource(file), {
      mode: 'document', records: [{ paths: [['traceEvents', '[]']], out: join(dir, 'o.ndjson') }],
      capture: [['traceName'], ['deviceProperties'], ['displayTimeUnit']], captureLimit: 1000, chunkBytes: 256,
    });
    expect(r.counts).toEqual([1]);
    expect([...r.captured]).toEqual([['displayTimeUnit', '"ms"']]);
    expect(r.issues.map((i) => [i.code, i.message.split(' ')[2]])).toEqual([['value-too-large', 'traceName'], ['value-too-large', 'deviceProperties']]);
  });
});
