import { costAt, scaleCost } from './cost-curve';
import { endToEndSpeedup } from './end-to-end';
import { bestSplit, splitProblem, type SplitProblem } from './split-model';

/**
 * The inputs the sensitivity table varies, with their labels. A cost curve is
 * scaled as a whole; rows are rounded to whole rows; the fraction is capped at 1.
 */
export const SENSITIVITY_INPUTS = {
  gpu_group_ms: 'iGPU ms per group',
  npu_tile_ms: 'NPU ms per tile',
  rows: 'rows M',
  sync_overhead_ms: 'sync overhead',
  splittable_fraction: 'splittable fraction',
} as const;
/** A varied input. */
export type SensitivityInput = keyof typeof SENSITIVITY_INPUTS;

/** The changes the table applies to each input, in percent. */
export const SENSITIVITY_STEPS_PCT = [-25, -10, 10, 25] as const;

/** One row: one input changed by `change_pct`, the rest as measured. */
export interface SensitivityRow {
  /** Which input was changed. */
  readonly input: SensitivityInput;
  /** The change, in percent. */
  readonly change_pct: number;
  /** The input's value after the change (for a curve: its value at M, or at the split rows for the NPU). */
  readonly value: number;
  /** Best k with that change. */
  readonly npu_groups: number;
  /** Per-GEMM speedup with that change. */
  readonly speedup: number;
  /** Change of the speedup against the base, in percent. */
  readonly speedup_change_pct: number;
  /** End-to-end speedup with that change, when a splittable fraction is known. */
  readonly end_to_end_speedup: number | null;
}

/**
 * Each input moved by -25, -10, +10, +25 % with the others held, the model
 * re-solved each time (best k may move). Sync overhead is skipped when it is
 * zero, the splittable fraction when none was given.
 */
export function sensitivityTable(p: SplitProblem, splittableFraction: number | null): SensitivityRow[] {
  const base = bestSplit(p);
  const baseNpuTile = base.npu_tile_ms ?? costAt(p.npu, p.group_rows).ms;
  const rows: SensitivityRow[] = [];
  const push = (input: SensitivityInput, pct: number, value: number, q: SplitProblem, f: number | null) => {
    const b = bestSplit(q);
    rows.push({
      input,
      change_pct: pct,
      value,
      npu_groups: b.npu_groups,
      speedup: b.speedup,
      speedup_change_pct: (b.speedup / base.speedup - 1) * 100,
      end_to_end_speedup: f === null ? null : endToEndSpeedup(f, b.speedup),
    });
  };
  for (const pct of SENSITIVITY_STEPS_PCT) {
    const x = 1 + pct / 100;
    push('gpu_group_ms', pct, costAt(p.gpu, p.rows).ms * x, { ...p, gpu: scaleCost(p.gpu, x) }, splittableFraction);
  }
  for (const pct of SENSITIVITY_STEPS_PCT) {
    const x = 1 + pct / 100;
    push('npu_tile_ms', pct, baseNpuTile * x, { ...p, npu: scaleCost(p.npu, x) }, splittableFraction);
  }
  for (const pct of SENSITIVITY_STEPS_PCT) {
    const m = Math.max(1, Math.round(p.rows * (1 + pct / 100)));
    push('rows', pct, m, splitProblem({ ...p, rows: m }), splittableFraction);
  }
  if (p.sync_overhead_ms > 0) {
    for (const pct of SENSITIVITY_STEPS_PCT) {
      const s = p.sync_overhead_ms * (1 + pct / 100);
      push('sync_overhead_ms', pct, s, { ...p, sync_overhead_ms: s }, splittableFraction);
    }
  }
  if (splittableFraction !== null) {
    for (const pct of SENSITIVITY_STEPS_PCT) {
      const f = Math.min(1, splittableFraction * (1 + pct / 100));
      push('splittable_fraction', pct, f, p, f);
    }
  }
  return rows;
}
