/** A failed SQL statement; carries the SQL text and DuckDB's error as cause. */
export class QueryError extends Error {
  readonly sql: string;
  constructor(message: string, sql: string, cause: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'QueryError';
    this.sql = sql;
  }
}
