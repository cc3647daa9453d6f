import type { CommandModule } from 'yargs';
import { LAUNCH_DEFAULTS, launches, QUEUE_DEPTH_CAP, type LaunchGroup } from '@tickwise/analyzer';
import { withAnalysis, selectionOptions, header, captures, dur, pct, excludedNote, type AnalysisArgs } from '../analysis-options';
import { withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

interface Args extends AnalysisArgs {
  kernel?: string;
  'rows-per-dispatch'?: number;
  'latency-ratio': number;
}

const x = (v: number | null) => (v === null ? '-' : `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)}x`);

function work(g: LaunchGroup): string {
  if (g.work_per_launch === null) return '?';
  const unit = g.work_unit === 'workgroups' ? 'wg' : g.work_unit === 'rows (given)' ? 'rows (given)' : 'rows';
  return `${g.work_per_launch} ${unit}${g.workgroup_count ? ` [${g.workgroup_count.join('x')}]` : ''}`;
}

/**
 * `tickwise launches <input> [--kernel GLOB] [--rows-per-dispatch N]`:
 * per launch group (kernel x work per launch), work against time, with
 * latency-bound groups flagged; submit-to-start latency per device; NPU
 * submit-to-completion per command and commands per EXEC_CMD.
 */
export const launchesCommand: CommandModule<object, Args> = {
  command: 'launches <inputs..>',
  describe: 'per launch group (kernel x work per launch): time per launch and per unit of work, latency-bound groups flagged; submit-to-start latency; NPU commands',
  builder: (y) =>
    withAnalysis(y)
      .option('kernel', { type: 'string', describe: 'only kernels matching this glob (case-sensitive: * ? [..])' })
      .option('rows-per-dispatch', { type: 'number', describe: 'rows one launch covers, where the source carries neither rows nor workgroup counts' })
      .option('latency-ratio', { type: 'number', default: LAUNCH_DEFAULTS.latencyRatio, describe: 'latency-bound when time per unit of work is this many times the same kernel\'s best' }) as never,
  handler: async (args) => {
    await withStore(args, async (store) => {
      const r = await launches(store, { ...selectionOptions(args), kernel: args.kernel, rowsPerDispatch: args['rows-per-dispatch'], latencyRatio: args['latency-ratio'] });
      const ids = [...new Set([...r.groups.map((g) => g.capture_id), ...r.submit_latency.map((s) => s.capture_id), ...r.npu_commands.map((n) => n.capture_id)])];
      if (args.json) {
        out(formatJson({ ...r, captures: await captures(store, ids) }));
        return;
      }
      const lines = [await header(store, ids)];
      lines.push(`\nlaunch groups (kernel x work per launch), segment ${r.segment}; sorted by excess time (time beyond the same kernel's best time per unit of work)`);
      const rows = r.groups.map((g) => ({
        capture: g.capture_id, device: g.device, kernel: g.kernel, 'work/launch': work(g), launches: g.launches, total: dur(g.total_ns),
        'mean/launch': dur(g.mean_ns), 'median/launch': dur(g.median_ns), 'time/work': g.ns_per_work === null ? '-' : dur(g.ns_per_work),
        'per-work vs best': x(g.per_work_ratio), 'per-launch vs best': x(g.per_launch_ratio), excess: dur(g.excess_ns), flag: g.latency_bound ? 'LATENCY-BOUND' : '',
      }));
      lines.push(rows.length ? formatTable(Object.keys(rows[0]!), rows) : 'no timed dispatches selected');
      const bound = r.groups.filter((g) => g.latency_bound);
      if (bound.length) {
        lines.push(`\n${bound.length} latency-bound group(s):`);
        for (const g of bound) {
          lines.push(`  capture ${g.capture_id} device ${g.device} ${g.kernel} at ${work(g)} per launch: ${g.launches} launches of ${dur(g.mean_ns)} (${x(g.per_launch_ratio)} the per-launch time at ${g.best_work_per_launch} per launch); ${g.reason}; ${dur(g.excess_ns)} beyond the best rate`);
        }
      }
      lines.push(`(${r.latency_rule})`);
      const lat = r.submit_latency.filter((s) => s.submissions > 0);
      lines.push('\nsubmit-to-start latency (host submit time to the first dispatch start of that submission):');
      if (lat.length) {
        lines.push(formatTable(['capture', 'device', 'kind', 'submissions', 'mean', 'median', 'p90', 'min', 'max', 'negative'], lat.map((s) => ({
          capture: s.capture_id, device: s.device, kind: s.kind, submissions: s.submissions, mean: dur(s.mean_ns), median: dur(s.median_ns), p90: dur(s.p90_ns),
          min: dur(s.min_ns), max: dur(s.max_ns), negative: s.negative,
        }))));
      }
      for (const s of r.submit_latency.filter((v) => v.note)) lines.push(`  capture ${s.capture_id} device ${s.device}: ${s.note}`);
      const lc = r.launch_correlation.filter((c) => c.linked > 0);
      if (lc.length) {
        lines.push('\nlaunch calls (each kernel linked to its launch API call by correlation id): launch-to-start delay = device start - call start');
        lines.push(formatTable(['capture', 'device', 'kernels', 'linked', 'kernels/call', 'mean', 'median', 'p90', 'p99', 'max', 'idle', 'host-late idle', 'verdict'], lc.map((c) => ({
          capture: c.capture_id, device: c.device, kernels: c.kernels, linked: c.linked, 'kernels/call': c.kernels_per_launch === null ? '-' : Number(c.kernels_per_launch.toFixed(3)),
          mean: dur(c.delay.mean_ns), median: dur(c.delay.median_ns), p90: dur(c.delay.p90_ns), p99: dur(c.delay.p99_ns), max: dur(c.delay.max_ns),
          idle: pct(c.idle_fraction), 'host-late idle': pct(c.host_wait_share_of_idle), verdict: c.verdict.toUpperCase(),
        }))));
        for (const c of lc) {
          lines.push(`
capture ${c.capture_id} device ${c.device}: launches per API: ${c.apis.map((a) => `${a.api} ${a.launches}`).join(', ')}`);
          const depthTotal = c.queue_depth.reduce((a, d) => a + d.ns, 0n);
          lines.push(`  queue depth (kernels launched, not finished): max ${c.max_queue_depth}, time-weighted mean ${c.mean_queue_depth === null ? '-' : c.mean_queue_depth.toFixed(2)}; time at depth: ${c.queue_depth.map((d) => `${d.depth}${d.depth >= QUEUE_DEPTH_CAP ? '+' : ''} ${pct(depthTotal > 0n ? Number(d.ns) / Number(depthTotal) : null)}`).join(', ')}`);
          lines.push(formatTable(['kernel', 'launches', 'linked', 'median delay', 'total'], c.per_kernel.map((k) => ({
            kernel: k.kernel.length > 80 ? `${k.kernel.slice(0, 77)}...` : k.kernel, launches: k.launches, linked: k.linked, 'median delay': dur(k.median_delay_ns), total: dur(k.total_ns),
          }))));
          if (c.note) lines.push(`  ${c.note}`);
        }
        lines.push(`(${r.launch_bound_rule})`);
      }
      for (const c of r.launch_correlation.filter((x) => x.linked === 0 && x.kernels > 0)) lines.push(`  capture ${c.capture_id} device ${c.device}: ${c.note}`);
      if (r.npu_commands.length) {
        lines.push('\nNPU commands (EXEC_CMD to observed completion):');
        lines.push(formatTable(['capture', 'device', 'hwctx', 'exec calls', 'commands', 'commands/exec', 'completed', 'mean', 'median', 'p90', 'max', 'in ioctl'], r.npu_commands.map((n) => ({
          capture: n.capture_id, device: n.device, hwctx: n.hwctx, 'exec calls': n.exec_calls, commands: n.commands, 'commands/exec': Number(n.commands_per_exec.toFixed(3)),
          completed: n.completed, mean: dur(n.mean_submit_to_complete_ns), median: dur(n.median_submit_to_complete_ns), p90: dur(n.p90_submit_to_complete_ns),
          max: dur(n.max_submit_to_complete_ns), 'in ioctl': dur(n.mean_exec_ioctl_ns),
        }))));
      } else {
        lines.push('\nNPU commands: none in the input (no EXEC_CMD records in host_events)');
      }
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
