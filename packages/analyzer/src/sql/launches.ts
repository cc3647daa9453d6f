/**
 * Per-launch SQL (pure): the selected dispatch rows with the work each
 * launch carries, launch groups (kernel x work per launch), host
 * submit-to-device-start latency per submission, and NPU commands
 * (EXEC_CMD to observed completion).
 */
import { partitionBy } from './intervals';
import { sqlBigint, sqlInt, sqlString } from './quote';
import { scopedSources, segmentJoinSql, sourcesPredicate, type Scope, type SelectionSpec } from './selection';

/**
 * The rows `selectionSql(spec, scope)` selects (one time source per device,
 * valid, both ends timed, in the chosen segments), with the work columns
 * `wx, wy, wz` (workgroup counts) and `rows_src` (rows from the source)
 * beside them; every selected device when no scope is given. Columns:
 * `capture_id, device, queue, submission_id, kernel, start_ns, end_ns,
 * dur_ns, wx, wy, wz, rows_src, segment`.
 */
export function launchRowsSql(spec: SelectionSpec, scope?: Scope, extraWhere?: string): string {
  const where = ['valid', 'start_ns IS NOT NULL', 'end_ns IS NOT NULL', sourcesPredicate(scopedSources(spec, scope))];
  if (scope) where.push(`capture_id = ${sqlInt(scope.capture_id)}`, `device = ${sqlInt(scope.device)}`);
  if (scope && scope.queue !== null) where.push(`queue = ${sqlInt(scope.queue)}`);
  if (extraWhere) where.push(`(${extraWhere})`);
  const rows = (segment: string) => `SELECT capture_id, device, queue, submission_id, coalesce(kernel, 'unknown') AS kernel, start_ns, end_ns, end_ns - start_ns AS dur_ns,
      workgroup_count_x AS wx, workgroup_count_y AS wy, workgroup_count_z AS wz, rows AS rows_src${segment}
    FROM dispatches WHERE ${where.join(' AND ')}`;
  if (spec.segments === null) return rows(', 0 AS segment');
  return segmentJoinSql(rows(''), scope ? spec.segments.filter((g) => g.capture_id === scope.capture_id && g.device === scope.device) : spec.segments);
}

/**
 * Work per launch of a row of {@link launchRowsSql}: the source's rows, else
 * the product of the workgroup counts, else `rowsPerDispatch` (the user's
 * number), else NULL; and its unit.
 */
export function workSql(rowsPerDispatch: number | undefined): { work: string; unit: string } {
  const given = rowsPerDispatch === undefined ? 'NULL' : sqlBigint(rowsPerDispatch);
  return {
    work: `coalesce(rows_src, CASE WHEN wx IS NOT NULL AND wy IS NOT NULL AND wz IS NOT NULL THEN wx::BIGINT * wy * wz END, ${given})`,
    unit: `CASE WHEN rows_src IS NOT NULL THEN 'rows' WHEN wx IS NOT NULL AND wy IS NOT NULL AND wz IS NOT NULL THEN 'workgroups' WHEN ${given} IS NOT NULL THEN 'rows (given)' END`,
  };
}

/** Launch groups of a relation of {@link launchRowsSql} rows: one per (kernel, rows, workgroup counts). See `LAUNCH_GROUP_SHAPE`. */
export function launchGroupsSql(rows: string, rowsPerDispatch: number | undefined): string {
  const w = workSql(rowsPerDispatch);
  return `SELECT capture_id, device, kernel, rows_src, wx, wy, wz, ${w.work} AS work, ${w.unit} AS work_unit,
      count(*)::BIGINT AS launches, count(DISTINCT submission_id)::BIGINT AS submissions, sum(dur_ns)::BIGINT AS total_ns,
      avg(dur_ns) AS mean_ns, quantile_cont(dur_ns, 0.5) AS median_ns, quantile_cont(dur_ns, 0.1) AS p10_ns, quantile_cont(dur_ns, 0.9) AS p90_ns,
      min(dur_ns)::BIGINT AS min_ns, max(dur_ns)::BIGINT AS max_ns
    FROM (${rows}) GROUP BY ALL
    ORDER BY capture_id, device, kernel, work NULLS FIRST, wx, wy, wz, rows_src`;
}

