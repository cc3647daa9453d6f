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

function table(t: TextTable, cls = ''): string {
  const th = t.columns.map((c, i) => `<th${t.numeric[i] ? ' class="num"' : ''}>${escapeHtml(c)}</th>`).join('');
  const body = t.rows.map((r) => `<tr>${r.map((c, i) => `<td${t.numeric[i] ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n');
  return `<table${cls ? ` class="${cls}"` : ''}><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** The chart specs of a report, by chart id (also what the golden tests pin). */
export function reportSpecs(r: ReportData): Record<string, Record<string, unknown>> {
  const order = r.devices.map((d) => d.label);
  const kinds = new Map(r.devices.map((d) => [d.label, d.kind]));
  const specs: Record<string, Record<string, unknown>> = {
    timeline: timelineSpec(r.timeline, r.devices),
    gaps: gapHistogramSpec(r.histogram, r.threshold_ns, order),
    kernels: kernelBreakdownSpec(r.kernels, kinds, order),
  };
  if (r.ceiling.kind === 'result') specs['ceiling'] = { ...ceilingSpec(r.ceiling.result) };
  if (r.schedule) specs['schedule'] = { ...r.schedule.spec };
  return specs;
}

/** The whole page. */
export function reportHtml(r: ReportData): string {
  const specs = reportSpecs(r);
  const parts: string[] = [];
  parts.push(`<h1>${escapeHtml(r.title)}</h1>`);
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

  parts.push(`<section id="timeline"><h2>Timeline</h2>${chartDiv('timeline', 'busy/idle timeline per device')}`);
  const agg = r.timeline.aggregation.map((a) => `${a.label}: ${a.raw_blocks} busy blocks${a.merged_gap_max_ns === null ? '' : `, drawn as ${a.intervals} bars (gaps up to ${dur(a.merged_gap_max_ns)} closed)`}`);
  parts.push(`<p class="muted small">${agg.map(escapeHtml).join('<br>')}</p></section>`);

  parts.push(`<section id="gaps"><h2>Gaps</h2>${chartDiv('gaps', 'gap histogram')}</section>`);

  parts.push(`<section id="kernels"><h2>Kernels</h2>${chartDiv('kernels', 'kernel breakdown')}` +
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
    parts.push(`<pre class="small">${escapeHtml(r.schedule.lines.join('\n'))}</pre></section>`);
  }

  parts.push(`<section id="notes"><h2>How these numbers were made</h2><ul>${r.notes.map((n) => `<li>${escapeHtml(n)}</li>`).join('')}</ul></section>`);
  return htmlPage({ title: r.title, body: parts.join('\n'), specs, description: r.provenance.join('; ') });
}
