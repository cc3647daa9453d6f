import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import * as analyzer from '@tickwise/analyzer';

const ROOT = resolve(import.meta.dirname, '../../..');
const TICKWISE = join(ROOT, 'scripts/tickwise');
const tmp = mkdtempSync(join(tmpdir(), 'tickwise-ceiling-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function tickwise(...args: string[]) {
  const r = spawnSync(TICKWISE, args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles' } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const EXAMPLE = ['ceiling', '--gpu-group-ms', '0.40', '--npu-tile-ms', '6.0', '--rows', '8192', '--splittable-fraction', '0.6', '--target-speedup', '1.15'];

describe('tickwise ceiling from numbers', () => {
  it('prints the worked example as JSON', () => {
    const r = tickwise(...EXAMPLE, '--json');
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j).toMatchObject({ groups: 32, group_rows: 256, npu_groups: 2, sync_overhead_ms: 0, target_speedup: 1.15, splittable_fraction: 0.6 });
    expect(j.gpu_only_ms.toFixed(1)).toBe('12.8');
    expect(j.split_ms.toFixed(1)).toBe('12.0');
    expect(j.gpu_ms_at_split.toFixed(1)).toBe('12.0');
    expect(j.npu_ms_at_split.toFixed(1)).toBe('12.0');
    expect(j.speedup.toFixed(3)).toBe('1.067');
    expect(j.balance_groups.toFixed(1)).toBe('2.0');
    expect(j.end_to_end_speedup.toFixed(3)).toBe('1.039');
    expect(j.required_npu_tile_ms.toFixed(2)).toBe('2.23');
    expect(j.sources.gpu.line).toBe('--gpu-group-ms 0.40');
    expect(j.sources.npu.line).toBe('--npu-tile-ms 6.0');
    expect(j.by_k.map((s: { npu_groups: number }) => s.npu_groups)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('prints text, Markdown and a Vega-Lite spec', () => {
    const text = tickwise(...EXAMPLE);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/best split\s+2 groups on the NPU/);
    expect(text.stdout).toMatch(/speedup\s+1\.067x/);
    expect(text.stdout).toMatch(/NPU tile <= 2\.23 ms with 5 groups/);
    const md = tickwise(...EXAMPLE, '--format', 'md');
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('| **speedup** | **1.067x** |');
    const vl = tickwise(...EXAMPLE, '--format', 'vega-lite');
    expect(vl.code).toBe(0);
    expect(JSON.parse(vl.stdout).$schema).toBe('https://vega.github.io/schema/vega-lite/v5.json');
  });

  it('refuses a bare number for --sync-overhead, naming the unit to write (exit 2)', () => {
    const r = tickwise(...EXAMPLE, '--sync-overhead', '50');
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^tickwise: --sync-overhead: invalid duration: 50 \(write a unit: 50ns, 50us, 50ms/);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  it('takes --sync-overhead with a unit and pays it once when the NPU works', () => {
    const j = JSON.parse(tickwise(...EXAMPLE, '--sync-overhead', '50us', '--json').stdout);
    expect(j.sync_overhead_ms).toBe(0.05);
    expect(j.split_ms).toBeCloseTo(12.05, 12);
    expect(j.speedup).toBeCloseTo(12.8 / 12.05, 12);
  });

  it('reads a fraction as a percentage and a target with an x', () => {
    const j = JSON.parse(tickwise('ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192', '--splittable-fraction', '60%', '--target-speedup', '1.15x', '--json').stdout);
    expect(j.splittable_fraction).toBe(0.6);
    expect(j.required_npu_tile_ms.toFixed(2)).toBe('2.23');
  });

  it('gives a range from p10/p90', () => {
    const j = JSON.parse(tickwise(...EXAMPLE, '--gpu-group-ms-p10', '0.36', '--gpu-group-ms-p90', '0.46', '--npu-tile-ms-p10', '4', '--npu-tile-ms-p90', '7.5', '--json').stdout);
    expect(j.speedup_range.high.speedup).toBeCloseTo(14.72 / 13.34, 12);
    expect(j.sources.gpu.line).toBe('--gpu-group-ms 0.40 (p10 0.36, p90 0.46)');
  });

  it.each([
    [['ceiling', '--npu-tile-ms', '6', '--rows', '8192'], /give the iGPU cost: --gpu-group-ms N/],
    [['ceiling', '--gpu-group-ms', '0.4', '--gpu-cost-csv', 'x.csv', '--npu-tile-ms', '6', '--rows', '8192'], /give the iGPU cost one way, not --gpu-group-ms and --gpu-cost-csv/],
    [['ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6'], /give --rows M/],
    [['ceiling', '--gpu-group-ms', 'fast', '--npu-tile-ms', '6', '--rows', '8192'], /--gpu-group-ms fast: write a positive time in ms/],
    [['ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192.5'], /--rows 8192.5: write a whole number of rows/],
    [['ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192', '--splittable-fraction', '1.5'], /in \[0, 1\]/],
    [['ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192', '--splittable-fraction', 'auto'], /auto reads the prefill from the --gpu capture/],
    [['ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192', '--target-speedup', '0.9'], /a speedup above 1/],
  ])('bad usage %j exits 2 with a message', (args, message) => {
    const r = tickwise(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });
});

describe('tickwise ceiling from cost curves', () => {
  it('reads CSV sweeps and flags extrapolation', () => {
    const gpu = join(tmp, 'gpu.csv');
    const npu = join(tmp, 'npu.csv');
    writeFileSync(gpu, 'rows,ms\n1024,0.3\n2048,0.3\n2304,0.6\n4096,0.6\n');
    writeFileSync(npu, 'rows,ms\n512,0.5\n2048,0.5\n');
    const j = JSON.parse(tickwise('ceiling', '--gpu-cost-csv', gpu, '--npu-cost-csv', npu, '--rows', '4096', '--json').stdout);
    expect(j.model).toBe('curve');
    expect(j.npu_groups).toBe(8);
    expect(j.speedup).toBeCloseTo(2.4, 12);
    expect(j.sources.gpu.line).toBe(`${gpu} (4 points, 1024..4096 rows, ms per group)`);
    const big = JSON.parse(tickwise('ceiling', '--gpu-cost-csv', gpu, '--npu-cost-csv', npu, '--rows', '8192', '--json').stdout);
    expect(big.extrapolation.some((x: { engine: string; side: string }) => x.engine === 'gpu' && x.side === 'above')).toBe(true);
  });

  it('a bad CSV stops with file and line', () => {
    const bad = join(tmp, 'bad.csv');
    writeFileSync(bad, 'rows,ms\n512,0.3\n1024,zero\n');
    const r = tickwise('ceiling', '--gpu-cost-csv', bad, '--npu-tile-ms', '6', '--rows', '8192');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`tickwise: ${bad}:3: cost CSV: ms "zero" is not a number\n`);
  });
});

const hasRowGroupCost = typeof (analyzer as unknown as Record<string, unknown>)['rowGroupCost'] === 'function';

describe('tickwise ceiling from captures', () => {
  it('says clearly when the analyzer does not provide rowGroupCost yet', () => {
    if (hasRowGroupCost) return; // covered by the end-to-end test below
    const r = tickwise('ceiling', '--gpu', 'captures/none.jsonl', '--gpu-kernel', '*matmul*', '--gpu-rows-per-dispatch', '512', '--npu-tile-ms', '6', '--rows', '8192');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/rowGroupCost from @tickwise\/analyzer/);
  });

  it('needs a kernel glob and rows per dispatch with --gpu', () => {
    expect(tickwise('ceiling', '--gpu', 'x.jsonl', '--npu-tile-ms', '6', '--rows', '8192').stderr).toMatch(/--gpu needs --gpu-kernel GLOB/);
    expect(tickwise('ceiling', '--gpu', 'x.jsonl', '--gpu-kernel', '*', '--npu-tile-ms', '6', '--rows', '8192').stderr).toMatch(/--gpu needs --gpu-rows-per-dispatch N/);
  });
});
