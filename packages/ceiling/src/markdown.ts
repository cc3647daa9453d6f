import type { CeilingResult } from './ceiling';
import { formatChangePct, formatFactor, formatFraction, formatGroups, formatMs, formatSpeedup } from './format-numbers';
import { SENSITIVITY_INPUTS } from './sensitivity';

/** `1 group`, `3 groups`. */
function groupsText(n: number): string {
  return `${n} group${n === 1 ? '' : 's'}`;
}

function esc(s: string): string {
  return s.replaceAll('|', '\\|').replaceAll('\n', ' ');
}

function table(header: readonly string[], rows: readonly (readonly string[])[], alignRight: readonly boolean[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map(esc).join(' | ')} |`;
  return [line(header), `|${alignRight.map((r) => (r ? '---:' : ':---')).join('|')}|`, ...rows.map(line)].join('\n');
}

/** One line per cost source, for the text and Markdown outputs. */
export function sourceLines(r: CeilingResult): string[] {
  const lines: string[] = [];
  lines.push(`iGPU cost: ${r.sources.gpu?.line ?? 'given directly'}`);
  lines.push(`NPU cost: ${r.sources.npu?.line ?? 'given directly'}`);
  if (r.splittable_fraction !== null) lines.push(`splittable fraction: ${r.sources.splittable_fraction?.line ?? 'given directly'}`);
  return lines;
}

/** The requirement for the target as one sentence, or null without a target. */
export function requirementLine(r: CeilingResult): string | null {
  const q = r.required;
  if (q === null) return null;
  const alt = `or, with no split, the iGPU at <= ${formatMs(q.gpu_group_ms)} ms per group`;
  if (!q.feasible || q.npu_tile_ms === null || q.npu_groups === null) return `not reachable by any split (${q.note ?? ''}); ${alt}`;
  const factor = q.npu_tile_factor ?? 1;
  const now = `${formatMs(q.npu_tile_ms_now ?? 0)} ms today`;
  const how = factor > 1 ? `${formatFactor(factor)} faster than ${now}` : `already met: ${now}`;
  return `NPU tile <= ${formatMs(q.npu_tile_ms)} ms with ${groupsText(q.npu_groups)} on the NPU (${how}); ${alt}`;
}

/** The p10/p90 range as one sentence, or null when no spread was measured. */
export function rangeLine(r: CeilingResult): string | null {
  const g = r.speedup_range;
  if (g === null) return null;
  const e2e = g.low.end_to_end_speedup !== null && g.high.end_to_end_speedup !== null
    ? `; end-to-end ${formatSpeedup(g.low.end_to_end_speedup)} .. ${formatSpeedup(g.high.end_to_end_speedup)}` : '';
  return `${formatSpeedup(g.low.speedup)} (k = ${g.low.npu_groups}: iGPU ${g.low.gpu_stat}, NPU ${g.low.npu_stat}) .. ` +
    `${formatSpeedup(g.high.speedup)} (k = ${g.high.npu_groups}: iGPU ${g.high.gpu_stat}, NPU ${g.high.npu_stat})${e2e}`;
}

/**
 * A Markdown block for pasting into an issue: the answer in a table, the
 * speedup by k and the sensitivity folded in `<details>`, then sources and
 * notes. Numbers are rounded for reading (JSON keeps them whole).
 */
export function ceilingMarkdown(r: CeilingResult): string {
  const out: string[] = [];
  out.push(`#### Split ceiling: ${r.rows} rows, ${groupsText(r.groups)} of ${r.group_rows}${r.model === 'curve' ? ' (costs from curves in M)' : ''}`);
  out.push('');
  const rows: string[][] = [
    ['iGPU cost', `${formatMs(r.gpu_group_ms)} ms per group (at ${r.rows} rows)`],
    ['NPU cost', `${formatMs(r.npu_tile_ms)} ms per tile${r.model === 'curve' ? ` (at ${r.npu_rows_at_split || r.group_rows} rows)` : ''}`],
    ['sync overhead', `${formatMs(r.sync_overhead_ms)} ms`],
    ['**best split**', `**${groupsText(r.npu_groups)} on the NPU** (${r.npu_rows_at_split} rows), ${r.gpu_groups} on the iGPU (${r.gpu_rows_at_split} rows)`],
    ['iGPU only', `${formatMs(r.gpu_only_ms)} ms`],
    ['split', `${formatMs(r.split_ms)} ms (iGPU ${formatMs(r.gpu_ms_at_split)}, NPU ${formatMs(r.npu_ms_at_split)}${r.npu_groups > 0 && r.sync_overhead_ms > 0 ? `, sync ${formatMs(r.sync_overhead_ms)}` : ''})`],
    ['**speedup**', `**${formatSpeedup(r.speedup)}**`],
    ['balance point k*', `${formatGroups(r.balance_groups)} groups`],
  ];
  if (r.splittable_fraction !== null && r.end_to_end_speedup !== null) {
    rows.push(['end-to-end', `${formatSpeedup(r.end_to_end_speedup)} (${formatFraction(r.splittable_fraction)} of the prefill splits)`]);
  }
  const req = requirementLine(r);
  if (req !== null && r.target_speedup !== null) rows.push([`for ${formatSpeedup(r.target_speedup)}`, req]);
  const range = rangeLine(r);
  if (range !== null) rows.push(['p10..p90 range', range]);
  out.push(table(['', 'value'], rows, [false, false]));
  out.push('');
  out.push('<details><summary>speedup by groups on the NPU</summary>');
  out.push('');
  out.push(table(
    ['k', 'iGPU rows', 'NPU rows', 'iGPU ms', 'NPU ms', 'wall ms', 'speedup'],
    r.by_k.map((s) => [
      s.npu_groups === r.npu_groups ? `**${s.npu_groups}**` : String(s.npu_groups),
      String(s.gpu_rows), String(s.npu_rows), formatMs(s.gpu_ms), formatMs(s.npu_ms), formatMs(s.split_ms),
      formatSpeedup(s.speedup) + (s.extrapolated.length ? ' (extrapolated)' : ''),
    ]),
    [true, true, true, true, true, true, true],
  ));
  out.push('');
  out.push('</details>');
  out.push('');
  out.push('<details><summary>sensitivity: each input changed alone</summary>');
  out.push('');
  const hasE2e = r.splittable_fraction !== null;
  out.push(table(
    ['input', 'change', 'value', 'k', 'speedup', 'vs base', ...(hasE2e ? ['end-to-end'] : [])],
    r.sensitivity.map((s) => [
      SENSITIVITY_INPUTS[s.input], formatChangePct(s.change_pct),
      s.input === 'rows' ? String(s.value) : s.input === 'splittable_fraction' ? formatFraction(s.value) : `${formatMs(s.value)} ms`,
      String(s.npu_groups), formatSpeedup(s.speedup), formatChangePct(s.speedup_change_pct),
      ...(hasE2e ? [s.end_to_end_speedup === null ? '' : formatSpeedup(s.end_to_end_speedup)] : []),
    ]),
    [false, true, true, true, true, true, ...(hasE2e ? [true] : [])],
  ));
  out.push('');
  out.push('</details>');
  out.push('');
  out.push('Sources:');
  for (const l of sourceLines(r)) out.push(`- ${l}`);
  if (r.extrapolation.length > 0) {
    out.push('');
    out.push('Extrapolated (cost held at the nearest measured point):');
    for (const x of r.extrapolation) {
      out.push(`- ${x.engine} at ${x.rows} rows, ${x.side} the measured ${x.measured_min_rows}..${x.measured_max_rows} rows (affects ${x.affects})`);
    }
  }
  if (r.notes.length > 0) {
    out.push('');
    out.push('Notes:');
    for (const n of r.notes) out.push(`- ${n}`);
  }
  return out.join('\n') + '\n';
}
