import { TickwiseError } from '@tickwise/time';
import { costAt } from './cost-curve';
import { ceilingMessages as msg } from './messages';
import { fewestGroupsWithin, gpuOnlyMs, type SplitProblem } from './split-model';

/** What the NPU (or, alternatively, the iGPU alone) must reach for a target speedup. */
export interface RequiredTile {
  /** The per-GEMM speedup asked for. */
  readonly target_speedup: number;
  /** The wall time that speedup means: iGPU-only / target. */
  readonly target_ms: number;
  /** Whether any k can reach it (the iGPU's share alone may already be too slow). */
  readonly feasible: boolean;
  /** The fewest groups on the NPU that leave the iGPU's share + sync within target_ms. */
  readonly npu_groups: number | null;
  /** The largest NPU tile time that reaches the target: (target_ms - sync) / npu_groups. */
  readonly npu_tile_ms: number | null;
  /** Today's NPU tile time at those rows. */
  readonly npu_tile_ms_now: number | null;
  /** npu_tile_ms_now / npu_tile_ms: how many times faster the NPU tile must get (< 1: headroom). */
  readonly npu_tile_factor: number | null;
  /** The iGPU group time that gives the same speedup with no split at all: g / target. */
  readonly gpu_group_ms: number;
  /** Why it is infeasible, when it is. */
  readonly note: string | null;
}

/**
 * The inverse question: how fast must the NPU tile be for `target` speedup?
 * The wall time must be <= T = iGPU-only / target. The iGPU's share must fit:
 * the fewest k with gpu_ms(k) + sync <= T; then k tiles must fit too:
 * t <= (T - sync) / k. More groups only lower the allowed t, so this k gives
 * the loosest requirement. Worked example: T = 12.8 / 1.15 = 11.13 ms,
 * k = 5 (27 x 0.4 = 10.8 ms), t <= 2.23 ms.
 */
export function requiredTile(p: SplitProblem, target: number): RequiredTile {
  if (typeof target !== 'number' || !Number.isFinite(target) || !(target > 1)) throw new TickwiseError('invalid-input', msg.targetTooLow(target));
  const only = gpuOnlyMs(p);
  const targetMs = only / target;
  const budget = targetMs - p.sync_overhead_ms;
  const gpuGroupMs = costAt(p.gpu, p.rows).ms / target;
  const base = { target_speedup: target, target_ms: targetMs, gpu_group_ms: gpuGroupMs };
  if (!(budget > 0)) {
    return { ...base, feasible: false, npu_groups: null, npu_tile_ms: null, npu_tile_ms_now: null, npu_tile_factor: null,
      note: `the sync overhead (${p.sync_overhead_ms} ms) alone exceeds the target time ${targetMs} ms` };
  }
  const k = fewestGroupsWithin(p, budget);
  if (k !== null) {
    const tile = budget / k;
    const now = costAt(p.npu, k * p.group_rows).ms;
    return { ...base, feasible: true, npu_groups: k, npu_tile_ms: tile, npu_tile_ms_now: now, npu_tile_factor: now / tile, note: null };
  }
  return { ...base, feasible: false, npu_groups: null, npu_tile_ms: null, npu_tile_ms_now: null, npu_tile_factor: null,
    note: `even with all ${p.full_groups} whole groups on the NPU the iGPU's remaining rows plus sync exceed the target time` };
}
