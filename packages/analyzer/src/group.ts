/**
 * Rows of one statement over many devices, handed back device by device
 * (pure). The analyses read every device in one statement partitioned by
 * (capture, device) and split its rows here.
 */

import { devicesOnlySql, type Scope } from './sql/selection';

/** Rows grouped by a key, each group in row order. */
export function groupBy<R>(rows: Iterable<R>, key: (r: R) => string): Map<string, R[]> {
  const by = new Map<string, R[]>();
  for (const r of rows) {
    const k = key(r);
    let list = by.get(k);
    if (list === undefined) by.set(k, (list = []));
    list.push(r);
  }
  return by;
}

/** `capture_id/device`: the key of a device's rows. */
export function deviceKey(r: { readonly capture_id: number; readonly device: number }): string {
  return `${r.capture_id}/${r.device}`;
}

/** Rows grouped by device ({@link deviceKey}). */
export function byDevice<R extends { readonly capture_id: number; readonly device: number }>(rows: Iterable<R>): Map<string, R[]> {
  return groupBy(rows, deviceKey);
}

/**
 * Up to this many devices, a window statement runs once per device (its
 * selection scoped to the device, its window not partitioned: see
 * `partitionBy`); above it, once for all of them, partitioned by device.
 * DuckDB sorts one partition's rows on one thread: over 2 devices of 500k
 * rows the partitioned statement took 230 ms against 180 ms for the two
 * scoped ones (warm; 340 vs 200 cold), while over 64 devices one statement
 * replaces 64 that each read the whole table.
 */
export const SCOPED_STATEMENTS_UP_TO = 4;

/** The device batches of {@link SCOPED_STATEMENTS_UP_TO}: one per device, or one of all. */
export function deviceBatches<D>(devices: readonly D[]): (readonly D[])[] {
  return devices.length <= SCOPED_STATEMENTS_UP_TO ? devices.map((d) => [d]) : devices.length === 0 ? [] : [devices];
}

/** One statement's devices (see {@link deviceBatches}). */
export interface DeviceBatch {
  /** A single device: its rows are read scoped to it and its windows are not partitioned by device. */
  readonly oneDevice: boolean;
  /**
   * The batch's rows: `scoped(scope)` for a single device, else `all` (the
   * selection of all `total` devices) narrowed to the batch's devices.
   */
  select(scoped: (scope: Scope) => string, all: string): string;
}

/**
 * The rows of `run` over every batch of {@link deviceBatches}, in batch
 * order. `total`: how many devices the callers' whole selection reads.
 */
export async function rowsOfBatches<D extends { readonly capture_id: number; readonly device: number }, R>(
  devices: readonly D[], total: number, run: (batch: DeviceBatch) => Promise<readonly R[]>,
): Promise<R[]> {
  const out: R[] = [];
  for (const ds of deviceBatches(devices)) {
    const batch: DeviceBatch = {
      oneDevice: ds.length === 1,
      select: (scoped, all) => (ds.length === 1 ? scoped({ capture_id: ds[0]!.capture_id, device: ds[0]!.device, queue: null }) : devicesOnlySql(all, ds, total)),
    };
    for (const r of await run(batch)) out.push(r);
  }
  return out;
}
