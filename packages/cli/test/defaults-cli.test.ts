import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, json, tickwise } from './run-cli';

/**
 * Issue 18.8: defaults and spellings agree. `cost` defaults to steady where
 * the capture repeats (as ceiling, schedule and report), `--segment steady`
 * applies steady where it can, `check --capture`, and one `--sync-overhead
 * <duration>` for ceiling and report.
 */
const GPU = 'captures/sample/igpu-prefill.ireeperf.jsonl';
const NPU = 'captures/sample/npu-tiles.ireeperf.jsonl';
const TRUTH = JSON.parse(readFileSync(join(ROOT, 'captures/sample/igpu-prefill.truth.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'tickwise-defaults-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// the iGPU sample repeats (2 prefills), the NPU sample does not (one pass)
const DB = join(tmp, 'both.duckdb');
tickwise('import', GPU, '--db', DB);
tickwise('import', NPU, '--db', DB, '--device-kind', 'npu');

describe('one default segment: steady where the capture repeats, else all', () => {
  it('cost and ceiling give the same per-group cost for the same kernel, on the steady prefill', () => {
    const cost = json('cost', GPU, '--kernel', '*dispatch_6_matmul*', '--rows-per-dispatch', '512');
    const ceiling = json('ceiling', '--gpu', GPU, '--gpu-kernel', '*dispatch_6_matmul*', '--gpu-rows-per-dispatch', '512', '--npu-tile-ms', '6', '--rows', '8192');
    expect(cost.segment).toBe('steady');
    expect(cost.segment_from).toMatch(/default: steady where the capture repeats, else all/);
    expect(cost.group_ms).toBe(ceiling.gpu_group_ms);
    // the generator's steady segment: 112 dispatches of dispatch 6
    expect(cost.dispatch_count).toBe(TRUTH.kernels.find((k: { key: string }) => k.key === 'prefill_dispatch_6_matmul_512x8192x3072_f16').per_segment.find((p: { segment: number }) => p.segment === 1).count);
    const all = json('cost', GPU, '--kernel', '*dispatch_6_matmul*', '--rows-per-dispatch', '512', '--segment', 'all');
    expect(all.dispatch_count).toBe(2 * cost.dispatch_count);
    expect(all.segment_from).toBe('--segment');
  });

  it('cost on a capture with one pass uses all of it and says so', () => {
    const npu = json('cost', NPU, '--kernel', '*matmul*', '--rows-per-dispatch', '256');
    expect(npu.segment).toBe('all');
    expect(npu.segment_note).toMatch(/^capture 1 device 0: one segment \(no repetition found\), so all 40 dispatches were used/);
    const text = tickwise('cost', NPU, '--kernel', '*matmul*', '--rows-per-dispatch', '256');
    expect(text.stdout).toMatch(/segment all \(1 selected; the default: steady where the capture repeats, else all\)/);
    expect(text.stdout).toMatch(/note: capture 1 device 0: one segment/);
  });

  it('gaps --segment steady on a store where one capture has one pass: steady where it can, said in the output', () => {
    const r = tickwise('gaps', DB, '--segment', 'steady');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/segment steady \(all but the first segment\), except capture 2 \(npu-tiles\.ireeperf\.jsonl\) device 0: one segment \(no repetition found\), read whole/);
    const j = json('gaps', DB, '--segment', 'steady');
    const scope = (c: number) => j.scopes.find((s: { capture_id: number; queue: number | null }) => s.capture_id === c && s.queue === null);
    expect(scope(1).dispatches).toBe(TRUTH.segments[1].dispatches);
    expect(scope(2).dispatches).toBe(40);
    // where no selected device repeats, steady is still refused
    const npuOnly = tickwise('gaps', DB, '--capture', '2', '--segment', 'steady');
    expect(npuOnly.code).toBe(2);
    expect(npuOnly.stderr).toMatch(/--segment steady: capture 2 .* has only one segment/);
  });
});

describe('check --capture', () => {
  it('checks one capture; an unknown id names those there are', () => {
    const all = json('check', DB);
    const two = json('check', DB, '--capture', '2');
    expect(new Set(all.findings.map((f: { capture_id: number | null }) => f.capture_id))).toEqual(new Set([1, 2]));
    expect(two.findings.length).toBeGreaterThan(0);
    expect(two.findings.every((f: { capture_id: number | null }) => f.capture_id === 2)).toBe(true);
    const bad = tickwise('check', DB, '--capture', '7');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toBe('tickwise: --capture 7: not a capture of this input (captures: 1, 2; tickwise info lists them)\n');
  });
});

describe('--sync-overhead <duration>, one spelling', () => {
  it('report takes it with a unit, as ceiling does; the old --sync-overhead-ms is refused with the new spelling', () => {
    const md = tickwise('report', DB, '--rows', '8192', '--sync-overhead', '50us', '--format', 'md');
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('| sync overhead | 0.0500 ms |');
    const ceiling = json('ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192', '--sync-overhead', '50us');
    expect(ceiling.sync_overhead_ms).toBe(0.05);
    const old = tickwise('report', DB, '--rows', '8192', '--sync-overhead-ms', '0.05', '--format', 'md');
    expect(old.code).toBe(2);
    expect(old.stderr).toBe('tickwise: --sync-overhead-ms 0.05: the option is now --sync-overhead with a unit, as in tickwise ceiling: --sync-overhead 0.05ms\n');
  });
});

describe('ceiling --rows beyond any prefill (issue 18.10)', () => {
  it('answers 10^12 rows from the closed form; refuses rows past 2^50 with a clear message', () => {
    const r = json('ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '1000000000000');
    expect(r.npu_groups).toBe(244140625);
    expect(r.split_ms).toBe(1464843750);
    const big = tickwise('ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '99999999999999999999');
    expect(big.code).toBe(2);
    expect(big.stderr).toMatch(/^tickwise: rows \(M\) 100000000000000000000 is beyond the model's range: at most 1125899906842624 rows/);
  });
});
