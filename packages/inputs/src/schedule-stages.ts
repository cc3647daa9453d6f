/**
 * The schedule model's stage costs from the iGPU capture's stages and the
 * NPU's tiles: each stage costed on the iGPU from its own dispatches; a GEMM
 * stage on the NPU from the tile of its N x K when the NPU capture has it,
 * else the most-dispatched tile scaled by FLOPs (an assumption, said so), or
 * from a typed tile time scaled the same way; a what-if factor puts a
 * non-GEMM stage on the NPU.
 */
import type { KernelSamplesResult, StageFound, StageSamplesResult } from '@tickwise/analyzer';
import { GEMM_STAGES, constantCost, type MeasuredCost, type MeasuredStage, type SamplePart, type StageKind } from '@tickwise/ceiling';

/** A typed NPU tile time: ms per G-row tile of a GEMM (shape NxK, default the ffn_gate GEMM), with its source line. */
export interface NpuTileNumber {
  readonly ms: number;
  /** How it was given (`--npu-tile-ms 6`). */
  readonly line: string;
  readonly shape?: { readonly n: number; readonly k: number } | undefined;
}

/** Sum of N x K of a stage's GEMM parts (x dispatches per instance), or null when a part has no shape. */
function stageNK(s: StageFound): number | null {
  let nk = 0;
  for (const p of s.parts) {
    if (!p.shape) return null;
    nk += p.per_instance * p.shape.n * p.shape.k;
  }
  return nk;
}

function partsOf(s: StageFound, capture: string): SamplePart[] {
  return s.parts.map((p) => ({ kernel: p.kernel, capture, per_instance: p.per_instance, dur_ns: p.dur_ns, segment: p.segment, position: p.position }));
}

/** The GEMM a typed tile time is for: the given shape, else the ffn_gate (or ffn_up, or first GEMM) stage's. */
function tileGemm(gpu: StageSamplesResult, tile: NpuTileNumber): { nk: number; what: string } | null {
  if (tile.shape) return { nk: tile.shape.n * tile.shape.k, what: `${tile.shape.n}x${tile.shape.k}` };
  const byRole = new Map(gpu.stages.map((s) => [s.role, s] as const));
  const ref = byRole.get('ffn_gate') ?? byRole.get('ffn_up') ?? gpu.stages.find((s) => GEMM_STAGES.includes(s.role));
  const nk = ref ? stageNK(ref) : null;
  if (!ref || nk === null) return null;
  const p = ref.parts[0]!.shape!;
  return { nk, what: `${p.n}x${p.k} (the ${ref.role} GEMM; --npu-tile-shape to change)` };
}

/** Inputs of {@link measuredStages}. */
export interface StageInputs {
  readonly gpu: StageSamplesResult;
  /** How the iGPU capture is named in source lines. */
  readonly gpuLabel: string;
  readonly npu: KernelSamplesResult | null;
  readonly npuInput: string | undefined;
  readonly npuRowsPerDispatch: number | undefined;
  readonly npuTile: NpuTileNumber | undefined;
  readonly factors: ReadonlyMap<StageKind, number>;
  readonly groupRows: number;
}

