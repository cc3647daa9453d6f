/**
 * Machine output's JSON types follow the column type, never the value
 * (issue 14.3): every integer is a JSON number with all its exact digits,
 * below 2^53 and above it (a Kineto trace on the wall clock has start_ns near
 * 1.7e18, a boot-relative one near 1e12: both print as numbers), as DuckDB
 * itself prints them. Run as a user runs the CLI.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const KINETO = resolve(ROOT, '../shared/fixtures/external/chrome-trace/hta_cuda_event_sync_multi_stream.json.gz');
const SAMPLE = join(ROOT, 'captures/sample/npu-tiles.ireeperf.jsonl');

function tickwise(args: string[]) {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles' } });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('--json: one JSON type per column type, integers exact', () => {
  it('sql --format json: BIGINT below and above 2^53 and HUGEINT are numbers with every digit; DOUBLE its shortest text', () => {
    const text = tickwise(['sql', SAMPLE, 'select 9007199254740993::BIGINT as big, 5::BIGINT as small, 170000000000000000001::HUGEINT as huge, 0.1::DOUBLE as d', '--format', 'json']);
    expect(text).toMatch(/"big": 9007199254740993,/);
    expect(text).toMatch(/"small": 5,/);
    expect(text).toMatch(/"huge": 170000000000000000001,/);
    expect(text).toMatch(/"d": 0\.1\n/);
  });

  it.skipIf(!existsSync(KINETO))('a wall-clock Kineto trace: segments --json prints start_ns/end_ns as numbers, equal to the CSV digits', () => {
    const csv = tickwise(['sql', KINETO, 'select min(start_ns) as a, max(end_ns) as b from dispatches', '--format', 'csv']).trim().split('\n')[1]!.split(',');
    expect(BigInt(csv[0]!)).toBeGreaterThan(2n ** 53n);
    const json = tickwise(['segments', KINETO, '--json']);
    expect(json).toContain(`"start_ns": ${csv[0]},`);
    expect(json).toContain(`"end_ns": ${csv[1]},`);
    expect(json).not.toMatch(/"(start|end|span|busy)_ns": "/);
  });

  it('a boot-relative capture: the same keys are numbers too', () => {
    const json = tickwise(['segments', SAMPLE, '--json']);
    expect(json).toMatch(/"start_ns": \d+,/);
    expect(json).not.toMatch(/"(start|end|span|busy)_ns": "/);
  });
});
