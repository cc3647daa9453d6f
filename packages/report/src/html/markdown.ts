/**
 * A small Markdown renderer for notebook prose and report notes, safe by
 * construction: every piece of text is HTML-escaped first, raw HTML in the
 * source stays text, and link targets other than http(s), relative paths
 * and #anchors are dropped. Covers what notebooks use: ATX headings,
 * paragraphs, - / * / 1. lists, > quotes, fenced code, pipe tables, ---,
 * and inline `code`, **bold**, *em* / _em_, [text](url).
 */
import { escapeHtml } from './escape';

/** A heading id from its text ("Gaps between submissions" -> "gaps-between-submissions"). */
export function slug(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '') || 'section';
}

/**
 * A link target that cannot run script nor reach a host the author did not
 * spell out: http(s), or a relative path or #anchor. Scheme-relative links
 * (`//host/x`, and the backslash forms browsers read the same way) are dropped.
 */
export function safeHref(url: string): string | null {
  const u = url.trim();
  if (/^https?:\/\//i.test(u)) return u;
  if (/^[\\/]{2}/.test(u) || /^[\\/][\t\n\r ]*[\\/]/.test(u)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(u)) return null;
  return u;
}

/** Inline Markdown of one line of text, to HTML. */
export function renderInline(text: string): string {
  const out: string[] = [];
  // code spans first: their content is literal
  const parts = text.split(/(`+[^`]*?`+)/g);
  for (const part of parts) {
    const code = /^(`+)([^`]*?)\1$/.exec(part);
    if (code) {
      out.push(`<code>${escapeHtml(code[2]!.trim())}</code>`);
      continue;
    }
    let s = escapeHtml(part);
    s = s.replace(/\[([^\]]+)\]\(([^)\s]+)\)/g, (_m, label: string, href: string) => {
      // href is already escaped text; unescape &amp; for the check only
      const safe = safeHref(href.replace(/&amp;/g, '&'));
      return safe === null ? label : `<a href="${escapeHtml(safe)}">${label}</a>`;
    });
    s = s.replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
    s = s.replace(/(^|[^\w*])\*([^*\s][^*]*?)\*(?!\w)/g, '$1<em>$2</em>');
    s = s.replace(/(^|[^\w])_([^_\s][^_]*?)_(?!\w)/g, '$1<em>$2</em>');
    out.push(s);
  }
  return out.join('');
}

function isTableRow(line: string): boolean {
  return /^\s*\|.*\|\s*$/.test(line);
}

function tableCells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

/** Markdown text to HTML (block level). */
export function renderMarkdown(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const html: string[] = [];
  let i = 0;
  const paragraph: string[] = [];
  const flush = () => {
    if (paragraph.length) html.push(`<p>${paragraph.map(renderInline).join('\n')}</p>`);
    paragraph.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i]!;
    const fence = /^(\s*)(`{3,}|~{3,})(.*)$/.exec(line);
    if (fence) {
      flush();
      const close = fence[2]!;
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(close)) body.push(lines[i++]!);
      i++;
      const lang = fence[3]!.trim().split(/\s+/)[0] ?? '';
      html.push(`<pre class="code"${lang ? ` data-lang="${escapeHtml(lang)}"` : ''}><code>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const heading = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flush();
      const level = heading[1]!.length;
      html.push(`<h${level} id="${slug(heading[2]!)}">${renderInline(heading[2]!)}</h${level}>`);
      i++;
      continue;
    }
    if (/^\s*(---+|\*\*\*+)\s*$/.test(line)) {
      flush();
      html.push('<hr>');
      i++;
      continue;
    }
    if (line.trim() === '') {
      flush();
      i++;
      continue;
    }
    if (/^\s*>/.test(line)) {
      flush();
      const body: string[] = [];
      while (i < lines.length && /^\s*>/.test(lines[i]!)) body.push(lines[i++]!.replace(/^\s*>\s?/, ''));
      html.push(`<blockquote>${renderMarkdown(body.join('\n'))}</blockquote>`);
      continue;
    }
    const bullet = /^\s*([-*+]|\d+[.)])\s+/.exec(line);
    if (bullet) {
      flush();
      const ordered = /\d/.test(bullet[1]!);
      const items: string[] = [];
      while (i < lines.length) {
        const m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i]!);
        if (m && /\d/.test(m[1]!) === ordered) {
          items.push(m[2]!);
          i++;
        } else if (items.length && /^\s{2,}\S/.test(lines[i]!)) {
          items[items.length - 1] += ' ' + lines[i]!.trim();
          i++;
        } else break;
      }
      const tag = ordered ? 'ol' : 'ul';
      html.push(`<${tag}>${items.map((it) => `<li>${renderInline(it)}</li>`).join('')}</${tag}>`);
      continue;
    }
    if (isTableRow(line) && i + 1 < lines.length && /^\s*\|?\s*:?-{3,}/.test(lines[i + 1]!)) {
      flush();
      const head = tableCells(line);
      const align = tableCells(lines[i + 1]!).map((c) => (c.endsWith(':') ? (c.startsWith(':') ? 'center' : 'right') : 'left'));
      i += 2;
      const body: string[][] = [];
      while (i < lines.length && isTableRow(lines[i]!)) body.push(tableCells(lines[i++]!));
      const cell = (tag: string, c: string, j: number) => `<${tag} style="text-align:${align[j] ?? 'left'}">${renderInline(c)}</${tag}>`;
      html.push(`<table class="md"><thead><tr>${head.map((c, j) => cell('th', c, j)).join('')}</tr></thead>` +
        `<tbody>${body.map((r) => `<tr>${r.map((c, j) => cell('td', c, j)).join('')}</tr>`).join('')}</tbody></table>`);
      continue;
    }
    paragraph.push(line);
    i++;
  }
  flush();
  return html.join('\n');
}