/** One {@link MeasuredStage} per stage of the iGPU capture; notes for what could not be matched. */
export function measuredStages(x: StageInputs, notes: string[]): MeasuredStage[] {
  const { gpu, npu } = x;
  const hasNpu = npu !== null || x.npuTile !== undefined;
  const npuTiles = npu === null ? [] : npu.kernels.filter((k) => k.shape !== null);
  const tileNK = x.npuTile ? tileGemm(gpu, x.npuTile) : null;
  const stages = gpu.stages.map((s): MeasuredStage => {
    const kind = s.role;
    const fit = kind === 'attention' ? 'attention' : kind === 'head' ? 'fixed' : 'rows';
    const gpuCost: MeasuredCost = {
      form: 'dispatches',
      fit,
      rows_per_dispatch: gpu.rows_per_dispatch,
      parts: partsOf(s, 'gpu'),
      scale: 1,
      whole_tiles: false,
      source: {
        from: 'capture',
        line: `${x.gpuLabel}: ${s.parts.map((p) => `${p.kernel} (${p.dur_ns.length} dispatches${p.per_instance !== 1 ? `, ${p.per_instance} per stage` : ''}${p.shared_by.length > 1 ? `, shared by ${p.shared_by.join('+')}` : ''})`).join(' + ')}; ${s.rule}`,
        details: { capture_id: gpu.capture_id, device: gpu.device, segment: gpu.segment, kernels: s.parts.map((p) => p.kernel), rule: s.rule },
      },
    };
    let npuCost: MeasuredCost | null = null;
    const nk = stageNK(s);
    if (hasNpu && GEMM_STAGES.includes(kind)) {
      if (nk === null) notes.push(`${s.role}: its kernels carry no MxNxK shape, so the NPU cost cannot be matched or scaled: it stays on the iGPU`);
      else if (npu !== null) {
        const exact = s.parts.length === 1 ? npuTiles.find((t) => t.shape!.n === s.parts[0]!.shape!.n && t.shape!.k === s.parts[0]!.shape!.k) : undefined;
        const tile = exact ?? [...npuTiles].sort((a, b) => b.dur_ns.length - a.dur_ns.length)[0]!;
        const tNK = tile.shape!.n * tile.shape!.k;
        const scale = exact ? s.parts[0]!.per_instance : nk / tNK;
        const U = x.npuRowsPerDispatch ?? tile.shape!.m;
        npuCost = {
          form: 'dispatches',
          fit: 'rows',
          rows_per_dispatch: U,
          parts: [{ kernel: tile.kernel, capture: 'npu', per_instance: 1, dur_ns: tile.dur_ns, segment: tile.segment, position: tile.dur_ns.map(() => 0) }],
          scale,
          whole_tiles: true,
          source: {
            from: 'capture',
            line: `${x.npuInput} (capture ${npu.capture_id} device ${npu.device}, segment ${npu.segment}): ${tile.kernel}, ${tile.dur_ns.length} dispatches of ${U} rows` +
              (exact ? '' : `; scaled by FLOPs to ${s.role}'s ${s.parts.map((p) => `${p.shape!.n}x${p.shape!.k}`).join('+')} (x${scale.toFixed(4)}): an assumption, not measured`),
            details: { capture_id: npu.capture_id, device: npu.device, kernel: tile.kernel, rows_per_dispatch: U, scale, measured_shape: !!exact },
          },
        };
      } else if (x.npuTile !== undefined && tileNK !== null) {
        const scale = nk / tileNK.nk;
        npuCost = {
          form: 'model',
          model: { model: 'rows', per_group: constantCost(x.npuTile.ms * scale, { what: '--npu-tile-ms' }), whole_tiles: true },
          source: { from: 'number', line: `${x.npuTile.line} per ${x.groupRows}-row tile of ${tileNK.what}${scale === 1 ? '' : `, scaled by FLOPs to ${s.role} (x${scale.toFixed(4)}): an assumption`}` },
        };
      }
    }
    const f = x.factors.get(s.role);
    if (hasNpu && f !== undefined) {
      npuCost = { form: 'model', model: { model: 'scaled', of: 'gpu', factor: f }, source: { from: 'number', line: `--npu-stage ${s.role}=${f}: the NPU at ${f} x the iGPU's time (a what-if)` } };
    }
    const cost: Record<string, MeasuredCost | null> = { gpu: gpuCost };
    if (hasNpu) cost['npu'] = npuCost;
    return { kind, cost };
  });
  const present = new Set(gpu.stages.map((s) => s.role));
  for (const r of x.factors.keys()) if (!present.has(r)) notes.push(`--npu-stage ${r}: no such stage in the capture`);
  return stages;
}
