/**
 * Energy per prefill from the power samples a capture carries
 * (`metric_samples` rows whose unit is a power unit, or whose name says
 * power with such a unit: IREE `device_metric_*` values, or hwmon readings
 * a recorder took).
 *
 * ```
 * metric_samples (capture) --power metrics only, value x unit -> W-->
 *   per metric: points at each sample's window midpoint
 *   per segment [start, end): trapezoid integral of the piecewise-linear power
 *     (the nearest value held outside the samples) -> joules, mean W
 *   samples outside every segment -> mean W (an idle reading, when there are any)
 * ```
 */
import type { Store } from '@tickwise/store';

/** Power units tickwise understands, in W. */
export const POWER_UNITS: Readonly<Record<string, number>> = {
  W: 1, w: 1, watt: 1, watts: 1,
  mW: 1e-3, mw: 1e-3, milliwatt: 1e-3, milliwatts: 1e-3,
  uW: 1e-6, 'µW': 1e-6, microwatt: 1e-6, microwatts: 1e-6,
  kW: 1e3, kilowatt: 1e3,
};

/** W per unit of a metric's value, or null when the unit is not a power unit. */
export function powerScale(unit: string | null): number | null {
  const u = (unit ?? '').trim();
  return POWER_UNITS[u] ?? POWER_UNITS[u.toLowerCase()] ?? null;
}

const METRIC_SHAPE = {
  device: 'number?', name: 'string?', unit: 'string?', semantic: 'string?', host_begin_ns: 'bigint?', host_end_ns: 'bigint?', value: 'number?',
} as const;

/** A time window (e.g. a prefill segment) on the capture's host timeline. */
export interface EnergyWindow {
  readonly segment: number;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
}

/** Energy of each window from one power metric. */
export interface SegmentEnergy {
  /** Which metric ("gpu.power (mW)"), and its device. */
  readonly metric: string;
  readonly device: number | null;
  readonly segments: readonly { readonly segment: number; readonly joules: number; readonly mean_w: number; readonly span_ms: number; readonly samples: number }[];
  /** Mean W of the samples outside every busy window (null when none). */
  readonly outside_mean_w: number | null;
  readonly outside_samples: number;
  /** How the integral was taken. */
  readonly method: string;
}

/**
 * Energy of each window from every power metric of a capture (one result
 * per metric and device); `skipped` names metrics that say power (name or
 * semantic) in a unit that is not a power unit, so their values cannot be
 * read as W. Both empty when the capture carries no power samples.
 */
export async function segmentEnergy(
  store: Store,
  captureId: number,
  windows: readonly EnergyWindow[],
  /** Every busy window of the device (all its segments, selected or not): "outside" means outside all of them. Default: `windows`. */
  busy: readonly EnergyWindow[] = windows,
): Promise<{ metrics: SegmentEnergy[]; skipped: string[] }> {
  const rows = await store.query(METRIC_SHAPE, `SELECT device, name, unit, semantic, host_begin_ns, host_end_ns, value FROM metric_samples WHERE capture_id = $1 AND value IS NOT NULL ORDER BY host_begin_ns`, [captureId]);
  const by = new Map<string, { device: number | null; name: string; unit: string; pts: { t: number; w: number }[] }>();
  const skipped = new Set<string>();
  let t0: bigint | null = null;
  for (const w of windows) if (t0 === null || w.start_ns < t0) t0 = w.start_ns;
  for (const r of rows) {
    const scale = powerScale(r.unit);
    if (scale === null) {
      if (/power|watt/i.test(`${r.name ?? ''} ${r.semantic ?? ''}`)) skipped.add(`${r.name ?? 'unnamed'} (unit ${r.unit ?? 'none'})`);
      continue;
    }
    if (r.value === null) continue;
    const b = r.host_begin_ns ?? r.host_end_ns;
    const e = r.host_end_ns ?? r.host_begin_ns;
    if (b === null || e === null) continue;
    if (t0 === null) t0 = b;
    // ms relative to the first window: small numbers, exact enough for an integral
    const mid = Number(b - t0) / 1e6 + Number(e - b) / 2e6;
    const key = `${r.device}\u0000${r.name}\u0000${r.unit}`;
    const m = by.get(key) ?? { device: r.device, name: r.name ?? 'power', unit: r.unit ?? '', pts: [] };
    m.pts.push({ t: mid, w: r.value * scale });
    by.set(key, m);
  }
  const out: SegmentEnergy[] = [];
  for (const m of by.values()) {
    const pts = m.pts.sort((a, b) => a.t - b.t);
    const at = (t: number): number => {
      if (t <= pts[0]!.t) return pts[0]!.w;
      if (t >= pts[pts.length - 1]!.t) return pts[pts.length - 1]!.w;
      let lo = 0;
      let hi = pts.length - 1;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (pts[mid]!.t <= t) lo = mid;
        else hi = mid;
      }
      const a = pts[lo]!;
      const b = pts[hi]!;
      return b.t === a.t ? a.w : a.w + ((b.w - a.w) * (t - a.t)) / (b.t - a.t);
    };
    const inBusy = (t: number) => busy.some((w) => t >= Number(w.start_ns - t0!) / 1e6 && t <= Number(w.end_ns - t0!) / 1e6);
    const segments = windows.map((w) => {
      const s = Number(w.start_ns - t0!) / 1e6;
      const e = Number(w.end_ns - t0!) / 1e6;
      const knots = [s, ...pts.map((p) => p.t).filter((t) => t > s && t < e), e];
      let mj = 0;
      for (let i = 1; i < knots.length; i++) mj += ((at(knots[i - 1]!) + at(knots[i]!)) / 2) * (knots[i]! - knots[i - 1]!);
      let n = 0;
      for (const p of pts) if (p.t >= s && p.t <= e) n++;
      const span = e - s;
      return { segment: w.segment, joules: mj / 1e3, mean_w: span > 0 ? mj / span : at(s), span_ms: span, samples: n };
    });
    const outside = pts.filter((p) => !inBusy(p.t));
    out.push({
      metric: `${m.name} (${m.unit})`,
      device: m.device,
      segments,
      outside_mean_w: outside.length ? outside.reduce((a, p) => a + p.w, 0) / outside.length : null,
      outside_samples: outside.length,
      method: 'samples placed at the midpoint of their window, power interpolated linearly between them (the nearest value held outside), integrated over each segment (trapezoid)',
    });
  }
  return { metrics: out, skipped: [...skipped] };
}
