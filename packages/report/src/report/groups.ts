/**
 * Which captures share a timeline (issue 18.1). Captures taken seconds apart
 * on one axis leave it empty to the eye, and comparing their devices means
 * nothing, so:
 *
 * ```
 * capture span = [first dispatch start, last dispatch end] over its devices
 * captures A, B join  <=>  some device of A and some of B are comparable
 *                          (one clock: analyzer's comparable) and the spans overlap
 * groups = connected components, in capture order; each drawn from its own first dispatch
 * ```
 */
import { comparable, type DevicePlan } from '@tickwise/analyzer';
import type { ReportDevice, ReportSegment, TimelineGroup, TimelineInterval } from './model';

/** "steady segments 1-3 of 4", "steady segment 1 of 2", "one segment", "all 4 segments". */
export function coverageOf(choice: 'steady' | 'all', segments: readonly ReportSegment[]): string {
  if (choice === 'steady' && segments.length >= 2) {
    const ids = segments.filter((s) => s.role !== 'first').map((s) => s.segment);
    const range = ids.length === 1 ? `segment ${ids[0]}` : `segments ${ids[0]}-${ids[ids.length - 1]}`;
    return `steady ${range} of ${segments.length}`;
  }
  return segments.length >= 2 ? `all ${segments.length} segments` : 'one segment';
}

/** The timelines of a report; see the module comment. */
export function timelineGroups(devices: readonly ReportDevice[], plans: readonly DevicePlan[], intervals: readonly TimelineInterval[]): TimelineGroup[] {
  const captures = [...new Set(devices.map((d) => d.capture_id))];
  const span = new Map<number, { start: bigint; end: bigint }>();
  for (const d of devices) {
    for (const i of intervals) {
      if (i.label !== d.label) continue;
      const s = span.get(d.capture_id);
      span.set(d.capture_id, s ? { start: i.start_ns < s.start ? i.start_ns : s.start, end: i.end_ns > s.end ? i.end_ns : s.end } : { start: i.start_ns, end: i.end_ns });
    }
  }
  const parent = new Map(captures.map((c) => [c, c]));
  const find = (c: number): number => (parent.get(c) === c ? c : find(parent.get(c)!));
  for (const [i, a] of captures.entries()) {
    for (const b of captures.slice(i + 1)) {
      const sa = span.get(a);
      const sb = span.get(b);
      if (!sa || !sb || sa.start >= sb.end || sb.start >= sa.end) continue;
      const pa = plans.filter((p) => p.capture_id === a);
      const pb = plans.filter((p) => p.capture_id === b);
      if (pa.some((x) => pb.some((y) => comparable(x, y)))) parent.set(find(b), find(a));
    }
  }
  const roots = [...new Set(captures.map(find))];
  return roots.map((root, n) => {
    const ids = captures.filter((c) => find(c) === root);
    const mine = devices.filter((d) => ids.includes(d.capture_id));
    const starts = ids.map((c) => span.get(c)?.start).filter((x): x is bigint => x !== undefined);
    const ends = ids.map((c) => span.get(c)?.end).filter((x): x is bigint => x !== undefined);
    const name = (c: number) => mine.find((d) => d.capture_id === c)!.label.split(' · ').slice(1).join(' · ').replace(/ \(capture \d+, device \d+\)$/, '');
    return {
      id: n === 0 ? 'timeline' : `timeline-${n + 1}`,
      title: ids.length === 1 ? `capture ${ids[0]}: ${name(ids[0]!)}` : `captures ${ids.join(', ')} (one clock, at the same time): ${ids.map(name).join(', ')}`,
      capture_ids: ids,
      labels: mine.map((d) => d.label),
      origin_ns: starts.reduce((m, x) => (x < m ? x : m), starts[0] ?? 0n),
      end_ns: ends.reduce((m, x) => (x > m ? x : m), ends[0] ?? 0n),
    };
  });
}
