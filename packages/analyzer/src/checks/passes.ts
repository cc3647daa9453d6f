/**
 * Rules over a capture's passes (segments): `wall-clock-mismatch` (a steady
 * segment's span against llama-bench's avg_ns; trap 6) and
 * `cold-first-pass` (one pass only, or a first pass that idles far more
 * than the rest; trap 5).
 */
import { median, medianBigint } from '@tickwise/time';
import { at, checkMessages as msg } from './messages';
import { factorName, nearPowerOfTen, round } from './factor';
import { captureFilter } from './sql';
import { defineRule, type CheckSegment, type Finding, type WallReference } from './types';

/** Segments of one (capture, device), in time order. */
export interface DeviceSegments {
  readonly capture_id: number;
  readonly device: number;
  readonly segments: readonly CheckSegment[];
}

/** Groups segments by (capture, device), in order. */
export function groupSegments(segments: readonly CheckSegment[]): DeviceSegments[] {
  const by = new Map<string, CheckSegment[]>();
  for (const s of segments) {
    const k = `${s.capture_id}:${s.device}`;
    let list = by.get(k);
    if (!list) by.set(k, (list = []));
    list.push(s);
  }
  return [...by.values()]
    .map((list) => ({ capture_id: list[0]!.capture_id, device: list[0]!.device, segments: [...list].sort((a, b) => a.segment - b.segment) }))
    .sort((a, b) => a.capture_id - b.capture_id || a.device - b.device);
}

/** Idle share of a segment: 1 - busy / span (0 for an empty span). */
export function idleFraction(s: CheckSegment): number {
  return s.span_ns > 0n ? 1 - Number(s.busy_ns) / Number(s.span_ns) : 0;
}


/** The steady segments: all but the first when there are two or more. */
export function steadySegments(list: readonly CheckSegment[]): readonly CheckSegment[] {
  return list.length >= 2 ? list.slice(1) : list;
}

