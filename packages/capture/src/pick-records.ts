import { closeSync, openSync, readSync } from 'node:fs';
import type { NdjsonPart } from './json-records';

/**
 * Reads back the staged NDJSON records `recs` (record indexes; `ends[i]` is
 * the byte just past record i in the whole output, `parts` its files) and
 * hands their texts on in batches, with the position in `recs` of a batch's
 * first. Only those records' bytes are read (runs of nearby records of one
 * part in one read), not the whole output again.
 *
 * `recs` must be strictly ascending, and is checked: the runs are found by
 * walking forward, so an index smaller than the one before it would be cut
 * from the wrong bytes and handed on as another record's text.
 */
export async function pickRecords(parts: readonly NdjsonPart[], ends: Float64Array, recs: ArrayLike<number>, flush: (texts: string[], from: number) => Promise<unknown>): Promise<void> {
  const startOf = (i: number) => (i === 0 ? 0 : ends[i - 1]!);
  const partOf = (i: number) => {
    let lo = 0;
    for (let hi = parts.length - 1; lo < hi;) {
      const mid = (lo + hi + 1) >> 1;
      if (parts[mid]!.firstRecord <= i) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  const GAP = 64 << 10; // records this close are read together
  const MAX_READ = 8 << 20;
  let buf = Buffer.allocUnsafe(1 << 20);
  let batch: string[] = [];
  let batchFrom = 0;
  for (let k = 1; k < recs.length; k++) {
    if (!(recs[k]! > recs[k - 1]!)) throw new Error(`internal: record indexes not ascending (${recs[k - 1]}, then ${recs[k]})`);
  }
  for (let k = 0; k < recs.length;) {
    const p = partOf(recs[k]!);
    const part = parts[p]!;
    const partEnd = part.firstRecord + part.records;
    // one read: from this record through the next ones of the same part while the gaps are small
    let last = k;
    while (last + 1 < recs.length && recs[last + 1]! < partEnd && startOf(recs[last + 1]!) - ends[recs[last]!]! <= GAP &&
      ends[recs[last + 1]!]! - startOf(recs[k]!) <= MAX_READ) last++;
    const from = startOf(recs[k]!);
    const n = ends[recs[last]!]! - from;
    if (buf.length < n) buf = Buffer.allocUnsafe(n);
    const fd = openSync(part.path, 'r');
    try {
      for (let got = 0; got < n;) {
        const r = readSync(fd, buf, got, n - got, from - part.startByte + got);
        if (r === 0) throw new Error(`internal: staged events part ${part.path} ends before byte ${from - part.startByte + n}`);
        got += r;
      }
    } finally {
      closeSync(fd);
    }
    for (let j = k; j <= last; j++) {
      const i = recs[j]!;
      batch.push(buf.toString('utf8', startOf(i) - from, ends[i]! - 1 - from)); // without its newline
    }
    k = last + 1;
    if (batch.length >= 8192) {
      await flush(batch, batchFrom);
      batchFrom = k;
      batch = [];
    }
  }
  if (batch.length > 0) await flush(batch, batchFrom);
}
