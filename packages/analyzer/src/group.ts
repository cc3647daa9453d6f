/**
 * Rows of one statement over many devices, handed back device by device
 * (pure). The analyses read every device in one statement partitioned by
 * (capture, device) and split its rows here.
 */

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
