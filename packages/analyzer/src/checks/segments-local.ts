/**
 * The checks' own segment splitter, used where the analyzer's
 * `resolveSegments` refuses a capture (a device without a time base beside
 * timed ones), and the per-segment busy-time query every check uses. A
 * capture of several passes (llama-bench
 * repetitions, prefills) shows them as runs of dispatches separated by gaps
 * far longer than any gap inside a pass. The cuts are the k longest gaps,
 * for the k where the k-th longest gap is at least `segment_gap_jump_ratio`
 * times the (k+1)-th and at least `segment_gap_min_ns` long (the largest
 * such jump wins); with no such k the device is one segment.
 *
 * ```
 * timed dispatches --topGapsSql--> longest gaps per (capture, device)
 *   --chooseCuts--> cut times --segmentStatsSql--> span, busy (union), count per segment
 * ```
 */
import type { Store } from '@tickwise/store';
import { timedDispatchesSql } from './sql';
import type { CheckScope, CheckSegment, CheckThresholds } from './types';

/** How many of the longest gaps per device are considered for cuts. */
export const MAX_CUT_CANDIDATES = 64;
/** At most this many cuts when every gap is a cut. */
export const MAX_ALL_GAP_CUTS = 16;

/**
 * The longest idle gaps (between the union's busy blocks) of each
 * (capture, device), longest first, plus each device's gap count.
 */
export function topGapsSql(scope: CheckScope, limit = MAX_CUT_CANDIDATES + 1): string {
  return `WITH d AS (SELECT * FROM ${timedDispatchesSql(scope)}),
  o AS (SELECT *, max(end_ns) OVER (PARTITION BY capture_id, device ORDER BY start_ns, end_ns
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end FROM d),
  g AS (SELECT capture_id, device, prev_end AS gap_start_ns, start_ns AS gap_end_ns, start_ns - prev_end AS gap_ns
        FROM o WHERE start_ns > prev_end),
  r AS (SELECT *, row_number() OVER (PARTITION BY capture_id, device ORDER BY gap_ns DESC, gap_start_ns) AS rk,
        count(*) OVER (PARTITION BY capture_id, device) AS gap_count FROM g),
  n AS (SELECT capture_id, device, count(*) AS dispatches FROM d GROUP BY capture_id, device)
  SELECT r.capture_id, r.device, r.gap_start_ns, r.gap_end_ns, r.gap_ns, r.gap_count, n.dispatches
  FROM r JOIN n ON n.capture_id = r.capture_id AND n.device = r.device WHERE r.rk <= ${Math.trunc(limit)}
  ORDER BY r.capture_id, r.device, r.rk`;
}

/** Row shape of {@link topGapsSql}. */
export const TOP_GAPS_SHAPE = {
  capture_id: 'number', device: 'number', gap_start_ns: 'bigint', gap_end_ns: 'bigint', gap_ns: 'bigint', gap_count: 'number', dispatches: 'number',
} as const;

/**
 * How many of the longest gaps are cuts, given them longest first, the
 * device's total gap count and dispatch count. Pure. Cutting at every gap
 * (back-to-back dispatches inside a pass leave no gap to compare with) is
 * allowed only for a few cuts whose segments keep four dispatches each on
 * average; otherwise every submission of a capture without in-pass gaps
 * would become a segment.
 */
export function chooseCuts(gapsDesc: readonly bigint[], gapCount: number, dispatches: number, t: Pick<CheckThresholds, 'segment_gap_min_ns' | 'segment_gap_jump_ratio'>): number {
  let best = 0;
  let bestRatio = 0;
  for (let k = 1; k <= gapsDesc.length && k <= MAX_CUT_CANDIDATES; k++) {
    const g = gapsDesc[k - 1]!;
    if (g < t.segment_gap_min_ns) break;
    let ratio: number;
    if (k < gapsDesc.length) ratio = gapsDesc[k]! > 0n ? Number(g) / Number(gapsDesc[k]!) : Number.POSITIVE_INFINITY;
    else if (gapCount === k && k <= MAX_ALL_GAP_CUTS && dispatches >= 4 * (k + 1)) ratio = Number.POSITIVE_INFINITY;
    else continue; // the next gap was not fetched
    if (ratio >= t.segment_gap_jump_ratio && ratio > bestRatio) {
      best = k;
      bestRatio = ratio;
    }
  }
  return best;
}

