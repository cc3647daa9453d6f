/**
 * Device work, as SQL over a selection (pure). Kernels are `dispatches`;
 * copies and memsets are `host_events` rows of a device-work kind (Kineto's
 * `gpu_memcpy`/`gpu_memset`, the recorder's `cuda_memcpy`/`cuda_memset`,
 * rocprofv3's `memory_copy`), with their device and queue (Kineto keeps the
 * stream in `args.args.stream`).
 *
 * ```
 * --work kernels : selectionSql rows                         (work = 'kernel')
 * --work all     : selectionSql rows UNION ALL copies/memsets (work = 'copy' | 'memset')
 *                  same device, same time-source family, same segment ranges
 * each row --correlation id--> its launch call on the host (launch_ns), when the source links them:
 *   Kineto: dispatches.event_id = host_events.event_id (CUPTI correlation, cuda_runtime / cuda_driver)
 *   recorder CUDA: host_events (cuda_api).submission_id = the correlation id
 *   (rocprofv3: not linked, its dispatches keep no correlation id; IREE: no launch calls)
 * ```
 */
import { sqlInt } from './quote';
import { scopedSources, segmentJoinSql, selectionSql, sourcesPredicate, type Scope, type SelectionSpec } from './selection';

/** What `--work` may select. */
export const WorkSet = {
  kernels: 'kernels only (dispatches)',
  all: 'device work: kernels + copies + memsets (per queue/stream)',
} as const;
/** Key of {@link WorkSet}. */
export type WorkSet = keyof typeof WorkSet;
/** The default of `--work`. */
export const DEFAULT_WORK: WorkSet = 'kernels';

/** Type guard for {@link WorkSet}. */
export function isWorkSet(x: string): x is WorkSet {
  return Object.hasOwn(WorkSet, x);
}

/** host_events kinds that are device work (a copy or memset that occupies a queue). */
export const DEVICE_WORK_HOST_KINDS = ['gpu_memcpy', 'gpu_memset', 'cuda_memcpy', 'cuda_memset', 'memory_copy', 'hip_memcpy', 'hip_memset'] as const;

const list = (xs: readonly string[]) => xs.map((x) => `'${x}'`).join(', ');

/** `queue` of a device-work host event: its own column, else Kineto's `args.args.stream`. */
export const HOST_WORK_QUEUE = `coalesce(queue, TRY_CAST(json_extract_string(args, '$.args.stream') AS INTEGER))`;

/**
 * Copies and memsets of the selected devices, with the columns of
 * `selectionSql` (rowid_key negative: never equal to a dispatch's) plus
 * `correlation_id` and `work`.
 */
export function hostWorkSql(spec: SelectionSpec, scope?: Scope): string {
  const where = [
    `kind IN (${list(DEVICE_WORK_HOST_KINDS)})`, 'coalesce(valid, true)', 'start_ns IS NOT NULL', 'end_ns IS NOT NULL', 'end_ns >= start_ns',
    sourcesPredicate(scopedSources(spec, scope)),
  ];
  const inner = `SELECT capture_id, device, ${HOST_WORK_QUEUE} AS queue, submission_id, -1 - rowid AS rowid_key,
      name AS kernel, start_ns, end_ns, end_ns - start_ns AS dur_ns, time_source,
      event_id AS correlation_id, CASE WHEN kind LIKE '%memset%' THEN 'memset' ELSE 'copy' END AS work
    FROM host_events WHERE ${where.join(' AND ')}`;
  const q = scope && scope.queue !== null ? ` WHERE queue = ${sqlInt(scope.queue)}` : '';
  // segment labels by an ASOF join (segmentJoinSql), in selectionSql's column order (the UNION with the kernels is by position)
  return `SELECT capture_id, device, queue, submission_id, rowid_key, kernel, start_ns, end_ns, dur_ns, time_source, segment, correlation_id, work
    FROM (${segmentJoinSql(inner, spec.segments)})${q}`;
}

/**
 * The selected device work of a scope: `selectionSql`'s columns plus
 * `correlation_id` (the id linking a row to its launch call, NULL when the
 * source has none) and `work` ('kernel' | 'copy' | 'memset').
 */
export function workSelectionSql(spec: SelectionSpec, scope: Scope | undefined, work: WorkSet): string {
  const kernels = `SELECT s.*, d.event_id AS correlation_id, 'kernel' AS work FROM (${selectionSql(spec, scope)}) s JOIN dispatches d ON d.rowid = s.rowid_key`;
  return work === 'kernels' ? kernels : `${kernels} UNION ALL ${hostWorkSql(spec, scope)}`;
}

/** Plain device-work selection (selectionSql's columns only), for analyses that take a selection. */
export function workRowsSql(spec: SelectionSpec, scope: Scope | undefined, work: WorkSet): string {
  if (work === 'kernels') return selectionSql(spec, scope);
  return `SELECT capture_id, device, queue, submission_id, rowid_key, kernel, start_ns, end_ns, dur_ns, time_source, segment FROM (${workSelectionSql(spec, scope, work)})`;
}

/** Copies and memsets the kernels-only view leaves out, per (capture, device): one row `n`, `sum_dur_ns`. */
export function hostWorkCountSql(spec: SelectionSpec, scope?: Scope): string {
  return `SELECT count(*)::BIGINT AS n, coalesce(sum(dur_ns), 0)::BIGINT AS sum_dur_ns FROM (${hostWorkSql(spec, scope)})`;
}

/**
 * Host events that are launch API calls carrying the correlation id of the
 * device work they enqueue: Kineto's `cuda_runtime` / `cuda_driver` slices
 * (CUPTI correlation in `event_id`; Kineto on ROCm writes HIP calls under
 * `cuda_runtime` too) and the recorder's `cuda_api` events (correlation in
 * `submission_id`). Not linked: rocprofv3 (its dispatch rows keep the
 * dispatch id, not the correlation id, in `event_id`) and IREE (host
 * execution events are not launches).
 */
export const LAUNCH_CALL_PREDICATE = `((kind = 'slice' AND op IN ('cuda_runtime', 'cuda_driver')) OR kind = 'cuda_api')`;

/**
 * The launch call of each correlation id: one row per (capture_id,
 * correlation_id) with the earliest host start of a launch call
 * ({@link LAUNCH_CALL_PREDICATE}) carrying it (`launch_ns`), its name, and whether it is a driver call.
 */
export function launchCallsSql(): string {
  return `SELECT capture_id, corr AS correlation_id, arg_min(start_ns, start_ns) AS launch_ns, arg_min(name, start_ns) AS launch_name,
      arg_min(op, start_ns) AS launch_op
    FROM (
      SELECT capture_id, CASE WHEN kind = 'cuda_api' THEN submission_id ELSE event_id END AS corr,
        start_ns, name, op
      FROM host_events
      WHERE ${LAUNCH_CALL_PREDICATE} AND start_ns IS NOT NULL
    )
    WHERE corr IS NOT NULL
    GROUP BY capture_id, corr`;
}

/** `workSelectionSql` rows with `launch_ns`, `launch_name`, `launch_op` of their launch call (NULL when none). */
export function correlatedWorkSql(spec: SelectionSpec, scope: Scope | undefined, work: WorkSet): string {
  return `SELECT w.*, l.launch_ns, l.launch_name, l.launch_op
    FROM (${workSelectionSql(spec, scope, work)}) w
    LEFT JOIN (${launchCallsSql()}) l ON l.capture_id = w.capture_id AND l.correlation_id = w.correlation_id`;
}
