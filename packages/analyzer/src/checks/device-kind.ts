/**
 * `device-kind-npu-names` (issue 18.12): a device whose kernels all carry an
 * NPU marker (a name starting `npu_` or `npu-`, or with `_npu_` inside) but
 * whose kind is not npu. Sources such as ireeperf-jsonl do not say what
 * kind of device ran the work, so the NPU sample imported without
 * `--device-kind npu` reads as a gpu; the split ceiling and the schedule
 * then find no NPU. A warning with the option to pass.
 */
import { checkMessages as msg } from './messages';
import { captureFilter } from './sql';
import { defineRule, type Finding } from './types';

/** A kernel name that says NPU: `npu_...`, `npu-...`, `..._npu_...` (case-insensitive). */
export const NPU_MARKER_SQL = `regexp_matches(lower(kernel), '(^|[_.-])npu[_.-]')`;

/** `device-kind-npu-names`. */
export const deviceKindNpuNames = defineRule({
  code: 'device-kind-npu-names',
  worst: 'warning',
  shape: { capture_id: 'number', device: 'number', kind: 'string', kernels: 'number', marked: 'number', example: 'string?' },
  // the marker test runs once per distinct name, not once per dispatch
  sql: (scope) => `SELECT d.capture_id, d.device, d.kind, count(*) AS kernels,
      count(*) FILTER (WHERE ${NPU_MARKER_SQL}) AS marked, min(k.kernel) AS example
    FROM devices d
    JOIN (SELECT DISTINCT capture_id, device, kernel FROM dispatches WHERE kernel IS NOT NULL) k
      ON k.capture_id = d.capture_id AND k.device = d.device
    WHERE ${captureFilter(scope, 'd')} AND d.kind <> 'npu'
    GROUP BY d.capture_id, d.device, d.kind ORDER BY d.capture_id, d.device`,
  evaluate: (rows) =>
    rows.filter((r) => r.kernels > 0 && r.marked === r.kernels).map((r): Finding => ({
      code: 'device-kind-npu-names', severity: 'warning', capture_id: r.capture_id, device: r.device,
      message: msg.npuNames(r.capture_id, r.device, r.kind, r.kernels, r.example ?? ''), advice: msg.npuNamesAdvice(),
      kind: r.kind, kernels: r.kernels, suggested_option: '--device-kind npu',
    })),
});
