import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { classifyKernels, globToRegExp, kernelSamples, rowGroupCost, stageSamples } from '../src/index';
import { ROOT, tickwise } from './goldens';

const TRUTH = JSON.parse(readFileSync(join(ROOT, 'captures/sample/igpu-prefill.truth.json'), 'utf8'));
const dir = mkdtempSync(join(tmpdir(), 'tickwise-stages-'));
const DB = join(dir, 'sample.duckdb');
let store: Store;
beforeAll(async () => {
  // both sample captures in one store: the iGPU prefill is capture 1, the NPU tiles capture 2
  for (const [file, kind] of [['igpu-prefill', 'gpu'], ['npu-tiles', 'npu']] as const) {
    const r = tickwise(['import', join(ROOT, 'captures/sample', `${file}.ireeperf.jsonl`), '--db', DB, '--device-kind', kind], ROOT);
    expect(r.status, r.stderr).toBe(0);
  }
  store = await Store.open(DB, { readOnly: true });
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const info = (kernel: string, firstPos: number, count = 112) => {
  const m = /(\d+)x(\d+)x(\d+)(?![0-9x])/.exec(kernel);
  return { kernel, firstPos, count, shape: m && /matmul|gemm|mul_mat/.test(kernel) ? { m: Number(m[1]), n: Number(m[2]), k: Number(m[3]) } : null };
};

describe('classifyKernels: kernel names to prefill stages', () => {
  it('tells the GEMMs apart by shape (H = the common K): down has K != H, output N = H, gate/up the largest N, the rest QKV', () => {
    const r = classifyKernels([
      info('d_rms_norm_512x4096', 0, 224),
      info('d_matmul_512x1024x4096_q', 1), info('d_matmul_512x1024x4096_k', 2), info('d_matmul_512x4096x4096_out', 5),
      info('d_flash_attn_ext', 4), info('d_rope_512', 3),
      info('d_matmul_512x14336x4096_gateup', 6, 224), info('d_swiglu', 7), info('d_matmul_512x4096x14336_down', 8),
      info('d_get_rows', 0, 4), info('d_matmul_1x128256x4096', 9, 1), info('d_copy_kv', 10),
    ], 512);
    const of = (role: string) => r.roles.get(role as never) ?? [];
    expect(of('qkv')).toEqual(['d_matmul_512x1024x4096_q', 'd_matmul_512x1024x4096_k']);
    expect(of('attn_output')).toEqual(['d_matmul_512x4096x4096_out']);
    expect(of('ffn_gate')).toEqual(['d_matmul_512x14336x4096_gateup']);
    expect(of('ffn_up')).toEqual(['d_matmul_512x14336x4096_gateup']);
    expect(of('ffn_down')).toEqual(['d_matmul_512x4096x14336_down']);
    expect(of('attn_norm')).toEqual(['d_rms_norm_512x4096']);
    expect(of('ffn_norm')).toEqual(['d_rms_norm_512x4096']);
    expect(of('attention')).toEqual(['d_flash_attn_ext']);
    expect(of('rope')).toEqual(['d_rope_512']);
    expect(of('ffn_act')).toEqual(['d_swiglu']);
    expect(of('embed')).toEqual(['d_get_rows']);
    expect(of('head')).toEqual(['d_matmul_1x128256x4096']);
    expect([...r.roles.values()].flat()).not.toContain('d_copy_kv');
  });

  it('a --stage glob replaces its role\'s rule and takes its kernels out of the defaults', () => {
    const r = classifyKernels([info('mul_mat_q4_K_a', 1), info('mul_mat_q4_K_b', 2), info('soft_max_f32', 3)], 512, {
      qkv: ['mul_mat_q4_K_a'],
      ffn_down: ['mul_mat_q4_K_b'],
    });
    expect(r.roles.get('qkv')).toEqual(['mul_mat_q4_K_a']);
    expect(r.roles.get('ffn_down')).toEqual(['mul_mat_q4_K_b']);
    expect(r.roles.get('attention')).toEqual(['soft_max_f32']);
    expect(r.rules.get('qkv')).toBe('--stage qkv=mul_mat_q4_K_a');
  });

  it('globs are DuckDB GLOB: * ? [..], case-sensitive', () => {
    expect(globToRegExp('*dispatch_[67]_matmul*').test('prefill_dispatch_6_matmul_512')).toBe(true);
    expect(globToRegExp('*dispatch_[67]_matmul*').test('prefill_dispatch_8_matmul_512')).toBe(false);
    expect(globToRegExp('a?c').test('abc')).toBe(true);
    expect(globToRegExp('ABC*').test('abc')).toBe(false);
    expect(globToRegExp('x.y').test('xzy')).toBe(false);
  });
});

describe('stageSamples on the sample capture (picks the one GPU device of the store)', () => {
  it('reads the steady prefill: its span, busy and summed time equal the generator truth', async () => {
    const r = await stageSamples(store, {});
    expect(r.segment).toBe('steady');
    const s = r.segments[0]!;
    const t = TRUTH.segments[1];
    // the capture's times come through the clock fit: within tens of ns of the truth
    expect(Math.abs(Number(s.span_ns) - t.span_ns)).toBeLessThan(200);
    expect(Math.abs(Number(s.busy_ns) - t.busy_ns)).toBeLessThan(200);
    expect(Math.abs(Number(s.sum_dur_ns) - t.sum_dur_ns)).toBeLessThan(2000);
    expect(s.dispatches).toBe(t.dispatches);
    expect(r).toMatchObject({ layers: 28, ubatches: 4, prompt_rows: 2048, rows_per_dispatch: 512 });
    expect(r.structure_from).toMatch(/^4 embedding dispatches per prefill/);
  });

  it('without an embedding kernel, tells layers from micro-batches by the steps of the attention times', async () => {
    const r = await stageSamples(store, { patterns: { embed: ['no-such-kernel'] } });
    expect(r).toMatchObject({ layers: 28, ubatches: 4 });
    expect(r.structure_from).toMatch(/^attention dispatch times step with position: 4 steps of 28 \(R\^2 0\.9\d\d/);
    expect(r.unmatched.map((u) => u.kernel)).toEqual(['prefill_dispatch_0_gather_512x3072_f16']);
    expect(r.notes.join('\n')).toMatch(/--stage embed=no-such-kernel matches no kernel/);
  });

  it('positions: attention dispatch j of a prefill ran in ubatch floor(j / layers)', async () => {
    const r = await stageSamples(store, {});
    const att = r.stages.find((s) => s.role === 'attention')!.parts[0]!;
    expect(att.position.slice(0, 30)).toEqual([...Array(28).fill(0), 1, 1]);
    const meanAt = (p: number) => {
      const xs = att.dur_ns.filter((_, i) => att.position[i] === p);
      return xs.reduce((a, x) => a + x, 0) / xs.length;
    };
    expect(meanAt(3) / meanAt(0)).toBeGreaterThan(5);
  });

  it("a GEMM stage's dispatches give rowGroupCost's group_ms", async () => {
    const r = await stageSamples(store, {});
    const gate = r.stages.find((s) => s.role === 'ffn_gate')!.parts[0]!;
    const mean = gate.dur_ns.reduce((a, x) => a + x, 0) / gate.dur_ns.length;
    const c = await rowGroupCost(store, { kernel: gate.kernel, rowsPerDispatch: 512, segment: 'steady', captureId: 1 });
    expect((mean * 256) / 512 / 1e6).toBe(c.group_ms);
  });
});

describe('kernelSamples on the NPU capture', () => {
  it('gives the tile durations and the host turnaround between tiles (picks the one NPU device)', async () => {
    {
      const r = await kernelSamples(store, {});
      expect(r.capture_id).toBe(2);
      expect(r.kernels).toHaveLength(1);
      expect(r.kernels[0]!.shape).toEqual({ m: 256, n: 8192, k: 3072 });
      expect(r.kernels[0]!.dur_ns).toHaveLength(40);
      expect(r.gaps).toBe(39);
      // the generator's host: wake 10-30 us + prepare 40-150 us (3 %: 0.5-1.5 ms) + start 16-42 us after submission
      expect(r.median_gap_ns!).toBeGreaterThan(70_000);
      expect(r.median_gap_ns!).toBeLessThan(220_000);
    }
  });
});
