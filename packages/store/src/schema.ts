/**
 * The canonical tickwise schema. One DuckDB database holds any number of
 * captures; every table is keyed by `capture_id`. Names carry units: a column
 * ending in `_ns` is always nanoseconds on the capture's host timeline (see
 * `captures.timeline`), a column ending in `_tick` is always a raw device
 * counter value. Raw ticks never appear in an `_ns` column.
 */

/** Version of this schema, stored in `tickwise_meta`. */
export const SCHEMA_VERSION = 1;

/** What `dispatches.time_source` / `devices.time_base` may hold. */
export const TimeSource = {
  device_tick_fit: 'device ticks mapped through tickwise\'s least-squares fit of clock samples',
  device_tick_declared: 'device ticks scaled by the producer-declared frequency; relative timeline starting at the first tick',
  device_tick_assumed: 'device ticks scaled by a frequency the user gave (--tick-hz), recorded in assumptions',
  device_tick_none: 'device ticks with no time base: *_ns columns are NULL',
  host_monotonic: 'host CLOCK_MONOTONIC-like nanoseconds written by the producer',
  host_boottime: 'host CLOCK_BOOTTIME nanoseconds (not aligned unless an offset was recorded)',
  host_other: 'host nanoseconds of another clock, on its own timeline',
} as const;
/** Key of {@link TimeSource}. */
export type TimeSource = keyof typeof TimeSource;
/** Type guard for {@link TimeSource}. */
export function isTimeSource(x: string): x is TimeSource {
  return Object.hasOwn(TimeSource, x);
}

/** Kinds of device (`other`: an accelerator tickwise does not model, e.g. MTIA, named by its trace). */
export const DeviceKind = { gpu: 'gpu', npu: 'npu', cpu: 'cpu', other: 'other', unknown: 'unknown' } as const;
/** Key of {@link DeviceKind}. */
export type DeviceKind = keyof typeof DeviceKind;

/** Diagnostic severities. */
export const Severity = { error: 'error', warning: 'warning', info: 'info' } as const;
/** Key of {@link Severity}. */
export type Severity = keyof typeof Severity;

/** The DuckDB column types the schema uses. */
export const COLUMN_TYPES = ['BOOLEAN', 'INTEGER', 'UINTEGER', 'BIGINT', 'UBIGINT', 'HUGEINT', 'DOUBLE', 'VARCHAR', 'JSON'] as const;
/** One of {@link COLUMN_TYPES}. */
export type ColumnType = (typeof COLUMN_TYPES)[number];
/** A column's declaration: its type, then nothing (nullable), `NOT NULL` (with an optional default) or `PRIMARY KEY`. */
export type ColumnSpec = ColumnType | `${ColumnType} NOT NULL` | `${ColumnType} NOT NULL DEFAULT ${string}` | `${ColumnType} PRIMARY KEY`;
/** A table's declaration. */
export interface TableDecl {
  readonly columns: Readonly<Record<string, ColumnSpec>>;
  readonly primaryKey?: readonly string[];
}

/**
 * Every table, declared once, in creation order: column name to its DuckDB
 * type and constraint (`TYPE`, `TYPE NOT NULL`, `TYPE NOT NULL DEFAULT x`
 * or `TYPE PRIMARY KEY`), plus a composite primary key where there is one.
 * The DDL ({@link TABLES}), the row types ({@link TableRow},
 * {@link AppendRow}) and `Store.append` all derive from this.
 */
