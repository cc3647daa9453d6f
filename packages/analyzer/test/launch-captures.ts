/**
 * A generated pair of captures for diff and launches (scripts/gen's
 * generateFromDispatches, true host ns): a 28-layer prefill pass whose
 * layers launch the whole batch (128 rows: workgroup counts [128, 1, 1]),
 * then the LM head. In the batched capture the head is one 128-row launch
 * of 2 ms; in the row-at-a-time capture it is one 128-row launch and then
 * 128 one-row launches of 1 ms each (each its own submission, 30 us
 * apart). Two passes each, 50 ms apart.
 */
import { generateFromDispatches, type HandMadeDispatch } from '../../../scripts/gen/ireeperf';

/** Start of the first pass, true host ns (after the generator's clock offset). */
const T0 = 760_000_000_000;
export const LAYERS_DEFAULT = 28;
export const PASSES = 2;
export const ROWS_DEFAULT = 128;
export const GEMM_NS = 2_000_000;
export const NORM_NS = 100_000;
export const HEAD_ROW_NS = 1_000_000;
export const GAP_NS = 20_000;
export const ROW_GAP_NS = 30_000;

/** Sizes of a generated pair (defaults: the numbers above). */
export interface PairShape {
  readonly layers?: number;
  readonly rows?: number;
}

/** Dispatches of one capture. */
export function passes(rowAtATime: boolean, shape: PairShape = {}): HandMadeDispatch[] {
  const layers = shape.layers ?? LAYERS_DEFAULT;
  const rows = shape.rows ?? ROWS_DEFAULT;
  const out: HandMadeDispatch[] = [];
  let t = T0;
  let sub = 0;
  for (let p = 0; p < PASSES; p++) {
    for (let l = 0; l < layers; l++) {
      sub++;
      out.push({ key: 'rmsnorm', start_ns: t, end_ns: t + NORM_NS, submission: sub, segment: p, workgroup_count: [rows, 1, 1] });
      t += NORM_NS + GAP_NS;
      out.push({ key: 'layer_gemm', start_ns: t, end_ns: t + GEMM_NS, submission: sub, segment: p, workgroup_count: [rows, 1, 1] });
      t += GEMM_NS + GAP_NS;
    }
    sub++;
    out.push({ key: 'lm_head_gemm', start_ns: t, end_ns: t + GEMM_NS, submission: sub, segment: p, workgroup_count: [rows, 1, 1] });
    t += GEMM_NS + GAP_NS;
    if (rowAtATime) {
      for (let r = 0; r < rows; r++) {
        sub++;
        out.push({ key: 'lm_head_gemm', start_ns: t, end_ns: t + HEAD_ROW_NS, submission: sub, segment: p, workgroup_count: [1, 1, 1] });
        t += HEAD_ROW_NS + ROW_GAP_NS;
      }
    }
    t += 50_000_000;
  }
  return out;
}

/** ireeperf-jsonl text of the batched capture. */
export function batchedCapture(shape: PairShape = {}): string {
  return generateFromDispatches({ dispatches: passes(false, shape) }).text;
}

/** ireeperf-jsonl text of the row-at-a-time capture. */
export function rowAtATimeCapture(shape: PairShape = {}): string {
  return generateFromDispatches({ dispatches: passes(true, shape) }).text;
}
