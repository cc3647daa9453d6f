import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, tickwise } from './run-cli';

const tmp = mkdtempSync(join(tmpdir(), 'tickwise-ceiling-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

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

const GPU_CAPTURE = 'captures/sample/igpu-prefill.ireeperf.jsonl';
const NPU_CAPTURE = 'captures/sample/npu-tiles.ireeperf.jsonl';
const FROM_CAPTURES = [
  '--gpu', GPU_CAPTURE, '--gpu-kernel', '*dispatch_6_matmul*', '--gpu-rows-per-dispatch', '512',
  '--npu', NPU_CAPTURE, '--npu-kernel', '*matmul*', '--npu-rows-per-dispatch', '256',
  '--rows', '8192', '--target-speedup', '1.15',
];

describe('tickwise ceiling from the sample captures', () => {
  const truth = (name: string) => JSON.parse(readFileSync(join(ROOT, 'captures/sample', name), 'utf8'));

  it('agrees with the same call fed the numbers tickwise cost printed', () => {
    const gpuCost = JSON.parse(tickwise('cost', GPU_CAPTURE, '--kernel', '*dispatch_6_matmul*', '--rows-per-dispatch', '512', '--segment', 'steady', '--json').stdout);
    const npuCost = JSON.parse(tickwise('cost', NPU_CAPTURE, '--kernel', '*matmul*', '--rows-per-dispatch', '256', '--json').stdout);
    const fromCaptures = tickwise('ceiling', ...FROM_CAPTURES, '--json');
    expect(fromCaptures.stderr).toBe('');
    const a = JSON.parse(fromCaptures.stdout);
    const b = JSON.parse(tickwise('ceiling', '--gpu-group-ms', String(gpuCost.group_ms), '--npu-tile-ms', String(npuCost.group_ms),
      '--rows', '8192', '--target-speedup', '1.15', '--json').stdout);
    for (const key of ['groups', 'npu_groups', 'gpu_only_ms', 'split_ms', 'gpu_ms_at_split', 'npu_ms_at_split', 'speedup', 'balance_groups', 'required_npu_tile_ms', 'required_npu_groups']) {
      expect(a[key], key).toBe(b[key]);
    }
    // and both agree with the generator's ground truth (split_inputs of the NPU truth file)
    const t = truth('npu-tiles.truth.json').split_inputs;
    expect(a.gpu_group_ms).toBeCloseTo(t.g_ms, 5);
    expect(a.npu_tile_ms).toBeCloseTo(t.t_ms, 5);
    const g = t.g_ms;
    const n = 32;
    expect(a.balance_groups).toBeCloseTo((n * g) / (g + t.t_ms), 4);
  });

  it('says where every number came from', () => {
    const a = JSON.parse(tickwise('ceiling', ...FROM_CAPTURES, '--json').stdout);
    const gpu = a.sources.gpu;
    expect(gpu.from).toBe('capture');
    expect(gpu.line).toMatch(/^capture 1: captures\/sample\/igpu-prefill\.ireeperf\.jsonl \(ireeperf-jsonl v15, .*sha256 [0-9a-f]{12}/);
    expect(gpu.line).toContain('kernel *dispatch_6_matmul* (prefill_dispatch_6_matmul_512x8192x3072_f16), segment steady (1 selected), 112 dispatches of 512 rows');
    expect(gpu.details.captures[0]).toMatchObject({ dispatch_count: 112, rows_per_dispatch: 512, segment: 'steady', kernel: '*dispatch_6_matmul*' });
    expect(a.sources.npu.details.captures[0]).toMatchObject({ dispatch_count: 40, rows_per_dispatch: 256, segment: 'all' });
    // the NPU capture does not repeat: all of it is used, and the output says so
    expect(a.notes.join(' ')).toMatch(/npu-tiles\.ireeperf\.jsonl: one segment \(no repetition found\)/);
    // p10/p90 of the dispatches give a range
    expect(a.speedup_range.low.speedup).toBeLessThanOrEqual(a.speedup);
    expect(a.speedup_range.high.speedup).toBeGreaterThanOrEqual(a.speedup);
  });

  it('--splittable-fraction auto: the matched kernels\' time over the steady prefill span', () => {
    const a = JSON.parse(tickwise('ceiling', ...FROM_CAPTURES, '--splittable-fraction', 'auto', '--json').stdout);
    const g = truth('igpu-prefill.truth.json');
    const k = g.kernels.find((x: { key: string }) => x.key === 'prefill_dispatch_6_matmul_512x8192x3072_f16');
    const steadyKernelNs = k.per_segment.find((p: { segment: number }) => p.segment === 1).total_ns;
    expect(a.splittable_fraction).toBeCloseTo(steadyKernelNs / g.steady_span_ns, 4);
    expect(a.sources.splittable_fraction.line).toMatch(/^auto: capture 1: .*kernels \*dispatch_6_matmul\* take .* of prefill span over 1 segment \(steady\)/);
    expect(a.end_to_end_speedup).toBeCloseTo(1 / (1 - a.splittable_fraction + a.splittable_fraction / a.speedup), 12);
  });

  it('several captures at different rows per dispatch make a curve (here one capture read twice, at two M)', () => {
    const a = JSON.parse(tickwise('ceiling', '--gpu', GPU_CAPTURE, '--gpu', GPU_CAPTURE, '--gpu-kernel', '*dispatch_6_matmul*',
      '--gpu-rows-per-dispatch', '512', '--gpu-rows-per-dispatch', '1024', '--npu-tile-ms', '6', '--rows', '8192', '--json').stdout);
    expect(a.model).toBe('curve');
    expect(a.sources.gpu.from).toBe('captures');
    expect(a.sources.gpu.details.captures.map((c: { rows_per_dispatch: number }) => c.rows_per_dispatch)).toEqual([512, 1024]);
    // the same dispatches read as covering 1024 rows cost half as much per group; 8192 rows lie above both points
    expect(a.gpu_group_ms).toBeCloseTo(a.sources.gpu.details.captures[0].group_ms / 2, 12);
    expect(a.extrapolation[0]).toMatchObject({ engine: 'gpu', side: 'above', measured_max_rows: 1024 });
  });

  it('needs a kernel glob and rows per dispatch with --gpu', () => {
    expect(tickwise('ceiling', '--gpu', 'x.jsonl', '--npu-tile-ms', '6', '--rows', '8192').stderr).toMatch(/--gpu needs --gpu-kernel GLOB/);
    expect(tickwise('ceiling', '--gpu', 'x.jsonl', '--gpu-kernel', '*', '--npu-tile-ms', '6', '--rows', '8192').stderr).toMatch(/--gpu needs --gpu-rows-per-dispatch N/);
  });

  it('a glob that matches nothing stops with the analyzer\'s message (exit 2)', () => {
    const r = tickwise('ceiling', '--gpu', GPU_CAPTURE, '--gpu-kernel', '*nothing_like_this*', '--gpu-rows-per-dispatch', '512', '--npu-tile-ms', '6', '--rows', '8192');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: /);
  });
});
