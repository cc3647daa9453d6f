import type { CommandModule } from 'yargs';
import { gaps, type GapScope } from '@tickwise/analyzer';
import { formatNs } from '@tickwise/time';
import { withAnalysis, selectionOptions, header, captures, dur, pct, excludedNote, type AnalysisArgs } from '../analysis-options';
import { durationOption, withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

interface Args extends AnalysisArgs {
  'min-gap'?: string;
}

function scopeRow(s: GapScope): Record<string, unknown> {
  return {
    capture: s.capture_id,
    device: s.device,
    queue: s.queue === null ? 'all' : s.queue,
    kind: s.kind,
    dispatches: s.dispatches,
    span: dur(s.span_ns),
    busy: dur(s.busy_ns),
    idle: dur(s.idle_ns),
    'idle %': pct(s.idle_fraction),
    gaps: s.gap_count,
    'max gap': dur(s.max_gap_ns),
    'over thr': s.gaps_over_threshold.count,
    'over thr idle': dur(s.gaps_over_threshold.idle_ns),
    'share of idle': pct(s.gaps_over_threshold.share_of_idle),
    'between subs': `${s.between_submissions.count} / ${dur(s.between_submissions.idle_ns)}`,
    'within sub': `${s.within_submission.count} / ${dur(s.within_submission.idle_ns)}`,
  };
}

/** `tickwise gaps <input>`: busy (union), idle and gaps per device and queue. */
export const gapsCommand: CommandModule<object, Args> = {
  command: 'gaps <inputs..>',
  describe: 'busy (union of dispatches), idle and idle gaps per device and queue; gaps between submissions vs inside one',
  builder: (y) =>
    withAnalysis(y).option('min-gap', {
      type: 'string',
      describe: 'report gaps longer than this separately; needs a unit: 200us, 0.2ms, 200000ns (default 200us)',
    }) as never,
  handler: async (args) => {
    const thresholdNs = durationOption(args['min-gap'], 'min-gap');
    await withStore(args, async (store) => {
      const r = await gaps(store, { ...selectionOptions(args), thresholdNs });
      const ids = r.scopes.map((s) => s.capture_id);
      if (args.json) {
        out(formatJson({ ...r, captures: await captures(store, ids) }));
        return;
      }
      const lines = [await header(store, ids)];
      lines.push(`gaps: idle between busy blocks (busy = union of dispatches); threshold: longer than ${formatNs(r.threshold_ns)}; segment ${r.segment}`);
      const rows = r.scopes.map(scopeRow);
      lines.push(rows[0] ? formatTable(Object.keys(rows[0]), rows) : 'no timed dispatches selected');
      for (const s of r.scopes.filter((x) => x.queue === null && x.histogram.length > 0)) {
        lines.push(`\ngap lengths, capture ${s.capture_id} device ${s.device} (${r.histogram_buckets})`);
        lines.push(formatTable(['from', 'to', 'gaps', 'idle', 'between subs', 'within sub'], s.histogram.map((h) => ({
          from: dur(h.lo_ns), to: dur(h.hi_ns), gaps: h.count, idle: dur(h.idle_ns), 'between subs': h.between_submissions_count, 'within sub': h.within_submission_count,
        }))));
      }
      lines.push('\nbetween subs: no submission has dispatches on both sides (the device waited for the host); within sub: a dependency bubble inside a submission');
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