export const TABLE_DECLS = {
  tickwise_meta: {
    columns: {
      key: 'VARCHAR PRIMARY KEY',
      value: 'VARCHAR',
    },
  },
  captures: {
    columns: {
      capture_id: 'INTEGER PRIMARY KEY',
      path: 'VARCHAR NOT NULL',
      format: 'VARCHAR NOT NULL',
      schema_version: 'INTEGER',
      sha256: 'VARCHAR',
      size_bytes: 'BIGINT',
      imported_at: 'VARCHAR',
      producer: 'VARCHAR',
      label: 'VARCHAR',
      timeline: 'VARCHAR NOT NULL',
      session_status: 'VARCHAR',
      record_count: 'BIGINT',
    },
  },
  devices: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER NOT NULL',
      kind: 'VARCHAR NOT NULL',
      name: 'VARCHAR',
      tick_hz_declared: 'DOUBLE',
      tick_hz_fitted: 'DOUBLE',
      tick_hz_used: 'DOUBLE',
      time_base: 'VARCHAR NOT NULL',
      fit_method: 'VARCHAR',
      fit_domain: 'VARCHAR',
      fit_residual_max_ns: 'DOUBLE',
      fit_residual_rms_ns: 'DOUBLE',
      fit_uncertainty_ns: 'DOUBLE',
      fit_slope_uncertainty_ppm: 'DOUBLE',
      fit_bracket_min_ns: 'DOUBLE',
      fit_bracket_max_ns: 'DOUBLE',
      fit_base_tick: 'HUGEINT',
      fit_base_ns: 'HUGEINT',
      fit_ns_per_tick_num: 'HUGEINT',
      clock_samples: 'INTEGER NOT NULL DEFAULT 0',
    },
    primaryKey: ['capture_id', 'device'],
  },
  clock_samples: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER NOT NULL',
      sample_id: 'BIGINT',
      device_tick: 'UBIGINT',
      host_begin_ns: 'BIGINT',
      host_end_ns: 'BIGINT',
      host_cpu_ns: 'BIGINT',
      host_domain: 'VARCHAR',
      residual_ns: 'DOUBLE',
      line: 'BIGINT',
    },
  },
  dispatches: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER NOT NULL',
      queue: 'INTEGER',
      submission_id: 'UBIGINT',
      command_buffer_id: 'UBIGINT',
      command_index: 'UINTEGER',
      event_id: 'UBIGINT',
      executable_id: 'UBIGINT',
      function_ordinal: 'UINTEGER',
      kernel: 'VARCHAR',
      start_ns: 'BIGINT',
      end_ns: 'BIGINT',
      dur_ns: 'BIGINT',
      start_tick: 'UBIGINT',
      end_tick: 'UBIGINT',
      source_dur_ns: 'BIGINT',
      time_source: 'VARCHAR NOT NULL',
      valid: 'BOOLEAN NOT NULL',
      workgroup_count_x: 'UINTEGER',
      workgroup_count_y: 'UINTEGER',
      workgroup_count_z: 'UINTEGER',
      rows: 'BIGINT',
      line: 'BIGINT',
    },
  },
  submissions: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER NOT NULL',
      queue: 'INTEGER',
      submission_id: 'UBIGINT',
      command_buffer_id: 'UBIGINT',
      event_id: 'UBIGINT',
      op: 'VARCHAR',
      start_ns: 'BIGINT',
      end_ns: 'BIGINT',
      dur_ns: 'BIGINT',
      start_tick: 'UBIGINT',
      end_tick: 'UBIGINT',
      time_source: 'VARCHAR NOT NULL',
      valid: 'BOOLEAN',
      operation_count: 'BIGINT',
      line: 'BIGINT',
    },
  },
  queue_events: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER',
      queue: 'INTEGER',
      event_id: 'UBIGINT',
      op: 'VARCHAR',
      submission_id: 'UBIGINT',
      command_buffer_id: 'UBIGINT',
      host_ns: 'BIGINT',
      ready_host_ns: 'BIGINT',
      dependency_strategy: 'VARCHAR',
      wait_count: 'BIGINT',
      signal_count: 'BIGINT',
      barrier_count: 'BIGINT',
      operation_count: 'BIGINT',
      line: 'BIGINT',
    },
  },
  host_events: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER',
      queue: 'INTEGER',
      kind: 'VARCHAR NOT NULL',
      op: 'VARCHAR',
      name: 'VARCHAR',
      event_id: 'UBIGINT',
      submission_id: 'UBIGINT',
      command_buffer_id: 'UBIGINT',
      command_index: 'UINTEGER',
      thread_id: 'BIGINT',
      start_ns: 'BIGINT',
      end_ns: 'BIGINT',
      dur_ns: 'BIGINT',
      time_source: 'VARCHAR NOT NULL',
      valid: 'BOOLEAN',
      args: 'JSON',
      line: 'BIGINT',
    },
  },
  memory_events: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER',
      queue: 'INTEGER',
      event_id: 'UBIGINT',
      event_type: 'VARCHAR',
      host_ns: 'BIGINT',
      allocation_id: 'UBIGINT',
      pool_id: 'UBIGINT',
      submission_id: 'UBIGINT',
      length_bytes: 'UBIGINT',
      line: 'BIGINT',
    },
  },
  metric_samples: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER',
      source_id: 'UBIGINT',
      metric_id: 'UBIGINT',
      name: 'VARCHAR',
      unit: 'VARCHAR',
      semantic: 'VARCHAR',
      host_begin_ns: 'BIGINT',
      host_end_ns: 'BIGINT',
      value: 'DOUBLE',
      line: 'BIGINT',
    },
  },
  kernels_meta: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      executable_id: 'UBIGINT',
      function_ordinal: 'UINTEGER',
      name: 'VARCHAR',
      workgroup_size_x: 'UINTEGER',
      workgroup_size_y: 'UINTEGER',
      workgroup_size_z: 'UINTEGER',
      binding_count: 'BIGINT',
    },
  },
  raw_records: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      record_type: 'VARCHAR',
      line: 'BIGINT',
      json: 'JSON',
    },
  },
  provenance: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      role: 'VARCHAR',
      name: 'VARCHAR',
      path: 'VARCHAR',
      size_bytes: 'BIGINT',
      mtime_ns: 'BIGINT',
      build_id: 'VARCHAR',
      sha256: 'VARCHAR',
      markers: 'JSON',
      how_found: 'VARCHAR',
    },
  },
  wall_refs: {
    columns: {
      capture_id: 'INTEGER',
      source_path: 'VARCHAR',
      line: 'BIGINT',
      model: 'VARCHAR',
      test: 'VARCHAR',
      n_prompt: 'BIGINT',
      n_gen: 'BIGINT',
      avg_ns: 'BIGINT',
      stddev_ns: 'BIGINT',
      avg_ts: 'DOUBLE',
      stddev_ts: 'DOUBLE',
      raw: 'JSON',
    },
  },
  assumptions: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      device: 'INTEGER',
      what: 'VARCHAR NOT NULL',
      value: 'VARCHAR',
      note: 'VARCHAR',
    },
  },
  conditions: {
    columns: {
      capture_id: 'INTEGER NOT NULL',
      key: 'VARCHAR NOT NULL',
      value: 'VARCHAR',
      unit: 'VARCHAR',
      note: 'VARCHAR',
    },
  },
  diagnostics: {
    columns: {
      capture_id: 'INTEGER',
      severity: 'VARCHAR NOT NULL',
      code: 'VARCHAR NOT NULL',
      message: 'VARCHAR NOT NULL',
      file: 'VARCHAR',
      line: 'BIGINT',
    },
  },
} as const satisfies Record<string, TableDecl>;

