import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { tickwise, tmp } from './helpers';
import { fixture } from './trace-helpers';

/**
 * CLI diff tests: `tickwise kernels --json` on every reader's fixture must
 * print the committed kernel totals (the goldens the SQL diff tests check),
 * and `tickwise overlap` must put an iGPU and an NPU capture of one run on
 * one timeline.
 */

function rocpdDb(): string {
  const file = join(tmp('tickwise-rocpd-'), '4242_results.db');
  const db = new Database(file);
  db.exec(readFileSync(fixture('rocpd', 'schema3-inline.sql'), 'utf8'));
  db.close();
  return file;
}

/** `kernel,n,total_ns` rows of a golden, the valid ones. */
function goldenTotals(golden: string): string[] {
  return readFileSync(golden, 'utf8').trim().split('\n').slice(1)
    .map((l) => l.replace(/,[^,]*$/, '')) // drop the invalid count
    .filter((l) => !/,0,$/.test(l));
}

function cell(s: string): string {
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const CASES: [string, () => string, string, string[]][] = [
  ['rocprofv3 CSV', () => fixture('rocprofv3', 'kernel_trace.csv'), fixture('rocprofv3', 'kernel_trace.kernels.csv'), []],
  ['rocprofv3 JSON', () => fixture('rocprofv3', 'results.json'), fixture('rocprofv3', 'results.kernels.csv'), []],
  ['rocpd', rocpdDb, fixture('rocpd', 'schema3-inline.kernels.csv'), []],
  ['Chrome trace', () => fixture('chrome-trace', 'precision.json'), fixture('chrome-trace', 'precision.kernels.csv'), []],
  ['Kineto', () => fixture('chrome-trace', 'kineto.pt.trace.json'), fixture('chrome-trace', 'kineto.kernels.csv'), []],
  ['HeteroMosaic', () => fixture('heteromosaic', 'prefill_split.jsonl'), fixture('heteromosaic', 'prefill_split.kernels.csv'), []],
  ['hrx DeviceProfile', () => fixture('hrx', 'npu_profile.json'), fixture('hrx', 'npu_profile.kernels.csv'), []],
];

describe('tickwise kernels on each trace format (diff against the goldens)', () => {
  for (const [name, input, golden, args] of CASES) {
    it(name, () => {
      const r = tickwise(['kernels', input(), '--json', ...args]);
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
      const out = JSON.parse(r.stdout) as { kernels: { kernel: string; count: number; total_ns: number | string }[] };
      const rows = out.kernels
        .map((k) => `${cell(k.kernel)},${k.count},${k.total_ns}`)
        .sort((a, b) => (a.replace(/^"/, '') < b.replace(/^"/, '') ? -1 : 1));
      expect(rows).toEqual(goldenTotals(golden));
    });
  }
});

describe('tickwise overlap: an iGPU and an NPU capture of one run', () => {
  const gpu = fixture('rocprofv3', 'kernel_trace.csv');
  const npu = fixture('chrome-trace', 'npu_same_run.json');

  it('imported together with the clock relations, both devices are on host_monotonic and overlap 3.35 ms', () => {
    const db = join(tmp(), 'run.duckdb');
    const imp = tickwise(['import', gpu, npu, '--db', db, '--boottime-offset', '5000000000ns', '--trace-clock', 'monotonic']);
    expect(imp.status).toBe(0);
    const r = tickwise(['overlap', db, '--json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { device_pairs: { a: { kind: string }; b: { kind: string }; overlap_ns: number; clock_domain: string }[] };
    expect(out.device_pairs).toHaveLength(1);
    expect(out.device_pairs[0]).toMatchObject({ a: { kind: 'gpu' }, b: { kind: 'npu' }, overlap_ns: 3_350_000, clock_domain: 'host_monotonic' });
  });

  it('without the boottime offset the analysis is refused (exit 2), never guessed', () => {
    const r = tickwise(['overlap', gpu, npu, '--trace-clock', 'monotonic']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: cross-device overlap needs one common host timeline/);
  });

  it('a HeteroMosaic trace holds both engines of a split prefill on one steady clock', () => {
    const r = tickwise(['overlap', fixture('heteromosaic', 'prefill_split.jsonl'), '--json']);
    expect(r.status).toBe(0);
    const out = JSON.parse(r.stdout) as { device_pairs: { a: { kind: string }; b: { kind: string }; overlap_ns: number }[] };
    // npu_gemm_qkv [123500, 698250] inside gpu_gemm_qkv [123000, 723001]: 574750 ns;
    // npu_gemm_ffn_up [926125, 2026125] inside gpu_gemm_ffn_up [926000, 2126500]: 1100000 ns
    expect(out.device_pairs).toEqual([expect.objectContaining({ a: expect.objectContaining({ kind: 'gpu' }), b: expect.objectContaining({ kind: 'npu' }), overlap_ns: 1_674_750 })]);
  });
});