/** Cut times (the first start after each cut gap) per (capture, device), from {@link topGapsSql}'s rows. */
export function cutsFromGaps(rows: readonly { capture_id: number; device: number; gap_end_ns: bigint; gap_ns: bigint; gap_count: number; dispatches: number }[], t: CheckThresholds): { capture_id: number; device: number; cut_ns: bigint }[] {
  const by = new Map<string, typeof rows[number][]>();
  for (const r of rows) {
    const k = `${r.capture_id}:${r.device}`;
    let list = by.get(k);
    if (!list) by.set(k, (list = []));
    list.push(r);
  }
  const cuts: { capture_id: number; device: number; cut_ns: bigint }[] = [];
  for (const list of by.values()) {
    const k = chooseCuts(list.map((r) => r.gap_ns), list[0]!.gap_count, list[0]!.dispatches, t);
    for (const r of list.slice(0, k)) cuts.push({ capture_id: r.capture_id, device: r.device, cut_ns: r.gap_end_ns });
  }
  return cuts;
}

/**
 * Per segment: first start, last end, span, busy (length of the union of
 * dispatch intervals) and dispatch count. A segment starts at each cut.
 * Busy is summed row by row, in start order, as the part of each row after
 * every earlier row's end: one window, no islands to number and group.
 */
export function segmentStatsSql(scope: CheckScope, cuts: readonly { capture_id: number; device: number; cut_ns: bigint }[]): string {
  const values = cuts.length === 0
    ? `SELECT NULL::INTEGER AS capture_id, NULL::INTEGER AS device, NULL::BIGINT AS cut_ns WHERE FALSE`
    : `SELECT * FROM (VALUES ${cuts.map((c) => `(${Math.trunc(c.capture_id)}, ${Math.trunc(c.device)}, ${c.cut_ns.toString()}::BIGINT)`).join(', ')}) v(capture_id, device, cut_ns)`;
  return `WITH b AS (SELECT capture_id, device, cut_ns, row_number() OVER (PARTITION BY capture_id, device ORDER BY cut_ns) AS seg FROM (${values})),
  d AS (SELECT * FROM ${timedDispatchesSql(scope)}),
  s AS (SELECT d.capture_id, d.device, d.start_ns, d.end_ns, coalesce(b.seg, 0) AS segment
        FROM d ASOF LEFT JOIN b ON d.capture_id = b.capture_id AND d.device = b.device AND d.start_ns >= b.cut_ns),
  o AS (SELECT *, max(end_ns) OVER (PARTITION BY capture_id, device, segment ORDER BY start_ns, end_ns
        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end FROM s)
  SELECT capture_id, device, segment::INTEGER AS segment, min(start_ns) AS start_ns, max(end_ns) AS end_ns, (max(end_ns) - min(start_ns))::BIGINT AS span_ns,
    sum(greatest(0, end_ns - greatest(start_ns, coalesce(prev_end, start_ns))))::BIGINT AS busy_ns, count(*)::BIGINT AS dispatches
  FROM o GROUP BY ALL ORDER BY capture_id, device, segment`;
}

/** Row shape of {@link segmentStatsSql}. */
export const SEGMENT_STATS_SHAPE = {
  capture_id: 'number', device: 'number', segment: 'number', start_ns: 'bigint', end_ns: 'bigint', span_ns: 'bigint', busy_ns: 'bigint', dispatches: 'number',
} as const;

/** Runs the splitter: two queries, the cut choice in between. */
export async function localSegments(store: Store, scope: CheckScope, t: CheckThresholds): Promise<CheckSegment[]> {
  const gaps = await store.query(TOP_GAPS_SHAPE, topGapsSql(scope));
  return store.query(SEGMENT_STATS_SHAPE, segmentStatsSql(scope, cutsFromGaps(gaps, t)));
}
