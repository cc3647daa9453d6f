/**
 * Row shapes of everything the analyzer reads out of DuckDB, declared once
 * and checked where rows leave the database (`store.query(shape, sql)`):
 * a BIGINT never turns into a JS number by accident.
 */

/** `sourceInventorySql` rows. */
export const SOURCE_INVENTORY_SHAPE = {
  capture_id: 'number', device: 'number', time_source: 'string', rows: 'number', usable: 'number',
  invalid: 'number', no_time: 'number', queues: 'number', min_queue: 'number?', no_queue: 'number',
} as const;

/** Capture facts for plans and provenance lines. */
export const CAPTURE_SHAPE = {
  capture_id: 'number', path: 'string', label: 'string?', format: 'string', producer: 'string?', sha256: 'string?',
  timeline: 'string', schema_version: 'number?',
} as const;

/** Device facts for plans. */
export const DEVICE_SHAPE = { capture_id: 'number', device: 'number', kind: 'string', name: 'string?', time_base: 'string' } as const;

/** Queues present in a selection. */
export const QUEUE_SHAPE = { capture_id: 'number', device: 'number', queue: 'number?', dispatches: 'number' } as const;

/** `gapBucketsSql` rows. */
export const GAP_BUCKET_ROW_SHAPE = {
  capture_id: 'number', device: 'number', queue: 'number?', bucket: 'number?', rows: 'number', rows_out_of_order: 'number', no_sub: 'number', idle_ns: 'bigint', max_gap_ns: 'bigint?',
  over_count: 'number', over_idle_ns: 'bigint', between_count: 'number', between_idle_ns: 'bigint',
  between_over_count: 'number', between_over_idle_ns: 'bigint',
} as const;

/** `betweenBucketsSql` rows. */
export const BETWEEN_BUCKET_ROW_SHAPE = {
  capture_id: 'number', device: 'number', queue: 'number?', bucket: 'number', between_count: 'number', between_idle_ns: 'bigint', between_over_count: 'number', between_over_idle_ns: 'bigint',
} as const;

/** `segmentSpansSql` rows. */
export const SEGMENT_SPAN_SHAPE = { capture_id: 'number', device: 'number', queue: 'number?', segment: 'number', dispatches: 'number', first_ns: 'bigint', last_ns: 'bigint', sum_dur_ns: 'bigint' } as const;

/** `gapListSql` rows. */
export const GAP_ROW_SHAPE = { segment: 'number', start_ns: 'bigint', end_ns: 'bigint', gap_ns: 'bigint', between_submissions: 'boolean' } as const;

/** `overlapDeviceSql` rows, one per device. */
export const OVERLAP_DEVICE_SHAPE = {
  capture_id: 'number', device: 'number', dispatches: 'number', sum_dur_ns: 'bigint', busy_ns: 'bigint', multi_inflight_ns: 'bigint', cross_submission_inflight_ns: 'bigint',
  overlapping_dispatches: 'number', max_in_flight: 'number',
} as const;

/** `pairOverlapsSql` rows. */
export const PAIR_OVERLAP_SHAPE = { a_capture_id: 'number', a_device: 'number', b_capture_id: 'number', b_device: 'number', overlap_ns: 'bigint' } as const;

/** `kernelStatsSql` rows. */
export const KERNEL_ROW_SHAPE = {
  capture_id: 'number', device: 'number', kernel: 'string', count: 'number', total_ns: 'bigint', mean_ns: 'number', median_ns: 'number',
  p10_ns: 'number', p90_ns: 'number', min_ns: 'bigint', max_ns: 'bigint',
} as const;

/** `busyUnionSql` rows, one per device. */
export const BUSY_SHAPE = { capture_id: 'number', device: 'number', busy_ns: 'bigint' } as const;

/** `segmentRowsSql` table size. */
export const COUNT_SHAPE = { n: 'number' } as const;

/** `longestGapsSql` rows. */
export const LONG_GAP_SHAPE = { pos: 'number', gap_ns: 'bigint' } as const;

/** `periodicSql`'s one row. */
export const PERIODIC_SHAPE = { blocks: 'number', distinct_blocks: 'number' } as const;

/** `segmentSummarySql` rows. */
export const SEGMENT_SUMMARY_SHAPE = {
  segment: 'number', dispatch_count: 'number', start_ns: 'bigint', end_ns: 'bigint', gap_before_ns: 'bigint?',
  first_submission_id: 'string?', last_submission_id: 'string?', sequence_hash: 'string',
} as const;

/** `matchedKernelsSql` rows. */
export const MATCHED_KERNEL_SHAPE = { capture_id: 'number', device: 'number', kernel: 'string?', dispatch_count: 'number', total_ns: 'bigint' } as const;

/** `durationStatsSql`'s one row. */
export const DURATION_STATS_SHAPE = {
  dispatch_count: 'number', total_ns: 'bigint', mean_ns: 'number?', median_ns: 'number?', p10_ns: 'number?', p90_ns: 'number?',
  min_ns: 'bigint?', max_ns: 'bigint?',
} as const;

/** `durationStatsBySegmentSql` rows. */
export const SEGMENT_DURATION_SHAPE = { segment: 'number', dispatch_count: 'number', total_ns: 'bigint', mean_ns: 'number', median_ns: 'number' } as const;

/**
 * Words that name a tiling, not a problem: `tilesize32x32x8`, `warpsize1x2x1`,
 * `tensor16x8x16`, `cta_128x128x32`, `block_64x64x8` (issue 18.5). A shape
 * right after one of them is a tile, never M x N x K.
 */
const TILE_WORDS = /(?:^|[^a-z])(?:tile|tiles|tilesize|tile_size|warp|warps|warpsize|warp_size|tensor|mma|cta|ctas|block|blocks|threadblock|tb|cluster|stage|stages|wg|workgroup|subgroup|instr|inst|frag|mfma|wmma|vec)$/i;

/**
 * M, N, K from a kernel name such as `matmul_512x8192x3072_f16` or
 * `npu_prefill_dispatch_6_matmul_256x8192x3072_bf16`. The shape stands alone
 * between separators (start, `_`, `-`, `.`, space) and does not follow a
 * tiling word; so `sm80_xmma_gemm_..._tilesize32x32x8_stage3_warpsize1x2x1`
 * has no shape (null) rather than a tile read as M x N x K.
 */
export function gemmShapeFromName(name: string): { m: number; n: number; k: number } | null {
  for (const m of name.matchAll(/(^|[_\-. ])(\d+)x(\d+)x(\d+)(?=$|[_\-. ])/g)) {
    const before = name.slice(0, m.index);
    if (TILE_WORDS.test(before)) continue;
    return { m: Number(m[2]), n: Number(m[3]), k: Number(m[4]) };
  }
  return null;
}
