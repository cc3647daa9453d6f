/**
 * `tickwise diff`, `tickwise launches` and `tickwise import
 * --conditions-from-host`, run as a user runs them (the CLI from source, in
 * a child process) on a generated pair of captures: one whose LM head is
 * launched with the whole batch, one whose head is launched one row at a
 * time; and a store whose conditions were sampled on this machine with a
 * secret in the environment.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateFromDispatches, type HandMadeDispatch } from '../../../scripts/gen/ireeperf';

const ROOT = resolve(import.meta.dirname, '../../..');

function tickwise(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles', ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const json = (r: { status: number | null; stdout: string; stderr: string }) => {
  if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout) as Record<string, unknown>;
};

/** 8 layers of 2 ms at 64 rows, then the head: one 64-row launch, and (row at a time) 64 one-row launches of 1 ms. Two passes. */
function capture(rowAtATime: boolean): string {
  const d: HandMadeDispatch[] = [];
  let t = 760_000_000_000;
  let sub = 0;
  for (let p = 0; p < 2; p++) {
    for (let l = 0; l < 8; l++) {
      d.push({ key: 'layer_gemm', start_ns: t, end_ns: t + 2_000_000, submission: ++sub, workgroup_count: [64, 1, 1] });
      t += 2_020_000;
    }
    d.push({ key: 'lm_head_gemm', start_ns: t, end_ns: t + 2_000_000, submission: ++sub, workgroup_count: [64, 1, 1] });
    t += 2_020_000;
    for (let r = 0; rowAtATime && r < 64; r++) {
      d.push({ key: 'lm_head_gemm', start_ns: t, end_ns: t + 1_000_000, submission: ++sub, workgroup_count: [1, 1, 1] });
      t += 1_030_000;
    }
    t += 40_000_000;
  }
  return generateFromDispatches({ dispatches: d }).text;
}

let dir: string;
let batched: string;
let rows: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tickwise-diff-cli-'));
  batched = join(dir, 'batched.ireeperf.jsonl');
  rows = join(dir, 'rows.ireeperf.jsonl');
  writeFileSync(batched, capture(false));
  writeFileSync(rows, capture(true));
});

describe('tickwise diff', () => {
  it('two capture files: the head at the top with its per-launch ratio; the human report says so too', () => {
    const r = json(tickwise(['diff', batched, rows, '--json']));
    const kernels = r['kernels'] as Record<string, unknown>[];
    expect(kernels[0]).toMatchObject({ kernel: 'lm_head_gemm', status: 'changed', count_delta: 128 });
    // each capture's own clock fit moves a total by a few hundred ns at most
    expect(Math.abs((kernels[0]!['total_delta_ns'] as number) - 128_000_000)).toBeLessThan(1_000);
    expect(kernels[0]!['mean_ratio'] as number).toBeCloseTo(66 / 65 / 2, 3);
    expect(kernels[0]!['ns_per_work_ratio'] as number).toBeCloseTo((66 / 65) / (128 / 65) / (2 / 64), 2);
    expect(kernels.slice(1).map((k) => k['status'])).toEqual(['same']);
    expect(r['identical']).toBe(false);
    const text = tickwise(['diff', batched, rows]);
    expect(text.status).toBe(0);
    const lines = text.stdout.split('\n');
    const header = lines.findIndex((l) => l.startsWith('device  kernel'));
    expect(lines[header + 2]).toMatch(/^\s*0\s+lm_head_gemm\s+changed\s+2\s+130\s.*\+128\.000 ms.*0\.508x/);
    expect(text.stdout).toMatch(/\d+ difference\(s\)\n$/);
  });

  it('a capture against itself: no differences (two files, and one store with --a-capture/--b-capture)', () => {
    const self = tickwise(['diff', batched, batched]);
    expect(self.status).toBe(0);
    expect(self.stdout.trimEnd().endsWith('no differences')).toBe(true);
    const db = join(dir, 'self.duckdb');
    expect(tickwise(['import', batched, rows, '--db', db]).status).toBe(0);
    const r = json(tickwise(['diff', db, '--a-capture', '1', '--b-capture', '1', '--json']));
    expect(r).toMatchObject({ identical: true, differences: 0, provenance: [], conditions: [] });
    // a store of two captures: A and B default to them
    expect((json(tickwise(['diff', db, '--json']))['b'] as Record<string, unknown>)['capture_id']).toBe(2);
  });

  it('two kernel groups of one capture, and two segments', () => {
    const k = json(tickwise(['diff', rows, '--a-kernel', 'layer_gemm', '--b-kernel', 'lm_head*', '--json']));
    expect(k['mode']).toBe('kernels');
    expect((k['kernels'] as Record<string, unknown>[])[0]).toMatchObject({ kernel: 'layer_gemm vs lm_head*', count_ratio: 130 / 16 });
    const s = json(tickwise(['diff', rows, '--a-segment', 'first', '--b-segment', 'last', '--json']));
    expect(s).toMatchObject({ mode: 'segments', identical: true });
  });

  it('usage errors exit 2 with one line', () => {
    const r = tickwise(['diff', rows, '--a-kernel', 'x']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: .*--a-kernel GLOB and --b-kernel GLOB/);
    const bare = tickwise(['diff', rows, rows, '--min-gap', '200']);
    expect(bare.status).toBe(2);
    expect(bare.stderr).toContain('--min-gap');
  });
});

