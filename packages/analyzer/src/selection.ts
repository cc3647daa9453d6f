/**
 * Planning an analysis: which (capture, device) pairs it reads, from which
 * time source, what it leaves out, and (when asked) which segments.
 *
 * ```
 * store --sourceInventorySql--> per device: device-timed rows? else host rows
 *       refuse device_tick_none (ticks without a time base)
 *       --resolveSegments (only when --segment is not "all")--> segment ranges
 *       = Plan { devices, spec (for selectionSql), excluded_dispatches }
 * ```
 */
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { storeCaptures } from './provenance';
import { readOnce } from './read-memo';
import { DEVICE_SHAPE, SOURCE_INVENTORY_SHAPE } from './shapes';
import { DEVICE_TIMED, sourceInventorySql, type SegmentRange, type SelectionSpec, type SourceFamily } from './sql/selection';

/** What every analysis accepts to narrow its input. */
export interface SelectionOptions {
  /** Only this capture. */
  readonly captureId?: number | undefined;
  /** Only this device (ordinal). */
  readonly device?: number | undefined;
  /** `all` (default), `first`, `last`, `steady` (all but the first) or a segment index. */
  readonly segment?: string | undefined;
  /** The number of repetitions (prefills), when the user knows it. */
  readonly reps?: number | undefined;
}

/** The time domain a device's selected times live in; only equal, non-relative domains compare. */
export type ClockDomain = string;

/** One (capture, device) an analysis reads. */
export interface DevicePlan {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
  readonly label: string;
  readonly capture_timeline: string;
  /** Device- or host-timed rows. */
  readonly family: SourceFamily;
  /** The time_source value(s) of the chosen rows. */
  readonly time_source: string;
  /** e.g. `host_monotonic`, or a relative timeline of its own for ticks scaled from 0. */
  readonly clock_domain: ClockDomain;
  /** Rows of the chosen source usable for time math (before segment selection). */
  readonly dispatches: number;
  /** Rows of the chosen source left out: valid = false. */
  readonly excluded_invalid: number;
  /** Rows of the chosen source left out: no start or end time. */
  readonly excluded_no_time: number;
  /** Rows of the other source family (not read). */
  readonly other_source_rows: number;
}

/** A planned analysis. */
export interface Plan {
  readonly devices: readonly DevicePlan[];
  readonly spec: SelectionSpec;
  /** `--segment` as given (default `all`). */
  readonly segment: string;
  /** Invalid or untimed rows of the chosen sources, all devices together. */
  readonly excluded_dispatches: number;
}

/** "capture 1 (file.jsonl) device 0", for messages. */
export function whereLabel(d: { capture_id: number; device: number; label?: string }): string {
  return `capture ${d.capture_id}${d.label ? ` (${d.label})` : ''} device ${d.device}`;
}

function domainOf(timeSource: string, captureId: number, device: number, captureTimeline: string): ClockDomain {
  switch (timeSource) {
    case 'device_tick_fit':
      return captureTimeline === 'relative' || captureTimeline === 'ticks-only' ? 'host_monotonic' : captureTimeline;
    case 'device_tick_declared':
    case 'device_tick_assumed':
      return `a relative timeline of its own (capture ${captureId} device ${device}: ticks scaled from 0, no clock fit)`;
    case 'host_monotonic':
    case 'host_boottime':
      return timeSource;
    case 'host_other':
      // a named wall clock (Kineto's baseTimeNanoseconds) every process of the host shares
      return captureTimeline === 'realtime' ? 'realtime' : `${timeSource} (capture ${captureId})`;
    default:
      return `${timeSource} (capture ${captureId})`;
  }
}

/** True when a clock domain can be compared with another equal one. */
export function isSharedDomain(d: ClockDomain): boolean {
  return d === 'host_monotonic' || d === 'host_boottime' || d === 'realtime';
}

/** What the planner reads from a store: its source inventory, captures and device kinds (once per read-only store). */
function sourceFacts(store: Store) {
  return readOnce(store, 'source-facts', async () => ({
    inv: await store.query(SOURCE_INVENTORY_SHAPE, sourceInventorySql()),
    captures: await storeCaptures(store),
    kinds: new Map((await store.query(DEVICE_SHAPE, `SELECT capture_id, device, kind, name, time_base FROM devices`)).map((d) => [`${d.capture_id}/${d.device}`, d.kind])),
  }));
}

/**
 * Plans which rows to read: one time source per (capture, device), devices
 * with ticks but no time base refused. Does not resolve segments (see
 * `planAnalysis`).
 */
export async function planSources(store: Store, opts: SelectionOptions = {}): Promise<Omit<Plan, 'segment'>> {
  const { inv, captures, kinds } = await sourceFacts(store);
  const byDevice = new Map<string, (typeof inv)[number][]>();
  for (const r of inv) {
    if (opts.captureId !== undefined && r.capture_id !== opts.captureId) continue;
    if (opts.device !== undefined && r.device !== opts.device) continue;
    const k = `${r.capture_id}/${r.device}`;
    byDevice.set(k, [...(byDevice.get(k) ?? []), r]);
  }
  const devices: DevicePlan[] = [];
  for (const [k, rows] of byDevice) {
    const { capture_id, device } = rows[0]!;
    const cap = captures.get(capture_id);
    const label = cap?.label ?? cap?.path ?? `capture ${capture_id}`;
    const isDevice = (r: { time_source: string }) => (DEVICE_TIMED as readonly string[]).includes(r.time_source);
    const family: SourceFamily = rows.some(isDevice) ? 'device' : 'host';
    const chosen = rows.filter((r) => isDevice(r) === (family === 'device'));
    if (chosen.some((r) => r.time_source === 'device_tick_none')) {
      throw new TickwiseError('no-time-base', analyzerMessages.noTimeBase(whereLabel({ capture_id, device, label })));
    }
    const sources = [...new Set(chosen.map((r) => r.time_source))];
    const timeline = cap?.timeline ?? 'unknown';
    devices.push({
      capture_id,
      device,
      kind: kinds.get(k) ?? 'unknown',
      label,
      capture_timeline: timeline,
      family,
      time_source: sources.join('+'),
      clock_domain: sources.length === 1 ? domainOf(sources[0]!, capture_id, device, timeline) : `mixed (${sources.join('+')})`,
      dispatches: chosen.reduce((a, r) => a + r.usable, 0),
      excluded_invalid: chosen.reduce((a, r) => a + r.invalid, 0),
      excluded_no_time: chosen.reduce((a, r) => a + r.no_time, 0),
      other_source_rows: rows.filter((r) => !chosen.includes(r)).reduce((a, r) => a + r.rows, 0),
    });
  }
  devices.sort((a, b) => a.capture_id - b.capture_id || a.device - b.device);
  if (devices.length === 0 && (opts.captureId !== undefined || opts.device !== undefined)) {
    const what = [opts.captureId !== undefined ? `capture ${opts.captureId}` : '', opts.device !== undefined ? `device ${opts.device}` : ''].filter(Boolean).join(' ');
    throw new TickwiseError('nothing-selected', analyzerMessages.noDispatchSelected(`no dispatches on ${what}`));
  }
  return {
    devices,
    spec: { sources: devices.map((d) => ({ capture_id: d.capture_id, device: d.device, family: d.family })), segments: null },
    excluded_dispatches: devices.reduce((a, d) => a + d.excluded_invalid + d.excluded_no_time, 0),
  };
}

/** A spec with segment ranges. */
export function withSegments(spec: SelectionSpec, segments: readonly SegmentRange[] | null): SelectionSpec {
  return { sources: spec.sources, segments };
}
