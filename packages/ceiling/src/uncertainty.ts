import { costAt, costStat, hasSpread, type CostStat } from './cost-curve';
import { endToEndSpeedup } from './end-to-end';
import { bestSplit, type SplitProblem } from './split-model';

/** One end of a speedup range: which cost statistics produced it, and the split there. */
export interface SpeedupBound {
  /** Per-GEMM speedup at the best k for these costs. */
  readonly speedup: number;
  /** Best k for these costs. */
  readonly npu_groups: number;
  /** Which statistic of the iGPU cost (p10, p90, mean) was used. */
  readonly gpu_stat: CostStat;
  /** Which statistic of the NPU cost was used. */
  readonly npu_stat: CostStat;
  /** iGPU ms per group at M for that statistic. */
  readonly gpu_group_ms: number;
  /** NPU ms per tile at the split (at G rows when k = 0) for that statistic. */
  readonly npu_tile_ms: number;
  /** End-to-end speedup, when a splittable fraction is known. */
  readonly end_to_end_speedup: number | null;
}

/** The speedup range spanned by the measured p10/p90 of both costs. */
export interface SpeedupRange {
  /** The least speedup over the corners (typically iGPU p10 with NPU p90). */
  readonly low: SpeedupBound;
  /** The greatest (typically iGPU p90 with NPU p10). */
  readonly high: SpeedupBound;
  /** What the range means, in one line. */
  readonly basis: string;
}

/**
 * A speedup range from the spread of measured costs: the model re-solved
 * (best k each time) at every corner of {iGPU p10, p90} x {NPU p10, p90}
 * (a cost without a measured spread stays at its mean), keeping the least
 * and greatest speedup. The p10/p90 are of per-dispatch times: this is the
 * range if every group ran at that percentile, a bound from the dispatch
 * spread, not a confidence interval of the mean. Null when neither cost has
 * a measured spread.
 */
export function speedupRange(p: SplitProblem, splittableFraction: number | null): SpeedupRange | null {
  if (!hasSpread(p.gpu) && !hasSpread(p.npu)) return null;
  // Corners first, so a tie names the p10/p90 corner rather than the mean.
  const stats = (has: boolean): CostStat[] => (has ? ['p10', 'p90', 'mean'] : ['mean']);
  const bounds: SpeedupBound[] = [];
  for (const gs of stats(hasSpread(p.gpu))) {
    for (const ns of stats(hasSpread(p.npu))) {
      const q: SplitProblem = { ...p, gpu: costStat(p.gpu, gs), npu: costStat(p.npu, ns) };
      const b = bestSplit(q);
      bounds.push({
        speedup: b.speedup,
        npu_groups: b.npu_groups,
        gpu_stat: gs,
        npu_stat: ns,
        gpu_group_ms: costAt(q.gpu, q.rows).ms,
        npu_tile_ms: b.npu_tile_ms ?? costAt(q.npu, q.group_rows).ms,
        end_to_end_speedup: splittableFraction === null ? null : endToEndSpeedup(splittableFraction, b.speedup),
      });
    }
  }
  let low = bounds[0]!;
  let high = bounds[0]!;
  for (const b of bounds) {
    if (b.speedup < low.speedup) low = b;
    if (b.speedup > high.speedup) high = b;
  }
  return {
    low,
    high,
    basis: 'model re-solved with each cost at its measured p10 and p90 (per-dispatch spread: a bound if every group ran at that percentile, not a confidence interval of the mean)',
  };
}
