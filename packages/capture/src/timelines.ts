import { SHARED_TIMELINES, type Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { traceMessages } from './trace-messages';

export { Timeline, isTimeline, SHARED_TIMELINES } from '@tickwise/store';

/** One capture's timeline, as recorded at import. */
export interface CaptureTimeline {
  readonly capture_id: number;
  readonly format: string;
  readonly label: string;
  readonly timeline: string;
  /** The host it was captured on, when the source says (conditions key `host.hostname`). */
  readonly hostname: string | null;
}

/** The answer of {@link compatibleTimelines}. */
export interface TimelineCheck {
  /** True when every capture is on one shared timeline of one host. */
  readonly ok: boolean;
  /** The common timeline when ok. */
  readonly timeline: string | null;
  readonly captures: readonly CaptureTimeline[];
  /** Why not, in words (null when ok). */
  readonly reason: string | null;
}

const TIMELINE_SHAPE = { capture_id: 'number', format: 'string', label: 'string?', path: 'string', timeline: 'string', hostname: 'string?' } as const;

/** The timeline of each capture (all captures when `captureIds` is omitted). */
export async function timelinesOf(store: Store, captureIds?: readonly number[]): Promise<CaptureTimeline[]> {
  const rows = await store.query(
    TIMELINE_SHAPE,
    `SELECT c.capture_id::INTEGER AS capture_id, c.format, c.label, c.path, c.timeline,
       (SELECT max(value) FROM conditions k WHERE k.capture_id = c.capture_id AND k.key IN ('host.hostname', 'hostname')) AS hostname
     FROM captures c ORDER BY c.capture_id`,
  );
  const all = rows.map((r) => ({ capture_id: r.capture_id, format: r.format, label: r.label ?? r.path, timeline: r.timeline, hostname: r.hostname ?? null }));
  if (!captureIds) return all;
  return captureIds.map((id) => {
    const c = all.find((r) => r.capture_id === id);
    if (!c) throw new TickwiseError('unknown-capture', traceMessages.unknownCapture(id));
    return c;
  });
}

/** The timeline of one capture. */
export async function timelineOf(store: Store, captureId: number): Promise<CaptureTimeline> {
  return (await timelinesOf(store, [captureId]))[0]!;
}

/**
 * Whether the captures' times can be compared: all on one timeline that
 * captures can share (host_monotonic, boottime or realtime) and, where the
 * sources name their host, on one host. A single capture is always
 * compatible with itself. The relations that put a source on a shared
 * timeline (a boottime offset, a steady clock read as CLOCK_MONOTONIC, a
 * clock named on the command line) are in `assumptions`.
 */
export async function compatibleTimelines(store: Store, captureIds?: readonly number[]): Promise<TimelineCheck> {
  const captures = await timelinesOf(store, captureIds);
  if (captures.length === 0) return { ok: false, timeline: null, captures, reason: traceMessages.noCaptures() };
  if (captures.length === 1) return { ok: true, timeline: captures[0]!.timeline, captures, reason: null };
  const privateOne = captures.find((c) => !SHARED_TIMELINES.has(c.timeline));
  if (privateOne) {
    return { ok: false, timeline: null, captures, reason: traceMessages.timelineNotShared(privateOne.capture_id, privateOne.label, privateOne.timeline) };
  }
  const timelines = new Set(captures.map((c) => c.timeline));
  if (timelines.size > 1) {
    const list = captures.map((c) => `capture ${c.capture_id} ${c.timeline}`).join(', ');
    return { ok: false, timeline: null, captures, reason: traceMessages.timelinesDiffer(list) };
  }
  const hosts = new Set(captures.map((c) => c.hostname).filter((h): h is string => h !== null));
  if (hosts.size > 1) {
    const list = captures.filter((c) => c.hostname !== null).map((c) => `capture ${c.capture_id} ${c.hostname}`).join(', ');
    return { ok: false, timeline: null, captures, reason: traceMessages.hostsDiffer(list) };
  }
  return { ok: true, timeline: captures[0]!.timeline, captures, reason: null };
}

/**
 * Throws a TickwiseError (exit 2) that names `what` and the reason when the
 * captures are not on one timeline; returns the common timeline otherwise.
 * Analyses across captures (cross-device overlap, merged gaps) call this.
 */
export async function assertCompatibleTimelines(store: Store, captureIds: readonly number[] | undefined, what: string): Promise<string> {
  const check = await compatibleTimelines(store, captureIds);
  if (!check.ok) throw new TickwiseError('incompatible-timelines', traceMessages.refused(what, check.reason ?? 'unknown'));
  return check.timeline!;
}
