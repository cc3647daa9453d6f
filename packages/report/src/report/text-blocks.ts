/**
 * Text output of the CLI (the schedule model's summary) cut into tables and
 * lines for the page (pure). A table is what the CLI's formatTable prints:
 *
 * ```
 * strategy     makespan   speedup      <- header
 * -----------  ---------  -------      <- one run of '-' per column, two spaces apart
 * all-iGPU     86.49 ms   1.000x       <- rows: cells padded to the column's width
 * ```
 * Columns are cut at the dash runs' positions; the table ends at a blank
 * line or at the first line with text where the rule has a gap (cells are
 * padded to their column, so a row never does); every other line is a
 * text line.
 */

/** A piece of the text. */
export type TextBlock =
  | { readonly kind: 'table'; readonly columns: readonly string[]; readonly numeric: readonly boolean[]; readonly rows: readonly (readonly string[])[] }
  | { readonly kind: 'text'; readonly lines: readonly string[] };

const RULE = /^-+(?: {2}-+)*$/;

/** The text's blocks, in order; blank lines separate text blocks and end tables. */
export function textBlocks(lines: readonly string[]): TextBlock[] {
  const out: TextBlock[] = [];
  let text: string[] = [];
  const flush = () => {
    if (text.length) out.push({ kind: 'text', lines: text });
    text = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const next = lines[i + 1];
    if (next !== undefined && RULE.test(next.trimEnd()) && line.trim() !== '') {
      flush();
      const cols: [number, number][] = [];
      for (const m of next.trimEnd().matchAll(/-+/g)) cols.push([m.index, m.index + m[0].length]);
      const cut = (l: string) => cols.map(([a, b], j) => (j === cols.length - 1 ? l.slice(a) : l.slice(a, b)).trim());
      // a row has spaces where the rule has its gaps (cells are padded to their column); the first line without ends the table
      const isRow = (l: string) => l.trim() !== '' && cols.every(([, b], j) => j === cols.length - 1 || l.slice(b, cols[j + 1]![0]).trim() === '');
      const rows: string[][] = [];
      let j = i + 2;
      for (; j < lines.length && isRow(lines[j]!); j++) rows.push(cut(lines[j]!));
      const columns = cut(line);
      const numeric = columns.map((_c, k) => rows.length > 0 && rows.every((r) => r[k] === '' || /^[-+]?[0-9.,]+(?:e[-+]?\d+)?\s*(?:ms|us|ns|s|x|%)?(?:\s|$)/.test(r[k]!)));
      out.push({ kind: 'table', columns, numeric, rows });
      i = j - 1;
      continue;
    }
    if (line.trim() === '') flush();
    else text.push(line);
  }
  flush();
  return out;
}
