import { describe, expect, it } from 'vitest';
import { gemmShapeFromName } from '../src/index';

/** GEMM shapes from kernel names: M x N x K, never a tile size (issue 18.5). */
describe('gemmShapeFromName', () => {
  it('reads the shape IREE puts in its dispatch names', () => {
    expect(gemmShapeFromName('prefill_dispatch_6_matmul_512x8192x3072_f16')).toEqual({ m: 512, n: 8192, k: 3072 });
    expect(gemmShapeFromName('npu_prefill_dispatch_6_matmul_256x8192x3072_bf16')).toEqual({ m: 256, n: 8192, k: 3072 });
    expect(gemmShapeFromName('matmul_1x4096x4096')).toEqual({ m: 1, n: 4096, k: 4096 });
    expect(gemmShapeFromName('gemm-64x128x256.f32')).toEqual({ m: 64, n: 128, k: 256 });
  });

  it('does not read tile, warp or instruction sizes as M x N x K', () => {
    expect(gemmShapeFromName('sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_tensor16x8x16_kernel')).toBeNull();
    expect(gemmShapeFromName('gemm_cta_128x128x32_warp_64x64x32')).toBeNull();
    expect(gemmShapeFromName('matmul_tile_32x32x8_f16')).toBeNull();
    expect(gemmShapeFromName('block_64x64x8_gemm')).toBeNull();
  });

  it('a problem shape beside a tile size: the problem shape', () => {
    expect(gemmShapeFromName('gemm_tile_32x32x8_512x8192x3072')).toEqual({ m: 512, n: 8192, k: 3072 });
  });

  it('two-dimensional tiles and shapes glued to words are no shapes', () => {
    expect(gemmShapeFromName('ampere_fp16_s1688gemm_fp16_128x128_ldg8_f2f_stages_32x1_nn')).toBeNull();
    expect(gemmShapeFromName('cutlass_80_tensorop_s16816gemm_f16_256x128_32x3_nn_align8')).toBeNull();
    expect(gemmShapeFromName('matmul512x8192x3072')).toBeNull();
  });
});