/** Per kernel of a relation of launch rows: count, total, mean, median, mean work per launch. See `KERNEL_DIFF_SIDE_SHAPE`. */
export function kernelSideSql(rows: string, rowsPerDispatch: number | undefined, kernelLabel?: string): string {
  const w = workSql(rowsPerDispatch);
  const k = kernelLabel === undefined ? 'kernel' : sqlString(kernelLabel);
  return `SELECT ${k} AS kernel, count(*)::BIGINT AS count, sum(dur_ns)::BIGINT AS total_ns, avg(dur_ns) AS mean_ns,
      quantile_cont(dur_ns, 0.5) AS median_ns, avg(${w.work}) AS work_per_launch,
      CASE WHEN count(DISTINCT ${w.unit}) = 1 THEN min(${w.unit}) END AS work_unit,
      count(DISTINCT ${w.work})::BIGINT AS work_levels
    FROM (${rows}) GROUP BY 1 ORDER BY total_ns DESC, kernel`;
}

/**
 * Host submit to device start, per submission of each device of `rows`
 * (launchRowsSql rows): the first dispatch start of each (queue,
 * submission_id) minus the host time the queue_event of that submission
 * was written at (the device's own events and those of no device). See
 * `SUBMIT_LATENCY_SHAPE`.
 */
export function submitLatencySql(rows: string): string {
  return `WITH firsts AS (
      SELECT capture_id, device, queue, submission_id, min(start_ns) AS first_start_ns, count(*) AS dispatches
      FROM (${rows}) WHERE submission_id IS NOT NULL GROUP BY ALL
    ), q AS (
      SELECT k.capture_id, k.device, e.queue, e.submission_id, min(e.host_ns) AS host_ns
      FROM (SELECT DISTINCT capture_id, device FROM firsts) k
      JOIN queue_events e ON e.capture_id = k.capture_id AND (e.device = k.device OR e.device IS NULL)
      WHERE e.host_ns IS NOT NULL AND e.submission_id IS NOT NULL
      GROUP BY ALL
    )
    SELECT f.capture_id, f.device, f.queue, f.submission_id::VARCHAR AS submission_id, q.host_ns AS submit_ns, f.first_start_ns, (f.first_start_ns - q.host_ns)::BIGINT AS latency_ns,
      f.dispatches::BIGINT AS dispatches
    FROM firsts f JOIN q ON q.capture_id = f.capture_id AND q.device = f.device AND q.submission_id = f.submission_id
      AND (q.queue IS NOT DISTINCT FROM f.queue OR q.queue IS NULL OR f.queue IS NULL)
    ORDER BY f.capture_id, f.device, f.first_start_ns`;
}

/** How NPU command records are recognised in `host_events` (kind or op, case-insensitive). */
export const NPU_EXEC_NAMES = ['exec', 'exec_cmd', 'xdna_exec_cmd', 'amdxdna_exec_cmd'] as const;
/** Records that observe a command's completion (a syncobj timeline wait or WAIT_CMD). */
export const NPU_COMPLETE_NAMES = ['complete', 'completion', 'wait_cmd', 'xdna_wait_cmd', 'xdna_syncobj_timeline_wait', 'syncobj_timeline_wait'] as const;

/** `host_events` fields of an NPU command record, wherever a reader put them (top level of `args`, or under `args.args` as the Chrome reader does). */
function arg(name: string): string {
  return `coalesce(h.args->>'${name}', h.args->'args'->>'${name}')`;
}

