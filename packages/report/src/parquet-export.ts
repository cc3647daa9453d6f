/**
 * The store as Parquet for pandas/polars users: one file per canonical
 * table, or one hive-partitioned folder per table (`capture_id=N/`), written
 * by DuckDB's COPY. Values stay exact: HUGEINT columns (which Parquet lacks
 * and DuckDB would write as DOUBLE) become DECIMAL(38,0); UBIGINT stays
 * UINT64; JSON columns are text.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TABLE_NAMES, SCHEMA_VERSION, sqlString, type Store, type TableName } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { reportMessages as msg } from './messages';

/** Options of {@link exportParquet}. */
export interface ParquetExportOptions {
  /** Hive-partition every table that has a capture_id by it. */
  readonly partition?: boolean;
  /** Replace a non-empty output folder. */
  readonly force?: boolean;
}

/** One table written. */
export interface ParquetTableFile {
  readonly table: TableName;
  /** A file (`dispatches.parquet`) or, partitioned, a folder (`dispatches/`). */
  readonly path: string;
  readonly rows: number;
  readonly partitioned: boolean;
}

function ident(s: string): string {
  return `"${s.replaceAll('"', '""')}"`;
}

/** The SELECT list of a table for Parquet: HUGEINT columns cast to DECIMAL(38,0). */
export function parquetSelectSql(table: string, columns: readonly { name: string; type: string }[]): string {
  const list = columns.map((c) => (c.type === 'HUGEINT' ? `${ident(c.name)}::DECIMAL(38,0) AS ${ident(c.name)}` : ident(c.name)));
  return `SELECT ${list.join(', ')} FROM ${ident(table)}`;
}

/**
 * Writes every canonical table of the store under `dir` (created; must be
 * empty unless `force`), plus `tickwise-export.json` listing the tables, row
 * counts and schema version.
 */
export async function exportParquet(store: Store, dir: string, opts: ParquetExportOptions = {}): Promise<ParquetTableFile[]> {
  await prepareDir(dir, opts.force ?? false);
  const written: ParquetTableFile[] = [];
  const current: string[] = [];
  try {
    return await writeTables(store, dir, opts, written, current);
  } catch (e) {
    // all or nothing (issue 17: disk full during export): what this export wrote goes, no truncated table stays
    for (const p of [...written.map((w) => w.path), ...current, join(dir, 'tickwise-export.json')]) await rm(p, { recursive: true, force: true });
    if (e instanceof TickwiseError) throw e;
    const text = (e as Error).message;
    const why = /no space left on device|disk is full/i.test(text) || (e as NodeJS.ErrnoException).code === 'ENOSPC' ? 'no room on the disk'
      : /read-only file system/i.test(text) || (e as NodeJS.ErrnoException).code === 'EROFS' ? 'read-only file system'
      : /permission denied/i.test(text) || (e as NodeJS.ErrnoException).code === 'EACCES' ? 'permission denied'
      : text.split('\n')[0]!.replace(/^query failed: /, '');
    throw new TickwiseError('cannot-write', `cannot export: ${why}; nothing of this export was kept`, { file: dir, cause: e });
  }
}

async function writeTables(store: Store, dir: string, opts: ParquetExportOptions, written: ParquetTableFile[], current: string[]): Promise<ParquetTableFile[]> {
  for (const table of TABLE_NAMES) {
    const cols = (await store.rows(
      `SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_name = $1 AND table_schema = 'main' ORDER BY ordinal_position`,
      [table],
    )).map((r) => ({ name: String(r['name']), type: String(r['type']) }));
    if (cols.length === 0) continue;
    const rows = await store.count(table);
    const hasCapture = cols.some((c) => c.name === 'capture_id');
    const select = parquetSelectSql(table, cols);
    if (opts.partition && hasCapture && rows > 0) {
      const path = join(dir, table);
      current[0] = path;
      await store.run(`COPY (${select}) TO ${sqlString(path)} (FORMAT parquet, PARTITION_BY (capture_id))`);
      written.push({ table, path, rows, partitioned: true });
    } else {
      const path = join(dir, `${table}.parquet`);
      current[0] = path;
      await store.run(`COPY (${select}) TO ${sqlString(path)} (FORMAT parquet)`);
      written.push({ table, path, rows, partitioned: false });
    }
  }
  const manifest = {
    producer: 'tickwise export --format parquet',
    schema_version: SCHEMA_VERSION,
    partitioned_by: opts.partition ? 'capture_id (hive: <table>/capture_id=N/*.parquet)' : null,
    tables: written.map((w) => ({ table: w.table, path: w.path.slice(dir.length + 1), rows: w.rows, partitioned: w.partitioned })),
  };
  await writeFile(join(dir, 'tickwise-export.json'), JSON.stringify(manifest, null, 2) + '\n');
  return written;
}

async function prepareDir(dir: string, force: boolean): Promise<void> {
  let entries: string[] = [];
  try {
    entries = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new TickwiseError('cannot-write', msg.cannotWrite(dir, (e as Error).message), { cause: e });
    }
  }
  if (entries.length > 0) {
    if (!force) throw new TickwiseError('output-exists', msg.outputExists(dir));
    await rm(dir, { recursive: true, force: true });
  }
  await mkdir(dir, { recursive: true });
}
