import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TickwiseError, decimalToNs } from '@tickwise/time';
import { openSource, scanJsonRecords, type RecordSpec, type ScanOptions } from '../src/index';
import { tmp } from './helpers';
import { fixture } from './trace-helpers';

async function scan(file: string, specs: (dir: string) => RecordSpec[], opts: Partial<ScanOptions> = {}) {
  const dir = tmp('tickwise-scan-');
  const records = specs(dir);
  const src = await openSource(file);
  const result = await scanJsonRecords(src, { mode: 'document', records, ...opts });
  const outs = records.map((r) => readFileSync(r.out, 'utf8'));
  return { result, outs };
}

const chromeSpec = (dir: string): RecordSpec[] => [{
  paths: [['[]'], ['traceEvents', '[]']],
  out: join(dir, 'ev.ndjson'),
  exactKeys: ['ts', 'dur'],
  convert: (_k, t) => decimalToNs(t, 1000n)?.toString() ?? null,
}];

describe('scanJsonRecords: records out of any JSON document, streamed', () => {
  it('gives the same NDJSON whatever the read size (every chunk boundary is crossed)', async () => {
    for (const file of [fixture('chrome-trace', 'precision.json'), fixture('chrome-trace', 'kineto.pt.trace.json')]) {
      const whole = await scan(file, chromeSpec, { capture: [['displayTimeUnit'], ['baseTimeNanoseconds'], ['deviceProperties']] });
      for (const chunkBytes of [1, 2, 3, 5, 7, 13, 64]) {
        const part = await scan(file, chromeSpec, { chunkBytes, capture: [['displayTimeUnit'], ['baseTimeNanoseconds'], ['deviceProperties']] });
        expect(part.outs).toEqual(whole.outs);
        expect([...part.result.captured]).toEqual([...whole.result.captured]);
        expect([...part.result.lines[0]!]).toEqual([...whole.result.lines[0]!]);
      }
    }
  });

  it('writes parts of partBytes or more, the first from a quarter of that (the loader starts on it soon), each ending at a record\'s end', async () => {
    const file = fixture('chrome-trace', 'kineto.pt.trace.json');
    const whole = await scan(file, chromeSpec);
    for (const chunkBytes of [1, 16, 64]) {
      const dir = tmp('tickwise-scan-');
      const parts: { path: string; startByte: number; records: number }[] = [];
      const src = await openSource(file);
      await scanJsonRecords(src, { mode: 'document', chunkBytes, records: chromeSpec(dir).map((r) => ({ ...r, partBytes: 800, onPart: (p) => parts.push(p) })) });
      const sizes = parts.map((p) => Buffer.byteLength(readFileSync(p.path, 'utf8')));
      expect(parts.length).toBeGreaterThanOrEqual(4);
      // the first: 200 bytes (a quarter of 800) and what the read that reached them wrote; then 800 and more, the last any size
      expect(sizes[0]).toBeGreaterThanOrEqual(200);
      expect(sizes[0]).toBeLessThan(800);
      for (const s of sizes.slice(1, -1)) expect(s).toBeGreaterThanOrEqual(800);
      expect(parts.map((p) => readFileSync(p.path, 'utf8')).join('')).toBe(whole.outs[0]);
      for (const p of parts) if (p.records > 0) expect(readFileSync(p.path, 'utf8').endsWith('\n')).toBe(true);
    }
  });

  it('writes one line per record with its source line and array position, and the exact ns of ts/dur', async () => {
    const { result, outs } = await scan(fixture('chrome-trace', 'precision.json'), chromeSpec);
    const lines = outs[0]!.trim().split('\n').map((l) => JSON.parse(l));
    expect(result.counts).toEqual([22]);
    const precise = lines.find((l) => l.name === 'k_precise');
    // 1700000000123.0004 us is 1700000000123000.4 ns: 1700000000123000 ns. A double says ...123000.5 and rounds to ...001.
    expect(precise).toMatchObject({ _line: 5, _i: [3], _ts: '1700000000123000', _ts_text: '1700000000123.0004', _dur: '10001', _dur_text: '10.0014' });
    expect(Math.round(Number('1700000000123.0004') * 1000)).toBe(1700000000123001);
    expect(lines.find((l) => l.name === 'k_string_ts')).toMatchObject({ _ts: '1700000000124500', _ts_text: '1700000000124.5', _dur: '2250' });
    expect(lines.find((l) => l.name === 'k_beyond_2^53')._ts).toBe('9007199254740993123');
    // the array has no closing ] and a trailing comma: allowed, and said
    expect(result.issues.map((i) => i.code)).toEqual(['unterminated-array']);
  });

  it('flattens a pretty-printed record to one line and keeps nested objects intact', async () => {
    const { outs } = await scan(fixture('chrome-trace', 'kineto.pt.trace.json'), chromeSpec, { capture: [['deviceProperties'], ['baseTimeNanoseconds']] });
    const rows = outs[0]!.trim().split('\n');
    expect(rows).toHaveLength(16);
    const kernel = JSON.parse(rows[3]!);
    expect(kernel).toMatchObject({ _line: 33, cat: 'kernel', args: { grid: [64, 32, 1], correlation: 1001 }, _dur: '833334' });
  });

  it('captures small metadata values by concrete path and pulls records from nested paths', async () => {
    const dir = tmp('tickwise-scan-');
    const src = await openSource(fixture('rocprofv3', 'results.json'));
    const r = await scanJsonRecords(src, {
      mode: 'document',
      records: [{ paths: [['rocprofiler-sdk-tool', '[]', 'buffer_records', 'kernel_dispatch', '[]']], out: join(dir, 'kd.ndjson') }],
      capture: [['rocprofiler-sdk-tool', '[]', 'metadata']],
    });
    expect(r.counts).toEqual([4]);
    expect(JSON.parse(r.captured.get('rocprofiler-sdk-tool/0/metadata')!)).toMatchObject({ pid: 4242 });
    const last = readFileSync(join(dir, 'kd.ndjson'), 'utf8').trim().split('\n').at(-1)!;
    // u64 text is copied, never parsed: the reader (DuckDB) sees 18446744073709551615 exactly
    expect(last).toContain('"end_timestamp": 18446744073709551615');
    expect(JSON.parse(last.replace(/: (\d{16,})/g, ': "$1"'))._i).toEqual([0, 3]);
  });

  it('reads JSON lines: blank lines skipped, a cut-off last line dropped with a warning', async () => {
    const dir = tmp('tickwise-scan-');
    const file = join(dir, 'x.jsonl');
    writeFileSync(file, '{"a": 1.5}\n\n{"a": 2}\n{"a": 3, "b": [1, {"c"');
    const src = await openSource(file);
    const r = await scanJsonRecords(src, { mode: 'lines', records: [{ paths: [[]], out: join(dir, 'o.ndjson'), exactKeys: ['a'], convert: (_k, t) => t }] });
    expect(r.counts).toEqual([2]);
    expect([...r.lines[0]!]).toEqual([1, 3]);
    expect(r.issues).toEqual([expect.objectContaining({ code: 'truncated-record', line: 4 })]);
    expect(readFileSync(join(dir, 'o.ndjson'), 'utf8')).toBe('{"_line":1,"_i":[0],"a": 1.5,"_a":"1.5","_a_text":"1.5"}\n{"_line":3,"_i":[1],"a": 2,"_a":"2","_a_text":"2"}\n');
  });

  it('reads gzip input as it is', async () => {
    const dir = tmp('tickwise-scan-');
    const gz = join(dir, 'p.json.gz');
    writeFileSync(gz, gzipSync(readFileSync(fixture('chrome-trace', 'precision.json'))));
    const plain = await scan(fixture('chrome-trace', 'precision.json'), chromeSpec);
    const zipped = await scan(gz, chromeSpec, { chunkBytes: 16 });
    expect(zipped.outs).toEqual(plain.outs);
  });

  it('stops with file and line on a document that is not JSON, or broken outside a record', async () => {
    const dir = tmp('tickwise-scan-');
    const cases: [string, number, RegExp][] = [
      ['hello', 1, /not a JSON document/],
      ['{"traceEvents": [\n{"ph": "X"}\n], "x": 1 2}', 3, /malformed JSON/],
      ['{"traceEvents": [\n{"ph": "X"}\n]}\n{"again": 1}', 4, /data after the end/],
      ['{"traceEvents": [\n{"ph": "X"}\n], "meta": {"a": ', 3, /ends early/],
    ];
    for (const [text, line, message] of cases) {
      const file = join(dir, 'bad.json');
      writeFileSync(file, text);
      const err = await scan(file, chromeSpec).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TickwiseError);
      expect((err as TickwiseError).line).toBe(line);
      expect((err as TickwiseError).message).toMatch(message);
    }
  });
});
