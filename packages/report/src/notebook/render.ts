/** A notebook run as one self-contained HTML page (see html/page.ts). */
import { escapeHtml } from '../html/escape';
import { renderMarkdown } from '../html/markdown';
import { chartDiv, htmlPage } from '../html/page';
import { htmlTable } from '../html/table';
import type { NotebookRun } from './run';

/** Options of {@link renderNotebookHtml}. */
export interface NotebookHtmlOptions {
  /** The provenance line(s) of the store the notebook ran on (shown under the title). */
  readonly provenance?: string;
}

/** The page of a run: prose, each SQL cell's code (folded) and table, each chart. */
export function renderNotebookHtml(run: NotebookRun, opts: NotebookHtmlOptions = {}): string {
  const parts: string[] = [];
  const specs: Record<string, unknown> = {};
  const file = run.notebook.file;
  parts.push(`<div class="muted small">notebook <code>${escapeHtml(file)}</code></div>`);
  if (opts.provenance) parts.push(`<div class="prov">${escapeHtml(opts.provenance)}</div>`);
  let charts = 0;
  for (const cell of run.cells) {
    if (cell.kind === 'markdown') {
      parts.push(renderMarkdown(cell.text));
    } else if (cell.kind === 'sql') {
      const head = `sql${cell.name ? ` name=${cell.name}` : ''} · line ${cell.line} · ${cell.rows.length} row(s)`;
      const table = cell.show > 0 && cell.columns.length > 0 ? htmlTable(cell.columns, cell.rows, { maxRows: cell.show }) : '';
      parts.push(`<div class="cell cell-sql" data-line="${cell.line}"><details><summary>${escapeHtml(head)}</summary>` +
        `<pre class="code"><code>${escapeHtml(cell.sql)}</code></pre></details>${table}</div>`);
    } else {
      const id = `c${++charts}`;
      specs[id] = cell.bound;
      const warn = cell.warnings.length
        ? `<div class="muted small">${cell.warnings.map((w) => `vega-lite: ${escapeHtml(w)}`).join('<br>')}</div>`
        : '';
      parts.push(`<div class="cell cell-chart" data-line="${cell.line}"><div class="cell-head">vega-lite data=${escapeHtml(cell.data)} · line ${cell.line}</div>${chartDiv(id)}${warn}</div>`);
    }
  }
  return htmlPage({ title: run.notebook.title, body: parts.join('\n'), specs, description: `tickwise notebook ${file}` });
}
