/**
 * Overlap within each device and across device pairs.
 *
 * ```
 * planAnalysis --> every device at once: overlapDeviceSql (one window pass + the few overlapping rows, per device)
 *              --> every pair of devices on one shared host timeline at once: each
 *                  device's busy pieces (busyPiecesSql, a temp table), one range join
 *                  (pairOverlapsSql): the time both are busy, |busy_a n busy_b|
 *                  pairs on different clocks are refused, never guessed (devices of one
 *                  capture on one clock domain always compare)
 * ```
 */
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { planAnalysis } from './plan';
import { isSharedDomain, whereLabel, type DevicePlan, type SelectionOptions } from './selection';
import { rowsOfBatches } from './group';
import { OVERLAP_DEVICE_SHAPE, PAIR_OVERLAP_SHAPE } from './shapes';
import { busyPiecesSql, overlapDeviceSql, pairOverlapsSql } from './sql/overlap';
import { DEFAULT_WORK, hostWorkCountSql, WorkSet, workRowsSql } from './sql/work';

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

/** Options of {@link overlap}. */
export interface OverlapOptions extends SelectionOptions {
  /** Which device work counts as busy (default kernels). */
  readonly work?: WorkSet | undefined;
}

/** Result of {@link overlap}. */
export interface OverlapResult {
  /** The device work counted as busy, and what that means. */
  readonly work: WorkSet;
  readonly work_meaning: string;
  readonly work_default: WorkSet;
  /** Copies/memsets of the selected devices that `work = kernels` leaves out. */
  readonly work_left_out: { readonly rows: number; readonly sum_dur_ns: bigint };
  readonly devices: readonly DeviceOverlap[];
  readonly device_pairs: readonly DevicePairOverlap[];
  readonly segment: string;
  readonly excluded_dispatches: number;
}

function fraction(a: bigint, b: bigint): number | null {
  return b > 0n ? Number(a) / Number(b) : null;
}

/**
 * Two devices' times compare when they are on one clock: devices of one
 * capture on the same clock domain always do (one file, one clock: a host
 * clock of its own, such as Kineto's, included); devices of different
 * captures only on a shared host clock of the same capture timeline. A
 * relative timeline of one device's own (ticks scaled from 0) compares with
 * nothing else.
 */
export function comparable(a: DevicePlan, b: DevicePlan): boolean {
  if (a.clock_domain !== b.clock_domain) return false;
  if (a.capture_id === b.capture_id) return true;
  return isSharedDomain(a.clock_domain) && a.capture_timeline === b.capture_timeline;
}

/**
 * Within each device: time with two or more dispatches in flight, and with
 * dispatches of different submissions in flight, as ns and share of busy
 * time. Across every pair of selected devices: the time both are busy.
 * Refuses (exit 2) pairs whose times are on different clocks.
 */
export async function overlap(store: Store, opts: OverlapOptions = {}): Promise<OverlapResult> {
  const plan = await planAnalysis(store, opts);
  const work = opts.work ?? DEFAULT_WORK;
  const active = plan.devices.filter((d) => d.dispatches > 0);
  for (let i = 0; i < active.length; i++) {
    for (let j = i + 1; j < active.length; j++) {
      const a = active[i]!;
      const b = active[j]!;
      if (!comparable(a, b)) {
        const dom = (d: DevicePlan) => (isSharedDomain(d.clock_domain) ? `${d.clock_domain} (capture timeline '${d.capture_timeline}')` : d.clock_domain);
        throw new TickwiseError('incomparable-timelines', analyzerMessages.incomparableTimelines(whereLabel(a), dom(a), whereLabel(b), dom(b)));
      }
    }
  }
  // every device's own numbers from one statement, or one each for a few (see deviceBatches); a device with no rows selected has no row: zeros
  const none = { dispatches: 0, busy_ns: 0n, multi_inflight_ns: 0n, cross_submission_inflight_ns: 0n, max_in_flight: 0, sum_dur_ns: 0n };
  const own = new Map((await rowsOfBatches(plan.devices, plan.devices.length, (b) => store.query(OVERLAP_DEVICE_SHAPE,
    overlapDeviceSql(b.select((sc) => workRowsSql(plan.spec, sc, work), workRowsSql(plan.spec, undefined, work)), b.oneDevice)))).map((r) => [`${r.capture_id}:${r.device}`, r]));
  const devices: DeviceOverlap[] = [];
  for (const d of plan.devices) {
    const base = own.get(`${d.capture_id}:${d.device}`) ?? none;
    devices.push({
      capture_id: d.capture_id,
      device: d.device,
      kind: d.kind,
      dispatches: base.dispatches,
      busy_ns: base.busy_ns,
      multi_inflight_ns: base.multi_inflight_ns,
      multi_inflight_fraction: fraction(base.multi_inflight_ns, base.busy_ns),
      cross_submission_inflight_ns: base.cross_submission_inflight_ns,
      cross_submission_fraction: fraction(base.cross_submission_inflight_ns, base.busy_ns),
      max_in_flight: base.max_in_flight,
      sum_dur_ns: base.sum_dur_ns,
      clock_domain: d.clock_domain,
    });
  }
  // every pair of devices with rows, in plan order; the pairs' overlaps from one query over the plan's devices
  const key = (capture: number, device: number) => `${capture}:${device}`;
  const both = new Map<string, bigint>();
  const withRows = plan.devices.filter((_, i) => devices[i]!.dispatches > 0);
  if (withRows.length > 1) {
    await store.run(`CREATE OR REPLACE TEMP TABLE tw_ov_piece AS ${busyPiecesSql(workRowsSql(plan.spec, undefined, work))}`);
    try {
      for (const r of await store.query(PAIR_OVERLAP_SHAPE, pairOverlapsSql('tw_ov_piece'))) {
        both.set(`${key(r.a_capture_id, r.a_device)}|${key(r.b_capture_id, r.b_device)}`, r.overlap_ns);
        both.set(`${key(r.b_capture_id, r.b_device)}|${key(r.a_capture_id, r.a_device)}`, r.overlap_ns);
      }
    } finally {
      await store.run('DROP TABLE IF EXISTS tw_ov_piece');
    }
  }
  const busyOf = (d: DevicePlan) => devices[plan.devices.indexOf(d)]!.busy_ns;
  const pairs: DevicePairOverlap[] = [];
  for (let i = 0; i < withRows.length; i++) {
    for (let j = i + 1; j < withRows.length; j++) {
      const a = withRows[i]!;
      const b = withRows[j]!;
      const ns = both.get(`${key(a.capture_id, a.device)}|${key(b.capture_id, b.device)}`) ?? 0n;
      pairs.push({
        a: { capture_id: a.capture_id, device: a.device, kind: a.kind },
        b: { capture_id: b.capture_id, device: b.device, kind: b.kind },
        overlap_ns: ns,
        overlap_fraction_of_a: fraction(ns, busyOf(a)),
        overlap_fraction_of_b: fraction(ns, busyOf(b)),
        clock_domain: a.clock_domain,
      });
    }
  }
  const leftOut = work === 'kernels' ? (await store.query({ n: 'number', sum_dur_ns: 'bigint' }, hostWorkCountSql(plan.spec)))[0]! : { n: 0, sum_dur_ns: 0n };
  return {
    work, work_meaning: WorkSet[work], work_default: DEFAULT_WORK, work_left_out: { rows: leftOut.n, sum_dur_ns: leftOut.sum_dur_ns },
    devices, device_pairs: pairs, segment: plan.segment, excluded_dispatches: plan.excluded_dispatches,
  };
}
