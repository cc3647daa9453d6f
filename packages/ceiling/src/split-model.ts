import { TickwiseError } from '@tickwise/time';
import { costAt, type CostAt, type EngineCost } from './cost-curve';
import { ceilingMessages as msg } from './messages';

/** The NPU's tile height: the default G. */
export const DEFAULT_GROUP_ROWS = 256;

/** The most rows M (and G) {@link ceiling} takes: 2^50, so M, its +-25 % variants and k G stay exact integers. */
export const MAX_ROWS = 2 ** 50;

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
  if (!Number.isSafeInteger(rows * 2)) throw new TickwiseError('invalid-input', msg.tooManyRows('rows (M)', rows, MAX_ROWS));
  if (!Number.isSafeInteger(g * 2)) throw new TickwiseError('invalid-input', msg.tooManyRows('group rows (G)', g, MAX_ROWS));
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

/** The best of some k (ascending): the least wall time, the fewest NPU groups on a tie. */
function bestOf(p: SplitProblem, ks: Iterable<number>): SplitPoint {
  let best = splitAt(p, 0);
  for (const k of ks) {
    if (k === 0) continue;
    const s = splitAt(p, k);
    if (s.split_ms < best.split_ms * (1 - TIE)) best = s;
  }
  return best;
}

/**
 * The best integer k over 0..full_groups by trying every k: the reference
 * {@link bestSplit} is held to in tests (O(M / G), so only for small M).
 */
export function bestSplitScan(p: SplitProblem): SplitPoint {
  const ks: number[] = [];
  for (let k = 1; k <= p.full_groups; k++) ks.push(k);
  return bestOf(p, ks);
}

/** c0 + c1 k + c2 k^2. */
interface Quadratic {
  readonly c0: number;
  readonly c1: number;
  readonly c2: number;
}

/** The cost a + b rows of the curve piece that holds at `rows` (a constant: b = 0), as costAt reads it. */
function linearAt(cost: EngineCost, rows: number): { a: number; b: number } {
  if (cost.kind === 'constant') return { a: cost.ms, b: 0 };
  const pts = cost.points;
  const first = pts[0]!;
  const last = pts[pts.length - 1]!;
  if (pts.length === 1 || rows <= first.rows) return { a: first.ms, b: 0 };
  if (rows >= last.rows) return { a: last.ms, b: 0 };
  let i = 1;
  while (i < pts.length - 1 && pts[i]!.rows < rows) i++;
  const lo = pts[i - 1]!;
  const hi = pts[i]!;
  const b = (hi.ms - lo.ms) / (hi.rows - lo.rows);
  return { a: lo.ms - b * lo.rows, b };
}

/** The rows where a curve's piece changes (none for a constant). */
function knots(cost: EngineCost): number[] {
  return cost.kind === 'constant' ? [] : cost.points.map((x) => x.rows);
}

/**
 * The engines' times as functions of a real k on [lo, hi], where neither
 * cost changes piece: iGPU (M - kG)/G x (a + b (M - kG)), NPU k x (a + b kG),
 * both quadratic in k.
 */
interface Piece {
  readonly lo: number;
  readonly hi: number;
  readonly gpu: Quadratic;
  readonly npu: Quadratic;
}

/**
 * The pieces of [from, to] (real k) on which both times are quadratics: cut
 * where the iGPU's rows M - kG or the NPU's rows kG cross a measured point.
 */
function pieces(p: SplitProblem, from: number, to: number): Piece[] {
  const G = p.group_rows;
  const M = p.rows;
  const cuts = new Set<number>([from, to]);
  for (const r of knots(p.gpu)) cuts.add((M - r) / G);
  for (const r of knots(p.npu)) cuts.add(r / G);
  const xs = [...cuts].filter((x) => x >= from && x <= to).sort((a, b) => a - b);
  const out: Piece[] = [];
  for (let i = 0; i + 1 < xs.length || (i === 0 && xs.length === 1); i++) {
    const lo = xs[i]!;
    const hi = xs[i + 1] ?? lo;
    const mid = (lo + hi) / 2;
    const g = linearAt(p.gpu, M - mid * G);
    const n = linearAt(p.npu, mid * G);
    out.push({
      lo,
      hi,
      // (M - Gk)/G (a + b (M - Gk)) = (aM + bM^2)/G - (a + 2bM) k + bG k^2
      gpu: { c0: (g.a * M + g.b * M * M) / G, c1: -(g.a + 2 * g.b * M), c2: g.b * G },
      // k (a + b G k)
      npu: { c0: 0, c1: n.a, c2: n.b * G },
    });
  }
  return out;
}

