/** Result tables as HTML: escaped cells, numbers right-aligned and exact for integers. */
import { escapeHtml } from './escape';

/** Display text of one value: integers exact, floats to 6 significant digits, objects as JSON. */
export function displayValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return String(v);
    return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(6)));
  }
  if (typeof v === 'object') return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
  return String(v);
}

/** An HTML table of rows; only the first `maxRows` are shown, with a note of the rest. */
export function htmlTable(columns: readonly string[], rows: readonly Record<string, unknown>[], opts: { maxRows?: number; caption?: string } = {}): string {
  const max = opts.maxRows ?? 50;
  const numeric = columns.map((c) => rows.length > 0 && rows.every((r) => r[c] === null || r[c] === undefined || typeof r[c] === 'number' || typeof r[c] === 'bigint'));
  const head = columns.map((c, j) => `<th${numeric[j] ? ' class="num"' : ''}>${escapeHtml(c)}</th>`).join('');
  const body = rows.slice(0, max)
    .map((r) => `<tr>${columns.map((c, j) => `<td${numeric[j] ? ' class="num"' : ''}>${escapeHtml(displayValue(r[c]))}</td>`).join('')}</tr>`)
    .join('\n');
  const caption = opts.caption ? `<caption class="muted small">${escapeHtml(opts.caption)}</caption>` : '';
  const more = rows.length > max ? `\n<div class="more">${rows.length - max} more row(s) not shown (${rows.length} in all)</div>` : '';
  return `<table>${caption}<thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>${more}`;
}
