/**
 * The report's tables as rows of display strings, shared by the HTML page
 * and the Markdown summary so both print the same numbers.
 */
import { formatMs, formatSpeedup, formatGroups, sourceLines, requirementLine, rangeLine, type CeilingResult } from '@tickwise/ceiling';
import { count, dur, ms, pct } from './format';
import type { ReportData } from './model';

/** A table: column names, which are numeric (right-aligned), and rows of strings. */
export interface TextTable {
  readonly columns: readonly string[];
  readonly numeric: readonly boolean[];
  readonly rows: readonly (readonly string[])[];
  /** Columns of long names (kernels): the page clips them in the middle, the whole name on hover. */
  readonly names?: readonly boolean[];
  /** What the table covers (segments), said above it. */
  readonly covers?: string;
}

/** "1 group", "2 groups". */
export function plural(n: number | string, word: string): string {
  return `${n} ${word}${Number(n) === 1 ? '' : 's'}`;
}

/** What a table over the devices covers: one phrase when all agree, else "per device (the segments column)". */
function coverage(r: ReportData): string {
  const all = [...new Set(r.devices.map((d) => d.coverage))];
  return all.length === 1 ? `segments: ${all[0]}` : 'segments: per device, as the segments column says (steady where a device has repetitions)';
}

/** Devices: span, busy, idle, gaps by class, cross-submission overlap. */
export function devicesTable(r: ReportData): TextTable {
  const t = dur(r.threshold_ns);
  return {
    columns: ['device', 'segments', 'dispatches', 'span', 'busy', 'idle', 'idle %', 'gaps', `gaps > ${t}`, `idle in gaps > ${t}`, 'between submissions', 'inside submissions', 'overlap across submissions'],
    numeric: [false, false, true, true, true, true, true, true, true, true, true, true, true],
    covers: coverage(r),
    rows: r.devices.map((d) => [
      d.label, d.coverage, count(d.dispatches), dur(d.span_ns), dur(d.busy_ns), dur(d.idle_ns), pct(d.idle_fraction), count(d.gap_count),
      count(d.gaps_over_threshold), d.idle_ns > 0n ? pct(Number(d.idle_over_threshold_ns) / Number(d.idle_ns)) : '-',
      `${count(d.between_submissions.count)} / ${dur(d.between_submissions.idle_ns)}`,
      `${count(d.within_submission.count)} / ${dur(d.within_submission.idle_ns)}`,
      d.cross_submission_inflight_ns === null ? '-' : dur(d.cross_submission_inflight_ns),
    ]),
  };
}

/** Overlap between devices on one host timeline. */
export function pairsTable(r: ReportData): TextTable {
  return {
    columns: ['device A', 'device B', 'both busy', 'share of A busy', 'share of B busy'],
    numeric: [false, false, true, true, true],
    covers: 'segments: all (the whole time the devices ran together)',
    rows: r.device_pairs.map((p) => [p.a, p.b, dur(p.overlap_ns), pct(p.fraction_of_a), pct(p.fraction_of_b)]),
  };
}

/** Kernels: the top `top` per device by time. */
export function kernelsTable(r: ReportData, top = 15): TextTable {
  const rows: string[][] = [];
  for (const d of r.devices) {
    const mine = r.kernels.filter((k) => k.label === d.label).sort((a, b) => (a.total_ns === b.total_ns ? a.kernel.localeCompare(b.kernel) : a.total_ns > b.total_ns ? -1 : 1));
    for (const k of mine.slice(0, top)) {
      rows.push([d.label, d.coverage, k.kernel, count(k.count), dur(k.total_ns), pct(k.share_of_busy), dur(BigInt(Math.round(k.mean_ns))), dur(BigInt(Math.round(k.p10_ns))), dur(BigInt(Math.round(k.p90_ns)))]);
    }
    if (mine.length > top) rows.push([d.label, d.coverage, `... ${mine.length - top} more kernels`, '', '', '', '', '', '']);
  }
  return {
    columns: ['device', 'segments', 'kernel', 'dispatches', 'total', 'share of busy', 'mean', 'p10', 'p90'],
    numeric: [false, false, false, true, true, true, true, true, true],
    names: [false, false, true, false, false, false, false, false, false],
    covers: coverage(r),
    rows,
  };
}

/** Per-row-group cost of each GEMM kernel. */
export function costTable(r: ReportData): TextTable {
  const flops = r.costs.some((c) => c.group_ms_from_flops !== null);
  return {
    columns: ['device', 'kernel', 'segments', 'dispatches', 'rows / dispatch', 'mean dispatch (ms)', 'group rows', 'ms per group', 'p10', 'p90', ...(flops ? ['from FLOPs'] : [])],
    numeric: [false, false, false, true, true, true, true, true, true, true, ...(flops ? [true] : [])],
    names: [false, true],
    covers: coverage(r),
    rows: r.costs.map((c) => [
      c.label, c.kernel, r.devices.find((d) => d.label === c.label)?.coverage ?? c.segment, count(c.dispatch_count), String(c.rows_per_dispatch), ms(c.mean_dispatch_ns / 1e6), String(c.group_rows),
      ms(c.group_ms), ms(c.group_ms_p10), ms(c.group_ms_p90), ...(flops ? [ms(c.group_ms_from_flops)] : []),
    ]),
  };
}

/** The ceiling's key numbers. */
export function ceilingTable(c: CeilingResult): TextTable {
  const rows: string[][] = [
    ['rows (M) / group rows (G)', `${c.rows} / ${c.group_rows} -> ${plural(c.groups, 'group')}`],
    ['iGPU cost g', `${formatMs(c.gpu_group_ms)} ms per group`],
    ['NPU cost t', `${formatMs(c.npu_tile_ms)} ms per tile`],
    ['best split', `${plural(c.npu_groups, 'group')} on the NPU, ${c.gpu_groups} on the iGPU`],
    ['iGPU only / split', `${formatMs(c.gpu_only_ms)} ms / ${formatMs(c.split_ms)} ms`],
    ['speedup (per GEMM)', formatSpeedup(c.speedup)],
    ['balance point k*', plural(formatGroups(c.balance_groups), 'group')],
  ];
  if (c.end_to_end_speedup !== null) rows.push(['end-to-end', formatSpeedup(c.end_to_end_speedup)]);
  const req = requirementLine(c);
  if (req !== null && c.target_speedup !== null) rows.push([`for ${formatSpeedup(c.target_speedup)}`, req]);
  const range = rangeLine(c);
  if (range !== null) rows.push(['p10..p90 range', range]);
  for (const s of sourceLines(c)) rows.push(['source', s]);
  for (const n of c.notes) rows.push(['note', n]);
  return { columns: ['', 'value'], numeric: [false, false], rows };
}
