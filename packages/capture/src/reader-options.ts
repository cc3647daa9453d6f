/**
 * Import options the rocprofv3, rocpd, Chrome trace, HeteroMosaic and hrx
 * readers add to {@link ImportOptions}. They are declared here, by
 * augmenting the interface, so the readers' clock options live beside the
 * readers; every field is optional and the older readers ignore them.
 */
import type { TimeUnit } from '@tickwise/time';

/** Clocks a trace's host timestamps can be declared to come from (`--trace-clock`). */
export const TraceClock = {
  monotonic: 'CLOCK_MONOTONIC (Chrome/Perfetto on Linux, steady_clock, IREE host time)',
  boottime: 'CLOCK_BOOTTIME (rocprofiler-sdk)',
  realtime: 'CLOCK_REALTIME, ns since the Unix epoch (system_clock, Kineto)',
} as const;
/** Key of {@link TraceClock}. */
export type TraceClock = keyof typeof TraceClock;
/** Type guard for {@link TraceClock}. */
export function isTraceClock(x: string): x is TraceClock {
  return Object.hasOwn(TraceClock, x);
}

declare module './readers/ireeperf-jsonl' {
  interface ImportOptions {
    /**
     * CLOCK_BOOTTIME minus CLOCK_MONOTONIC on the capturing host, in ns (the
     * recorder writes it in its meta.json as `boottime_minus_monotonic_ns`;
     * by hand: read both clocks back to back). With it, rocprofv3 and rocpd
     * times (CLOCK_BOOTTIME) are shifted onto host_monotonic
     * (`monotonic = boottime - offset`) and the relation is recorded in
     * `assumptions`; without it they stay on their own `boottime` timeline.
     * It also applies to a Chrome trace declared `traceClock: 'boottime'`.
     */
    readonly boottimeOffsetNs?: bigint;
    /**
     * The clock a Chrome trace's (or HeteroMosaic trace's) host timestamps
     * come from. Chrome JSON does not say; without it a trace is on its own
     * `unknown` timeline (Kineto traces with baseTimeNanoseconds are
     * CLOCK_REALTIME, HeteroMosaic's steady_clock is CLOCK_MONOTONIC).
     * Recorded in `assumptions`.
     */
    readonly traceClock?: TraceClock;
    /**
     * The unit a Chrome trace's `ts`/`dur` are written in, when a producer
     * departs from the format's microseconds (some write ns and say
     * `displayTimeUnit: "ns"`, which the format defines as a display hint
     * only). Recorded in `assumptions`.
     */
    readonly traceTimeUnit?: TimeUnit;
  }
}
