import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { detectFormat, openSource } from '../src/index';
import { tmp } from './helpers';
import { fixture } from './trace-helpers';

/** Every trace fixture is recognised by content (the name plays no part), plain and gzip. */
describe('format detection of the trace readers', () => {
  const cases: [string, string][] = [
    [fixture('rocprofv3', 'kernel_trace.csv'), 'rocprofv3-csv'],
    [fixture('rocprofv3', 'kernel_trace_rocm62.csv'), 'rocprofv3-csv'],
    [fixture('rocprofv3', 'results.json'), 'rocprofv3-json'],
    [fixture('chrome-trace', 'precision.json'), 'chrome-trace'],
    [fixture('chrome-trace', 'kineto.pt.trace.json'), 'chrome-trace'],
    [fixture('chrome-trace', 'npu_same_run.json'), 'chrome-trace'],
    [fixture('heteromosaic', 'prefill_split.jsonl'), 'heteromosaic-jsonl'],
    [fixture('hrx', 'npu_profile.json'), 'hrx-device-profile'],
    [fixture('hrx', 'two_devices.json'), 'hrx-device-profile'],
  ];

  it('each fixture, renamed to a neutral name, plain and gzip', async () => {
    const dir = tmp();
    for (const [file, format] of cases) {
      const plain = join(dir, 'input');
      writeFileSync(plain, readFileSync(file));
      expect([file, await detectFormat(await openSource(plain))]).toEqual([file, format]);
      const gz = join(dir, 'input.gz');
      writeFileSync(gz, gzipSync(readFileSync(file)));
      expect([file, await detectFormat(await openSource(gz))]).toEqual([file, format]);
    }
  });

  it('a pretty-printed Chrome event array (no traceEvents wrapper)', async () => {
    const file = join(tmp(), 'trace');
    writeFileSync(file, '[\n  {\n    "name": "k",\n    "ph": "X",\n    "ts": 1,\n    "dur": 2\n  }\n]\n');
    expect(await detectFormat(await openSource(file))).toBe('chrome-trace');
  });

  it('a rocpd SQLite database', async () => {
    const file = join(tmp(), 'results');
    const db = new Database(file);
    db.exec(readFileSync(fixture('rocpd', 'schema4-spine.sql'), 'utf8'));
    db.close();
    expect(await detectFormat(await openSource(file))).toBe('rocpd');
  });
});
