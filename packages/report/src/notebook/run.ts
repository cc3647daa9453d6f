/**
 * Runs a parsed notebook against a store.
 *
 * ```
 * cells in order ──sql──> store.table(sql) ──> {columns, types, rows}
 *                  (a named cell: CREATE TEMP TABLE name AS sql, so later cells can
 *                   SELECT FROM it, and charts draw it)
 *                ──vega-lite──> spec + data.values = rows of the named cell
 *                               ──> vega-lite compile() (a bad spec fails here, with its line)
 * ```
 * Stops at the first failing cell with a TickwiseError naming the notebook
 * file and line (for SQL errors, the line inside the cell DuckDB points at).
 */
import { compile } from 'vega-lite';
import { QueryError, toJsonSafe, type Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { reportMessages as msg } from '../messages';
import type { MarkdownCell, Notebook, SqlCell, VegaLiteCell } from './parse';

/** A SQL cell with its result. */
export interface SqlResult extends SqlCell {
  readonly columns: readonly string[];
  readonly types: readonly string[];
  readonly rows: readonly Record<string, unknown>[];
}

/** A Vega-Lite cell with its data bound and the compiler's warnings. */
export interface VegaLiteResult extends VegaLiteCell {
  /** The spec with `data.values` set: what the page draws. */
  readonly bound: Record<string, unknown>;
  readonly warnings: readonly string[];
}

/** A notebook after a run. */
export interface NotebookRun {
  readonly notebook: Notebook;
  readonly cells: readonly (MarkdownCell | SqlResult | VegaLiteResult)[];
}

/** Most rows a chart may carry into a page; aggregate in SQL beyond that. */
export const MAX_CHART_ROWS = 50_000;

function sqlErrorLine(cell: SqlCell, e: unknown): number {
  const text = e instanceof Error ? e.message : String(e);
  const m = /LINE (\d+):/.exec(text);
  return cell.line + (m ? Number(m[1]) : 1);
}

/** The first line of a DuckDB error, without the "query failed:" wrapper. */
function sqlErrorText(e: unknown): string {
  const text = e instanceof QueryError ? e.message.replace(/^query failed:\s*/, '') : e instanceof Error ? e.message : String(e);
  return text.split('\n')[0]!;
}

/** Binds rows into a spec as inline data (top level: layers and concats inherit it). */
export function bindData(spec: Record<string, unknown>, rows: readonly Record<string, unknown>[]): Record<string, unknown> {
  return { ...spec, data: { values: toJsonSafe(rows) } };
}

/**
 * What a notebook may do: read the store, nothing else. A notebook may come
 * from someone else, so its cells run with DuckDB's external access off (no
 * files read or written: COPY, read_csv, read_blob, ATTACH, EXPORT; no
 * extension installed or loaded) and the configuration locked so a cell
 * cannot turn it back on. This applies to the connection for the rest of
 * its life. `tickwise sql` keeps full power: its SQL is the user's own.
 */
export const NOTEBOOK_SANDBOX = [
  'SET autoinstall_known_extensions = false',
  'SET autoload_known_extensions = false',
  'SET allow_community_extensions = false',
  'SET enable_external_access = false',
  'SET lock_configuration = true',
] as const;

async function sandbox(store: Store): Promise<void> {
  for (const s of NOTEBOOK_SANDBOX) {
    try {
      await store.run(s);
    } catch (e) {
      // already locked by an earlier run on this connection: check it holds
      const r = await store.rows(`SELECT value FROM duckdb_settings() WHERE name = 'enable_external_access'`);
      if (String(r[0]?.['value']).toLowerCase() !== 'false') throw e;
      return;
    }
  }
}

/** Runs every cell in order, in the sandbox ({@link NOTEBOOK_SANDBOX}); see the module comment. */
export async function runNotebook(store: Store, notebook: Notebook): Promise<NotebookRun> {
  await sandbox(store);
  const named = new Map<string, SqlResult>();
  const cells: (MarkdownCell | SqlResult | VegaLiteResult)[] = [];
  const file = notebook.file;
  for (const cell of notebook.cells) {
    if (cell.kind === 'markdown') {
      cells.push(cell);
    } else if (cell.kind === 'sql') {
      let t;
      try {
        if (cell.name !== null) {
          // a named cell's result becomes a temp table of that name for the cells below
          await store.run(`CREATE OR REPLACE TEMP TABLE "${cell.name}" AS ${cell.sql.replace(/;\s*$/, '')}`);
          t = await store.table(`SELECT * FROM "${cell.name}"`);
        } else {
          t = await store.table(cell.sql);
        }
      } catch (e) {
        throw new TickwiseError('notebook-sql', msg.notebookSqlFailed(sqlErrorText(e)), { file, line: sqlErrorLine(cell, e), cause: e });
      }
      const r: SqlResult = { ...cell, columns: t.columns, types: t.types, rows: t.rows };
      if (cell.name !== null) named.set(cell.name, r);
      cells.push(r);
    } else {
      const source = named.get(cell.data);
      if (!source) throw new TickwiseError('notebook-cell', msg.notebookUnknownData(cell.data, [...named.keys()]), { file, line: cell.line });
      if (source.rows.length > MAX_CHART_ROWS) {
        throw new TickwiseError('notebook-cell',
          `vega-lite cell draws ${source.rows.length} rows of ${cell.data}; more than ${MAX_CHART_ROWS} would bloat the page: aggregate in SQL (GROUP BY, buckets) first`,
          { file, line: cell.line });
      }
      const bound = bindData(cell.spec, source.rows);
      cells.push({ ...cell, bound, warnings: checkVegaLite(bound, file, cell.line) });
    }
  }
  return { notebook, cells };
}

/** Compiles a Vega-Lite spec to catch errors before a browser sees it; returns the compiler's warnings. */
export function checkVegaLite(spec: Record<string, unknown>, file: string, line: number): string[] {
  const warnings: string[] = [];
  const logger = {
    level(): number { return 0; },
    error(...a: unknown[]) { warnings.push(a.map(String).join(' ')); return this; },
    warn(...a: unknown[]) { warnings.push(a.map(String).join(' ')); return this; },
    info() { return this; },
    debug() { return this; },
  };
  try {
    compile(spec as never, { logger: logger as never });
  } catch (e) {
    throw new TickwiseError('notebook-cell', msg.notebookBadVegaLite((e as Error).message), { file, line, cause: e });
  }
  return warnings;
}