/**
 * NPU commands: each EXEC_CMD record (`host_events` whose kind or op is one
 * of {@link NPU_EXEC_NAMES}) matched to the first completion record (one of
 * {@link NPU_COMPLETE_NAMES}) of the same capture, device, hardware context
 * and sequence point (`submission_id`, or `args.seq`) that ends at or after
 * it. Rows: one per EXEC_CMD. See `NPU_COMMAND_SHAPE`.
 */
export function npuCommandsSql(captureIds: readonly number[]): string {
  const caps = captureIds.length ? captureIds.map((c) => sqlInt(c)).join(', ') : 'NULL';
  const is = (names: readonly string[]) => `(lower(h.kind) IN (${names.map((n) => `'${n}'`).join(', ')}) OR lower(coalesce(h.op, '')) IN (${names.map((n) => `'${n}'`).join(', ')}))`;
  const rec = (names: readonly string[]) => `SELECT h.capture_id, coalesce(h.device, TRY_CAST(${arg('device')} AS INTEGER)) AS device,
      ${arg('hwctx')} AS hwctx, coalesce(h.submission_id::VARCHAR, ${arg('seq')}) AS seq,
      coalesce(TRY_CAST(${arg('cmd_count')} AS BIGINT), 1) AS cmd_count, h.start_ns, h.end_ns, h.line
    FROM host_events h WHERE h.capture_id IN (${caps}) AND h.start_ns IS NOT NULL AND ${is(names)}`;
  return `WITH e AS (${rec(NPU_EXEC_NAMES)}), c AS (${rec(NPU_COMPLETE_NAMES)})
    SELECT e.capture_id, e.device, e.hwctx, e.seq, e.cmd_count, e.start_ns AS submit_ns, (e.end_ns - e.start_ns)::BIGINT AS exec_ioctl_ns,
      min(coalesce(c.end_ns, c.start_ns)) AS complete_ns,
      (min(coalesce(c.end_ns, c.start_ns)) - e.start_ns)::BIGINT AS submit_to_complete_ns
    FROM e LEFT JOIN c ON c.capture_id = e.capture_id AND c.device IS NOT DISTINCT FROM e.device AND c.hwctx IS NOT DISTINCT FROM e.hwctx
      AND c.seq = e.seq AND coalesce(c.end_ns, c.start_ns) >= e.start_ns
    GROUP BY e.capture_id, e.device, e.hwctx, e.seq, e.cmd_count, e.start_ns, e.end_ns, e.line
    ORDER BY e.capture_id, e.device, e.hwctx, e.start_ns`;
}

/** Rows of a relation, for a count check against `selectionSql`. */
export function countSql(relation: string): string {
  return `SELECT count(*)::BIGINT AS n FROM (${relation})`;
}

/**
 * Launch correlation of each device's rows (a relation of
 * `correlatedWorkSql` rows): one row per device with rows, of totals, delay
 * (device start - launch call start) quantiles, and the device-wide idle split by whether the row after each
 * gap was launched after the gap began (the host was late). See
 * `LAUNCH_CORRELATION_SHAPE` in launches.ts.
 */