/** Name of a canonical table. */
export type TableName = keyof typeof TABLE_DECLS;

/** The tables every analysis may read, in creation order. */
export const TABLE_NAMES = Object.keys(TABLE_DECLS) as TableName[];

/** A column's parsed declaration. */
export interface ColumnInfo {
  readonly name: string;
  readonly type: ColumnType;
  readonly nullable: boolean;
  readonly primaryKey: boolean;
  /** SQL text of the default, when there is one. */
  readonly default: string | null;
}

/** Parses one column declaration (`'BIGINT'`, `'INTEGER NOT NULL DEFAULT 0'`, ...). */
export function parseColumn(name: string, spec: ColumnSpec): ColumnInfo {
  const m = /^([A-Z]+)(?: (PRIMARY KEY|NOT NULL)(?: DEFAULT (.+))?)?$/.exec(spec);
  if (!m || !(COLUMN_TYPES as readonly string[]).includes(m[1]!)) throw new Error(`column ${name}: bad declaration ${spec}`);
  return { name, type: m[1] as ColumnType, nullable: m[2] === undefined, primaryKey: m[2] === 'PRIMARY KEY', default: m[3] ?? null };
}

/** The parsed columns of a declared table, in table order. */
export function tableColumns(table: TableName): readonly ColumnInfo[] {
  const decl: TableDecl = TABLE_DECLS[table];
  return Object.entries(decl.columns).map(([name, spec]) => parseColumn(name, spec));
}

