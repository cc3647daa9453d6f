import type { CommandModule } from 'yargs';
import { deviceKey, overlap } from '@tickwise/analyzer';
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
      // devices of different runs (spans that never meet) are not compared (issue 18.1); --json keeps every pair
      const spans = await store.query({ capture_id: 'number', device: 'number', first_ns: 'bigint', last_ns: 'bigint' },
        `SELECT capture_id, device, min(start_ns) AS first_ns, max(end_ns) AS last_ns FROM dispatches WHERE valid AND start_ns IS NOT NULL GROUP BY ALL`);
      const spanOf = new Map(spans.map((x) => [deviceKey(x), x]));
      const span = (d: { capture_id: number; device: number }) => spanOf.get(deviceKey(d));
      const together = r.device_pairs.filter((p) => {
        const a = span(p.a);
        const b = span(p.b);
        return a !== undefined && b !== undefined && a.first_ns < b.last_ns && b.first_ns < a.last_ns;
      });
      const apart = r.device_pairs.length - together.length;
      if (together.length > 0) {
        lines.push(`\noverlap across devices that ran at the same time (both busy at once, on ${together[0]!.clock_domain})`);
        lines.push(formatTable(['a', 'b', 'both busy', 'share of a busy', 'share of b busy'], together.map((p) => ({
          a: `capture ${p.a.capture_id} device ${p.a.device} (${p.a.kind})`,
          b: `capture ${p.b.capture_id} device ${p.b.device} (${p.b.kind})`,
          'both busy': dur(p.overlap_ns), 'share of a busy': pct(p.overlap_fraction_of_a), 'share of b busy': pct(p.overlap_fraction_of_b),
        }))));
      }
      if (apart > 0) lines.push(`${together.length ? '' : '\n'}${apart} pair${apart === 1 ? '' : 's'} of devices that never ran at the same time (different runs) not compared; --json lists them`);
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
