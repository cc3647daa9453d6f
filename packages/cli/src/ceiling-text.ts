/**
 * The human text of a split ceiling (`tickwise ceiling`): the answer, the
 * table by k, sensitivity, sources and notes.
 */
import {
  SENSITIVITY_INPUTS, formatChangePct, formatFraction, formatGroups, formatMs, formatSpeedup, rangeLine, requirementLine, sourceLines,
  type CeilingResult,
} from '@tickwise/ceiling';
import { formatTable } from './output';

/** Pads the named string columns to a common width on the left, so numbers line up. */
function alignRight(rows: Record<string, unknown>[], columns: readonly string[]): Record<string, unknown>[] {
  for (const c of columns) {
    const w = Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length));
    for (const r of rows) r[c] = String(r[c] ?? '').padStart(w);
  }
  return rows;
}

/** The human report: the answer, the table by k, sensitivity, sources and notes. */
export function ceilingText(r: CeilingResult): string {
  const lines: string[] = [];
  lines.push(`split ceiling: M = ${r.rows} rows, G = ${r.group_rows} -> ${r.groups} groups${r.remainder_rows ? ` (${r.full_groups} whole + ${r.remainder_rows} rows)` : ''}${r.model === 'curve' ? ', costs from curves in M' : ''}`);
  lines.push('');
  const kv: [string, string][] = [
    ['iGPU cost', `${formatMs(r.gpu_group_ms)} ms per group at ${r.rows} rows`],
    ['NPU cost', `${formatMs(r.npu_tile_ms)} ms per tile${r.model === 'curve' ? ` at ${r.npu_rows_at_split || r.group_rows} rows` : ''}`],
    ['sync overhead', `${formatMs(r.sync_overhead_ms)} ms`],
    ['best split', `${r.npu_groups} groups on the NPU (${r.npu_rows_at_split} rows), ${r.gpu_groups} on the iGPU (${r.gpu_rows_at_split} rows)`],
    ['iGPU only', `${formatMs(r.gpu_only_ms)} ms`],
    ['split', `${formatMs(r.split_ms)} ms (iGPU ${formatMs(r.gpu_ms_at_split)} ms, NPU ${formatMs(r.npu_ms_at_split)} ms${r.npu_groups > 0 && r.sync_overhead_ms > 0 ? `, sync ${formatMs(r.sync_overhead_ms)} ms` : ''})`],
    ['speedup', `${formatSpeedup(r.speedup)} (saves ${formatMs(r.saved_ms)} ms)`],
    ['balance point', `k* = ${formatGroups(r.balance_groups)} groups`],
  ];
  if (r.splittable_fraction !== null && r.end_to_end_speedup !== null) {
    kv.push(['end-to-end', `${formatSpeedup(r.end_to_end_speedup)} (${formatFraction(r.splittable_fraction)} of the prefill splits)`]);
  }
  const req = requirementLine(r);
  if (req !== null && r.target_speedup !== null) kv.push([`for ${formatSpeedup(r.target_speedup)}`, req]);
  const range = rangeLine(r);
  if (range !== null) kv.push(['p10..p90 range', range]);
  const w = Math.max(...kv.map(([k]) => k.length));
  for (const [k, v] of kv) lines.push(`${k.padEnd(w)}  ${v}`);
  lines.push('');
  lines.push('speedup by groups on the NPU (* = best)');
  const anyExtrapolated = r.by_k.some((s) => s.extrapolated.length > 0);
  lines.push(formatTable(
    ['k', 'gpu_rows', 'npu_rows', 'gpu_ms', 'npu_ms', 'split_ms', 'speedup', ...(anyExtrapolated ? ['note'] : [])],
    alignRight(r.by_k.map((s) => ({
      k: s.npu_groups === r.npu_groups ? `${s.npu_groups}*` : String(s.npu_groups),
      gpu_rows: s.gpu_rows, npu_rows: s.npu_rows,
      gpu_ms: formatMs(s.gpu_ms), npu_ms: formatMs(s.npu_ms), split_ms: formatMs(s.split_ms), speedup: formatSpeedup(s.speedup),
      note: s.extrapolated.length ? `extrapolated: ${s.extrapolated.join(', ')}` : '',
    })), ['k', 'gpu_ms', 'npu_ms', 'split_ms', 'speedup']),
  ));
  lines.push('');
  lines.push('sensitivity (each input changed alone)');
  const hasE2e = r.splittable_fraction !== null;
  lines.push(formatTable(
    ['input', 'change', 'value', 'k', 'speedup', 'vs_base', ...(hasE2e ? ['end_to_end'] : [])],
    alignRight(r.sensitivity.map((s) => ({
      input: SENSITIVITY_INPUTS[s.input], change: formatChangePct(s.change_pct),
      value: s.input === 'rows' ? String(s.value) : s.input === 'splittable_fraction' ? formatFraction(s.value) : `${formatMs(s.value)} ms`,
      k: s.npu_groups, speedup: formatSpeedup(s.speedup), vs_base: formatChangePct(s.speedup_change_pct),
      end_to_end: s.end_to_end_speedup === null ? '' : formatSpeedup(s.end_to_end_speedup),
    })), ['change', 'value', 'speedup', 'vs_base', 'end_to_end']),
  ));
  lines.push('');
  lines.push('sources');
  for (const l of sourceLines(r)) lines.push(`  ${l}`);
  if (r.extrapolation.length) {
    lines.push('');
    lines.push('extrapolated (cost held at the nearest measured point)');
    for (const x of r.extrapolation) lines.push(`  ${x.engine} at ${x.rows} rows, ${x.side} the measured ${x.measured_min_rows}..${x.measured_max_rows} rows (affects ${x.affects})`);
  }
  if (r.notes.length) {
    lines.push('');
    lines.push('notes');
    for (const n of r.notes) lines.push(`  - ${n}`);
  }
  return lines.join('\n');
}

