import { TickwiseError } from '@tickwise/time';
import { costAt, type CostAt, type EngineCost } from './cost-curve';
import { ceilingMessages as msg } from './messages';

/** The NPU's tile height: the default G. */
export const DEFAULT_GROUP_ROWS = 256;

/**
 * One GEMM to split by rows: M rows, cut into G-row groups; `k` whole groups
 * go to the NPU, the remaining rows stay on the iGPU.
 *
 * When M is not a multiple of G the last group is partial (M mod G rows).
 * It always stays on the iGPU: the NPU runs fixed G-row tiles, so a partial
 * tile would cost a whole tile. The iGPU's cost is taken per row
 * (rows / G x ms per group), so its partial group costs its share of g.
 */
export interface SplitProblem {
  /** M. */
  readonly rows: number;
  /** G. */
  readonly group_rows: number;
  /** ceil(M / G): groups including a partial last one. */
  readonly groups: number;
  /** floor(M / G): the most groups the NPU can take. */
  readonly full_groups: number;
  /** M mod G: rows of the partial last group (0 when M divides). */
  readonly remainder_rows: number;
  /** iGPU cost per G-row group. */
  readonly gpu: EngineCost;
  /** NPU cost per G-row tile. */
  readonly npu: EngineCost;
  /** Join/sync cost paid once when the NPU takes any group (ms). */
  readonly sync_overhead_ms: number;
}

/** Wall time and its parts with `npu_groups` groups on the NPU. */
export interface SplitPoint {
  /** k: groups on the NPU. */
  readonly npu_groups: number;
  /** Rows left on the iGPU: M - k G. */
  readonly gpu_rows: number;
  /** Rows on the NPU: k G. */
  readonly npu_rows: number;
  /** iGPU ms per group at `gpu_rows` (null when the iGPU gets no rows). */
  readonly gpu_group_ms: number | null;
  /** NPU ms per tile at `npu_rows` (null when k = 0). */
  readonly npu_tile_ms: number | null;
  /** iGPU time: gpu_rows / G x gpu_group_ms. */
  readonly gpu_ms: number;
  /** NPU time: k x npu_tile_ms. */
  readonly npu_ms: number;
  /** Sync overhead counted (0 when k = 0). */
  readonly sync_ms: number;
  /** max(gpu_ms, npu_ms) + sync_ms. */
  readonly split_ms: number;
  /** iGPU-only time / split_ms. */
  readonly speedup: number;
  /** Costs evaluated outside a curve's measured rows ("gpu above 8192 rows"); empty when none. */
  readonly extrapolated: readonly string[];
}

function positive(what: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0)) throw new TickwiseError('invalid-input', msg.notPositive(what, v));
  return v;
}

/** Validates inputs and fixes the group arithmetic (see {@link SplitProblem} for a partial last group). */
export function splitProblem(input: {
  rows: number;
  group_rows?: number | undefined;
  gpu: EngineCost;
  npu: EngineCost;
  sync_overhead_ms?: number | undefined;
}): SplitProblem {
  const rows = input.rows;
  const g = input.group_rows ?? DEFAULT_GROUP_ROWS;
  if (!Number.isInteger(rows) || rows < 1) throw new TickwiseError('invalid-input', msg.notWholeRows('rows (M)', rows));
  if (!Number.isInteger(g) || g < 1) throw new TickwiseError('invalid-input', msg.notWholeRows('group rows (G)', g));
  const sync = input.sync_overhead_ms ?? 0;
  if (typeof sync !== 'number' || !Number.isFinite(sync) || sync < 0) throw new TickwiseError('invalid-input', msg.notNonNegative('sync overhead', sync));
  if (input.gpu.kind === 'constant') positive('iGPU group ms', input.gpu.ms);
  if (input.npu.kind === 'constant') positive('NPU tile ms', input.npu.ms);
  return {
    rows,
    group_rows: g,
    groups: Math.ceil(rows / g),
    full_groups: Math.floor(rows / g),
    remainder_rows: rows % g,
    gpu: input.gpu,
    npu: input.npu,
    sync_overhead_ms: sync,
  };
}