/** `wall-clock-mismatch`. Wall references come from `wall_refs` (this rule's rows) and from the options. */
export const wallClockMismatch = defineRule({
  code: 'wall-clock-mismatch',
  shape: {
    capture_id: 'number?', source_path: 'string?', line: 'number?', model: 'string?', test: 'string?', n_prompt: 'number?', n_gen: 'number?',
    avg_ns: 'bigint?', stddev_ns: 'bigint?',
  },
  sql: (scope) => `SELECT capture_id, source_path, line, model, test, n_prompt, n_gen, avg_ns, stddev_ns FROM wall_refs
    WHERE ${captureFilter(scope)} AND avg_ns IS NOT NULL ORDER BY capture_id, source_path, line`,
  evaluate: (rows, ctx) => {
    const t = ctx.thresholds;
    const stored: WallReference[] = rows
      .filter((r) => r.avg_ns !== null)
      .map((r) => ({
        capture_id: r.capture_id, source_path: r.source_path, line: r.line, model: r.model,
        test: r.test ?? `pp${r.n_prompt ?? 0}`, n_prompt: r.n_prompt ?? 0, n_gen: r.n_gen ?? 0, avg_ns: r.avg_ns!, stddev_ns: r.stddev_ns,
      }));
    const all = [...stored, ...ctx.wallRefs];
    const out: Finding[] = [];
    const groups = groupSegments(ctx.segments);
    for (const capture of ctx.captureIds) {
      const refs = all.filter((w) => w.capture_id === undefined || w.capture_id === null || w.capture_id === capture);
      if (refs.length === 0) continue;
      const prefill = refs.filter((w) => w.n_prompt > 0 && w.n_gen === 0);
      if (prefill.length === 0) {
        const tests = [...new Set(refs.map((w) => w.test))];
        out.push({ code: 'wall-clock-mismatch', severity: 'info', capture_id: capture, message: msg.noPrefillRef(capture, tests), advice: msg.noPrefillRefAdvice() });
        continue;
      }
      // the device that did the work: the one with the most timed dispatches
      const devs = groups.filter((g) => g.capture_id === capture);
      if (devs.length === 0) continue;
      const main = devs.reduce((a, b) => (b.segments.reduce((n, s) => n + s.dispatches, 0) > a.segments.reduce((n, s) => n + s.dispatches, 0) ? b : a));
      const steady = steadySegments(main.segments);
      const spanNs = medianBigint(steady.map((s) => s.span_ns));
      if (spanNs <= 0n) continue;
      const ratioOf = (w: WallReference) => Number(w.avg_ns) / Number(spanNs);
      const tests = [...new Set(prefill.map((w) => w.test))];
      const ref = prefill.reduce((a, b) => (Math.abs(Math.log(ratioOf(b))) < Math.abs(Math.log(ratioOf(a))) ? b : a));
      const ratio = ratioOf(ref);
      if (ratio >= t.wall_ratio_min && ratio <= t.wall_ratio_max) continue;
      const power = nearPowerOfTen(ratio, t.power_of_ten_tolerance_fraction);
      const severity = power || ratio < t.wall_error_ratio_min || ratio > t.wall_error_ratio_max ? 'error' : 'warning';
      const factor = power ? power.name : factorName(ratio, t.power_of_ten_tolerance_fraction);
      const which = main.segments.length >= 2
        ? `median steady segment (${steady.length} after the first of ${main.segments.length})`
        : 'only segment';
      let message = msg.wallMismatch(capture, main.device, ref.test, ref.avg_ns, at(ref.source_path, ref.line), spanNs, which, ratio, factor);
      if (tests.length > 1) message += `; ${msg.wallAmbiguous(tests)}`;
      out.push({
        code: 'wall-clock-mismatch', severity, capture_id: capture, device: main.device, message,
        advice: power ? msg.wallUnitAdvice(factor) : ratio > 1 ? msg.wallLongAdvice() : msg.wallShortAdvice(),
        test: ref.test, n_prompt: ref.n_prompt, wall_avg_ns: ref.avg_ns, wall_stddev_ns: ref.stddev_ns ?? null, span_ns: spanNs,
        wall_over_span_ratio: round(ratio, 6), factor, segments: main.segments.length,
        file: ref.source_path ?? null, line: ref.line ?? null,
      });
    }
    return out;
  },
});

/** `cold-first-pass`. */
export const coldFirstPass = defineRule({
  code: 'cold-first-pass',
  shape: {},
  sql: null,
  evaluate: (_rows, ctx) => {
    const t = ctx.thresholds;
    const out: Finding[] = [];
    for (const g of groupSegments(ctx.segments)) {
      const [first, ...rest] = g.segments;
      if (!first) continue;
      if (rest.length === 0) {
        out.push({
          code: 'cold-first-pass', severity: 'warning', capture_id: g.capture_id, device: g.device,
          message: msg.singlePass(g.capture_id, g.device, idleFraction(first), first.span_ns), advice: msg.singlePassAdvice(),
          segments: 1, idle_fraction: round(idleFraction(first), 4), span_ns: first.span_ns, dispatches: first.dispatches,
        });
        continue;
      }
      const firstIdle = idleFraction(first);
      const othersIdle = median(rest.map(idleFraction));
      if (firstIdle - othersIdle >= t.cold_idle_excess_fraction && firstIdle >= othersIdle * t.cold_idle_ratio_min) {
        out.push({
          code: 'cold-first-pass', severity: 'info', capture_id: g.capture_id, device: g.device,
          message: msg.coldFirst(g.capture_id, g.device, firstIdle, othersIdle, rest.length), advice: msg.coldFirstAdvice(),
          segments: g.segments.length, first_idle_fraction: round(firstIdle, 4), others_idle_fraction: round(othersIdle, 4),
          first_span_ns: first.span_ns,
        });
      }
    }
    return out;
  },
});
