import type { Ns, Ticks } from './units';

/**
 * One clock-correlation sample: the device counter read between two host
 * clock reads. The bracket `[host_begin_ns, host_end_ns]` bounds when the
 * device value was taken; its width is the sample's uncertainty.
 */
export interface ClockSample {
  readonly device_tick: bigint;
  readonly host_begin_ns: bigint;
  readonly host_end_ns: bigint;
}

/** Fixed denominator of the rational slope: ns per tick in units of 1e-15 ns. */
export const FIT_DEN = 10n ** 15n;

/**
 * A mapping from device ticks to host nanoseconds:
 * `host_ns = base_ns + round((tick - base_tick) * ns_per_tick_num / FIT_DEN)`,
 * done in exact integer arithmetic (no float drift at 1e15 ticks).
 */
export interface ClockMap {
  readonly base_tick: bigint;
  readonly base_ns: bigint;
  /** ns per tick times {@link FIT_DEN}. */
  readonly ns_per_tick_num: bigint;
  /** Tick rate the map implies. */
  readonly tick_hz: number;
}

/** How a clock map was obtained. */
export const FitMethod = {
  'weighted-least-squares': 'least squares over all samples, weighted by 1/bracket^2',
  'first-last': 'line through the first and last sample (what iree-profile does)',
  declared: 'the producer-declared frequency, relative timeline (no correlation)',
  assumed: 'a frequency the user gave on the command line',
} as const;
/** Key of {@link FitMethod}. */
export type FitMethod = keyof typeof FitMethod;

/** The result of fitting a device clock to the host timeline. */
export interface ClockFit extends ClockMap {
  readonly method: FitMethod;
  /** Tick rate fitted from the samples (`1e9 / slope`). */
  readonly tick_hz_fitted: number;
  /** Largest |residual| of a sample's bracket midpoint from the line, ns. */
  readonly residual_max_ns: number;
  /** Root mean square of the residuals, ns. */
  readonly residual_rms_ns: number;
  /** 1-sigma error of a mapped time inside the sampled range, ns. */
  readonly uncertainty_ns: number;
  /** 1-sigma relative error of the slope, parts per million. */
  readonly slope_uncertainty_ppm: number;
  /** Samples used. */
  readonly sample_count: number;
  /** Narrowest and widest bracket, ns. */
  readonly bracket_min_ns: number;
  readonly bracket_max_ns: number;
  /** Residual of each sample, in input order. */
  readonly residuals_ns: readonly number[];
}

/** A problem the fit noticed in its samples. */
export interface FitProblem {
  readonly code: 'too-few-samples' | 'non-monotonic-clock-samples' | 'inverted-bracket' | 'zero-tick-span';
  readonly message: string;
  readonly sample_index?: number;
}

function roundDiv(x: bigint, den: bigint): bigint {
  // round half away from zero
  return x >= 0n ? (x + den / 2n) / den : -((-x + den / 2n) / den);
}

/** Maps a device tick to host ns through a clock map, exactly. */
export function tickToNs(map: ClockMap, tick: Ticks | bigint): Ns {
  return (map.base_ns + roundDiv((tick - map.base_tick) * map.ns_per_tick_num, FIT_DEN)) as Ns;
}

/** Converts a tick count (a duration) to ns through a clock map, exactly. */
export function tickSpanToNs(map: ClockMap, span: Ticks | bigint): Ns {
  return roundDiv(span * map.ns_per_tick_num, FIT_DEN) as Ns;
}

/** ns-per-tick numerator (over {@link FIT_DEN}) for a frequency in Hz. */
export function nsPerTickNumForHz(hz: number): bigint {
  return BigInt(Math.round((1e9 / hz) * 1e15));
}

/** A clock map from a frequency alone, with `base_tick` at host `base_ns`. */
export function mapFromFrequency(hz: number, base_tick: bigint, base_ns: bigint, method: 'declared' | 'assumed'): ClockFit {
  return {
    method,
    base_tick,
    base_ns,
    ns_per_tick_num: nsPerTickNumForHz(hz),
    tick_hz: hz,
    tick_hz_fitted: NaN,
    residual_max_ns: NaN,
    residual_rms_ns: NaN,
    uncertainty_ns: NaN,
    slope_uncertainty_ppm: NaN,
    sample_count: 0,
    bracket_min_ns: NaN,
    bracket_max_ns: NaN,
    residuals_ns: [],
  };
}

/** Checks samples for problems a fit cannot repair. */
export function checkSamples(samples: readonly ClockSample[]): FitProblem[] {
  const problems: FitProblem[] = [];
  samples.forEach((s, i) => {
    if (s.host_end_ns < s.host_begin_ns) {
      problems.push({ code: 'inverted-bracket', message: `clock sample ${i}: host_time_end_ns < host_time_begin_ns`, sample_index: i });
    }
  });
  const order = samples.map((s, i) => ({ s, i })).sort((p, q) => (p.s.host_begin_ns < q.s.host_begin_ns ? -1 : p.s.host_begin_ns > q.s.host_begin_ns ? 1 : 0));
  for (let k = 1; k < order.length; k++) {
    if (order[k]!.s.device_tick <= order[k - 1]!.s.device_tick) {
      problems.push({
        code: 'non-monotonic-clock-samples',
        message: `clock sample ${order[k]!.i}: device tick ${order[k]!.s.device_tick} does not increase with host time (previous ${order[k - 1]!.s.device_tick})`,
        sample_index: order[k]!.i,
      });
      break;
    }
  }
  return problems;
}