describe('tickwise launches', () => {
  it('the one-row head launches first, flagged latency-bound, with the per-launch ratio', () => {
    const r = json(tickwise(['launches', rows, '--json']));
    const groups = r['groups'] as Record<string, unknown>[];
    expect(groups[0]).toMatchObject({ kernel: 'lm_head_gemm', work_per_launch: 1, work_unit: 'workgroups', launches: 128, latency_bound: true });
    expect(groups[0]!['per_launch_ratio'] as number).toBeCloseTo(0.5, 3);
    expect(groups[0]!['per_work_ratio'] as number).toBeCloseTo(32, 1);
    expect(groups.slice(1).some((g) => g['latency_bound'])).toBe(false);
    const lat = (r['submit_latency'] as Record<string, unknown>[])[0]!;
    expect(lat['submissions']).toBe(2 * (8 + 1 + 64));
    const text = tickwise(['launches', rows, '--kernel', 'lm_head*']);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(/lm_head_gemm\s+1 wg \[1x1x1\]\s+128\s.*0\.50x.*LATENCY-BOUND/);
    expect(text.stdout).toContain('1 latency-bound group(s)');
    expect(text.stdout).toContain('NPU commands: none in the input');
  });

  it('NPU commands from a Chrome trace (spans of cat exec / complete with hwctx, seq, cmd_count): submit-to-completion and commands per EXEC_CMD', () => {
    const trace = join(dir, 'npu.trace.json');
    const ev = (cat: string, ts: number, dur: number, args: Record<string, number>) => ({ ph: 'X', pid: 2, tid: 7, cat, name: cat === 'exec' ? 'EXEC_CMD' : 'syncobj wait', ts, dur, args });
    writeFileSync(trace, JSON.stringify({ traceEvents: [
      { ph: 'X', pid: 1, tid: 1, cat: 'kernel', name: 'npu_gemm_tile', ts: 1000, dur: 500, args: { device: 1 } },
      ev('exec', 900, 12.5, { hwctx: 3, seq: 1, cmd_count: 2 }), ev('complete', 1400, 120, { hwctx: 3, seq: 1 }),
      ev('exec', 2000, 10, { hwctx: 3, seq: 2, cmd_count: 2 }), ev('complete', 2100, 700, { hwctx: 3, seq: 2 }),
    ] }));
    const r = json(tickwise(['launches', trace, '--trace-clock', 'monotonic', '--json']));
    expect(r['npu_commands']).toEqual([expect.objectContaining({
      hwctx: '3', exec_calls: 2, commands: 4, commands_per_exec: 2, completed: 2, mean_submit_to_complete_ns: 710_000, max_submit_to_complete_ns: 800_000, mean_exec_ioctl_ns: 11_250,
    })]);
  });

  it('--rows-per-dispatch must be a positive whole number', () => {
    const r = tickwise(['launches', rows, '--rows-per-dispatch', '0']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--rows-per-dispatch');
  });
});

describe('import --conditions-from-host', () => {
  it('attaches this host\'s conditions; a secret-looking variable never lands in the store; what is absent here is absent, not zero', () => {
    const db = join(dir, 'conditions.duckdb');
    const env = { HIP_API_TOKEN: 'hunter2', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI-K7MDENG', HIP_VISIBLE_DEVICES: '0', GGML_HIP_UMA: '1' };
    const imp = tickwise(['import', batched, rows, '--db', db, '--conditions-from-host'], env);
    expect(imp.status).toBe(0);
    const cond = JSON.parse(tickwise(['sql', db, 'select capture_id, key, value, unit, note from conditions order by capture_id, key', '--format', 'json']).stdout) as
      { capture_id: number; key: string; value: string | null; unit: string | null; note: string | null }[];
    const one = new Map(cond.filter((c) => c.capture_id === 1).map((c) => [c.key, c]));
    expect(one.get('conditions.source')!.value).toBe('host');
    expect(one.get('env.HIP_VISIBLE_DEVICES')!.value).toBe('0');
    expect(one.get('env.GGML_HIP_UMA')!.value).toBe('1');
    expect(one.get('env.HIP_API_TOKEN')).toMatchObject({ value: null, note: expect.stringMatching(/^redacted/) });
    expect(one.has('env.AWS_SECRET_ACCESS_KEY')).toBe(false);
    expect(one.get('command.line')).toMatchObject({ value: null, note: expect.stringMatching(/^absent/) });
    expect(Number(one.get('load.1m.start')!.value)).toBeGreaterThanOrEqual(0);
    for (const c of cond) if (c.value === null) expect(c.note, c.key).toMatch(/^(absent|redacted)/);
    // both captures carry the same rows
    expect(cond.filter((c) => c.capture_id === 2).length).toBe(one.size);
    // nowhere in the store file, in any table
    const bytes = readFileSync(db).toString('latin1');
    for (const secret of ['hunter2', 'wJalrXUtnFEMI']) expect(bytes).not.toContain(secret);
    for (const f of readdirSync(dir).filter((n) => n.startsWith('conditions.duckdb'))) expect(readFileSync(join(dir, f)).toString('latin1')).not.toContain('hunter2');
    const dump = tickwise(['sql', db, "select count(*) as n from conditions where value like '%hunter2%' or note like '%hunter2%' or value like '%wJalr%'", '--format', 'json']);
    expect(JSON.parse(dump.stdout)).toEqual([{ n: 0 }]);
  });

  it('diff of two stores\' captures with different environments: conditions-differ names the variable', () => {
    const db = join(dir, 'envs.duckdb');
    expect(tickwise(['import', batched, '--db', db, '--conditions-from-host'], { HIP_VISIBLE_DEVICES: '0' }).status).toBe(0);
    expect(tickwise(['import', batched, '--db', db, '--conditions-from-host'], { HIP_VISIBLE_DEVICES: '1' }).status).toBe(0);
    const r = json(tickwise(['diff', db, '--a-capture', '1', '--b-capture', '2', '--json']));
    const conds = r['conditions'] as Record<string, unknown>[];
    expect(conds.find((c) => c['key'] === 'env.HIP_VISIBLE_DEVICES')).toMatchObject({ class: 'exact', a: '0', b: '1' });
    const f = (r['findings'] as Record<string, unknown>[]).find((x) => x['code'] === 'conditions-differ');
    expect(f).toMatchObject({ severity: 'warning', capture_id: 2, compared_with_capture: 1 });
    expect(f!['message']).toContain('env.HIP_VISIBLE_DEVICES');
    // the kernels are the same: only the conditions differ
    expect((r['kernels'] as Record<string, unknown>[]).every((k) => k['status'] === 'same')).toBe(true);
    const text = tickwise(['diff', db, '--a-capture', '1', '--b-capture', '2']);
    expect(text.stdout).toMatch(/!! warning conditions-differ: capture 2 ran under other conditions than capture 1/);
    expect(text.stdout).toMatch(/env\.HIP_VISIBLE_DEVICES\s+exact\s+0\s+1/);
    // tickwise check sees it too
    const check = json(tickwise(['check', db, '--json']));
    expect((check['findings'] as Record<string, unknown>[]).some((x) => x['code'] === 'conditions-differ')).toBe(true);
  });
});
