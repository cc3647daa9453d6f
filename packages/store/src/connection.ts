import { DuckDBConnection, DuckDBInstance, type DuckDBValue } from '@duckdb/node-api';
import { TABLES, SCHEMA_VERSION } from './schema';
import { convertValue } from './values';
import { QueryError } from './query-error';
import { checkRows, type RowOf, type Shape } from './shape';


/** Positional (`$1`) or named (`$name`) parameters of a statement. */
export type Params = readonly unknown[] | Record<string, unknown>;

/** A plain row: column name to JS value (BIGINT stays `bigint`). */
export type Row = Record<string, unknown>;

/**
 * The tickwise store: a DuckDB database (file or in-memory) with the
 * canonical schema. The only place that talks to DuckDB's client.
 */
export class Store {
  readonly path: string;
  private readonly instance: DuckDBInstance;
  private readonly conn: DuckDBConnection;

  private constructor(path: string, instance: DuckDBInstance, conn: DuckDBConnection) {
    this.path = path;
    this.instance = instance;
    this.conn = conn;
  }

  /** Opens (creating if needed) a store at `path`, or `:memory:`. */
  static async open(path: string, opts: { readOnly?: boolean; threads?: number } = {}): Promise<Store> {
    const options: Record<string, string> = {};
    if (opts.readOnly) options['access_mode'] = 'READ_ONLY';
    if (opts.threads !== undefined) options['threads'] = String(opts.threads);
    const instance = await DuckDBInstance.create(path, options);
    const conn = await instance.connect();
    const store = new Store(path, instance, conn);
    await store.run(`SET TimeZone = 'UTC'`).catch(() => undefined);
    if (!opts.readOnly) await store.ensureSchema();
    return store;
  }

  /** Creates any missing canonical table and records the schema version. */
  async ensureSchema(): Promise<void> {
    for (const ddl of Object.values(TABLES)) await this.run(ddl);
    await this.run(
      `INSERT INTO tickwise_meta VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      [String(SCHEMA_VERSION)],
    );
  }

  /** Runs a statement, discarding any result. */
  async run(sql: string, params?: Params): Promise<void> {
    try {
      if (params === undefined) await this.conn.run(sql);
      else await this.conn.run(sql, params as never);
    } catch (e) {
      throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
    }
  }

  /** Runs a query and returns its rows as plain objects. */
  async rows(sql: string, params?: Params): Promise<Row[]> {
    const { rows } = await this.table(sql, params);
    return rows;
  }

  /** Runs a query and returns column names, DuckDB type names and rows. */
  async table(sql: string, params?: Params): Promise<{ columns: string[]; types: string[]; rows: Row[] }> {
    try {
      const reader = params === undefined ? await this.conn.runAndReadAll(sql) : await this.conn.runAndReadAll(sql, params as never);
      const columns = reader.columnNames();
      const types = reader.columnTypes().map((t) => t.toString());
      const raw = reader.getRows() as DuckDBValue[][];
      const rows = raw.map((r) => {
        const o: Row = {};
        columns.forEach((c, i) => { o[c] = convertValue(r[i] as DuckDBValue); });
        return o;
      });
      return { columns, types, rows };
    } catch (e) {
      throw new QueryError(`query failed: ${(e as Error).message}`, sql, e);
    }
  }

  /** Runs a query and checks its rows against a declared shape. */
  async query<S extends Shape>(shape: S, sql: string, params?: Params): Promise<RowOf<S>[]> {
    return checkRows(shape, await this.rows(sql, params), sql);
  }

  /**
   * Inserts many rows in a few statements (chunks of multi-row VALUES with
   * parameters): for the small tables import fills from JS.
   */
  async insertRows(table: string, columns: readonly string[], rows: readonly (readonly unknown[])[]): Promise<void> {
    const per = Math.max(1, Math.floor(1000 / Math.max(1, columns.length)));
    for (let i = 0; i < rows.length; i += per) {
      const chunk = rows.slice(i, i + per);
      const params: unknown[] = [];
      const values = chunk.map((r) => '(' + r.map((v) => { params.push(v); return `$${params.length}`; }).join(', ') + ')');
      await this.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${values.join(', ')}`, params);
    }
  }

  /** The first column of the first row, or null. */
  async scalar(sql: string, params?: Params): Promise<unknown> {
    const rows = await this.rows(sql, params);
    const first = rows[0];
    return first === undefined ? null : Object.values(first)[0] ?? null;
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

  /** The raw DuckDB connection, for bulk appenders in this package. */
  get connection(): DuckDBConnection {
    return this.conn;
  }

  /** Percentage (0-100) of the running query DuckDB reports, or null. */
  progressPercent(): number | null {
    const p = this.conn.progress as { percentage?: number };
    return typeof p?.percentage === 'number' && p.percentage >= 0 ? p.percentage : null;
  }

  /** Checkpoints and closes the store. */
  async close(): Promise<void> {
    try {
      if (this.path !== ':memory:') await this.conn.run('CHECKPOINT').catch(() => undefined);
    } finally {
      this.conn.closeSync();
      this.instance.closeSync();
    }
  }
}