/** The `CREATE TABLE IF NOT EXISTS` statement of a declared table. */
export function tableDdl(name: string, decl: TableDecl): string {
  const lines = Object.entries(decl.columns).map(([col, spec]) => `${col} ${spec}`);
  if (decl.primaryKey) lines.push(`PRIMARY KEY (${decl.primaryKey.join(', ')})`);
  return `CREATE TABLE IF NOT EXISTS ${name} (\n  ${lines.join(',\n  ')}\n)`;
}

/** DDL of every table, in creation order (derived from {@link TABLE_DECLS}). */
export const TABLES = Object.fromEntries(
  TABLE_NAMES.map((t) => [t, tableDdl(t, TABLE_DECLS[t])]),
) as Record<TableName, string>;

type Cols<N extends TableName> = (typeof TABLE_DECLS)[N]['columns'];
type BaseType<S> = S extends `${infer T extends ColumnType} ${string}` ? T : S extends ColumnType ? S : never;
type NotNull<S> = S extends `${string} NOT NULL${string}` | `${string} PRIMARY KEY` ? true : false;
type IsRequired<S> = S extends `${string} NOT NULL` | `${string} PRIMARY KEY` ? true : false;

/** The JS type DuckDB hands back for a column type: 64/128-bit integers as bigint. */
export type JsOf<T extends ColumnType> = T extends 'BIGINT' | 'UBIGINT' | 'HUGEINT' ? bigint
  : T extends 'INTEGER' | 'UINTEGER' | 'DOUBLE' ? number
  : T extends 'BOOLEAN' ? boolean
  : string;

/** What `Store.append` accepts for a column type (numbers must be exact integers for integer columns; JSON may be any value). */
export type JsInOf<T extends ColumnType> = T extends 'BIGINT' | 'UBIGINT' | 'HUGEINT' | 'INTEGER' | 'UINTEGER' ? bigint | number
  : T extends 'DOUBLE' ? number
  : T extends 'BOOLEAN' ? boolean
  : T extends 'JSON' ? unknown
  : string;

/** A row of a canonical table as a query returns it (`SELECT *`). */
export type TableRow<N extends TableName> = {
  -readonly [K in keyof Cols<N>]: JsOf<BaseType<Cols<N>[K]>> | (NotNull<Cols<N>[K]> extends true ? never : null);
};

/** A row for `Store.append`: NOT NULL columns without a default are required, the rest may be left out (NULL or the default). */
export type AppendRow<N extends TableName> = {
  -readonly [K in keyof Cols<N> as IsRequired<Cols<N>[K]> extends true ? K : never]: JsInOf<BaseType<Cols<N>[K]>>;
} & {
  -readonly [K in keyof Cols<N> as IsRequired<Cols<N>[K]> extends true ? never : K]?: JsInOf<BaseType<Cols<N>[K]>> | null;
};