/**
 * Fits `host_ns = a + b * tick` over all samples by weighted least squares.
 * Each sample's host value is its bracket midpoint with standard deviation
 * `width / sqrt(12)` (uniform inside the bracket), so narrow brackets weigh
 * most. Needs two samples with distinct ticks; returns the problems instead
 * of a fit otherwise. The covariance is scaled up by the reduced chi-square
 * when the scatter exceeds what the brackets explain (drift, bad samples).
 */
export function fitClock(samples: readonly ClockSample[]): { fit: ClockFit | null; problems: FitProblem[] } {
  const problems = checkSamples(samples);
  const good = samples.filter((s) => s.host_end_ns >= s.host_begin_ns);
  if (good.length < 2) {
    problems.push({ code: 'too-few-samples', message: `${good.length} usable clock sample(s); a fit needs 2 or more` });
    return { fit: null, problems };
  }
  const t0 = good[0]!.device_tick;
  const h0 = good[0]!.host_begin_ns;
  const xs = good.map((s) => Number(s.device_tick - t0));
  const ys = good.map((s) => Number(s.host_begin_ns - h0) + Number(s.host_end_ns - s.host_begin_ns) / 2);
  const widths = good.map((s) => Number(s.host_end_ns - s.host_begin_ns));
  const sig = widths.map((w) => Math.max(w, 1) / Math.sqrt(12));
  const w = sig.map((s) => 1 / (s * s));
  let sw = 0, sx = 0, sy = 0;
  for (let i = 0; i < xs.length; i++) { sw += w[i]!; sx += w[i]! * xs[i]!; sy += w[i]! * ys[i]!; }
  const xm = sx / sw, ym = sy / sw;
  let sxx = 0, sxy = 0;
  for (let i = 0; i < xs.length; i++) {
    const dx = xs[i]! - xm;
    sxx += w[i]! * dx * dx;
    sxy += w[i]! * dx * (ys[i]! - ym);
  }
  if (!(sxx > 0)) {
    problems.push({ code: 'zero-tick-span', message: 'all clock samples have the same device tick; no slope can be fitted' });
    return { fit: null, problems };
  }
  const b = sxy / sxx; // ns per tick
  const residuals = xs.map((x, i) => ys[i]! - (ym + b * (x - xm)));
  let chi2 = 0, rss = 0, rmax = 0;
  residuals.forEach((r, i) => { chi2 += w[i]! * r * r; rss += r * r; rmax = Math.max(rmax, Math.abs(r)); });
  const dof = xs.length - 2;
  const scale = dof > 0 ? Math.max(1, chi2 / dof) : 1;
  const varA = scale / sw;
  const varB = scale / sxx;
  // loops, not Math.min(...xs): a spread of a few hundred thousand samples overflows the call stack
  let xmin = Infinity, xmax = -Infinity;
  for (const x of xs) { if (x < xmin) xmin = x; if (x > xmax) xmax = x; }
  let wmin = Infinity, wmax = -Infinity;
  for (const x of widths) { if (x < wmin) wmin = x; if (x > wmax) wmax = x; }
  const edge = Math.max(Math.abs(xmin - xm), Math.abs(xmax - xm));
  const uncertainty = Math.sqrt(varA + edge * edge * varB);
  // anchor the integer map at the weighted mean sample, where the fit is best
  const base_tick = t0 + BigInt(Math.round(xm));
  const yAtBase = ym + b * (Number(base_tick - t0) - xm);
  const base_ns = h0 + BigInt(Math.round(yAtBase));
  const num = BigInt(Math.round(b * 1e15));
  const fit: ClockFit = {
    method: 'weighted-least-squares',
    base_tick,
    base_ns,
    ns_per_tick_num: num,
    tick_hz: 1e9 / b,
    tick_hz_fitted: 1e9 / b,
    residual_max_ns: rmax,
    residual_rms_ns: Math.sqrt(rss / xs.length),
    uncertainty_ns: uncertainty,
    slope_uncertainty_ppm: (Math.sqrt(varB) / Math.abs(b)) * 1e6,
    sample_count: good.length,
    bracket_min_ns: wmin,
    bracket_max_ns: wmax,
    residuals_ns: residuals,
  };
  return { fit, problems };
}

/**
 * The line through the first and last sample by device tick (iree-profile's
 * own basis), for comparison with {@link fitClock}.
 */
export function fitFirstLast(samples: readonly ClockSample[]): ClockMap | null {
  if (samples.length < 2) return null;
  const sorted = [...samples].sort((p, q) => (p.device_tick < q.device_tick ? -1 : p.device_tick > q.device_tick ? 1 : 0));
  const a = sorted[0]!, z = sorted[sorted.length - 1]!;
  const dt = z.device_tick - a.device_tick;
  if (dt <= 0n) return null;
  const mid = (s: ClockSample) => s.host_begin_ns * 2n + (s.host_end_ns - s.host_begin_ns);
  const dh2 = mid(z) - mid(a); // twice the host delta
  const num = roundDiv(dh2 * FIT_DEN, dt * 2n);
  return { base_tick: a.device_tick, base_ns: roundDiv(mid(a), 2n), ns_per_tick_num: num, tick_hz: 1e9 / (Number(num) / 1e15) };
}

/** Relative difference of two rates in parts per million. */
export function ppmDiff(a_hz: number, b_hz: number): number {
  return ((a_hz - b_hz) / b_hz) * 1e6;
}
