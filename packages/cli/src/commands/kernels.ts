import type { CommandModule } from 'yargs';
import { byDevice, deviceKey, kernelStats } from '@tickwise/analyzer';
import { withAnalysis, selectionOptions, header, captures, dur, pct, excludedNote, type AnalysisArgs } from '../analysis-options';
import { withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

/** `tickwise kernels <input>`: per-kernel statistics. */
export const kernelsCommand: CommandModule<object, AnalysisArgs> = {
  command: 'kernels <inputs..>',
  describe: 'per kernel: count, total, share of busy time (the union), mean, median, p10/p90, min/max',
  builder: (y) => withAnalysis(y) as never,
  handler: async (args) => {
    await withStore(args, async (store) => {
      const r = await kernelStats(store, selectionOptions(args));
      const ids = r.devices.map((d) => d.capture_id);
      if (args.json) {
        out(formatJson({ ...r, captures: await captures(store, ids) }));
        return;
      }
      const lines = [await header(store, ids)];
      // grouped once (a filter per device was devices x kernels: 100k one-kernel devices, a minute)
      const kernelsOf = byDevice(r.kernels);
      for (const d of r.devices) {
        lines.push(`\ncapture ${d.capture_id} device ${d.device} (${d.kind}): ${d.dispatches} dispatches, busy ${dur(d.busy_ns)} (union); segment ${r.segment}`);
        const rows = (kernelsOf.get(deviceKey(d)) ?? []).map((k) => ({
          kernel: k.kernel, count: k.count, total: dur(k.total_ns), 'of busy': pct(k.share_of_busy), mean: dur(k.mean_ns), median: dur(k.median_ns),
          p10: dur(k.p10_ns), p90: dur(k.p90_ns), min: dur(k.min_ns), max: dur(k.max_ns),
        }));
        lines.push(rows.length ? formatTable(Object.keys(rows[0]!), rows) : 'no timed dispatches');
      }
      if (r.devices.length === 0) lines.push('no timed dispatches selected');
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
