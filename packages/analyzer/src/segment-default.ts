/**
 * The one default for a measurement that feeds a cost or a model when no
 * `--segment` is given: `steady` (all but the cold first pass) when the
 * device repeats, else `all`, with a note saying so. Every caller (stage
 * samples, kernel samples, row-group costs, the ceiling and schedule inputs,
 * `tickwise cost`) takes it from here.
 */
import type { Store } from '@tickwise/store';
import { resolveSegments } from './segments';

/** What {@link defaultSegment} chose. */
export interface DefaultSegment {
  /** `steady` when the device has two or more segments, else `all`. */
  readonly segment: 'steady' | 'all';
  /** Segments the device has. */
  readonly segments: number;
  /** Set when `all` was taken for want of a repetition (a cold first pass cannot be told apart). */
  readonly note: string | null;
}

/** steady when a device repeats (2 or more segments), else all. */
export function steadyOrAll(segmentCount: number): 'steady' | 'all' {
  return segmentCount >= 2 ? 'steady' : 'all';
}

/** The note when a device has one segment: what was used and which options change it. */
export function oneSegmentNote(where: string, used: string, options: string): string {
  return `${where}: one segment (no repetition found), so ${used} used; a cold first pass cannot be told apart (${options})`;
}

/**
 * The default segment of one device: steady when it repeats, else all (with
 * {@link oneSegmentNote}). `where`/`used`/`options` word the note.
 */
export async function defaultSegment(
  store: Store,
  opts: { captureId: number; device: number; reps?: number | undefined },
  words: { where: string; used?: string | undefined; options?: string | undefined },
): Promise<DefaultSegment> {
  const resolved = await resolveSegments(store, { captureId: opts.captureId, device: opts.device, segment: 'all', reps: opts.reps });
  const count = resolved.devices[0]?.segments.length ?? 0;
  const segment = steadyOrAll(count);
  return {
    segment,
    segments: count,
    note: segment === 'all' ? oneSegmentNote(words.where, words.used ?? 'all of it was', words.options ?? '--segment, --reps') : null,
  };
}