export function launchCorrelationSql(correlated: string, oneDevice = false): string {
  return `WITH r AS MATERIALIZED (${correlated}),
  g AS (SELECT capture_id, device, start_ns, launch_ns,
      max(end_ns) OVER (${partitionBy(oneDevice)}ORDER BY start_ns, end_ns ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pm FROM r),
  a AS (SELECT capture_id, device, count(*)::BIGINT AS rows, count(launch_ns)::BIGINT AS linked,
      count(DISTINCT correlation_id) FILTER (WHERE launch_ns IS NOT NULL)::BIGINT AS launch_calls,
      avg(start_ns - launch_ns) AS mean_delay_ns, quantile_cont(start_ns - launch_ns, 0.5) AS median_delay_ns,
      quantile_cont(start_ns - launch_ns, 0.9) AS p90_delay_ns, quantile_cont(start_ns - launch_ns, 0.99) AS p99_delay_ns,
      min(start_ns - launch_ns)::BIGINT AS min_delay_ns, max(start_ns - launch_ns)::BIGINT AS max_delay_ns,
      count(*) FILTER (WHERE start_ns < launch_ns)::BIGINT AS negative_delay, (max(end_ns) - min(start_ns))::BIGINT AS span_ns
    FROM r GROUP BY capture_id, device),
  b AS (SELECT capture_id, device, coalesce(sum(start_ns - pm) FILTER (WHERE start_ns > pm), 0)::BIGINT AS idle_ns,
      coalesce(sum(start_ns - pm) FILTER (WHERE start_ns > pm AND launch_ns > pm), 0)::BIGINT AS host_wait_idle_ns,
      count(*) FILTER (WHERE start_ns > pm)::BIGINT AS gaps, count(*) FILTER (WHERE start_ns > pm AND launch_ns > pm)::BIGINT AS host_wait_gaps
    FROM g GROUP BY capture_id, device)
  SELECT a.*, b.idle_ns, b.host_wait_idle_ns, b.gaps, b.host_wait_gaps
  FROM a JOIN b ON b.capture_id = a.capture_id AND b.device = a.device ORDER BY a.capture_id, a.device`;
}

/** Linked rows per device and launch API name (cudaLaunchKernel, cuLaunchKernelEx, hipLaunchKernel...): `capture_id`, `device`, `api`, `op`, `launches`. */
export function launchApisSql(correlated: string): string {
  return `SELECT capture_id, device, coalesce(launch_name, '?') AS api, launch_op AS op, count(*)::BIGINT AS launches
    FROM (${correlated}) WHERE launch_ns IS NOT NULL GROUP BY ALL ORDER BY capture_id, device, launches DESC, api`;
}

/** Per device and kernel: launches (rows), rows linked to a launch call, median delay; each device's `limit` kernels with the most launches. */
export function launchesPerKernelSql(correlated: string, limit: number): string {
  return `SELECT * FROM (
      SELECT capture_id, device, coalesce(kernel, 'unknown') AS kernel, count(*)::BIGINT AS launches, count(launch_ns)::BIGINT AS linked,
        quantile_cont(start_ns - launch_ns, 0.5) AS median_delay_ns, sum(dur_ns)::BIGINT AS total_ns
      FROM (${correlated}) GROUP BY 1, 2, 3)
    QUALIFY row_number() OVER (PARTITION BY capture_id, device ORDER BY launches DESC, total_ns DESC, kernel) <= ${sqlInt(limit)}
    ORDER BY capture_id, device, launches DESC, total_ns DESC, kernel`;
}

/**
 * Queue depth over time, per device: rows launched but not finished (+1 at
 * the launch call's start, -1 at the row's end), over linked rows. Per
 * device and depth (capped at `cap`, the last bucket "cap or more"): the
 * time spent at it (`ns`); and the device's maximum depth (`max_depth`, on
 * every row of it).
 */
export function queueDepthSql(correlated: string, cap: number, oneDevice = false): string {
  return `WITH ev AS (
    SELECT capture_id, device, launch_ns AS t, 1 AS d FROM (${correlated}) WHERE launch_ns IS NOT NULL
    UNION ALL SELECT capture_id, device, end_ns AS t, -1 AS d FROM (${correlated}) WHERE launch_ns IS NOT NULL
  ),
  c AS (SELECT capture_id, device, t, sum(d) OVER o AS depth, lead(t) OVER o AS nt FROM ev
    WINDOW o AS (${partitionBy(oneDevice)}ORDER BY t, d ROWS UNBOUNDED PRECEDING)),
  m AS (SELECT capture_id, device, max(depth) AS max_depth FROM c GROUP BY ALL)
  SELECT c.capture_id, c.device, least(c.depth, ${sqlInt(cap)})::BIGINT AS depth, sum(c.nt - c.t)::BIGINT AS ns, any_value(m.max_depth)::BIGINT AS max_depth
  FROM c JOIN m ON m.capture_id = c.capture_id AND m.device = c.device
  WHERE c.nt IS NOT NULL GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`;
}
