import type { DuckDBAppender, DuckDBConnection, DuckDBInstance, DuckDBValue } from '@duckdb/node-api';
import { loadDuckdb } from './duckdb-module';
import { TickwiseError } from '@tickwise/time';
import { TABLES, TABLE_NAMES, SCHEMA_VERSION, tableColumns, type AppendRow, type TableName } from './schema';
import { AppendValueError, appendColumnBatch, forEachRow, rowSink, type ColumnBatch } from './append';
import { convertValue } from './values';
import { QueryError } from './query-error';
import { redactConditionRow, type ConditionValues } from './redact';
import { checkColumns, type RowOf, type Shape } from './shape';


/** Positional (`$1`) or named (`$name`) parameters of a statement. */
export type Params = readonly unknown[] | Record<string, unknown>;

/** A plain row: column name to JS value (BIGINT stays `bigint`). */
export type Row = Record<string, unknown>;

/**
 * The tickwise store: a DuckDB database (file or in-memory) with the
 * canonical schema. The only place that talks to DuckDB's client.
 */
/**
 * `TICKWISE_TRACE_SQL=1`: for every statement, on stderr, when it ended (ms
 * since the process started: the gaps between statements are time spent
 * outside DuckDB), its wall time and its first 160 characters of SQL;
 * `TICKWISE_TRACE_SQL=full`: the whole statement, on one line (to replay it).
 */
const TRACE_SQL = Boolean(process.env['TICKWISE_TRACE_SQL']);
const TRACE_SQL_CHARS = process.env['TICKWISE_TRACE_SQL'] === 'full' ? Infinity : 160;

function traceSql(t0: number, sql: string): void {
  const now = performance.now();
  process.stderr.write(`sql @${now.toFixed(0).padStart(6)} ${(now - t0).toFixed(1).padStart(8)} ms ${sql.replace(/\s+/g, ' ').trim().slice(0, TRACE_SQL_CHARS)}\n`);
}

export class Store {
  readonly path: string;
  private readonly instance: DuckDBInstance;
  private readonly conn: DuckDBConnection;

  /** Opened read-only: nothing this process does can change what a query returns (analyses may memoize). */
  readonly readOnly: boolean;

  private constructor(path: string, instance: DuckDBInstance, conn: DuckDBConnection, readOnly: boolean, private readonly owner = true) {
    this.path = path;
    this.instance = instance;
    this.conn = conn;
    this.readOnly = readOnly;
  }

  /**
   * A second connection to the same database, for a statement that runs
   * while this connection runs another (DuckDB runs a query on the thread
   * that asked for it, and more only as `threads` allows). Its TEMP tables
   * are its own; the tables of a database attached to either (`ATTACH
   * ':memory:' AS x`) are shared. {@link close} closes only the connection.
   */
  async sibling(): Promise<Store> {
    return new Store(this.path, this.instance, await this.instance.connect(), this.readOnly, false);
  }

  /**
   * Opens (creating if needed) a store at `path`, or `:memory:`. A file
   * that is not a DuckDB database, a directory, or a store written by a
   * newer tickwise (its schema_version above {@link SCHEMA_VERSION}, or its
   * canonical tables with other columns) is refused with a `TickwiseError`
   * naming the file; a newer store is never written to or re-marked.
   */
  static async open(path: string, opts: { readOnly?: boolean; threads?: number } = {}): Promise<Store> {
    const options: Record<string, string> = {};
    if (opts.readOnly) options['access_mode'] = 'READ_ONLY';
    if (opts.threads !== undefined) options['threads'] = String(opts.threads);
    const duckdb = await loadDuckdb();
    let instance: DuckDBInstance;
    try {
      instance = await duckdb.DuckDBInstance.create(path, options);
    } catch (e) {
      throw new TickwiseError('unreadable-input', openFailure((e as Error).message), { file: path, cause: e });
    }
    const conn = await instance.connect();
    const store = new Store(path, instance, conn, opts.readOnly === true);
    try {
      await store.run(`SET TimeZone = 'UTC'`).catch(() => undefined);
      const empty = await store.checkSchemaVersion();
      if (!opts.readOnly) await store.ensureSchema(empty);
    } catch (e) {
      conn.closeSync();
      instance.closeSync();
      throw e;
    }
    return store;
  }

