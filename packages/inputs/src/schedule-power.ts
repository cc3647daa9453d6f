/**
 * Power and energy of a schedule's engines: typed watts first, else measured
 * from the captures' power samples (mean over the prefill segments taken as
 * active power, mean outside them as idle), with the measured joules per
 * prefill of the iGPU capture.
 */
import type { SegmentEnergy } from '@tickwise/analyzer';
import type { EnginePower, MeasuredEnergy } from '@tickwise/ceiling';

/** A power in W with its source line (`--gpu-active-w 35`). */
export interface WattNumber {
  readonly w: number;
  readonly line: string;
}

/** Typed powers per engine. */
export type PowerOptions = Partial<Record<'gpu' | 'npu', { readonly active?: WattNumber | undefined; readonly idle?: WattNumber | undefined }>>;

/** Energy from a capture's power samples: the metric on the wanted device if any, else the first. */
export function pickEnergy(metrics: readonly SegmentEnergy[], device: number): SegmentEnergy | null {
  return metrics.find((m) => m.device === device) ?? metrics[0] ?? null;
}

/** The iGPU capture's measured joules per prefill, when it has power samples. */
export function measuredEnergy(e: SegmentEnergy | null, input: string): MeasuredEnergy | null {
  if (!e) return null;
  return {
    segments: e.segments,
    joules_per_prefill: e.segments.reduce((a, s) => a + s.joules, 0) / Math.max(1, e.segments.length),
    source: `${e.metric} of ${input} device ${e.device ?? '?'} over ${e.segments.length} prefill segment${e.segments.length === 1 ? '' : 's'}; ${e.method}`,
  };
}

/** Each engine's active and idle power: typed, else measured, else unknown (listed only when some engine has a number). */
export function enginePowers(
  typed: PowerOptions,
  measured: { gpu: { e: SegmentEnergy | null; input: string }; npu: { e: SegmentEnergy | null; input: string | undefined } | null },
): EnginePower[] {
  const power: EnginePower[] = [];
  const one = (id: 'gpu' | 'npu', e: SegmentEnergy | null, input: string | undefined) => {
    const a = typed[id]?.active;
    const i = typed[id]?.idle;
    const segMean = e && e.segments.length ? e.segments.reduce((x, s) => x + s.mean_w, 0) / e.segments.length : null;
    const active = a?.w ?? segMean;
    const idle = i?.w ?? e?.outside_mean_w ?? null;
    const src = [
      a !== undefined ? a.line : segMean !== null ? `active: measured mean ${segMean.toFixed(2)} W of ${e!.metric} over the prefill segments of ${input} (taken as active power)` : `active: unknown`,
      i !== undefined ? i.line : e?.outside_mean_w != null ? `idle: measured mean ${e.outside_mean_w.toFixed(2)} W of ${e.metric} outside the prefills (${e.outside_samples} samples)` : 'idle: unknown',
    ].join('; ');
    if (active !== null || idle !== null) power.push({ engine: id, active_w: active, idle_w: idle, source: src });
  };
  one('gpu', measured.gpu.e, measured.gpu.input);
  if (measured.npu) one('npu', measured.npu.e, measured.npu.input);
  if (power.length && measured.npu) {
    for (const id of ['gpu', 'npu'] as const) if (!power.some((p) => p.engine === id)) power.push({ engine: id, active_w: null, idle_w: null, source: 'unknown' });
  }
  return power;
}
