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

/** Kinds of device. */
export const DeviceKind = { gpu: 'gpu', npu: 'npu', cpu: 'cpu', unknown: 'unknown' } as const;
/** Key of {@link DeviceKind}. */
export type DeviceKind = keyof typeof DeviceKind;

/** Diagnostic severities. */
export const Severity = { error: 'error', warning: 'warning', info: 'info' } as const;
/** Key of {@link Severity}. */
export type Severity = keyof typeof Severity;

/** DDL of every table, in creation order. */
export const TABLES = {
  tickwise_meta: `CREATE TABLE IF NOT EXISTS tickwise_meta (key VARCHAR PRIMARY KEY, value VARCHAR)`,
  captures: `CREATE TABLE IF NOT EXISTS captures (
    capture_id INTEGER PRIMARY KEY,
    path VARCHAR NOT NULL,
    format VARCHAR NOT NULL,
    schema_version INTEGER,
    sha256 VARCHAR,
    size_bytes BIGINT,
    imported_at VARCHAR,
    producer VARCHAR,
    label VARCHAR,
    timeline VARCHAR NOT NULL,
    session_status VARCHAR,
    record_count BIGINT
  )`,
  devices: `CREATE TABLE IF NOT EXISTS devices (
    capture_id INTEGER NOT NULL,
    device INTEGER NOT NULL,
    kind VARCHAR NOT NULL,
    name VARCHAR,
    tick_hz_declared DOUBLE,
    tick_hz_fitted DOUBLE,
    tick_hz_used DOUBLE,
    time_base VARCHAR NOT NULL,
    fit_method VARCHAR,
    fit_domain VARCHAR,
    fit_residual_max_ns DOUBLE,
    fit_residual_rms_ns DOUBLE,
    fit_uncertainty_ns DOUBLE,
    fit_slope_uncertainty_ppm DOUBLE,
    fit_bracket_min_ns DOUBLE,
    fit_bracket_max_ns DOUBLE,
    fit_base_tick HUGEINT,
    fit_base_ns HUGEINT,
    fit_ns_per_tick_num HUGEINT,
    clock_samples INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (capture_id, device)
  )`,
  clock_samples: `CREATE TABLE IF NOT EXISTS clock_samples (
    capture_id INTEGER NOT NULL,
    device INTEGER NOT NULL,
    sample_id BIGINT,
    device_tick UBIGINT,
    host_begin_ns BIGINT,
    host_end_ns BIGINT,
    host_cpu_ns BIGINT,
    host_domain VARCHAR,
    residual_ns DOUBLE,
    line BIGINT
  )`,
  dispatches: `CREATE TABLE IF NOT EXISTS dispatches (
    capture_id INTEGER NOT NULL,
    device INTEGER NOT NULL,
    queue INTEGER,
    submission_id UBIGINT,
    command_buffer_id UBIGINT,
    command_index UINTEGER,
    event_id UBIGINT,
    executable_id UBIGINT,
    function_ordinal UINTEGER,
    kernel VARCHAR,
    start_ns BIGINT,
    end_ns BIGINT,
    dur_ns BIGINT,
    start_tick UBIGINT,
    end_tick UBIGINT,
    source_dur_ns BIGINT,
    time_source VARCHAR NOT NULL,
    valid BOOLEAN NOT NULL,
    workgroup_count_x UINTEGER,
    workgroup_count_y UINTEGER,
    workgroup_count_z UINTEGER,
    rows BIGINT,
    line BIGINT
  )`,
  submissions: `CREATE TABLE IF NOT EXISTS submissions (
    capture_id INTEGER NOT NULL,
    device INTEGER NOT NULL,
    queue INTEGER,
    submission_id UBIGINT,
    command_buffer_id UBIGINT,
    event_id UBIGINT,
    op VARCHAR,
    start_ns BIGINT,
    end_ns BIGINT,
    dur_ns BIGINT,
    start_tick UBIGINT,
    end_tick UBIGINT,
    time_source VARCHAR NOT NULL,
    valid BOOLEAN,
    operation_count BIGINT,
    line BIGINT
  )`,
  queue_events: `CREATE TABLE IF NOT EXISTS queue_events (
    capture_id INTEGER NOT NULL,
    device INTEGER,
    queue INTEGER,
    event_id UBIGINT,
    op VARCHAR,
    submission_id UBIGINT,
    command_buffer_id UBIGINT,
    host_ns BIGINT,
    ready_host_ns BIGINT,
    dependency_strategy VARCHAR,
    wait_count BIGINT,
    signal_count BIGINT,
    barrier_count BIGINT,
    operation_count BIGINT,
    line BIGINT
  )`,
  host_events: `CREATE TABLE IF NOT EXISTS host_events (
    capture_id INTEGER NOT NULL,
    device INTEGER,
    queue INTEGER,
    kind VARCHAR NOT NULL,
    op VARCHAR,
    name VARCHAR,
    event_id UBIGINT,
    submission_id UBIGINT,
    command_buffer_id UBIGINT,
    command_index UINTEGER,
    thread_id BIGINT,
    start_ns BIGINT,
    end_ns BIGINT,
    dur_ns BIGINT,
    time_source VARCHAR NOT NULL,
    valid BOOLEAN,
    args JSON,
    line BIGINT
  )`,
  memory_events: `CREATE TABLE IF NOT EXISTS memory_events (
    capture_id INTEGER NOT NULL,
    device INTEGER,
    queue INTEGER,
    event_id UBIGINT,
    event_type VARCHAR,
    host_ns BIGINT,
    allocation_id UBIGINT,
    pool_id UBIGINT,
    submission_id UBIGINT,
    length_bytes UBIGINT,
    line BIGINT
  )`,
  metric_samples: `CREATE TABLE IF NOT EXISTS metric_samples (
    capture_id INTEGER NOT NULL,
    device INTEGER,
    source_id UBIGINT,
    metric_id UBIGINT,
    name VARCHAR,
    unit VARCHAR,
    semantic VARCHAR,
    host_begin_ns BIGINT,
    host_end_ns BIGINT,
    value DOUBLE,
    line BIGINT
  )`,
  kernels_meta: `CREATE TABLE IF NOT EXISTS kernels_meta (
    capture_id INTEGER NOT NULL,
    executable_id UBIGINT,
    function_ordinal UINTEGER,
    name VARCHAR,
    workgroup_size_x UINTEGER,
    workgroup_size_y UINTEGER,
    workgroup_size_z UINTEGER,
    binding_count BIGINT
  )`,
  raw_records: `CREATE TABLE IF NOT EXISTS raw_records (
    capture_id INTEGER NOT NULL,
    record_type VARCHAR,
    line BIGINT,
    json JSON
  )`,
  provenance: `CREATE TABLE IF NOT EXISTS provenance (
    capture_id INTEGER NOT NULL,
    role VARCHAR,
    name VARCHAR,
    path VARCHAR,
    size_bytes BIGINT,
    mtime_ns BIGINT,
    build_id VARCHAR,
    sha256 VARCHAR,
    markers JSON,
    how_found VARCHAR
  )`,
  wall_refs: `CREATE TABLE IF NOT EXISTS wall_refs (
    capture_id INTEGER,
    source_path VARCHAR,
    line BIGINT,
    model VARCHAR,
    test VARCHAR,
    n_prompt BIGINT,
    n_gen BIGINT,
    avg_ns BIGINT,
    stddev_ns BIGINT,
    avg_ts DOUBLE,
    stddev_ts DOUBLE,
    raw JSON
  )`,
  assumptions: `CREATE TABLE IF NOT EXISTS assumptions (
    capture_id INTEGER NOT NULL,
    device INTEGER,
    what VARCHAR NOT NULL,
    value VARCHAR,
    note VARCHAR
  )`,
  conditions: `CREATE TABLE IF NOT EXISTS conditions (
    capture_id INTEGER NOT NULL,
    key VARCHAR NOT NULL,
    value VARCHAR,
    unit VARCHAR,
    note VARCHAR
  )`,
  diagnostics: `CREATE TABLE IF NOT EXISTS diagnostics (
    capture_id INTEGER,
    severity VARCHAR NOT NULL,
    code VARCHAR NOT NULL,
    message VARCHAR NOT NULL,
    file VARCHAR,
    line BIGINT
  )`,
} as const;

/** Name of a canonical table. */
export type TableName = keyof typeof TABLES;

/** The tables every analysis may read, in creation order. */
export const TABLE_NAMES = Object.keys(TABLES) as TableName[];
