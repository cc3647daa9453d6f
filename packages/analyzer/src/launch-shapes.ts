/**
 * Row shapes of the per-launch queries (`sql/launches.ts`), declared once
 * and checked where rows leave DuckDB.
 */

/** `launchGroupsSql` rows. */
export const LAUNCH_GROUP_SHAPE = {
  capture_id: 'number', device: 'number', kernel: 'string', rows_src: 'number?', wx: 'number?', wy: 'number?', wz: 'number?', work: 'number?', work_unit: 'string?',
  launches: 'number', submissions: 'number', total_ns: 'bigint', mean_ns: 'number', median_ns: 'number', p10_ns: 'number', p90_ns: 'number',
  min_ns: 'bigint', max_ns: 'bigint',
} as const;

/** `submitLatencySql` rows. */
export const SUBMIT_LATENCY_SHAPE = {
  capture_id: 'number', device: 'number', queue: 'number?', submission_id: 'string', submit_ns: 'bigint', first_start_ns: 'bigint', latency_ns: 'bigint', dispatches: 'number',
} as const;

/** `npuCommandsSql` rows. */
export const NPU_COMMAND_SHAPE = {
  capture_id: 'number', device: 'number?', hwctx: 'string?', seq: 'string?', cmd_count: 'number', submit_ns: 'bigint', exec_ioctl_ns: 'bigint?',
  complete_ns: 'bigint?', submit_to_complete_ns: 'bigint?',
} as const;

/** `kernelSideSql` rows. */
export const KERNEL_SIDE_SHAPE = {
  kernel: 'string', count: 'number', total_ns: 'bigint', mean_ns: 'number', median_ns: 'number', work_per_launch: 'number?', work_unit: 'string?',
  work_levels: 'number',
} as const;

/** One number (`countSql`, union lengths). */
export const N_SHAPE = { n: 'bigint' } as const;