  /**
   * Refuses a store whose recorded schema is newer than this code's. Returns
   * whether the database is empty (no table at all: a new store).
   */
  private async checkSchemaVersion(): Promise<boolean> {
    let v: unknown;
    try {
      v = await this.scalar(`SELECT value FROM main.tickwise_meta WHERE key = 'schema_version'`);
    } catch (e) {
      // one query for the usual case (a store); the catalog is asked only when it fails
      const [r] = await this.rows(`SELECT count(*) FILTER (WHERE table_name = 'tickwise_meta') AS meta, count(*) AS tables
        FROM duckdb_tables() WHERE schema_name = 'main'`);
      if (Number(r?.['meta']) === 0) return Number(r?.['tables']) === 0; // a new or foreign database: no schema recorded
      throw e;
    }
    const version = v === null ? null : Number(v);
    if (version !== null && (!Number.isInteger(version) || version > SCHEMA_VERSION)) {
      throw new TickwiseError('store-version',
        `this store was written by a newer tickwise (schema ${String(v)}; this one knows schema ${SCHEMA_VERSION} and older): ` +
        'use that version, or import the captures into a new store', { file: this.path });
    }
    return false;
  }

  /**
   * Creates any missing canonical table and records the schema version, in
   * one transaction (a statement and a commit each took ~30 ms of every
   * import into a new store). In an `empty` database the tables are the ones
   * just created: their columns are not checked again. Otherwise a table of
   * another shape (a store of another schema, a foreign database) is refused
   * and the transaction rolled back: nothing is written to it.
   */
  async ensureSchema(empty = false): Promise<void> {
    const meta = `INSERT INTO tickwise_meta VALUES ('schema_version', '${SCHEMA_VERSION}') ON CONFLICT (key) DO UPDATE SET value = excluded.value`;
    const create = Object.values(TABLES).join(';\n');
    if (empty) {
      await this.inTransaction(async () => this.run(`${create};\n${meta}`));
      return;
    }
    await this.inTransaction(async () => {
      await this.run(create);
      const cols = await this.query({ t: 'string', c: 'string' },
        `SELECT table_name AS t, column_name AS c FROM duckdb_columns() WHERE schema_name = 'main' ORDER BY table_name, column_index`);
      for (const t of TABLE_NAMES) {
        const have = cols.filter((r) => r.t === t).map((r) => r.c);
        const want = tableColumns(t).map((c) => c.name);
        if (have.join(',') !== want.join(',')) {
          const extra = have.filter((c) => !want.includes(c));
          const missing = want.filter((c) => !have.includes(c));
          throw new TickwiseError('store-version',
            `this store's table ${t} has other columns than schema ${SCHEMA_VERSION} (${[
              extra.length ? `not known here: ${extra.join(', ')}` : '', missing.length ? `missing: ${missing.join(', ')}` : '',
              !extra.length && !missing.length ? 'in another order' : '',
            ].filter(Boolean).join('; ')}): it was written by another tickwise version; import the captures into a new store`, { file: this.path });
        }
      }
      await this.run(meta);
    });
  }

  /** Runs `body` in a transaction: committed when it returns, rolled back when it throws. */
  private async inTransaction(body: () => Promise<void>): Promise<void> {
    await this.run('BEGIN TRANSACTION');
    try {
      await body();
    } catch (e) {
      await this.run('ROLLBACK').catch(() => undefined);
      throw e;
    }
    await this.run('COMMIT');
  }

