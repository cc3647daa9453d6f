/**
 * The timelines a capture's `*_ns` columns can be on (`captures.timeline`),
 * in the store so every layer decides comparability by one rule.
 */

/**
 * What `captures.timeline` may hold: the clock a capture's `*_ns` columns
 * are on. Captures on the same shared timeline (and host) can be analysed
 * together; the others are each on their own.
 */
export const Timeline = {
  host_monotonic: 'CLOCK_MONOTONIC ns of the capturing host (IREE host time, fitted device ticks, steady_clock, recorder)',
  boottime: 'CLOCK_BOOTTIME ns of the capturing host (rocprofiler-sdk), not shifted onto CLOCK_MONOTONIC',
  realtime: 'CLOCK_REALTIME ns since the Unix epoch (PyTorch/Kineto with baseTimeNanoseconds)',
  relative: 'device ticks scaled by a declared or assumed frequency, starting at 0: private to the capture',
  'ticks-only': 'device ticks with no time base: *_ns are NULL',
  unknown: 'a host clock the source does not name: private to the capture',
} as const;
/** Key of {@link Timeline}. */
export type Timeline = keyof typeof Timeline;
/** Type guard for {@link Timeline}. */
export function isTimeline(x: string): x is Timeline {
  return Object.hasOwn(Timeline, x);
}

/** Timelines that two captures can share (a clock every process of a host reads alike). */
export const SHARED_TIMELINES: ReadonlySet<string> = new Set<Timeline>(['host_monotonic', 'boottime', 'realtime']);
