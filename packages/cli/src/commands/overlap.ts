import type { CommandModule } from 'yargs';
import { overlap } from '@tickwise/analyzer';
import { withAnalysis, withWork, workOption, workLine, selectionOptions, header, captures, dur, pct, excludedNote, type AnalysisArgs } from '../analysis-options';
import { withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

/** `tickwise overlap <input>`: dispatches in flight together, within and across devices. */
export const overlapCommand: CommandModule<object, AnalysisArgs & { work?: string }> = {
  command: 'overlap <inputs..>',
  describe: 'time with >= 2 dispatches in flight (and from different submissions) per device; busy time shared by device pairs',
  builder: (y) => withWork(withAnalysis(y)) as never,
  handler: async (args) => {
    const work = workOption(args.work);
    await withStore(args, async (store) => {
      const r = await overlap(store, { ...selectionOptions(args), work });
      const ids = r.devices.map((d) => d.capture_id);
      if (args.json) {
        out(formatJson({ ...r, captures: await captures(store, ids) }));
        return;
      }
      const lines = [await header(store, ids), `overlap within each device (segment ${r.segment}; shares are of the device's busy time, the union of its selected work)`, workLine(r.work, r.work_left_out)];
      lines.push(r.devices.length === 0 ? 'no timed dispatches selected' : formatTable(
        ['capture', 'device', 'kind', 'dispatches', 'busy', '>=2 in flight', 'share', 'cross-submission', 'share ', 'max in flight'],
        r.devices.map((d) => ({
          capture: d.capture_id, device: d.device, kind: d.kind, dispatches: d.dispatches, busy: dur(d.busy_ns),
          '>=2 in flight': dur(d.multi_inflight_ns), share: pct(d.multi_inflight_fraction),
          'cross-submission': dur(d.cross_submission_inflight_ns), 'share ': pct(d.cross_submission_fraction), 'max in flight': d.max_in_flight,
        })),
      ));
      if (r.device_pairs.length > 0) {
        lines.push(`\noverlap across devices (both busy at once, on ${r.device_pairs[0]!.clock_domain})`);
        lines.push(formatTable(['a', 'b', 'both busy', 'share of a busy', 'share of b busy'], r.device_pairs.map((p) => ({
          a: `capture ${p.a.capture_id} device ${p.a.device} (${p.a.kind})`,
          b: `capture ${p.b.capture_id} device ${p.b.device} (${p.b.kind})`,
          'both busy': dur(p.overlap_ns), 'share of a busy': pct(p.overlap_fraction_of_a), 'share of b busy': pct(p.overlap_fraction_of_b),
        }))));
      }
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