  /** Runs a statement, discarding any result. */
  async run(sql: string, params?: Params): Promise<void> {
    const t0 = TRACE_SQL ? performance.now() : 0;
    try {
      if (params === undefined) await this.conn.run(sql);
      else await this.conn.run(sql, params as never);
    } catch (e) {
      throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
    } finally {
      if (TRACE_SQL) traceSql(t0, sql);
    }
  }

  /** Runs a query and returns its rows as plain objects. */
  async rows(sql: string, params?: Params): Promise<Row[]> {
    const { rows } = await this.table(sql, params);
    return rows;
  }

  /** Runs a query and returns column names, DuckDB type names and rows. */
  async table(sql: string, params?: Params): Promise<{ columns: string[]; types: string[]; rows: Row[] }> {
    const read = await this.readAll(sql, params);
    const columns = read.columnNames();
    return { columns, types: read.columnTypes().map((t) => t.toString()), rows: columnsToRows(columns, read.getColumns() as DuckDBValue[][]) };
  }

  private async readAll(sql: string, params?: Params) {
    const t0 = TRACE_SQL ? performance.now() : 0;
    try {
      const reader = params === undefined ? await this.conn.runAndReadAll(sql) : await this.conn.runAndReadAll(sql, params as never);
      if (TRACE_SQL) traceSql(t0, sql);
      return reader;
    } catch (e) {
      throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
    }
  }

  /** Runs a query and checks its rows against a declared shape. */
  async query<S extends Shape>(shape: S, sql: string, params?: Params): Promise<RowOf<S>[]> {
    const read = await this.readAll(sql, params);
    return checkColumns(shape, read.columnNames(), read.getColumns(), convertValue as (v: unknown) => unknown, sql);
  }

  /**
   * Appends rows to a canonical table through DuckDB's appender (the bulk
   * path): each row an object keyed by column name, columns left out are NULL
   * (or their default). Values are checked against the declared column types:
   * integers exact and in range (a JS number beyond 2^53 is refused, pass a
   * bigint), JSON columns take JSON text or any value (serialized by
   * `toJsonText`). Returns the number of rows appended.
   */
  async append<N extends TableName>(table: N, rows: Iterable<AppendRow<N>> | AsyncIterable<AppendRow<N>>): Promise<number> {
    const cols = tableColumns(table);
    return this.appendWith(table, null, async (app) => {
      const sink = rowSink(app, (i) => `${table}.${cols[i]!.name}`, (i) => cols[i]!.type === 'JSON', cols.some((c) => c.default !== null));
      let n = 0;
      const names = cols.map((c) => c.name);
      await forEachRow(rows, (row) => {
        // the one redaction on the way in: no secret reaches a stored condition (docs/security.md)
        const r = (table === 'conditions' ? redactConditionRow(row as unknown as ConditionValues) : row) as Record<string, unknown>;
        // a NULL where none may be is found before any of the row is appended
        for (let i = 0; i < cols.length; i++) {
          const v = r[names[i]!];
          if ((v === null || (v === undefined && cols[i]!.default === null)) && !cols[i]!.nullable) {
            throw new AppendValueError(`${table}.${names[i]}: NULL in a NOT NULL column (row ${n + 1})`);
          }
        }
        for (let i = 0; i < cols.length; i++) {
          const v = r[names[i]!];
          if (v === undefined && cols[i]!.default !== null) sink.putDefault!(i);
          else if (v === null || v === undefined) sink.putNull(i);
          else sink.put(i, v);
        }
        sink.endRow();
        n++;
      });
      sink.finish();
      return n;
    });
  }

  /**
   * Appends `n` rows given as columns (in the table's column order) to a
   * temporary staging table: integers as typed arrays of the column's width,
   * copied into DuckDB's vectors a data chunk at a time (see
   * {@link appendColumnBatch}). For rows that arrive as columns (a worker
   * thread's batches): no value is made a JS value to be appended.
   */
  async appendTempColumns(table: string, columns: readonly ColumnBatch[], n: number): Promise<number> {
    return this.appendWith(table, 'temp', async (app) => {
      appendColumnBatch(app, table, columns, n);
      return n;
    });
  }

