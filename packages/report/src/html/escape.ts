/**
 * Escaping for everything a capture can put on a page (kernel names, paths,
 * labels): text goes through {@link escapeHtml}; data for scripts through
 * {@link jsonForScript}, which a `</script>` inside a string cannot end.
 */
import { toJsonSafe } from '@tickwise/store';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or attribute value (quoted): `& < > " '` escaped. */
export function escapeHtml(text: unknown): string {
  return String(text ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/**
 * JSON for a `<script type="application/json">` element: integers beyond
 * 2^53 as strings (toJsonSafe), and `<`, `>`, `&`, U+2028, U+2029 written as
 * \u escapes, so no data can close the element or start markup.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(toJsonSafe(value))
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
