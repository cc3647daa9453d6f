/**
 * Per-kernel statistics per device: count, total, share of busy time (of the
 * union, not of summed time), mean, median, p10/p90, min/max, in ns.
 */
import type { Store } from '@tickwise/store';
import { byDevice, deviceKey, rowsOfBatches } from './group';
import { planAnalysis } from './plan';
import type { SelectionOptions } from './selection';
import { BUSY_SHAPE, KERNEL_ROW_SHAPE } from './shapes';
import { busyUnionSql, kernelStatsSql } from './sql/kernels';
import { selectionSql } from './sql/selection';

/** One kernel on one device. */
export interface KernelStat {
  readonly capture_id: number;
  readonly device: number;
  readonly kernel: string;
  readonly count: number;
  readonly total_ns: bigint;
  /** total_ns / the device's busy_ns (union of all its dispatches). */
  readonly share_of_busy: number | null;
  readonly mean_ns: number;
  readonly median_ns: number;
  readonly p10_ns: number;
  readonly p90_ns: number;
  readonly min_ns: bigint;
  readonly max_ns: bigint;
}

/** Result of {@link kernelStats}. */
export interface KernelStatsResult {
  readonly segment: string;
  readonly excluded_dispatches: number;
  readonly percentiles: string;
  readonly devices: readonly { capture_id: number; device: number; kind: string; dispatches: number; busy_ns: bigint }[];
  readonly kernels: readonly KernelStat[];
}

/** Per-kernel statistics of every selected device, largest total first. */
export async function kernelStats(store: Store, opts: SelectionOptions = {}): Promise<KernelStatsResult> {
  const plan = await planAnalysis(store, opts);
  // two statements for all devices, not two per device (each reading the whole dispatches table); the busy
  // union's window one per device for a few (see deviceBatches)
  const sel = selectionSql(plan.spec);
  const busyOf = new Map((await rowsOfBatches(plan.devices, plan.devices.length, (b) => store.query(BUSY_SHAPE,
    busyUnionSql(b.select((sc) => selectionSql(plan.spec, sc), sel), b.oneDevice)))).map((r) => [deviceKey(r), r.busy_ns]));
  const rowsOf = byDevice(await store.query(KERNEL_ROW_SHAPE, kernelStatsSql(sel)));
  const devices: KernelStatsResult['devices'][number][] = [];
  const kernels: KernelStat[] = [];
  for (const d of plan.devices) {
    const key = deviceKey(d);
    const busy = busyOf.get(key) ?? 0n;
    const rows = rowsOf.get(key) ?? [];
    devices.push({ capture_id: d.capture_id, device: d.device, kind: d.kind, dispatches: rows.reduce((a, r) => a + r.count, 0), busy_ns: busy });
    for (const r of rows) {
      kernels.push({
        capture_id: d.capture_id, device: d.device, kernel: r.kernel, count: r.count, total_ns: r.total_ns,
        share_of_busy: busy > 0n ? Number(r.total_ns) / Number(busy) : null,
        mean_ns: r.mean_ns, median_ns: r.median_ns, p10_ns: r.p10_ns, p90_ns: r.p90_ns, min_ns: r.min_ns, max_ns: r.max_ns,
      });
    }
  }
  return {
    segment: plan.segment,
    excluded_dispatches: plan.excluded_dispatches,
    percentiles: 'linear interpolation between order statistics (quantile_cont)',
    devices,
    kernels,
  };
}
