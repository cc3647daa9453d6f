/**
 * The verdict on the first screen (issue 18.2): in a line or two, what the
 * capture shows and what to do next (pure).
 *
 * ```
 * errors among the findings          -> "N check error(s): numbers below may be wrong; see Check findings" (first)
 * per timeline, its busiest device:  idle share of its span, and who the idle waited on:
 *   launch correlation (Kineto, recorder): host wait share (the launch came late)
 *   else submissions (IREE): idle between submissions (the device waited for the host)
 *   idle >= 50 % and host >= 50 % of it -> launch-bound; see launches   (the analyzer's LAUNCH_BOUND_RULE)
 *   host >= 50 % of the idle only       -> partly launch-bound
 *   idle >= 50 %, host < 50 %           -> idle inside the work (dependencies, syncs); see gaps
 *   idle < 50 %                         -> device-bound; see kernels
 * split ceiling:  speedup < 1.05 -> not worth a dispatcher; >= target -> worth it; between: the tile it needs
 * ```
 */
import { LAUNCH_BOUND_RULE, type Finding, type IdleBreakdown } from '@tickwise/analyzer';
import { formatMs, formatSpeedup, requirementLine } from '@tickwise/ceiling';
import type { ReportCeiling, ReportDevice } from './model';

/** Below this per-GEMM speedup a split is not worth a dispatcher. */
export const NOT_WORTH_SPEEDUP = 1.05;

const KIND: Record<string, string> = { gpu: 'GPU', npu: 'NPU', cpu: 'CPU' };

function pct0(x: number): string {
  return `${Math.round(x * 100)} %`;
}

/** One device's line: idle, who it waited on, the reading and where to look. */
export function deviceVerdict(d: ReportDevice, breakdown: IdleBreakdown | null, prefix: string): string | null {
  if (d.idle_fraction === null || d.span_ns <= 0n) return null;
  const idle = d.idle_fraction;
  const where = `${prefix}${KIND[d.kind] ?? d.kind} idle ${pct0(idle)} (${d.coverage})`;
  let hostShare: number | null = null;
  let hostWhat = '';
  if (breakdown) {
    const total = breakdown.host_wait.idle_ns + breakdown.kernel_wait.idle_ns + breakdown.other.idle_ns;
    if (total > 0n) {
      hostShare = Number(breakdown.host_wait.idle_ns) / Number(total);
      hostWhat = 'host wait (launched late)';
    }
  } else if (d.idle_ns > 0n && (d.between_submissions.count > 0 || d.within_submission.count > 0)) {
    hostShare = Number(d.between_submissions.idle_ns) / Number(d.idle_ns);
    hostWhat = 'waiting for the host (between submissions)';
  }
  const of = hostShare === null ? '' : `, ${pct0(hostShare)} of it ${hostWhat}`;
  const hostLate = hostShare !== null && hostShare >= LAUNCH_BOUND_RULE.hostWaitShareMin;
  if (idle >= LAUNCH_BOUND_RULE.idleFractionMin && hostLate) return `${where}${of}: launch-bound; see launches (tickwise launches)`;
  if (hostLate && idle >= 0.1) return `${where}${of}: partly launch-bound; see launches and gaps`;
  if (idle >= LAUNCH_BOUND_RULE.idleFractionMin) return `${where}${of}: the idle is inside the work (dependencies, syncs); see gaps`;
  return `${where}${of}: device-bound; see kernels`;
}

/** The ceiling's line. */
export function ceilingVerdict(c: ReportCeiling): string | null {
  if (c.kind !== 'result') return null;
  const r = c.result;
  const s = formatSpeedup(r.speedup);
  if (r.speedup < NOT_WORTH_SPEEDUP) return `split ceiling ${s} (iGPU only ${formatMs(r.gpu_only_ms)} ms, split ${formatMs(r.split_ms)} ms): not worth a dispatcher`;
  if (r.target_speedup !== null && r.speedup >= r.target_speedup) return `split ceiling ${s}: meets the ${formatSpeedup(r.target_speedup)} target; worth a dispatcher; see Split ceiling`;
  // requirementLine says "N groups" for any N (the ceiling package's wording); one group is singular here
  const req = requirementLine(r)?.replace(/\b1 groups\b/g, '1 group') ?? null;
  return `split ceiling ${s}: below the ${r.target_speedup === null ? '' : `${formatSpeedup(r.target_speedup)} `}target${req ? `; ${req}` : ''}`;
}

/** The verdict lines; see the module comment. */
export function reportVerdict(devices: readonly ReportDevice[], breakdowns: ReadonlyMap<string, IdleBreakdown | null>, ceiling: ReportCeiling, findings: readonly Finding[]): string[] {
  const lines: string[] = [];
  const errors = findings.filter((f) => f.severity === 'error').length;
  if (errors > 0) lines.push(`${errors} check error${errors === 1 ? '' : 's'}: numbers below may be wrong; see Check findings`);
  const groups = [...new Set(devices.map((d) => d.group))];
  const busiest = groups.map((g) => devices.filter((d) => d.group === g).reduce((a, b) => (b.busy_ns > a.busy_ns ? b : a)));
  const shown = busiest.slice(0, 2);
  for (const d of shown) {
    const prefix = groups.length > 1 ? `capture ${d.capture_id}: ` : '';
    const line = deviceVerdict(d, breakdowns.get(`${d.capture_id}/${d.device}`) ?? null, prefix);
    if (line) lines.push(line);
  }
  if (busiest.length > shown.length) lines.push(`(${busiest.length - shown.length} more capture${busiest.length - shown.length === 1 ? '' : 's'}: see Devices)`);
  const c = ceilingVerdict(ceiling);
  if (c) lines.push(c);
  if (lines.length === 0) lines.push('no dispatch with a span to judge');
  return lines;
}
