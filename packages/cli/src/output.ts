import { toJsonSafe, toJsonText } from '@tickwise/store';

/** Formats one value for a human table cell or CSV: numbers exactly as stored (shortest round-trip text), never rounded. */
export function cell(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return String(v);
  if (typeof v === 'object') return JSON.stringify(toJsonSafe(v));
  return String(v);
}

/**
 * Shortens a long cell for a human table, keeping both ends (C++ kernel
 * names differ at the start and the end): `void at::native::vecto…, 3ul>)`.
 * JSON and CSV output always carry the whole text.
 */
export function clip(text: string, max: number): string {
  if (text.length <= max || max < 9) return text;
  const head = Math.ceil((max - 1) * 0.6);
  return text.slice(0, head) + '…' + text.slice(text.length - (max - 1 - head));
}

/** Renders rows as an aligned text table (numbers right-aligned; cells longer than `maxCell` clipped). */
export function formatTable(columns: readonly string[], rows: readonly Record<string, unknown>[], opts: { maxCell?: number } = {}): string {
  const maxCell = opts.maxCell ?? Number(process.env['TICKWISE_MAX_CELL'] ?? 80);
  const cells = rows.map((r) => columns.map((c) => clip(cell(r[c]), maxCell)));
  const numeric = columns.map((c) => rows.length > 0 && rows.every((r) => r[c] === null || typeof r[c] === 'number' || typeof r[c] === 'bigint'));
  // a loop, not Math.max(...cells): a spread of 500k rows overflows the call stack
  const width = columns.map((c, i) => cells.reduce((w, row) => Math.max(w, row[i]!.length), c.length));
  const line = (vals: readonly string[]) =>
    vals.map((v, i) => (numeric[i] ? v.padStart(width[i]!) : v.padEnd(width[i]!))).join('  ').trimEnd();
  return [line(columns), width.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)].join('\n');
}

/** Renders rows as RFC 4180 CSV. */
export function formatCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  const esc = (s: string) => (/[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  return [columns.map(esc).join(','), ...rows.map((r) => columns.map((c) => esc(cell(r[c]))).join(','))].join('\n');
}

/**
 * JSON text for machines: a field's JSON type follows its column type, never
 * its value (every integer a JSON number with all its exact digits, also
 * beyond 2^53; see `toJsonText` in @tickwise/store).
 */
export function formatJson(value: unknown): string {
  return toJsonText(value);
}

/** Writes a line to stdout. */
export function out(text: string): void {
  process.stdout.write(text.endsWith('\n') ? text : text + '\n');
}

/** Writes a line to stderr (logs, progress, warnings). */
export function log(text: string): void {
  process.stderr.write(text.endsWith('\n') ? text : text + '\n');
}

/** Names each file of a directory input that was not imported, and why (stderr). */
export function logSkipped(skipped: readonly { path: string; why: string }[]): void {
  for (const s of skipped) log(`skipped ${s.path}: ${s.why}`);
}
