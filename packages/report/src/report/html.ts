/**
 * The report as one self-contained HTML page (pure: ReportData in, text
 * out). Everything from a capture is escaped here or travels as JSON data
 * to the charts (html/escape.ts).
 */
import { ceilingSpec } from '@tickwise/ceiling';
import { escapeHtml } from '../html/escape';
import { chartDiv, htmlPage } from '../html/page';
import { gapHistogramSpec } from '../specs/gap-histogram';
import { kernelBreakdownSpec } from '../specs/kernel-breakdown';
import { timelineSpec } from '../specs/timeline';
import { dur } from './format';
import type { ReportData } from './model';
import { ceilingTable, costTable, devicesTable, kernelsTable, pairsTable, type TextTable } from './sections';
import { textBlocks } from './text-blocks';

/**
 * The schedule model's summary as the page shows it (issue 18.3): its
 * aligned text tables as tables, the rest as wrapping lines (no text runs
 * off the page).
 */
export function scheduleBlocksHtml(lines: readonly string[]): string {
  return textBlocks(lines).map((b) => {
    if (b.kind === 'table') return tableHtml({ columns: b.columns, numeric: b.numeric, rows: b.rows, names: b.columns.map((c) => /^(stage|gemm|kernel)$/.test(c)) }, 'schedule');
    return `<div class="text-block">${b.lines.map((l) => `<div class="${/^\s/.test(l) ? 'indent' : l.startsWith('#') ? 'muted' : ''}">${escapeHtml(l.trim())}</div>`).join('')}</div>`;
  }).join('\n');
}

/** Longest name shown whole in a table cell; longer ones are clipped in the middle (the whole name on hover). */
export const NAME_CELL_MAX = 64;

/** A long name clipped in the middle (kernel names differ at both ends): `sm80_xmma_gemm_…_kernel`. */
export function clipMiddle(text: string, max = NAME_CELL_MAX): string {
  if (text.length <= max) return text;
  const head = Math.ceil((max - 1) * 0.6);
  return `${text.slice(0, head)}…${text.slice(text.length - (max - 1 - head))}`;
}

function cellHtml(text: string, name: boolean): string {
  if (!name || text.length <= NAME_CELL_MAX) return escapeHtml(text);
  return `<span class="name" title="${escapeHtml(text)}">${escapeHtml(clipMiddle(text))}</span>`;
}

