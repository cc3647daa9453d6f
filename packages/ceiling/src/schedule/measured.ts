import { TickwiseError } from '@tickwise/time';
import { constantCost, type CostSource } from '../cost-curve';
import type { EngineSpec, Handoff } from './graph';
import { scheduleMessages as msg } from './messages';
import { quantileSorted } from './rng';
import type { PrefillSpec, StageCostModel, StageKind, StageSpec } from './stages';

/**
 * Measured dispatches of one kernel that make (part of) a stage: each
 * dispatch's duration with the repetition (segment) it came from and the
 * micro-batch position it ran at (the capture's ubatch index, 0-based).
 */
export interface SamplePart {
  readonly kernel: string;
  /** Which capture (segments are resampled per capture). */
  readonly capture: string;
  /** Dispatches of this kernel per stage instance (1 unless a stage runs a kernel twice). */
  readonly per_instance: number;
  /** Duration of each dispatch, ns (a JS number: exact up to 2^53 ns, 104 days). */
  readonly dur_ns: readonly number[];
  readonly segment: readonly number[];
  readonly position: readonly number[];
}

/** How a stage's dispatches turn into a cost model (see {@link StageCostModel}). */
export const MEASURED_FITS = {
  rows: 'mean dispatch time, per G-row group: cost linear in rows',
  attention: 'least-squares line of dispatch time over the micro-batch position, read as per_dispatch + rate x m x (p + m/2)',
  fixed: 'mean dispatch time, the same at any micro-batch size',
} as const;
/** Key of {@link MEASURED_FITS}. */
export type MeasuredFit = keyof typeof MEASURED_FITS;

/** One stage's cost on one engine: measured dispatches, or a model given outright (a number typed, a what-if factor). */
export type MeasuredCost =
  | {
      readonly form: 'dispatches';
      readonly fit: MeasuredFit;
      /** Rows one dispatch covered in the capture (its ubatch, or the NPU's tile rows). */
      readonly rows_per_dispatch: number;
      readonly parts: readonly SamplePart[];
      /** Multiplies the measured time (e.g. the FLOP ratio when an NPU tile of another GEMM shape stands in); 1 when measured as is. */
      readonly scale: number;
      /** NPU-style: a partial tile costs a whole one. */
      readonly whole_tiles: boolean;
      readonly source: CostSource;
    }
  | { readonly form: 'model'; readonly model: StageCostModel; readonly source: CostSource };

/** A stage and its measured cost on each engine (null: cannot run there). */
export interface MeasuredStage {
  readonly kind: StageKind;
  readonly cost: Readonly<Record<string, MeasuredCost | null>>;
}

/** A prefill described by measurements: what {@link prefillSpecFromMeasured} turns into a {@link PrefillSpec}. */
export interface MeasuredPrefill {
  readonly layers: number;
  readonly prompt_rows: number;
  readonly microbatch_rows: number;
  readonly group_rows: number;
  readonly engines: readonly EngineSpec[];
  readonly reference_engine: string;
  readonly stages: readonly MeasuredStage[];
  readonly handoff: Handoff;
}

/** Draws a bootstrap sample of a part (identity for the point estimate). */
export type PartSampler = (part: SamplePart) => { dur_ns: readonly number[]; position: readonly number[] };

const identity: PartSampler = (p) => ({ dur_ns: p.dur_ns, position: p.position });

function mean(xs: readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return s / xs.length;
}

/** Least-squares line y = a + b x (b = 0 when x has one distinct value). */
export function fitLine(x: readonly number[], y: readonly number[]): { a: number; b: number; r2: number | null; distinct_x: number } {
  const mx = mean(x);
  const my = mean(y);
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < x.length; i++) {
    sxx += (x[i]! - mx) ** 2;
    sxy += (x[i]! - mx) * (y[i]! - my);
    syy += (y[i]! - my) ** 2;
  }
  const distinct = new Set(x).size;
  if (distinct < 2 || sxx === 0) return { a: my, b: 0, r2: null, distinct_x: distinct };
  const b = sxy / sxx;
  return { a: my - b * mx, b, r2: syy > 0 ? (sxy * sxy) / (sxx * syy) : 1, distinct_x: distinct };
}

/** What a fit found, for reporting. */
export interface FitReport {
  readonly kind: StageKind;
  readonly engine: string;
  readonly fit: MeasuredFit | 'model';
  /** Dispatches behind it. */
  readonly dispatches: number;
  /** Mean ms per stage instance at the capture's rows per dispatch (attention: averaged over the measured positions). */
  readonly instance_ms: number;
  /** Attention only: the line over positions, ms (a + b x position), and its R^2. */
  readonly line?: { readonly a_ms: number; readonly b_ms_per_position: number; readonly r2: number | null; readonly positions: number } | undefined;
  readonly source: CostSource;
  readonly notes: readonly string[];
}

/**
 * One stage's cost model on one engine from its dispatches.
 *
 * - `rows`: per-group cost `sum(parts: per_instance x mean_ns) x scale x G / U / 1e6`
 *   ms: for one part with scale 1 this is exactly the analyzer's (and
 *   `tickwise ceiling`'s) `group_ms = mean_dispatch_ns x G / U / 1e6`.
 * - `attention`: per part, the line `ns = a + b x position` over the
 *   capture's ubatch positions (ubatch u starts at u U rows); with
 *   `per_dispatch + rate x U x (u U + U/2)` that gives rate = b / U^2 and
 *   per_dispatch = a - b / 2. One position only: no slope can be fitted, so
 *   the cost is taken as all rate (per_dispatch 0), proportional to the
 *   attended keys, and a note says so.
 * - `fixed`: `sum(per_instance x mean)`.
 */
