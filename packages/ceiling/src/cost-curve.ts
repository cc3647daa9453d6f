import { TickwiseError } from '@tickwise/time';
import { ceilingMessages as msg } from './messages';

/**
 * Where a cost came from, printed next to every number built on it: a value
 * typed on the command line, a CSV sweep, or captures (with kernel glob,
 * dispatch count and the capture's provenance line).
 */
export interface CostSource {
  /** The kind of origin. */
  readonly from: 'number' | 'csv' | 'capture' | 'captures';
  /** One human line: "--gpu-group-ms 0.40", "costs.csv (4 points, 512..8192 rows)", ... */
  readonly line: string;
  /** Machine-readable details (capture ids, kernel glob, dispatch counts, provenance). */
  readonly details?: Readonly<Record<string, unknown>>;
}

/** One measured point of a cost curve: the cost of one G-row group when the engine is given `rows` rows. */
export interface CostPoint {
  /** Rows of the GEMM the engine ran (its M). */
  readonly rows: number;
  /** Mean ms per G-row group at that M. */
  readonly ms: number;
  /** 10th percentile of the per-group cost, when measured. */
  readonly p10_ms?: number | undefined;
  /** 90th percentile of the per-group cost, when measured. */
  readonly p90_ms?: number | undefined;
}

/**
 * An engine's cost per G-row group: either one number that holds at every M,
 * or a curve measured at several M (a sweep), interpolated piecewise-linearly
 * in rows between measured points and held at the end value outside them
 * (flagged as extrapolation).
 */
export type EngineCost =
  | {
      readonly kind: 'constant';
      readonly ms: number;
      readonly p10_ms?: number | undefined;
      readonly p90_ms?: number | undefined;
      readonly source?: CostSource | undefined;
    }
  | { readonly kind: 'curve'; readonly points: readonly CostPoint[]; readonly source?: CostSource | undefined };

/** Which statistic of a cost to use. */
export const COST_STATS = { mean: 'mean', p10: 'p10', p90: 'p90' } as const;
/** A statistic of a cost: the mean, or the p10/p90 of the measured spread. */
export type CostStat = keyof typeof COST_STATS;
/** Type guard for {@link CostStat}. */
export function isCostStat(x: string): x is CostStat {
  return Object.hasOwn(COST_STATS, x);
}

/** A cost evaluated at some rows, with whether the rows lay outside the measured range. */
export interface CostAt {
  /** ms per G-row group at these rows. */
  readonly ms: number;
  /** The rows it was evaluated at. */
  readonly rows: number;
  /** `below`/`above` when the rows lie outside the measured points (the end value is held). */
  readonly extrapolated: 'below' | 'above' | null;
}

function checkPositive(what: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || !(v > 0)) throw new TickwiseError('invalid-cost', msg.notPositive(what, v));
  return v;
}

function checkQuantiles(what: string, ms: number, p10: number | undefined, p90: number | undefined): void {
  if (p10 !== undefined) checkPositive(`${what} p10`, p10);
  if (p90 !== undefined) checkPositive(`${what} p90`, p90);
  // A tiny tolerance: p10/p90 and the mean often come from the same rounded printout.
  const lo = p10 ?? ms;
  const hi = p90 ?? ms;
  if (lo > ms * (1 + 1e-9) || ms > hi * (1 + 1e-9)) throw new TickwiseError('invalid-cost', msg.quantileOrder(what, lo, ms, hi));
}

/** A cost that holds at every M (one measured or typed number), validated. */
export function constantCost(
  ms: number,
  opts: { p10_ms?: number | undefined; p90_ms?: number | undefined; source?: CostSource | undefined; what?: string } = {},
): EngineCost {
  const what = opts.what ?? 'cost';
  checkPositive(what, ms);
  checkQuantiles(what, ms, opts.p10_ms, opts.p90_ms);
  return { kind: 'constant', ms, p10_ms: opts.p10_ms, p90_ms: opts.p90_ms, source: opts.source };
}

