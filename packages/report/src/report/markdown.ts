/**
 * The report as a Markdown summary to paste into an issue: provenance
 * first, then findings, devices, kernels, costs and the ceiling (pure).
 * Text from a capture is escaped for Markdown tables and HTML.
 */
import { ceilingMarkdown } from '@tickwise/ceiling';
import { dur } from './format';
import type { ReportData } from './model';
import { costTable, devicesTable, kernelsTable, pairsTable, type TextTable } from './sections';

/** A table cell: `|` and newlines cannot break the row, `<`/`>`/`&` cannot open HTML. */
export function mdCell(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/**
 * Markdown from another package (the ceiling's block) made safe: every `<`,
 * `>` and `&` escaped except the `<details>`/`<summary>` tags it uses, since
 * its source lines quote capture labels as they are.
 */
export function sanitizeMarkdownHtml(md: string): string {
  return md
    .replace(/&(?![a-z]+;|#\d+;)/gi, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/&lt;(\/?)(details|summary)&gt;/g, '<$1$2>');
}

function table(t: TextTable): string {
  const covers = t.covers ? `_${mdCell(t.covers)}_\n\n` : '';
  const head = `| ${t.columns.map(mdCell).join(' | ')} |`;
  const rule = `| ${t.numeric.map((n) => (n ? '---:' : '---')).join(' | ')} |`;
  return covers + [head, rule, ...t.rows.map((r) => `| ${r.map(mdCell).join(' | ')} |`)].join('\n');
}

/** The Markdown summary. */
export function reportMarkdown(r: ReportData): string {
  const out: string[] = [];
  out.push(`## ${mdCell(r.title)}`, '');
  out.push(...r.verdict.map((l) => `**${mdCell(l)}**  `), '');
  out.push('```text', ...r.provenance.map((l) => l.replace(/```/g, "'''")), '```', '');
  const errors = r.findings.filter((f) => f.severity === 'error').length;
  const warnings = r.findings.filter((f) => f.severity === 'warning').length;
  out.push(`### Check findings: ${errors} error(s), ${warnings} warning(s), ${r.findings.length - errors - warnings} info`, '');
  if (r.findings.length === 0) out.push('No finding.');
  for (const f of r.findings) out.push(`- **${f.severity}** \`${f.code}\`: ${mdCell(f.message)}`);
  out.push('');
  out.push(`### Devices (gap threshold ${dur(r.threshold_ns)})`, '', table(devicesTable(r)), '');
  if (r.device_pairs.length) out.push('Busy at the same time:', '', table(pairsTable(r)), '');
  out.push('### Kernels', '', table(kernelsTable(r, 10)), '');
  out.push('### Per-row-group cost', '');
  out.push(r.costs.length ? table(costTable(r)) : 'No GEMM kernel with an MxNxK shape in its name.', '');
  out.push('### Split ceiling', '');
  if (r.ceiling.kind === 'result') out.push(sanitizeMarkdownHtml(ceilingMarkdown(r.ceiling.result)).trimEnd(), '');
  else if (r.ceiling.kind === 'missing') out.push(`Not computed: the model needs ${r.ceiling.missing.map(mdCell).join('; ')}.`, '');
  else out.push('Left out (--no-ceiling).', '');
  if (r.schedule) {
    // a fenced block: capture-derived text stays inert (no Markdown or HTML inside a fence), fences in it are broken up
    out.push('### Schedule model', '', '```text', ...r.schedule.lines.map((l) => l.replaceAll('```', "'''")), '```', '');
  }
  out.push('### Notes', '', ...r.notes.map((n) => `- ${mdCell(n)}`), '');
  return out.join('\n');
}