  /**
   * Appends positional rows (values in the table's column order) to a
   * temporary staging table a reader created, values converted by the
   * table's actual column types as in {@link append}; `null` is NULL.
   */
  async appendTemp(table: string, rows: Iterable<readonly unknown[]> | AsyncIterable<readonly unknown[]>): Promise<number> {
    return this.appendWith(table, 'temp', async (app) => {
      const sink = rowSink(app, (i) => `${table} column ${i + 1}`);
      let n = 0;
      const width = app.columnCount;
      await forEachRow(rows, (row) => {
        if (row.length !== width) throw new AppendValueError(`${table}: row ${n + 1} has ${row.length} values for ${width} columns`);
        for (let i = 0; i < width; i++) {
          const v = row[i];
          if (v === null || v === undefined) sink.putNull(i);
          else sink.put(i, v);
        }
        sink.endRow();
        n++;
      });
      sink.finish();
      return n;
    });
  }

  private async appendWith(table: string, catalog: string | null, fill: (app: DuckDBAppender) => Promise<number>): Promise<number> {
    const what = `append to ${catalog ? `${catalog}.` : ''}${table}`;
    let app: DuckDBAppender;
    try {
      app = await this.conn.createAppender(table, catalog ? 'main' : null, catalog);
    } catch (e) {
      throw new QueryError(`${what} failed: ${(e as Error).message}`, what, e);
    }
    let n = 0;
    let failed: unknown = null;
    try {
      n = await fill(app);
      app.flushSync();
    } catch (e) {
      failed = e;
    } finally {
      try {
        app.closeSync();
      } catch (e) {
        failed ??= e;
      }
    }
    if (failed !== null) {
      if (failed instanceof AppendValueError) throw new QueryError(failed.message, what, undefined);
      if (failed instanceof QueryError || !(failed instanceof Error)) throw failed;
      throw new QueryError(`${what} failed: ${failed.message}`, what, failed);
    }
    return n;
  }