export function fitMeasuredCost(kind: StageKind, engine: string, c: MeasuredCost, groupRows: number, sample: PartSampler = identity): { model: StageCostModel; report: FitReport } {
  if (c.form === 'model') {
    return { model: c.model, report: { kind, engine, fit: 'model', dispatches: 0, instance_ms: NaN, source: c.source, notes: [] } };
  }
  if (c.parts.length === 0 || c.parts.some((p) => p.dur_ns.length === 0)) throw new TickwiseError('invalid-input', msg.noSamples(kind, engine));
  const U = c.rows_per_dispatch;
  const notes: string[] = [];
  const drawn = c.parts.map((p) => ({ p, s: sample(p) }));
  const dispatches = drawn.reduce((a, d) => a + d.s.dur_ns.length, 0);
  if (c.fit === 'attention') {
    let a = 0;
    let b = 0;
    let r2: number | null = null;
    let positions = 0;
    let instanceNs = 0;
    for (const { p, s } of drawn) {
      const line = fitLine(s.position, s.dur_ns);
      a += p.per_instance * line.a * c.scale;
      b += p.per_instance * line.b * c.scale;
      instanceNs += p.per_instance * mean(s.dur_ns) * c.scale;
      r2 = drawn.length === 1 ? line.r2 : null;
      positions = Math.max(positions, line.distinct_x);
    }
    let per_dispatch_ns = a - b / 2;
    let rate_ns = b / (U * U);
    if (positions < 2) {
      per_dispatch_ns = 0;
      rate_ns = a / ((U * U) / 2);
      notes.push(`${kind} on ${engine}: dispatches at one micro-batch position only, so no slope over positions could be fitted; its cost is taken as proportional to the keys attended (m x (p + m/2)), no fixed part`);
    } else if (per_dispatch_ns < 0) {
      notes.push(`${kind} on ${engine}: the fitted line has a negative fixed part (${(per_dispatch_ns / 1e6).toFixed(4)} ms per dispatch); kept as fitted`);
    }
    return {
      model: { model: 'attention', per_dispatch_ms: per_dispatch_ns / 1e6, ms_per_row_pair: rate_ns / 1e6 },
      report: { kind, engine, fit: 'attention', dispatches, instance_ms: instanceNs / 1e6, line: { a_ms: a / 1e6, b_ms_per_position: b / 1e6, r2, positions }, source: c.source, notes },
    };
  }
  let instanceNs = 0;
  for (const { p, s } of drawn) instanceNs += p.per_instance * mean(s.dur_ns) * c.scale;
  if (c.fit === 'fixed') {
    return { model: { model: 'fixed', ms: instanceNs / 1e6 }, report: { kind, engine, fit: 'fixed', dispatches, instance_ms: instanceNs / 1e6, source: c.source, notes } };
  }
  // in this order, so one part with scale 1 gives the analyzer's group_ms to the last bit
  const group_ms = (instanceNs * groupRows) / U / 1e6;
  let spread: { p10_ms: number; p90_ms: number } | undefined;
  if (drawn.length === 1 && drawn[0]!.p.per_instance === 1) {
    const sorted = [...drawn[0]!.s.dur_ns].sort((x, y) => x - y);
    const toGroup = (ns: number) => (ns * c.scale * groupRows) / U / 1e6;
    spread = { p10_ms: Math.min(group_ms, toGroup(quantileSorted(sorted, 0.1))), p90_ms: Math.max(group_ms, toGroup(quantileSorted(sorted, 0.9))) };
  }
  return {
    model: { model: 'rows', per_group: constantCost(group_ms, { ...spread, source: c.source, what: `${kind} on ${engine}` }), whole_tiles: c.whole_tiles },
    report: { kind, engine, fit: 'rows', dispatches, instance_ms: instanceNs / 1e6, source: c.source, notes },
  };
}

/** A {@link PrefillSpec} from measurements, and what each fit found. */
export function prefillSpecFromMeasured(m: MeasuredPrefill, sample: PartSampler = identity): { spec: PrefillSpec; fits: FitReport[] } {
  const fits: FitReport[] = [];
  const stages: StageSpec[] = m.stages.map((s) => {
    const cost: Record<string, StageCostModel | null> = {};
    for (const e of m.engines) {
      const c = s.cost[e.id];
      if (c === undefined || c === null) {
        cost[e.id] = null;
        continue;
      }
      const f = fitMeasuredCost(s.kind, e.id, c, m.group_rows, sample);
      cost[e.id] = f.model;
      fits.push(f.report);
    }
    return { kind: s.kind, cost };
  });
  return {
    spec: {
      layers: m.layers,
      prompt_rows: m.prompt_rows,
      microbatch_rows: m.microbatch_rows,
      group_rows: m.group_rows,
      engines: m.engines,
      reference_engine: m.reference_engine,
      stages,
      handoff: m.handoff,
    },
    fits,
  };
}
