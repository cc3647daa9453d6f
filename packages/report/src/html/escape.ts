/**
 * Escaping for everything a capture can put on a page (kernel names, paths,
 * labels): text goes through {@link escapeHtml}; data for scripts through
 * {@link jsonForScript}, which a `</script>` inside a string cannot end.
 */
import { toJsonSafe } from '@tickwise/store';

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/**
 * Characters that change how text around them is shown rather than being
 * shown: bidi embeddings, overrides and isolates (U+202A-202E, U+2066-2069),
 * marks (U+200E, U+200F, U+061C), line/paragraph separators (U+2028,
 * U+2029) and C0/C1 controls other than tab and newline.
 */
// eslint-disable-next-line no-control-regex
const INVISIBLE_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Text with every {@link INVISIBLE_CONTROLS} character written as a visible
 * `\u202E` escape: a kernel name cannot reorder what follows it on the page
 * (a bidi override) or break a chart label (U+2028).
 */
export function showControls(text: string): string {
  return text.replace(INVISIBLE_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
}

/** Text as HTML text or attribute value (quoted): `& < > " '` escaped, invisible controls shown escaped. */
export function escapeHtml(text: unknown): string {
  return showControls(String(text ?? '')).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]!);
}

/** Every string inside a value (keys too) through {@link showControls}. */
function showControlsDeep(v: unknown): unknown {
  if (typeof v === 'string') return showControls(v);
  if (Array.isArray(v)) return v.map(showControlsDeep);
  if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [showControls(k), showControlsDeep(x)]));
  }
  return v;
}

/**
 * JSON for a `<script type="application/json">` element: integers beyond
 * 2^53 as strings (toJsonSafe), and `<`, `>`, `&`, U+2028, U+2029 written as
 * \u escapes, so no data can close the element or start markup; inside
 * strings, invisible controls become visible text ({@link showControls}).
 */
export function jsonForScript(value: unknown): string {
  // strings are shown as text by the page's scripts and charts: their invisible controls become visible escapes too
  return JSON.stringify(showControlsDeep(toJsonSafe(value)))
    .replace(/</g, '\\u003c')
    .replace(/>/g, '\\u003e')
    .replace(/&/g, '\\u0026')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
