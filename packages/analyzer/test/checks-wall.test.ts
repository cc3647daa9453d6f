import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runChecks, type WallReference } from '../src/index';
import { benchCsv, importSynth, synthCapture, tickwise, tmp } from './checks-helpers';

const ref = (avg_ns: number, test = 'pp512', n_prompt = 512): WallReference => ({ test, n_prompt, n_gen: 0, avg_ns: BigInt(Math.round(avg_ns)), source_path: 'bench.csv', line: 2 });

describe('wall-clock-mismatch', () => {
  const cap = synthCapture();
  const span = cap.pass_span_ns[1]!;

  it('trap 6: a wall reference 10x the span names the factor 10 (error)', async () => {
    const { store } = await importSynth([cap]);
    try {
      const fs = (await runChecks(store, { wallRefs: [ref(span * 10)] })).filter((f) => f.code === 'wall-clock-mismatch');
      expect(fs).toHaveLength(1);
      expect(fs[0]).toMatchObject({
        severity: 'error', capture_id: 1, device: 0, factor: '10x', wall_over_span_ratio: 10, span_ns: BigInt(span), wall_avg_ns: BigInt(span * 10),
        segments: 3, test: 'pp512', file: 'bench.csv', line: 2,
      });
      expect(fs[0]!.message).toContain('is 10.000x the capture');
      expect(fs[0]!.advice).toContain('a 10x factor is a unit error, not a result');
      // and the other way round: a span 10x the wall clock
      const [g] = (await runChecks(store, { wallRefs: [ref(span / 10)] })).filter((f) => f.code === 'wall-clock-mismatch');
      expect(g).toMatchObject({ severity: 'error', factor: '10x', wall_over_span_ratio: 0.1 });
    } finally {
      await store.close();
    }
  });

  it('1.5x: a warning with the ratio named; 1.1x: nothing; 3x: an error', async () => {
    const { store } = await importSynth([cap]);
    try {
      const wall = async (x: number) => (await runChecks(store, { wallRefs: [ref(span * x)] })).filter((f) => f.code === 'wall-clock-mismatch');
      expect(await wall(1.5)).toMatchObject([{ severity: 'warning', factor: '1.50x', wall_over_span_ratio: 1.5 }]);
      expect(await wall(1.1)).toEqual([]);
      expect(await wall(0.85)).toEqual([]);
      expect(await wall(3)).toMatchObject([{ severity: 'error', factor: '3.00x' }]);
    } finally {
      await store.close();
    }
  });

  it('several prefill references: compared with the closest, and said so; decode-only references: info', async () => {
    const { store } = await importSynth([cap]);
    try {
      const [f] = (await runChecks(store, { wallRefs: [ref(span * 10, 'pp2048', 2048), ref(span * 40, 'pp8192', 8192)] })).filter((x) => x.code === 'wall-clock-mismatch');
      expect(f).toMatchObject({ test: 'pp2048', factor: '10x' });
      expect(f!.message).toContain('several prefill references (pp2048, pp8192)');
      const [g] = (await runChecks(store, { wallRefs: [{ test: 'tg128', n_prompt: 0, n_gen: 128, avg_ns: 1_000_000_000n }] })).filter((x) => x.code === 'wall-clock-mismatch');
      expect(g).toMatchObject({ severity: 'info' });
    } finally {
      await store.close();
    }
  });

  it('stored with import --wall, and through tickwise check --wall: exit 1, --json findings carry the numbers', async () => {
    const dir = tmp();
    const bench = join(dir, 'bench.csv');
    writeFileSync(bench, benchCsv(span * 10));
    const { store, db } = await importSynth([cap], ['--wall', bench]);
    try {
      const [f] = (await runChecks(store)).filter((x) => x.code === 'wall-clock-mismatch');
      expect(f).toMatchObject({ severity: 'error', factor: '10x', file: bench, line: 2 });
    } finally {
      await store.close();
    }
    const capFile = join(dir, 'c.ireeperf.jsonl');
    writeFileSync(capFile, cap.text);
    const r = tickwise(['check', capFile, '--wall', bench, '--json']);
    expect(r.status).toBe(1);
    const { findings } = JSON.parse(r.stdout) as { findings: Record<string, unknown>[] };
    expect(findings.filter((x) => x['code'] === 'wall-clock-mismatch')).toMatchObject([
      { severity: 'error', factor: '10x', wall_over_span_ratio: 10, span_ns: span, wall_avg_ns: span * 10, capture_id: 1, device: 0 },
    ]);
    const h = tickwise(['check', db]);
    expect(h.status).toBe(1);
    expect(h.stdout).toMatch(/1\. error wall-clock-mismatch: capture 1 device 0: llama-bench pp512 avg .* is 10\.000x the capture's median steady segment/);
    expect(h.stdout).toContain('what to do: a 10x factor is a unit error, not a result');
  });
});