function flag(engine: string, c: CostAt): string[] {
  return c.extrapolated === null ? [] : [`${engine} ${c.extrapolated} measured rows (at ${c.rows})`];
}

/** The iGPU-only time: all M rows on the iGPU. */
export function gpuOnlyMs(p: SplitProblem): number {
  return (p.rows / p.group_rows) * costAt(p.gpu, p.rows).ms;
}

/** Wall time with `k` groups on the NPU (0 <= k <= full_groups): max((n-k) g, k t) + sync when k > 0. */
export function splitAt(p: SplitProblem, k: number): SplitPoint {
  if (!Number.isInteger(k) || k < 0 || k > p.full_groups) {
    throw new RangeError(`npu_groups ${k} outside 0..${p.full_groups}`);
  }
  const gpuRows = p.rows - k * p.group_rows;
  const npuRows = k * p.group_rows;
  const gc = gpuRows > 0 ? costAt(p.gpu, gpuRows) : null;
  const nc = k > 0 ? costAt(p.npu, npuRows) : null;
  const gpuMs = gc ? (gpuRows / p.group_rows) * gc.ms : 0;
  const npuMs = nc ? k * nc.ms : 0;
  const syncMs = k > 0 ? p.sync_overhead_ms : 0;
  const splitMs = Math.max(gpuMs, npuMs) + syncMs;
  return {
    npu_groups: k,
    gpu_rows: gpuRows,
    npu_rows: npuRows,
    gpu_group_ms: gc ? gc.ms : null,
    npu_tile_ms: nc ? nc.ms : null,
    gpu_ms: gpuMs,
    npu_ms: npuMs,
    sync_ms: syncMs,
    split_ms: splitMs,
    speedup: gpuOnlyMs(p) / splitMs,
    extrapolated: [...(gc ? flag('gpu', gc) : []), ...(nc ? flag('npu', nc) : [])],
  };
}

/** Relative tolerance under which two wall times count as equal (the smaller k wins). */
const TIE = 1e-12;

/**
 * The best integer k over 0..full_groups: the least wall time, the fewest NPU
 * groups on a tie. k = 0 (no split) is always allowed, so the speedup is >= 1.
 * Every k is evaluated, so a knee in a cost curve cannot hide the optimum.
 */
export function bestSplit(p: SplitProblem): SplitPoint {
  let best = splitAt(p, 0);
  for (let k = 1; k <= p.full_groups; k++) {
    const s = splitAt(p, k);
    if (s.split_ms < best.split_ms * (1 - TIE)) best = s;
  }
  return best;
}

/**
 * The continuous balance point k*: the (real) number of groups on the NPU at
 * which both engines finish together, ignoring sync. With constant costs
 * k* = n g / (g + t), n = M / G. With curves: the root of
 * gpu_ms(k) - npu_ms(k) over 0..M/G, found by a scan and bisection.
 */
export function balanceGroups(p: SplitProblem): number {
  const n = p.rows / p.group_rows;
  if (p.gpu.kind === 'constant' && p.npu.kind === 'constant') return (n * p.gpu.ms) / (p.gpu.ms + p.npu.ms);
  const diff = (x: number) => {
    const gpuRows = p.rows - x * p.group_rows;
    const gpu = gpuRows > 0 ? (gpuRows / p.group_rows) * costAt(p.gpu, gpuRows).ms : 0;
    const npu = x > 0 ? x * costAt(p.npu, x * p.group_rows).ms : 0;
    return gpu - npu;
  };
  let lo = 0;
  let hi = n;
  for (let k = 1; k <= Math.ceil(n); k++) {
    const x = Math.min(k, n);
    if (diff(x) <= 0) {
      lo = k - 1;
      hi = x;
      break;
    }
  }
  for (let i = 0; i < 100 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (diff(mid) > 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
