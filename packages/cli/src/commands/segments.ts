import type { CommandModule } from 'yargs';
import { SegmentMethod, segments } from '@tickwise/analyzer';
import { withAnalysis, selectionOptions, header, captures, dur, excludedNote, type AnalysisArgs } from '../analysis-options';
import { withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

/** Segments listed in full up to this many; more are summarised unless --list. */
const LIST_MAX = 12;

/** `tickwise segments <input>`: the repetitions (prefills) of each device. */
export const segmentsCommand: CommandModule<object, AnalysisArgs & { list?: boolean }> = {
  command: 'segments <inputs..>',
  describe: 'the repetitions (prefills) in a capture: repeating kernel sequences between long host gaps (--reps N when known)',
  builder: (y) => withAnalysis(y).option('list', { type: 'boolean', default: false, describe: `list every segment (default: a summary when there are more than ${LIST_MAX})` }) as never,
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
          (d.sequences_identical ? '' : d.cold_pass_extra_dispatches > 0 ? `; segment 0 is a cold pass with ${d.cold_pass_extra_dispatches} extra dispatches` : '; kernel order differs between segments (same kernels)'));
        for (const f of d.refused) lines.push(`  refused: ${f.method} would cut ${f.segments} segments: ${f.reason}`);
        const sm = d.summary;
        if (sm.count > 1) lines.push(`  ${sm.count} segments, span min ${dur(sm.min_span_ns)} / median ${dur(sm.median_span_ns)} / max ${dur(sm.max_span_ns)}${d.period_dispatches === null ? '' : `, ${d.period_dispatches} dispatches each`}`);
        const rows = d.segments.map((s) => ({
          segment: s.segment, role: s.role, start_ns: s.start_ns, end_ns: s.end_ns, span: dur(s.span_ns), dispatches: s.dispatch_count,
          'gap before': dur(s.gap_before_ns), submissions: s.first_submission_id === null ? '-' : `${s.first_submission_id}..${s.last_submission_id}`,
          'same order as 0': s.same_sequence_as_first ? 'yes' : 'no',
        }));
        const shown = args.list || rows.length <= LIST_MAX ? rows : [...rows.slice(0, 3), ...rows.slice(-2)];
        if (shown.length) lines.push(formatTable(Object.keys(shown[0]!), shown));
        if (shown.length < rows.length) lines.push(`  (${rows.length - shown.length} more segments not shown: the first 3 and the last 2; --list shows all)`);
      }
      if (r.devices.length === 0) lines.push('no timed dispatches selected');
      lines.push('\nselect with --segment first | last | steady (all but 0) | N on gaps, overlap, kernels, cost');
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
