/**
 * Notebook files: Markdown with executable cells.
 *
 * ````
 * ```sql name=gaps            a SQL cell; name= lets a chart draw it and makes its
 * select ...                  result a temp table for later cells (SELECT ... FROM gaps);
 * ```                         show=N rows in the table (default 20), show=0 hides it
 * ```vega-lite data=gaps      a Vega-Lite cell: a JSON spec whose data are
 * { "mark": "bar", ... }      the rows of the sql cell named gaps (above it)
 * ```
 * ````
 * Any other fence (```text, ```bash) is shown as code, not run. Pure: text
 * in, cells out; every problem is a TickwiseError with the file and line.
 */
import { TABLE_NAMES } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { reportMessages as msg } from '../messages';
import { jsonErrorOffset, lineOfOffset } from './json-position';

/** Markdown prose between cells. */
export interface MarkdownCell { readonly kind: 'markdown'; readonly line: number; readonly text: string }
/** A SQL cell. */
export interface SqlCell {
  readonly kind: 'sql';
  /** Line of the opening fence (1-based). */
  readonly line: number;
  readonly name: string | null;
  readonly sql: string;
  /** Rows to show in the result table (0: none). */
  readonly show: number;
}
/** A Vega-Lite cell. */
export interface VegaLiteCell {
  readonly kind: 'vega-lite';
  readonly line: number;
  /** The SQL cell whose rows it draws. */
  readonly data: string;
  /** The spec as written (without data). */
  readonly spec: Record<string, unknown>;
}
/** A cell of a notebook. */
export type NotebookCell = MarkdownCell | SqlCell | VegaLiteCell;

/** A parsed notebook. */
export interface Notebook {
  readonly file: string;
  /** The first `# heading`, else the file name. */
  readonly title: string;
  readonly cells: readonly NotebookCell[];
}

/** Executable cell languages. */
export const CELL_LANGS = { sql: 'sql', 'vega-lite': 'vega-lite' } as const;
/** Key of {@link CELL_LANGS}. */
export type CellLang = keyof typeof CELL_LANGS;
/** Type guard for {@link CellLang}. */
export function isCellLang(x: string): x is CellLang {
  return Object.hasOwn(CELL_LANGS, x);
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Names a cell may not take: its temp table would hide the store's own table. */
const RESERVED = new Set<string>(TABLE_NAMES);

function parseOptions(text: string, file: string, line: number): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /\s*([A-Za-z_][\w-]*)=(?:"([^"]*)"|'([^']*)'|(\S+))/gy;
  let rest = text.trim();
  let m: RegExpExecArray | null;
  let pos = 0;
  re.lastIndex = 0;
  while (pos < rest.length && (m = re.exec(rest)) !== null) {
    out[m[1]!] = m[2] ?? m[3] ?? m[4]!;
    pos = re.lastIndex;
  }
  rest = rest.slice(pos).trim();
  if (rest !== '') throw new TickwiseError('notebook-cell', msg.notebookBadCellOption(text.trim()), { file, line });
  return out;
}

/** Parses a notebook's text; `file` is the name used in errors. */
export function parseNotebook(text: string, file: string): Notebook {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const cells: NotebookCell[] = [];
  const names = new Map<string, number>();
  let prose: string[] = [];
  let proseLine = 1;
  const flushProse = (nextLine: number) => {
    if (prose.some((l) => l.trim() !== '')) cells.push({ kind: 'markdown', line: proseLine, text: prose.join('\n') });
    prose = [];
    proseLine = nextLine;
  };
  let i = 0;
  while (i < lines.length) {
    const open = /^(`{3,}|~{3,})\s*([A-Za-z][\w-]*)?(.*)$/.exec(lines[i]!);
    if (!open) {
      prose.push(lines[i]!);
      i++;
      continue;
    }
    const fence = open[1]!;
    const lang = (open[2] ?? '').toLowerCase();
    const startLine = i + 1;
    const body: string[] = [];
    let j = i + 1;
    const close = new RegExp(`^\\s*\\${fence[0]}{${fence.length},}\\s*$`);
    while (j < lines.length && !close.test(lines[j]!)) {
      body.push(lines[j]!);
      j++;
    }
    if (j >= lines.length) throw new TickwiseError('notebook-cell', msg.notebookUnclosedFence(), { file, line: startLine });
    if (!isCellLang(lang)) {
      // not executable: stays part of the prose, shown as code
      prose.push(...lines.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    flushProse(j + 2);
    const opts = parseOptions(open[3] ?? '', file, startLine);
    if (lang === 'sql') {
      const name = opts['name'] ?? null;
      if (name !== null && !NAME.test(name)) throw new TickwiseError('notebook-cell', msg.notebookBadCellOption(`name=${name}`), { file, line: startLine });
      if (name !== null && RESERVED.has(name.toLowerCase())) throw new TickwiseError('notebook-cell', msg.notebookReservedName(name), { file, line: startLine });
      if (name !== null && names.has(name)) throw new TickwiseError('notebook-cell', msg.notebookDuplicateName(name, names.get(name)!), { file, line: startLine });
      if (name !== null) names.set(name, startLine);
      const show = opts['show'] === undefined ? 20 : Number(opts['show']);
      if (!Number.isInteger(show) || show < 0) throw new TickwiseError('notebook-cell', msg.notebookBadCellOption(`show=${opts['show']}`), { file, line: startLine });
      for (const k of Object.keys(opts)) if (k !== 'name' && k !== 'show') throw new TickwiseError('notebook-cell', msg.notebookBadCellOption(`${k}=${opts[k]}`), { file, line: startLine });
      cells.push({ kind: 'sql', line: startLine, name, sql: body.join('\n'), show });
    } else {
      const data = opts['data'];
      if (data === undefined) throw new TickwiseError('notebook-cell', msg.notebookNoData(), { file, line: startLine });
      for (const k of Object.keys(opts)) if (k !== 'data') throw new TickwiseError('notebook-cell', msg.notebookBadCellOption(`${k}=${opts[k]}`), { file, line: startLine });
      if (!names.has(data)) throw new TickwiseError('notebook-cell', msg.notebookUnknownData(data, [...names.keys()]), { file, line: startLine });
      let spec: unknown;
      try {
        spec = JSON.parse(body.join('\n'));
      } catch (e) {
        const text = body.join('\n');
        const at = jsonErrorOffset(text);
        const why = (e as Error).message.split('\n')[0]!;
        throw new TickwiseError('notebook-cell', msg.notebookBadSpec(why), { file, line: startLine + (at === null ? 1 : lineOfOffset(text, at)), cause: e });
      }
      if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
        throw new TickwiseError('notebook-cell', msg.notebookBadSpec('expected { ... }'), { file, line: startLine + 1 });
      }
      cells.push({ kind: 'vega-lite', line: startLine, data, spec: spec as Record<string, unknown> });
    }
    i = j + 1;
  }
  flushProse(lines.length + 1);
  const heading = lines.find((l) => /^#\s+\S/.test(l));
  return { file, title: heading ? heading.replace(/^#\s+/, '').trim() : file.split('/').pop()!, cells };
}
