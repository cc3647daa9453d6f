import type { CommandModule } from 'yargs';
import { gaps, type GapScope } from '@tickwise/analyzer';
import { formatNs } from '@tickwise/time';
import { withAnalysis, withWork, workOption, workLine, selectionOptions, header, captures, dur, pct, excludedNote, type AnalysisArgs } from '../analysis-options';
import { durationOpt, durationOption, withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

interface Args extends AnalysisArgs {
  'min-gap'?: string;
  work?: string;
}

function scopeRow(s: GapScope, subs: boolean): Record<string, unknown> {
  const row: Record<string, unknown> = {
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
  };
  if (subs) {
    row['between subs'] = `${s.between_submissions.count} / ${dur(s.between_submissions.idle_ns)}`;
    row['within sub'] = `${s.within_submission.count} / ${dur(s.within_submission.idle_ns)}`;
  }
  return row;
}

function breakdownRow(s: GapScope): Record<string, unknown> | null {
  const b = s.idle_breakdown;
  if (b === null) return null;
  const total = b.host_wait.idle_ns + b.kernel_wait.idle_ns + b.other.idle_ns;
  const share = (x: bigint) => pct(total > 0n ? Number(x) / Number(total) : null);
  return {
    capture: s.capture_id, device: s.device, queue: s.queue === null ? 'all (sum of queues)' : s.queue,
    'host wait': `${b.host_wait.gaps} / ${dur(b.host_wait.idle_ns)} (${share(b.host_wait.idle_ns)})`,
    'kernel wait': `${b.kernel_wait.gaps} / ${dur(b.kernel_wait.idle_ns)}`,
    other: `${b.other.gaps} / ${dur(b.other.idle_ns)} (${share(b.other.idle_ns)})`,
    'linked to a launch': `${b.linked} of ${b.rows}`,
  };
}

/** `tickwise gaps <input>`: busy (union), idle and gaps per device and queue. */
export const gapsCommand: CommandModule<object, Args> = {
  command: 'gaps <inputs..>',
  describe: 'busy (union of dispatches), idle and idle gaps per device and queue; gaps between submissions vs inside one',
  builder: (y) =>
    withWork(withAnalysis(y)).option('min-gap', durationOpt('report gaps longer than this separately (default 200us)')) as never,
  handler: async (args) => {
    const thresholdNs = durationOption(args['min-gap'], 'min-gap');
    const work = workOption(args.work);
    await withStore(args, async (store) => {
      const r = await gaps(store, { ...selectionOptions(args), thresholdNs, work });
      const ids = r.scopes.map((s) => s.capture_id);
      if (args.json) {
        out(formatJson({ ...r, captures: await captures(store, ids) }));
        return;
      }
      const lines = [await header(store, ids)];
      lines.push(`gaps: idle between busy blocks (busy = union of the selected work); threshold: longer than ${formatNs(r.threshold_ns)}; segment ${r.segment}`);
      lines.push(workLine(r.work, r.work_left_out));
      const subs = r.scopes.some((s) => s.has_submissions);
      const rows = r.scopes.map((s) => scopeRow(s, subs));
      lines.push(rows[0] ? formatTable(Object.keys(rows[0]), rows) : 'no timed dispatches selected');
      for (const s of r.scopes.filter((x) => x.queue === null && x.histogram.length > 0)) {
        lines.push(`\ngap lengths, capture ${s.capture_id} device ${s.device} (${r.histogram_buckets})`);
        const cols = subs ? ['from', 'to', 'gaps', 'idle', 'between subs', 'within sub'] : ['from', 'to', 'gaps', 'idle'];
        lines.push(formatTable(cols, s.histogram.map((h) => ({
          from: dur(h.lo_ns), to: dur(h.hi_ns), gaps: h.count, idle: dur(h.idle_ns), 'between subs': h.between_submissions_count, 'within sub': h.within_submission_count,
        }))));
      }
      const bd = r.scopes.map(breakdownRow).filter((x): x is Record<string, unknown> => x !== null);
      if (bd.length > 0) {
        lines.push(`\nidle by launch (per queue/stream, previous row on the same queue; HTA's idle-time breakdown): gaps / idle (share of the queues' idle)`);
        lines.push(formatTable(Object.keys(bd[0]!), bd));
        for (const s of r.scopes.filter((x) => x.queue === null && x.idle_breakdown && x.idle_breakdown.driver_linked > 0)) {
          const h = s.idle_breakdown!.hta;
          lines.push(`capture ${s.capture_id} device ${s.device}: ${s.idle_breakdown!.driver_linked} rows were launched by driver calls (cuLaunchKernelEx...), counted here; HTA links runtime calls only and gives host wait ${dur(h.host_wait.idle_ns)}, kernel wait ${dur(h.kernel_wait.idle_ns)}, other ${dur(h.other.idle_ns)}`);
        }
        lines.push(`host wait: the launch call came after the previous row on its queue ended (the host was late); kernel wait: launched in time, gap under ${formatNs(r.scopes.find((s) => s.idle_breakdown)!.idle_breakdown!.kernel_wait_threshold_ns)}; other: launched in time, the queue still idled (waits on other queues, events, syncs)`);
      }
      if (subs) lines.push('\nbetween subs: no submission has dispatches on both sides (the device waited for the host); within sub: a dependency bubble inside a submission');
      else lines.push('\nno submissions in these captures: gaps are not classed by submission');
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
