/**
 * Per-launch costs and run comparison on a generated pair of captures whose
 * truth is known (launch-captures.ts): the layers launch 128 rows at a time
 * (2 ms), the LM head one 128-row launch (2 ms) and, in the row-at-a-time
 * capture, 128 one-row launches of 1 ms each. Imported by the real CLI;
 * `launches` and `diff` must put the head's one-row group at the top with
 * its per-launch ratio (0.5x) and its per-row ratio (64x).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { countSql, diff, launchRowsSql, launches, npuCommandsSql, planAnalysis, selectionSql } from '@tickwise/analyzer';
import { tickwise, tmp } from './checks-helpers';
import { GEMM_NS, HEAD_ROW_NS, LAYERS_DEFAULT, PASSES, ROWS_DEFAULT, batchedCapture, rowAtATimeCapture } from './launch-captures';

let store: Store;

beforeAll(() => {
  const dir = tmp('tickwise-launches-');
  const a = join(dir, 'batched.ireeperf.jsonl');
  const b = join(dir, 'row-at-a-time.ireeperf.jsonl');
  writeFileSync(a, batchedCapture());
  writeFileSync(b, rowAtATimeCapture());
  const db = join(dir, 'runs.duckdb');
  // capture 1: batched, 2: row at a time, 3: batched again (the same file)
  const r = tickwise(['import', a, b, a, '--db', db]);
  if (r.status !== 0) throw new Error(r.stderr);
  return Store.open(db).then((s) => {
    store = s;
  });
}, 60_000);

afterAll(async () => {
  await store?.close();
});

describe('launches', () => {
  it('puts the one-row head launches at the top: latency-bound, 0.5x per launch, 64x per row, the excess time exact', async () => {
    const r = await launches(store, { captureId: 2 });
    const top = r.groups[0]!;
    expect(top).toMatchObject({ kernel: 'lm_head_gemm', work_per_launch: 1, work_unit: 'workgroups', workgroup_count: [1, 1, 1], launches: PASSES * ROWS_DEFAULT, latency_bound: true });
    expect(top.mean_ns).toBeCloseTo(HEAD_ROW_NS, -2);
    expect(top.per_launch_ratio).toBeCloseTo(HEAD_ROW_NS / GEMM_NS, 3);
    expect(top.per_work_ratio).toBeCloseTo((HEAD_ROW_NS / 1) / (GEMM_NS / ROWS_DEFAULT), 1);
    expect(top.best_work_per_launch).toBe(ROWS_DEFAULT);
    expect(top.elasticity).toBeCloseTo(Math.log(0.5) / Math.log(1 / 128), 3);
    // 256 launches x (1 ms - 1 row at 2 ms / 128 rows)
    expect(top.excess_ns / 1e6).toBeCloseTo((PASSES * ROWS_DEFAULT * (HEAD_ROW_NS - GEMM_NS / ROWS_DEFAULT)) / 1e6, 2);
    expect(top.reason).toMatch(/64\.0x the time per workgroup of the same kernel at 128 workgroups per launch/);
    expect(r.groups.slice(1).every((g) => !g.latency_bound && g.excess_ns === 0)).toBe(true);
    expect(r.groups.find((g) => g.kernel === 'layer_gemm')).toMatchObject({ launches: PASSES * LAYERS_DEFAULT, work_per_launch: ROWS_DEFAULT, per_work_ratio: 1 });
  });

  it('the batched capture has no latency-bound group', async () => {
    const r = await launches(store, { captureId: 1 });
    expect(r.groups.map((g) => g.kernel).sort()).toEqual(['layer_gemm', 'lm_head_gemm', 'rmsnorm']);
    expect(r.groups.some((g) => g.latency_bound)).toBe(false);
  });

  it('--kernel narrows to a glob; --segment steady reads the last pass only', async () => {
    const r = await launches(store, { captureId: 2, kernel: 'lm_head*', segment: 'steady' });
    expect(r.groups.map((g) => [g.kernel, g.work_per_launch, g.launches])).toEqual([['lm_head_gemm', 1, ROWS_DEFAULT], ['lm_head_gemm', ROWS_DEFAULT, 1]]);
    await expect(launches(store, { captureId: 2, kernel: 'nope*' })).rejects.toThrow(/--kernel nope\*: no selected dispatch matches/);
  });

  it('submit-to-start latency per submission: host submit 10 us (+ a tick) before the first dispatch, the generator\'s truth', async () => {
    const r = await launches(store, { captureId: 2 });
    const s = r.submit_latency[0]!;
    expect(s.submissions).toBe(PASSES * (LAYERS_DEFAULT + 1 + ROWS_DEFAULT));
    expect(s.negative).toBe(0);
    expect(s.median_ns!).toBeGreaterThan(9_900);
    expect(s.median_ns!).toBeLessThan(10_200);
    expect(s.slowest.length).toBe(10);
  });

  it('launchRowsSql selects exactly the rows selectionSql does (all, and steady)', async () => {
    for (const segment of ['all', 'steady', 'first']) {
      const plan = await planAnalysis(store, { captureId: 2, segment });
      const scope = { capture_id: 2, device: 0, queue: null };
      const n1 = await store.scalar(countSql(launchRowsSql(plan.spec, scope)));
      const n2 = await store.scalar(countSql(selectionSql(plan.spec, scope)));
      expect(n1).toBe(n2);
    }
  });

  it('NPU commands: EXEC_CMD matched to the completion of its hwctx and sequence point; commands per EXEC_CMD', async () => {
    const s = await Store.open(':memory:');
    await s.run(`INSERT INTO captures (capture_id, path, format, timeline) VALUES (1, 'npu', 'test', 'host_monotonic')`);
    const ins = (kind: string, seq: number, hwctx: number, start: number, end: number, cmdCount?: number) =>
      s.run(`INSERT INTO host_events (capture_id, device, kind, submission_id, start_ns, end_ns, dur_ns, time_source, valid, args) VALUES (1, 1, $1, $2, $3, $4, $5, 'host_monotonic', true, $6::JSON)`,
        [kind, seq, start, end, end - start, JSON.stringify(cmdCount === undefined ? { hwctx } : { hwctx, cmd_count: cmdCount })]);
    // hwctx 7: three EXEC_CMDs of 2 commands each, completions observed 6, 7, 8 ms after submit
    for (let i = 0; i < 3; i++) {
      await ins('xdna_exec_cmd', i + 1, 7, i * 10_000_000, i * 10_000_000 + 20_000, 2);
      await ins('xdna_syncobj_timeline_wait', i + 1, 7, i * 10_000_000 + 100_000, i * 10_000_000 + (6 + i) * 1_000_000);
    }
    // hwctx 9: one EXEC_CMD whose completion was never observed; a completion of seq 1 on another hwctx must not match
    await ins('exec', 1, 9, 50_000_000, 50_010_000);
    const rows = await s.rows(npuCommandsSql([1]));
    expect(rows.map((x) => [x['hwctx'], x['seq'], x['submit_to_complete_ns']])).toEqual([
      ['7', '1', 6_000_000n], ['7', '2', 7_000_000n], ['7', '3', 8_000_000n], ['9', '1', null],
    ]);
    // a capture with NPU commands and no timed dispatch
    const full = await launches(s, {});
    expect(full.npu_commands).toEqual([
      expect.objectContaining({ hwctx: '7', exec_calls: 3, commands: 6, commands_per_exec: 2, completed: 3, median_submit_to_complete_ns: 7_000_000, max_submit_to_complete_ns: 8_000_000n, mean_exec_ioctl_ns: 20_000 }),
      expect.objectContaining({ hwctx: '9', exec_calls: 1, commands: 1, completed: 0, median_submit_to_complete_ns: null }),
    ]);
    await s.close();
  });
});

describe('diff', () => {
  it('batched vs row at a time: the head at the top with its per-launch and per-row ratios; the layers the same', async () => {
    const r = await diff(store, { a: { captureId: 1 }, b: { captureId: 2 } });
    expect(r.mode).toBe('captures');
    const top = r.kernels[0]!;
    expect(top).toMatchObject({ kernel: 'lm_head_gemm', status: 'changed', count_delta: PASSES * ROWS_DEFAULT });
    expect(top.total_ratio).toBeCloseTo((GEMM_NS + ROWS_DEFAULT * HEAD_ROW_NS) / GEMM_NS, 3);
    expect(top.mean_ratio).toBeCloseTo((GEMM_NS + ROWS_DEFAULT * HEAD_ROW_NS) / (ROWS_DEFAULT + 1) / GEMM_NS, 3);
    expect(top.a!.work_per_launch).toBe(ROWS_DEFAULT);
    expect(top.b!.work_per_launch).toBeCloseTo((2 * ROWS_DEFAULT) / (ROWS_DEFAULT + 1), 6);
    expect(top.ns_per_work_ratio).toBeCloseTo(top.mean_ratio! / top.work_ratio!, 6);
    expect(r.kernels.slice(1).map((k) => [k.kernel, k.status])).toEqual([['layer_gemm', 'same'], ['rmsnorm', 'same']]);
    const t = r.timeline[0]!;
    expect(Number(t.busy_delta_ns) / 1e6).toBeCloseTo((PASSES * ROWS_DEFAULT * HEAD_ROW_NS) / 1e6, 2);
    expect(t.same).toBe(false);
    expect(r.identical).toBe(false);
    expect(r.differences).toBe(2); // the head and the timeline
  });

  it('a capture against itself, and against a second import of the same file: no differences', async () => {
    for (const b of [1, 3]) {
      const r = await diff(store, { a: { captureId: 1 }, b: { captureId: b } });
      expect(r.identical).toBe(true);
      expect(r.differences).toBe(0);
      expect(r.kernels.every((k) => k.status === 'same' && k.total_delta_ns === 0n && k.mean_ratio === 1)).toBe(true);
      expect(r.provenance).toEqual([]);
      expect(r.conditions).toEqual([]);
      expect(r.timeline.every((x) => x.same && x.busy_delta_ns === 0n)).toBe(true);
    }
  });

  it('two kernel groups of one capture: one row, A vs B, ratios B/A', async () => {
    const r = await diff(store, { a: { captureId: 2, kernel: 'layer_gemm' }, b: { captureId: 2, kernel: 'lm_head*' } });
    expect(r.mode).toBe('kernels');
    expect(r.kernels).toHaveLength(1);
    expect(r.kernels[0]).toMatchObject({ kernel: 'layer_gemm vs lm_head*', status: 'changed' });
    expect(r.kernels[0]!.a!.count).toBe(PASSES * LAYERS_DEFAULT);
    expect(r.kernels[0]!.b!.count).toBe(PASSES * (ROWS_DEFAULT + 1));
    expect(r.kernels[0]!.median_ratio).toBeCloseTo(HEAD_ROW_NS / GEMM_NS, 3);
    expect(r.timeline).toEqual([]);
    await expect(diff(store, { a: { captureId: 2, kernel: 'x' }, b: { captureId: 2 } })).rejects.toThrow(/--a-kernel GLOB and --b-kernel GLOB/);
  });

  it('two segments of one capture: the passes are alike', async () => {
    const r = await diff(store, { a: { captureId: 2, segment: 'first' }, b: { captureId: 2, segment: 'last' } });
    expect(r.mode).toBe('segments');
    expect(r.kernels.every((k) => k.status === 'same')).toBe(true);
    expect(r.identical).toBe(true);
  });
});
