import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { CHECK_RULES, CheckCode, DEFAULT_THRESHOLDS, errorFindingsHeader, runChecks, runCheckSuite, type CheckCode as Code } from '../src/index';
import { ROOT, addProvenance, benchCsv, importSynth, synthCapture, tickwise, tmp } from './checks-helpers';

describe('checks: a clean capture triggers none', () => {
  it('declared = fitted rate, durations agree, 3 even passes, wall clock agrees, provenance recorded', async () => {
    const cap = synthCapture({ declared_hz: 100e6 });
    const dir = tmp();
    const bench = join(dir, 'bench.csv');
    writeFileSync(bench, benchCsv(cap.pass_span_ns[1]! * 1.02));
    const { store, db } = await importSynth([cap], ['--wall', bench]);
    try {
      await addProvenance(store, { capture_id: 1, role: 'executable', name: 'llama-bench', path: '/opt/llama/bin/llama-bench', how_found: 'given' });
      await addProvenance(store, { capture_id: 1, name: 'libggml-iree.so', path: '/opt/llama/lib/libggml-iree.so', build_id: 'aa11', how_found: 'runpath' });
      await addProvenance(store, { capture_id: 1, name: 'libc.so.6', path: '/lib/x86_64-linux-gnu/libc.so.6', build_id: 'cc33', how_found: 'cache', mtime_ns: 1_600_000_000_000_000_000n });
      expect(await store.count('wall_refs')).toBe(1);
      expect(await runChecks(store)).toEqual([]);
      expect(await errorFindingsHeader(store)).toBe('');
    } finally {
      await store.close();
    }
    const r = tickwise(['check', db]);
    const [first, ...rest] = r.stdout.trim().split('\n');
    expect(first).toBe('no findings: every check passed');
    // the wall reference agreed: its ratio is said (issue 18.9)
    expect(rest).toHaveLength(1);
    expect(rest[0]).toMatch(/^wall-clock-mismatch passed: capture 1 device 0: llama-bench \S+ avg .* is 1\.\d{4}x the capture's steady segment span .* \(agrees: within 0\.8x\.\.1\.25x\)$/);
    expect(r.status).toBe(0);
    const j = tickwise(['check', db, '--json']);
    const json = JSON.parse(j.stdout) as { findings: unknown[]; checks: { code: string; findings: number; worst: string | null }[] };
    expect(json.findings).toEqual([]);
    // every check that ran is listed, each with no finding (issue 18.9)
    expect(json.checks.map((c) => c.code)).toEqual(Object.keys(CHECK_RULES));
    expect(json.checks.every((c) => c.findings === 0 && c.worst === null)).toBe(true);
  });

  it('every code has a rule; every rule builds SQL DuckDB accepts (EXPLAIN)', async () => {
    expect(Object.keys(CHECK_RULES).sort()).toEqual(Object.keys(CheckCode).sort());
    const store = await Store.open(':memory:');
    try {
      for (const [code, rule] of Object.entries(CHECK_RULES)) {
        expect(rule.code).toBe(code as Code);
        if (!rule.sql) continue;
        for (const scope of [{ captureIds: null }, { captureIds: [1, 2] }, { captureIds: [] }]) {
          await store.run(`EXPLAIN ${rule.sql(scope)}`);
        }
      }
      expect(await runChecks(store)).toEqual([]);
    } finally {
      await store.close();
    }
    expect(DEFAULT_THRESHOLDS.tick_hz_warning_fraction).toBe(0.005);
  });
});

describe('checks: a verb\'s header runs only the rules that can raise an error', () => {
  it('finds every error the whole suite finds, the wall comparison (which needs segments) included', async () => {
    // errors: a 10x wall reference, durations written as ticks, a declared rate 10 % off; warnings: dropped records, a cold first pass
    const cap = synthCapture({ tick_hz: 110e6, declared_hz: 100e6, duration_ns_as_ticks: true, dropped_records: 5, first_pass_gap_ticks: 4000 });
    const dir = tmp();
    const bench = join(dir, 'bench.csv');
    writeFileSync(bench, benchCsv(cap.pass_span_ns[1]! * 10));
    const { store } = await importSynth([cap], ['--wall', bench]);
    try {
      const all = await runCheckSuite(store);
      const header = await runCheckSuite(store, { atLeast: 'error' });
      const errors = all.findings.filter((f) => f.severity === 'error');
      expect(new Set(errors.map((f) => f.code))).toEqual(new Set(['wall-clock-mismatch', 'duration-unit-mismatch', 'tick-frequency-mismatch']));
      expect(all.findings.filter((f) => f.severity === 'warning').map((f) => f.code)).toContain('dropped-records');
      expect(header.findings).toEqual(errors);
      expect(header.checks.map((c) => c.code)).toEqual((Object.keys(CHECK_RULES) as Code[]).filter((c) => CHECK_RULES[c].worst === 'error'));
      expect(header.checks.map((c) => c.code)).not.toContain('dropped-records');
    } finally {
      await store.close();
    }
  });
});

const SAMPLE = join(ROOT, 'captures/sample/igpu-prefill.ireeperf.jsonl');

describe('checks: the shipped sample capture', () => {
  it.skipIf(!existsSync(SAMPLE))('passes with only the notes it is built to show: declared 99.81 MHz vs fitted 100 MHz (info, 0.19 % < 0.5 %), a cold first pass, no provenance', () => {
    const r = tickwise(['check', SAMPLE, '--wall', join(ROOT, 'captures/sample/llama-bench.csv'), '--json']);
    expect(r.status).toBe(0);
    const { findings } = JSON.parse(r.stdout) as { findings: Record<string, unknown>[] };
    expect(findings.map((f) => [f['code'], f['severity']])).toEqual([
      ['tick-frequency-mismatch', 'info'],
      ['no-provenance', 'info'],
      ['cold-first-pass', 'info'],
    ]);
    const tf = findings[0]!;
    expect(tf['tick_hz_declared']).toBe(99_810_000);
    expect(tf['diff_ppm']).toBe(-1900);
    expect(Math.abs((tf['tick_hz_fitted'] as number) - 100e6)).toBeLessThan(10);
    const cold = findings[2]!;
    expect(cold['segments']).toBe(2);
    // truth: first prefill busy_fraction 0.940073, steady 0.983647
    expect(cold['first_idle_fraction']).toBeCloseTo(1 - 0.940073, 3);
    expect(cold['others_idle_fraction']).toBeCloseTo(1 - 0.983647, 3);
    const j = tickwise(['check', SAMPLE, '--wall', join(ROOT, 'captures/sample/llama-bench.json'), '--json']);
    expect(j.status).toBe(0);
    expect((JSON.parse(j.stdout) as { findings: unknown[] }).findings).toHaveLength(3);
  });
});
