/**
 * Overlap within each device and across device pairs.
 *
 * ```
 * planAnalysis --> per device: overlapDeviceSql (one window pass + the few overlapping rows)
 *              --> per pair of devices on one shared host timeline:
 *                  overlap = busy_a + busy_b - busy(a u b)          (pairUnionSql)
 *                  pairs on different timelines are refused, never guessed
 * ```
 */
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { planAnalysis } from './plan';
import { isSharedDomain, whereLabel, type DevicePlan, type SelectionOptions } from './selection';
import { OVERLAP_DEVICE_SHAPE, PAIR_UNION_SHAPE } from './shapes';
import { overlapDeviceSql, pairUnionSql } from './sql/overlap';
import { selectionSql } from './sql/selection';

/** Overlap inside one device. */
export interface DeviceOverlap {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
  readonly dispatches: number;
  readonly busy_ns: bigint;
  /** Time with >= 2 dispatches in flight. */
  readonly multi_inflight_ns: bigint;
  readonly multi_inflight_fraction: number | null;
  /** Time with dispatches of >= 2 different submissions in flight. */
  readonly cross_submission_inflight_ns: bigint;
  readonly cross_submission_fraction: number | null;
  readonly max_in_flight: number;
  readonly sum_dur_ns: bigint;
  readonly clock_domain: string;
}

/** A device, named in a pair. */
export interface DeviceRef {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
}

/** Overlap of two devices' busy time. */
export interface DevicePairOverlap {
  readonly a: DeviceRef;
  readonly b: DeviceRef;
  /** Time both are busy. */
  readonly overlap_ns: bigint;
  /** overlap_ns / busy_ns of a. */
  readonly overlap_fraction_of_a: number | null;
  readonly overlap_fraction_of_b: number | null;
  readonly clock_domain: string;
}

/** Result of {@link overlap}. */
export interface OverlapResult {
  readonly devices: readonly DeviceOverlap[];
  readonly device_pairs: readonly DevicePairOverlap[];
  readonly segment: string;
  readonly excluded_dispatches: number;
}

function fraction(a: bigint, b: bigint): number | null {
  return b > 0n ? Number(a) / Number(b) : null;
}

/**
 * Within each device: time with two or more dispatches in flight, and with
 * dispatches of different submissions in flight, as ns and share of busy
 * time. Across every pair of selected devices: the time both are busy.
 * Refuses (exit 2) pairs whose times are on different clocks.
 */
export async function overlap(store: Store, opts: SelectionOptions = {}): Promise<OverlapResult> {
  const plan = await planAnalysis(store, opts);
  const active = plan.devices.filter((d) => d.dispatches > 0);
  for (let i = 0; i < active.length; i++) {
    for (let j = i + 1; j < active.length; j++) {
      const a = active[i]!;
      const b = active[j]!;
      if (a.clock_domain !== b.clock_domain || !isSharedDomain(a.clock_domain) || a.capture_timeline !== b.capture_timeline) {
        const dom = (d: DevicePlan) => (d.capture_timeline !== 'host_monotonic' && d.capture_timeline !== b.capture_timeline ? `${d.clock_domain} (capture timeline '${d.capture_timeline}')` : d.clock_domain);
        throw new TickwiseError('incomparable-timelines', analyzerMessages.incomparableTimelines(whereLabel(a), dom(a), whereLabel(b), dom(b)));
      }
    }
  }
  const devices: DeviceOverlap[] = [];
  for (const d of plan.devices) {
    const r = (await store.query(OVERLAP_DEVICE_SHAPE, overlapDeviceSql(selectionSql(plan.spec, { capture_id: d.capture_id, device: d.device, queue: null }))))[0]!;
    devices.push({
      capture_id: d.capture_id,
      device: d.device,
      kind: d.kind,
      dispatches: r.dispatches,
      busy_ns: r.busy_ns,
      multi_inflight_ns: r.multi_inflight_ns,
      multi_inflight_fraction: fraction(r.multi_inflight_ns, r.busy_ns),
      cross_submission_inflight_ns: r.cross_submission_inflight_ns,
      cross_submission_fraction: fraction(r.cross_submission_inflight_ns, r.busy_ns),
      max_in_flight: r.max_in_flight,
      sum_dur_ns: r.sum_dur_ns,
      clock_domain: d.clock_domain,
    });
  }
  const pairs: DevicePairOverlap[] = [];
  const withBusy = devices.filter((d) => d.dispatches > 0);
  for (let i = 0; i < withBusy.length; i++) {
    for (let j = i + 1; j < withBusy.length; j++) {
      const a = withBusy[i]!;
      const b = withBusy[j]!;
      const sa = selectionSql(plan.spec, { capture_id: a.capture_id, device: a.device, queue: null });
      const sb = selectionSql(plan.spec, { capture_id: b.capture_id, device: b.device, queue: null });
      const u = (await store.query(PAIR_UNION_SHAPE, pairUnionSql(sa, sb)))[0]!.union_ns;
      const both = a.busy_ns + b.busy_ns - u;
      pairs.push({
        a: { capture_id: a.capture_id, device: a.device, kind: a.kind },
        b: { capture_id: b.capture_id, device: b.device, kind: b.kind },
        overlap_ns: both,
        overlap_fraction_of_a: fraction(both, a.busy_ns),
        overlap_fraction_of_b: fraction(both, b.busy_ns),
        clock_domain: a.clock_domain,
      });
    }
  }
  return { devices, device_pairs: pairs, segment: plan.segment, excluded_dispatches: plan.excluded_dispatches };
}
