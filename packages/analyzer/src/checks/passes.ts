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
import { defineRule, type CheckSegment, type Finding, type RuleContext, type WallReference } from './types';

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

const WALL_SHAPE = {
  capture_id: 'number?', source_path: 'string?', line: 'number?', model: 'string?', test: 'string?', n_prompt: 'number?', n_gen: 'number?',
  avg_ns: 'bigint?', stddev_ns: 'bigint?',
} as const;
type WallRow = { capture_id: number | null; source_path: string | null; line: number | null; model: string | null; test: string | null; n_prompt: number | null; n_gen: number | null; avg_ns: bigint | null; stddev_ns: bigint | null };

/** One capture held against its wall references: the closest prefill reference and the ratio, or why there is none. */
type WallComparison =
  | { readonly kind: 'no-prefill'; readonly capture: number; readonly tests: readonly string[] }
  | { readonly kind: 'compared'; readonly capture: number; readonly device: number; readonly ref: WallReference; readonly tests: readonly string[];
      readonly spanNs: bigint; readonly ratio: number; readonly steady: number; readonly segments: number };

function wallComparisons(rows: readonly WallRow[], ctx: RuleContext): WallComparison[] {
  const stored: WallReference[] = rows
    .filter((r) => r.avg_ns !== null)
    .map((r) => ({
      capture_id: r.capture_id, source_path: r.source_path, line: r.line, model: r.model,
      test: r.test ?? `pp${r.n_prompt ?? 0}`, n_prompt: r.n_prompt ?? 0, n_gen: r.n_gen ?? 0, avg_ns: r.avg_ns!, stddev_ns: r.stddev_ns,
    }));
  const all = [...stored, ...ctx.wallRefs];
  const out: WallComparison[] = [];
  const groups = groupSegments(ctx.segments);
  for (const capture of ctx.captureIds) {
    const refs = all.filter((w) => w.capture_id === undefined || w.capture_id === null || w.capture_id === capture);
    if (refs.length === 0) continue;
    const prefill = refs.filter((w) => w.n_prompt > 0 && w.n_gen === 0);
    if (prefill.length === 0) {
      out.push({ kind: 'no-prefill', capture, tests: [...new Set(refs.map((w) => w.test))] });
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
    const ref = prefill.reduce((a, b) => (Math.abs(Math.log(ratioOf(b))) < Math.abs(Math.log(ratioOf(a))) ? b : a));
    out.push({ kind: 'compared', capture, device: main.device, ref, tests: [...new Set(prefill.map((w) => w.test))], spanNs, ratio: ratioOf(ref), steady: steady.length, segments: main.segments.length });
  }
  return out;
}

/** `wall-clock-mismatch`. Wall references come from `wall_refs` (this rule's rows) and from the options. */
export const wallClockMismatch = defineRule({
  code: 'wall-clock-mismatch',
  worst: 'error',
  shape: WALL_SHAPE,
  sql: (scope) => `SELECT capture_id, source_path, line, model, test, n_prompt, n_gen, avg_ns, stddev_ns FROM wall_refs
    WHERE ${captureFilter(scope)} AND avg_ns IS NOT NULL ORDER BY capture_id, source_path, line`,
  // segments only to compare a wall reference with: none stored or given, none needed
  needsSegments: (rows, ctx) => rows.length > 0 || ctx.wallRefs.length > 0,
  evaluate: (rows, ctx) => {
    const t = ctx.thresholds;
    const out: Finding[] = [];
    for (const c of wallComparisons(rows, ctx)) {
      const capture = c.capture;
      if (c.kind === 'no-prefill') {
        out.push({ code: 'wall-clock-mismatch', severity: 'info', capture_id: capture, message: msg.noPrefillRef(capture, c.tests), advice: msg.noPrefillRefAdvice() });
        continue;
      }
      const { ref, ratio, spanNs, tests } = c;
      if (ratio >= t.wall_ratio_min && ratio <= t.wall_ratio_max) continue;
      const power = nearPowerOfTen(ratio, t.power_of_ten_tolerance_fraction);
      const severity = power || ratio < t.wall_error_ratio_min || ratio > t.wall_error_ratio_max ? 'error' : 'warning';
      const factor = power ? power.name : factorName(ratio, t.power_of_ten_tolerance_fraction);
      const which = c.segments >= 2 ? `median steady segment (${c.steady} after the first of ${c.segments})` : 'only segment';
      let message = msg.wallMismatch(capture, c.device, ref.test, ref.avg_ns, at(ref.source_path, ref.line), spanNs, which, ratio, factor);
      if (tests.length > 1) message += `; ${msg.wallAmbiguous(tests)}`;
      out.push({
        code: 'wall-clock-mismatch', severity, capture_id: capture, device: c.device, message,
        advice: power ? msg.wallUnitAdvice(factor) : ratio > 1 ? msg.wallLongAdvice() : msg.wallShortAdvice(),
        test: ref.test, n_prompt: ref.n_prompt, wall_avg_ns: ref.avg_ns, wall_stddev_ns: ref.stddev_ns ?? null, span_ns: spanNs,
        wall_over_span_ratio: round(ratio, 6), factor, segments: c.segments,
        file: ref.source_path ?? null, line: ref.line ?? null,
      });
    }
    return out;
  },
  // what was compared, agreeing or not (issue 18.9: check --wall says the ratio when it agrees)
  figures: (rows, ctx) => wallComparisons(rows, ctx).flatMap((c) => (c.kind !== 'compared' ? [] : [{
    capture_id: c.capture, device: c.device, test: c.ref.test, wall_avg_ns: c.ref.avg_ns, span_ns: c.spanNs,
    wall_over_span_ratio: round(c.ratio, 6),
    agrees: c.ratio >= ctx.thresholds.wall_ratio_min && c.ratio <= ctx.thresholds.wall_ratio_max,
    range: `${ctx.thresholds.wall_ratio_min}x..${ctx.thresholds.wall_ratio_max}x`,
    file: c.ref.source_path ?? null, line: c.ref.line ?? null,
  }])),
});

/** `cold-first-pass`. */
export const coldFirstPass = defineRule({
  code: 'cold-first-pass',
  worst: 'warning',
  shape: {},
  sql: null,
  needsSegments: () => true,
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