  /**
   * @deprecated Use {@link append} (typed rows, DuckDB's appender). Kept
   * while readers migrate: positional rows for the named columns; on a
   * canonical table it goes through `append`, on any other through
   * multi-row INSERTs.
   */
  async insertRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
    if (Object.hasOwn(TABLES, table)) {
      const objects = rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i]])));
      await this.append(table as TableName, objects as never);
      return;
    }
    const per = Math.max(1, Math.floor(1000 / Math.max(1, columns.length)));
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per);
      const params: unknown[] = [];
      const values = chunk.map((r) => '(' + r.map((v) => { params.push(v); return `$${params.length}`; }).join(', ') + ')');
      await this.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(', ')}`, params);
    }
  }

  /**
   * Runs a query and yields its rows in chunks (DuckDB's vector size, 2048
   * rows), converted as {@link rows} does, so a result of millions of rows is
   * never held in memory at once.
   */
  async *stream(sql: string, params?: Params): AsyncGenerator<Row[]> {
    let result;
    try {
      result = params === undefined ? await this.conn.stream(sql) : await this.conn.stream(sql, params as never);
    } catch (e) {
      throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
    }
    const names = result.columnNames();
    const chunks = result.yieldRows();
    while (true) {
      let next: IteratorResult<DuckDBValue[][]>;
      try {
        next = await chunks.next();
      } catch (e) {
        throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
      }
      if (next.done) return;
      yield toRows(names, next.value);
    }
  }

  /** The first column of the first row, or null. */
  async scalar(sql: string, params?: Params): Promise<unknown> {
    const rows = await this.rows(sql, params);
    const first = rows[0];
    return first === undefined ? null : Object.values(first)[0] ?? null;
  }

  /**
   * The first column of a query as numbers, without a JS object per row (bulk
   * ids and indexes): the column is cast to DOUBLE, so values are exact to
   * 2^53; NULL is NaN.
   */
  async numbers(sql: string): Promise<Float64Array> {
    const t0 = TRACE_SQL ? performance.now() : 0;
    try {
      const reader = await this.conn.runAndReadAll(`SELECT (#1)::DOUBLE FROM (${sql})`);
      if (TRACE_SQL) traceSql(t0, sql);
      const col = reader.getColumns()[0] ?? [];
      const out = new Float64Array(col.length);
      for (let i = 0; i < col.length; i++) out[i] = col[i] === null ? NaN : (col[i] as number);
      return out;
    } catch (e) {
      throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
    }
  }

  /** The next free capture id. */
  async nextCaptureId(): Promise<number> {
    const v = await this.scalar(`SELECT coalesce(max(capture_id), 0) + 1 FROM captures`);
    return Number(v);
  }

  /** Row count of a table. */
  async count(table: string, where = ''): Promise<number> {
    return Number(await this.scalar(`SELECT count(*) FROM ${table} ${where}`));
  }

  /**
   * Runs DuckDB at one thread (the database's setting: every connection's)
   * until the returned function gives the store its thread count back (once;
   * call it in a `finally`). A statement that is not parallel runs on the
   * connection's own thread while DuckDB's others wait for it (busy, a core
   * each: up to ~0.4 s of CPU in a 300 MB import); at one thread, two
   * connections' statements run side by side instead.
   */
  async holdOneThread(): Promise<() => Promise<void>> {
    const threads = Number(await this.scalar(`SELECT current_setting('threads')`)) || 1;
    await this.run('SET threads = 1');
    let held = true;
    return async () => {
      if (!held) return;
      held = false;
      await this.run(`SET threads = ${threads}`);
    };
  }

  /** Percentage (0-100) of the running query DuckDB reports, or null. */
  progressPercent(): number | null {
    const p = this.conn.progress as { percentage?: number };
    return typeof p?.percentage === 'number' && p.percentage >= 0 ? p.percentage : null;
  }

  /** Checkpoints and closes the store; a {@link sibling} closes only its own connection. */
  async close(): Promise<void> {
    if (!this.owner) {
      this.conn.closeSync();
      return;
    }
    try {
      if (this.path !== ':memory:') await this.conn.run('CHECKPOINT').catch(() => undefined);
    } finally {
      this.conn.closeSync();
      this.instance.closeSync();
    }
  }
}

/** DuckDB's open failure said for people. */
function openFailure(message: string): string {
  const first = message.split('\n')[0]!.replace(/^IO Error: /, '');
  if (/not a valid DuckDB database file/i.test(first)) return 'not a DuckDB store (a tickwise store is a DuckDB database file)';
  if (/Is a directory/i.test(first)) return 'a directory, not a store file';
  if (/No such file|does not exist/i.test(first)) return 'no such store';
  if (/Permission denied/i.test(first)) return 'cannot open the store: permission denied';
  if (/Could not set lock|Conflicting lock/i.test(first)) return 'the store is open for writing in another process (DuckDB holds its lock): wait for it to finish';
  if (/read-only|Read-only/i.test(first)) return 'cannot open the store for writing: read-only file system';
  return `cannot open the store: ${first}`;
}

/** Rows of DuckDB values as objects keyed by column name, each value converted (convertValue). */
/** Row objects from a result read column by column (a later column of the same name wins, as in {@link toRows}). */
function columnsToRows(names: readonly string[], columns: DuckDBValue[][]): Row[] {
  const n = columns[0]?.length ?? 0;
  const rows: Row[] = new Array(n);
  for (let i = 0; i < n; i++) {
    const o: Row = {};
    for (let c = 0; c < names.length; c++) o[names[c]!] = convertValue(columns[c]![i] as DuckDBValue);
    rows[i] = o;
  }
  return rows;
}

function toRows(columns: readonly string[], raw: DuckDBValue[][]): Row[] {
  return raw.map((r) => {
    const o: Row = {};
    for (let i = 0; i < columns.length; i++) o[columns[i]!] = convertValue(r[i] as DuckDBValue);
    return o;
  });
}