/** Real roots of q (none when q is identically zero). */
function roots(q: Quadratic): number[] {
  const scale = Math.max(Math.abs(q.c0), Math.abs(q.c1), Math.abs(q.c2));
  if (scale === 0) return [];
  if (Math.abs(q.c2) <= 1e-15 * scale) return q.c1 === 0 ? [] : [-q.c0 / q.c1];
  const d = q.c1 * q.c1 - 4 * q.c2 * q.c0;
  if (d < 0) return [];
  const s = Math.sqrt(d);
  // the stable form: no cancellation between -c1 and the root
  const t = -0.5 * (q.c1 + (q.c1 >= 0 ? s : -s));
  return t === 0 ? [0] : [t / q.c2, q.c0 / t];
}

function vertex(q: Quadratic): number[] {
  return q.c2 === 0 ? [] : [-q.c1 / (2 * q.c2)];
}

function minus(a: Quadratic, b: Quadratic): Quadratic {
  return { c0: a.c0 - b.c0, c1: a.c1 - b.c1, c2: a.c2 - b.c2 };
}

/** Whole k in [lo, hi] next to each real x (floor, ceil and one either side, against rounding). */
function wholeNear(xs: Iterable<number>, lo: number, hi: number): Set<number> {
  const out = new Set<number>();
  for (const x of xs) {
    if (!Number.isFinite(x)) continue;
    const f = Math.floor(x);
    for (const k of [f - 1, f, f + 1, f + 2]) if (k >= lo && k <= hi) out.add(k);
  }
  return out;
}

/**
 * The best integer k over 0..full_groups: the least wall time, the fewest NPU
 * groups on a tie. k = 0 (no split) is always allowed, so the speedup is >= 1.
 *
 * A closed form, in time independent of M: on each piece where neither cost
 * curve changes slope, both engines' times are quadratics in k, so
 * max(iGPU, NPU) is monotone between the piece's ends, each quadratic's
 * vertex and the points where the two cross. The best whole k lies next to
 * one of those; only they are evaluated (with constant costs: next to the
 * balance point k* = n g / (g + t)). {@link bestSplitScan} tries every k.
 */
export function bestSplit(p: SplitProblem): SplitPoint {
  const F = p.full_groups;
  if (F === 0) return splitAt(p, 0);
  const xs: number[] = [1, F];
  for (const c of pieces(p, 1, F)) {
    xs.push(c.lo, c.hi, ...vertex(c.gpu), ...vertex(c.npu), ...roots(minus(c.gpu, c.npu)));
  }
  return bestOf(p, [...wholeNear(xs, 1, F)].sort((a, b) => a - b));
}

/**
 * The least whole k in [from, to] with h(k) <= 0, where h is a quadratic on
 * each piece (`pick` chooses it) and `holds` checks a k exactly; null when
 * none. Candidates: each piece's start and the roots of h in it.
 */
function firstWhole(ps: readonly Piece[], pick: (c: Piece) => Quadratic, holds: (k: number) => boolean, from: number, to: number): number | null {
  for (const c of ps) {
    const q = pick(c);
    const xs = [c.lo, ...roots(q)].filter((x) => x >= c.lo - 1 && x <= c.hi + 1).sort((a, b) => a - b);
    const ks = [...wholeNear(xs, Math.max(from, Math.floor(c.lo) - 1), Math.min(to, Math.ceil(c.hi) + 1))].sort((a, b) => a - b);
    for (const k of ks) if (holds(k)) return k;
  }
  return null;
}

/**
 * The fewest whole groups k in 1..full_groups on the NPU that leave the
 * iGPU's share within `budget_ms` (null when none does), in closed form.
 */
export function fewestGroupsWithin(p: SplitProblem, budgetMs: number): number | null {
  const F = p.full_groups;
  if (F === 0) return null;
  const holds = (k: number) => splitAt(p, k).gpu_ms <= budgetMs * (1 + 1e-12);
  return firstWhole(pieces(p, 1, F), (c) => ({ ...c.gpu, c0: c.gpu.c0 - budgetMs }), holds, 1, F);
}

/**
 * The continuous balance point k*: the (real) number of groups on the NPU at
 * which both engines finish together, ignoring sync. With constant costs
 * k* = n g / (g + t), n = M / G. With curves: the root of
 * gpu_ms(k) - npu_ms(k) over 0..M/G: the first whole k where the NPU's time
 * reaches the iGPU's (found per piece, in closed form), then bisection
 * between it and k - 1.
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
  const top = Math.ceil(n);
  const k = firstWhole(pieces(p, 0, n), (c) => minus(c.gpu, c.npu), (j) => j >= 1 && diff(Math.min(j, n)) <= 0, 1, top);
  let lo = 0;
  let hi = n;
  if (k !== null) {
    lo = k - 1;
    hi = Math.min(k, n);
  }
  for (let i = 0; i < 100 && hi - lo > 1e-12 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (diff(mid) > 0) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}