/** A cost curve from measured points (any order; one point per row count), validated and sorted by rows. */
export function costCurve(points: readonly CostPoint[], opts: { source?: CostSource | undefined; what?: string } = {}): EngineCost {
  const what = opts.what ?? 'cost curve';
  if (points.length === 0) throw new TickwiseError('invalid-cost', msg.curveEmpty());
  const sorted = [...points].sort((a, b) => a.rows - b.rows);
  for (let i = 0; i < sorted.length; i++) {
    const p = sorted[i]!;
    if (!Number.isInteger(p.rows) || p.rows < 1) throw new TickwiseError('invalid-cost', msg.notWholeRows(`${what} rows`, p.rows));
    checkPositive(`${what} at ${p.rows} rows`, p.ms);
    checkQuantiles(`${what} at ${p.rows} rows`, p.ms, p.p10_ms, p.p90_ms);
    if (i > 0 && sorted[i - 1]!.rows === p.rows) throw new TickwiseError('invalid-cost', msg.curveDuplicateRows(p.rows));
  }
  return { kind: 'curve', points: sorted, source: opts.source };
}

function statOf(p: { ms: number; p10_ms?: number | undefined; p90_ms?: number | undefined }, stat: CostStat): number {
  if (stat === 'p10') return p.p10_ms ?? p.ms;
  if (stat === 'p90') return p.p90_ms ?? p.ms;
  return p.ms;
}

/**
 * The cost per G-row group when the engine is given `rows` rows. Between two
 * measured points: linear in rows. Outside the measured range: the nearest
 * end point's value is held (no slope is extrapolated, since a knee would
 * make any slope a guess) and the result says so. A stat that was not
 * measured falls back to the mean.
 */
export function costAt(cost: EngineCost, rows: number, stat: CostStat = 'mean'): CostAt {
  if (cost.kind === 'constant') return { ms: statOf(cost, stat), rows, extrapolated: null };
  const pts = cost.points;
  const first = pts[0]!;
  const last = pts[pts.length - 1]!;
  if (rows < first.rows) return { ms: statOf(first, stat), rows, extrapolated: 'below' };
  if (rows > last.rows) return { ms: statOf(last, stat), rows, extrapolated: 'above' };
  let i = 1;
  while (i < pts.length - 1 && pts[i]!.rows < rows) i++;
  if (pts.length === 1) return { ms: statOf(first, stat), rows, extrapolated: null };
  const a = pts[i - 1]!;
  const b = pts[i]!;
  if (rows === a.rows) return { ms: statOf(a, stat), rows, extrapolated: null };
  if (rows === b.rows) return { ms: statOf(b, stat), rows, extrapolated: null };
  const w = (rows - a.rows) / (b.rows - a.rows);
  return { ms: statOf(a, stat) * (1 - w) + statOf(b, stat) * w, rows, extrapolated: null };
}

/** True when the cost carries a measured p10 or p90 anywhere. */
export function hasSpread(cost: EngineCost): boolean {
  if (cost.kind === 'constant') return cost.p10_ms !== undefined || cost.p90_ms !== undefined;
  return cost.points.some((p) => p.p10_ms !== undefined || p.p90_ms !== undefined);
}

/** The same cost with one statistic (p10, p90) taken as its value; the spread is dropped. */
export function costStat(cost: EngineCost, stat: CostStat): EngineCost {
  if (cost.kind === 'constant') return { kind: 'constant', ms: statOf(cost, stat), source: cost.source };
  return { kind: 'curve', points: cost.points.map((p) => ({ rows: p.rows, ms: statOf(p, stat) })), source: cost.source };
}

/** The same cost multiplied by `factor` everywhere (for sensitivity); p10/p90 scale with it. */
export function scaleCost(cost: EngineCost, factor: number): EngineCost {
  const s = (v: number | undefined) => (v === undefined ? undefined : v * factor);
  if (cost.kind === 'constant') return { kind: 'constant', ms: cost.ms * factor, p10_ms: s(cost.p10_ms), p90_ms: s(cost.p90_ms), source: cost.source };
  return { kind: 'curve', points: cost.points.map((p) => ({ rows: p.rows, ms: p.ms * factor, p10_ms: s(p.p10_ms), p90_ms: s(p.p90_ms) })), source: cost.source };
}

/** The measured row range of a curve, or null for a constant. */
export function measuredRows(cost: EngineCost): { min: number; max: number } | null {
  if (cost.kind === 'constant') return null;
  return { min: cost.points[0]!.rows, max: cost.points[cost.points.length - 1]!.rows };
}
