import type { CommandModule } from 'yargs';
import { SegmentMethod, segments } from '@tickwise/analyzer';
import { withAnalysis, selectionOptions, header, captures, dur, excludedNote, type AnalysisArgs } from '../analysis-options';
import { withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

/** `tickwise segments <input>`: the repetitions (prefills) of each device. */
export const segmentsCommand: CommandModule<object, AnalysisArgs> = {
  command: 'segments <inputs..>',
  describe: 'the repetitions (prefills) in a capture: repeating kernel sequences between long host gaps (--reps N when known)',
  builder: (y) => withAnalysis(y) as never,
  handler: async (args) => {
    await withStore(args, async (store) => {
      const r = await segments(store, { ...selectionOptions(args), segment: 'all' });
      const ids = r.devices.map((d) => d.capture_id);
      if (args.json) {
        out(formatJson({ ...r, captures: await captures(store, ids) }));
        return;
      }
      const lines = [await header(store, ids)];
      for (const d of r.devices) {
        lines.push(`\ncapture ${d.capture_id} device ${d.device}: ${d.segments.length} segment${d.segments.length === 1 ? '' : 's'}; ${SegmentMethod[d.method]}` +
          (d.sequences_identical ? '' : '; kernel sequences differ between segments'));
        const rows = d.segments.map((s) => ({
          segment: s.segment, role: s.role, start_ns: s.start_ns, end_ns: s.end_ns, span: dur(s.span_ns), dispatches: s.dispatch_count,
          'gap before': dur(s.gap_before_ns), submissions: s.first_submission_id === null ? '-' : `${s.first_submission_id}..${s.last_submission_id}`,
          'same kernels as 0': s.same_sequence_as_first ? 'yes' : 'no',
        }));
        if (rows.length) lines.push(formatTable(Object.keys(rows[0]!), rows));
      }
      if (r.devices.length === 0) lines.push('no timed dispatches selected');
      lines.push('\nselect with --segment first | last | steady (all but 0) | N on gaps, overlap, kernels, cost');
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