/** A table in a box that scrolls sideways when wider than the page, with what it covers above it. */
export function tableHtml(t: TextTable, cls = ''): string {
  const th = t.columns.map((c, i) => `<th${t.numeric[i] ? ' class="num"' : ''}>${escapeHtml(c)}</th>`).join('');
  const body = t.rows.map((r) => `<tr>${r.map((c, i) => `<td${t.numeric[i] ? ' class="num"' : ''}>${cellHtml(c, t.names?.[i] === true)}</td>`).join('')}</tr>`).join('\n');
  const covers = t.covers ? `<div class="covers">${escapeHtml(t.covers)}</div>` : '';
  return `${covers}<div class="table-wrap"><table${cls ? ` class="${cls}"` : ''}><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}
const table = tableHtml;

/** The chart specs of a report, by chart id (also what the golden tests pin). */
export function reportSpecs(r: ReportData): Record<string, Record<string, unknown>> {
  const order = r.devices.map((d) => d.label);
  const kinds = new Map(r.devices.map((d) => [d.label, d.kind]));
  const specs: Record<string, Record<string, unknown>> = {};
  const groups = r.timeline.groups.length ? r.timeline.groups : [undefined];
  for (const g of groups) specs[g?.id ?? 'timeline'] = timelineSpec(r.timeline, r.devices, g);
  Object.assign(specs, {
    gaps: gapHistogramSpec(r.histogram, r.threshold_ns, order),
    kernels: kernelBreakdownSpec(r.kernels, kinds, order),
  });
  if (r.ceiling.kind === 'result') specs['ceiling'] = { ...ceilingSpec(r.ceiling.result) };
  if (r.schedule) specs['schedule'] = { ...r.schedule.spec };
  return specs;
}

/** The whole page. */
export function reportHtml(r: ReportData): string {
  const specs = reportSpecs(r);
  const parts: string[] = [];
  parts.push(`<h1>${escapeHtml(r.title)}</h1>`);
  parts.push(`<section id="verdict" class="verdict" aria-label="verdict">${r.verdict.map((l) => `<div class="verdict-line">${escapeHtml(l)}</div>`).join('')}</section>`);
  parts.push(`<div class="prov" id="provenance">${escapeHtml(r.provenance.join('\n'))}</div>`);

  const errors = r.findings.filter((f) => f.severity === 'error').length;
  const warnings = r.findings.filter((f) => f.severity === 'warning').length;
  parts.push(`<section id="findings"><h2>Check findings: ${errors} error(s), ${warnings} warning(s), ${r.findings.length - errors - warnings} info</h2>`);
  if (r.findings.length === 0) parts.push('<p class="muted">No finding.</p>');
  for (const f of r.findings) {
    parts.push(`<div class="finding"><span class="sev sev-${escapeHtml(f.severity)}">${escapeHtml(f.severity)}</span> <code>${escapeHtml(f.code)}</code> ${escapeHtml(f.message)}` +
      `<details><summary>what to do</summary>${escapeHtml(f.advice)}</details></div>`);
  }
  parts.push('</section>');

  parts.push(`<section id="devices"><h2>Devices</h2>${table(devicesTable(r))}`);
  if (r.device_pairs.length) parts.push(`<h3>Devices busy at the same time</h3>${table(pairsTable(r))}`);
  parts.push('</section>');

  const tl = r.timeline.groups;
  parts.push(`<section id="timeline"><h2>${tl.length > 1 ? `Timelines (${tl.length}: one per capture, or per captures that ran together on one clock)` : 'Timeline'}</h2>`);
  for (const g of tl.length ? tl : [undefined]) {
    parts.push(chartDiv(g?.id ?? 'timeline', `busy/idle timeline per device${g ? `: ${g.title}` : ''}`));
    const agg = r.timeline.aggregation.filter((a) => !g || g.labels.includes(a.label))
      .map((a) => `${a.label}: ${a.raw_blocks} busy blocks${a.merged_gap_max_ns === null ? '' : `, drawn as ${a.intervals} bars (gaps up to ${dur(a.merged_gap_max_ns)} closed)`}`);
    parts.push(`<p class="muted small">${agg.map(escapeHtml).join('<br>')}</p>`);
  }
  parts.push('</section>');

  parts.push(`<section id="gaps"><h2>Gaps</h2><div class="covers">${escapeHtml(devicesTable(r).covers ?? '')} (the gaps the Devices table counts)</div>${chartDiv('gaps', 'gap histogram')}</section>`);

  parts.push(`<section id="kernels"><h2>Kernels</h2><div class="covers">${escapeHtml(kernelsTable(r).covers ?? '')}</div>${chartDiv('kernels', 'kernel breakdown')}` +
    `<details><summary>table</summary>${table(kernelsTable(r))}</details></section>`);

  parts.push(`<section id="cost"><h2>Per-row-group cost</h2>`);
  parts.push(r.costs.length ? table(costTable(r)) : '<p class="muted">No GEMM kernel with an MxNxK shape in its name.</p>');
  parts.push('<p class="muted small">ms per group = mean dispatch ms x group rows / rows per dispatch (a dispatch covers rows-per-dispatch rows).</p></section>');

  parts.push('<section id="ceiling"><h2>Split ceiling</h2>');
  if (r.ceiling.kind === 'result') {
    parts.push(chartDiv('ceiling', 'split ceiling'));
    parts.push(table(ceilingTable(r.ceiling.result)));
  } else if (r.ceiling.kind === 'missing') {
    parts.push(`<p>Not drawn: the model needs ${r.ceiling.missing.map(escapeHtml).join('; ')}.</p>`);
    if (r.ceiling.found.length) parts.push(`<p class="muted small">found: ${r.ceiling.found.map(escapeHtml).join('<br>')}</p>`);
  } else parts.push('<p class="muted">Left out (--no-ceiling).</p>');
  parts.push('</section>');

  if (r.schedule) {
    parts.push('<section id="schedule"><h2>Schedule model: micro-batch pipelining</h2>');
    parts.push(chartDiv('schedule', 'Gantt chart of the best schedule'));
    parts.push(`${scheduleBlocksHtml(r.schedule.lines)}</section>`);
  }

  parts.push(`<section id="notes"><h2>How these numbers were made</h2><ul>${r.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul></section>`);
  return htmlPage({ title: r.title, body: parts.join('\n'), specs, description: r.provenance.join('; ') });
}
