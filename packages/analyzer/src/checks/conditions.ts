/**
 * Rules over the conditions a capture was taken under (the `conditions`
 * table, keys of `@tickwise/store`'s vocabulary): `busy-machine` (load
 * average above a threshold), `driver-errors` (amdgpu/amdxdna error lines
 * in the kernel log of the window), `thermal` (a temperature peak above a
 * threshold), and `conditions-differ` (captures compared with each other
 * ran under different conditions; `tickwise diff` uses it). A capture
 * without host conditions gets no finding from the first three: what was
 * not recorded is not judged.
 */
import {
  CONDITION_KEYS, KMSG_DRIVERS, conditionClass, conditionTolerance, isAbsentNote, kmsgKey, type ConditionClass,
} from '@tickwise/store';
import { conditionMessages as msg } from './conditions-messages';
import { captureFilter } from './sql';
import { defineRule, type CheckScope, type Finding } from './types';

/** A `conditions` row as the rules read it. */
export const CONDITION_ROW_SHAPE = { capture_id: 'number', key: 'string', value: 'string?', unit: 'string?', note: 'string?' } as const;

/** One condition row. */
export interface ConditionRowLike {
  readonly capture_id: number;
  readonly key: string;
  readonly value: string | null;
  readonly unit: string | null;
  readonly note: string | null;
}

/** SQL of the condition rows of a scope, optionally only keys matching LIKE patterns (pure). */
export function conditionRowsSql(scope: CheckScope, likes: readonly string[] = []): string {
  const keys = likes.length ? ` AND (${likes.map((l) => `key LIKE '${l.replaceAll("'", "''")}'`).join(' OR ')})` : '';
  return `SELECT capture_id, key, value, unit, note FROM conditions WHERE ${captureFilter(scope)}${keys} ORDER BY capture_id, key`;
}

function byCapture(rows: readonly ConditionRowLike[]): Map<number, Map<string, ConditionRowLike>> {
  const out = new Map<number, Map<string, ConditionRowLike>>();
  for (const r of rows) {
    if (!out.has(r.capture_id)) out.set(r.capture_id, new Map());
    // a key written twice (a source and the host): the first row stays
    if (!out.get(r.capture_id)!.has(r.key)) out.get(r.capture_id)!.set(r.key, r);
  }
  return out;
}

function numeric(r: ConditionRowLike | undefined): number | null {
  if (!r || r.value === null || r.value.trim() === '') return null;
  const v = Number(r.value);
  return Number.isFinite(v) ? v : null;
}

/** `busy-machine`. */
export const busyMachine = defineRule({
  code: 'busy-machine',
  worst: 'warning',
  shape: CONDITION_ROW_SHAPE,
  sql: (scope) => conditionRowsSql(scope, ['load.1m.%', 'cpu.count']),
  evaluate: (rows, { thresholds: t }) => {
    const out: Finding[] = [];
    for (const [capture, keys] of byCapture(rows)) {
      const start = numeric(keys.get(CONDITION_KEYS.load1Start));
      const end = numeric(keys.get(CONDITION_KEYS.load1End));
      const peakRow = numeric(keys.get(CONDITION_KEYS.load1Peak));
      const seen = [start, end, peakRow].filter((x): x is number => x !== null);
      if (seen.length === 0) continue;
      const peak = Math.max(...seen);
      if (peak <= t.busy_load_max) continue;
      const cpus = numeric(keys.get('cpu.count'));
      out.push({
        code: 'busy-machine', severity: 'warning', capture_id: capture,
        message: msg.busy(capture, peak, start, end, cpus, t.busy_load_max), advice: msg.busyAdvice(),
        load_1m_peak: peak, load_1m_start: start, load_1m_end: end, cpu_count: cpus, busy_load_max: t.busy_load_max,
      });
    }
    return out;
  },
});

/** `driver-errors`. */
export const driverErrors = defineRule({
  code: 'driver-errors',
  worst: 'error',
  shape: CONDITION_ROW_SHAPE,
  sql: (scope) => conditionRowsSql(scope, ['kmsg.%', 'conditions.source']),
  evaluate: (rows) => {
    const out: Finding[] = [];
    for (const [capture, keys] of byCapture(rows)) {
      const source = keys.get(CONDITION_KEYS.kmsgSource);
      if (!source) continue;
      if (source.value === null) {
        if (keys.has(CONDITION_KEYS.source)) {
          const why = (source.note ?? '').replace(/^absent:\s*/, '') || 'unknown';
          out.push({ code: 'driver-errors', severity: 'info', capture_id: capture, message: msg.kmsgUnreadable(capture, why), advice: msg.kmsgUnreadableAdvice(), kmsg_readable: false });
        }
        continue;
      }
      const counts: string[] = [];
      let total = 0;
      let first: string | null = null;
      const fields: Record<string, number> = {};
      for (const d of KMSG_DRIVERS) {
        const r = keys.get(kmsgKey(d, 'error'));
        const n = numeric(r) ?? 0;
        fields[`${d}_error_lines`] = n;
        if (n > 0) {
          counts.push(`${d}: ${n} error line${n === 1 ? '' : 's'}`);
          total += n;
          first ??= r?.note ?? null;
        }
      }
      if (total === 0) continue;
      out.push({
        code: 'driver-errors', severity: 'error', capture_id: capture,
        message: msg.driverErrors(capture, counts, first), advice: msg.driverErrorsAdvice(),
        error_lines: total, ...fields, kmsg_source: source.value,
      });
    }
    return out;
  },
});

const THERMAL_KEYS = [
  [CONDITION_KEYS.tempCpuPeak, 'CPU temperature'],
  [CONDITION_KEYS.tempGpuPeak, 'GPU temperature'],
  [CONDITION_KEYS.tempNpuPeak, 'NPU temperature'],
] as const;

/** `thermal`. */
export const thermal = defineRule({
  code: 'thermal',
  worst: 'warning',
  shape: CONDITION_ROW_SHAPE,
  sql: (scope) => conditionRowsSql(scope, ['temp.%.peak']),
  evaluate: (rows, { thresholds: t }) => {
    const out: Finding[] = [];
    for (const [capture, keys] of byCapture(rows)) {
      for (const [key, what] of THERMAL_KEYS) {
        const r = keys.get(key);
        const c = numeric(r);
        if (c === null || c <= t.thermal_max_c) continue;
        const sensor = r?.note?.replace(/^hottest sensor, e\.g\. /, '') ?? null;
        out.push({
          code: 'thermal', severity: 'warning', capture_id: capture,
          message: msg.thermal(capture, what, c, t.thermal_max_c, sensor), advice: msg.thermalAdvice(),
          key, celsius: c, thermal_max_c: t.thermal_max_c,
        });
      }
    }
    return out;
  },
});

/** One condition compared between two captures. */
export interface ConditionDifference {
  readonly key: string;
  readonly class: ConditionClass;
  readonly unit: string | null;
  /** null: absent, redacted or not recorded (see the notes). */
  readonly a: string | null;
  readonly b: string | null;
  readonly a_note: string | null;
  readonly b_note: string | null;
  /** True when the key exists on both sides. */
  readonly in_both: boolean;
  /** b - a, for numbers. */
  readonly delta: number | null;
}

function sameMeasured(key: string, a: ConditionRowLike | undefined, b: ConditionRowLike | undefined): { same: boolean; delta: number | null } {
  const x = numeric(a);
  const y = numeric(b);
  if (x === null || y === null) return { same: (a?.value ?? null) === (b?.value ?? null), delta: null };
  const tol = conditionTolerance(key);
  const delta = y - x;
  const abs = Math.abs(delta);
  if (tol?.absolute !== undefined && abs <= tol.absolute) return { same: true, delta };
  if (tol?.relative !== undefined && abs <= tol.relative * Math.max(Math.abs(x), Math.abs(y))) return { same: true, delta };
  return { same: abs === 0, delta };
}

/**
 * The conditions that differ between two captures (pure): `exact` keys
 * whose values are not equal (absent vs present included), `measured`
 * keys beyond their tolerance (`CONDITION_TOLERANCES`); `context` keys
 * never. A key only one side has counts only when both were sampled on a
 * host (`conditions.source = host`). Sorted exact first, then by key.
 */
export function compareConditions(a: readonly ConditionRowLike[], b: readonly ConditionRowLike[]): ConditionDifference[] {
  const ma = byCapture(a.map((r) => ({ ...r, capture_id: 0 }))).get(0) ?? new Map<string, ConditionRowLike>();
  const mb = byCapture(b.map((r) => ({ ...r, capture_id: 0 }))).get(0) ?? new Map<string, ConditionRowLike>();
  // keys one side lacks are differences only when both sides were sampled on a host (else a source simply wrote fewer)
  const bothHost = ma.get(CONDITION_KEYS.source)?.value === 'host' && mb.get(CONDITION_KEYS.source)?.value === 'host';
  const out: ConditionDifference[] = [];
  for (const key of [...new Set([...ma.keys(), ...mb.keys()])].sort()) {
    const cls = conditionClass(key);
    if (cls === 'context') continue;
    const x = ma.get(key);
    const y = mb.get(key);
    if (!bothHost && (!x || !y)) continue;
    let differs: boolean;
    let delta: number | null = null;
    if (cls === 'exact') {
      differs = !x || !y || x.value !== y.value;
      // two notes saying the same thing of a missing value are not a difference; absent vs redacted is
      if (x && y && x.value === null && y.value === null) differs = isAbsentNote(x.note) !== isAbsentNote(y.note);
    } else {
      const m = sameMeasured(key, x, y);
      differs = !x || !y || !m.same;
      delta = m.delta;
    }
    if (!differs) continue;
    out.push({
      key, class: cls, unit: x?.unit ?? y?.unit ?? null, a: x?.value ?? null, b: y?.value ?? null, a_note: x ? x.note : 'not recorded', b_note: y ? y.note : 'not recorded',
      in_both: x !== undefined && y !== undefined, delta,
    });
  }
  return out.sort((p, q) => (p.class === q.class ? p.key.localeCompare(q.key) : p.class === 'exact' ? -1 : 1));
}

/** `conditions-differ`: each capture of the scope against the first one that has conditions. */
export const conditionsDiffer = defineRule({
  code: 'conditions-differ',
  worst: 'warning',
  shape: CONDITION_ROW_SHAPE,
  sql: (scope) => conditionRowsSql(scope),
  evaluate: (rows, { captureIds }) => {
    const by = new Map<number, ConditionRowLike[]>();
    for (const r of rows) by.set(r.capture_id, [...(by.get(r.capture_id) ?? []), r]);
    const ordered = captureIds.filter((id) => by.has(id));
    if (ordered.length < 2) return [];
    const base = ordered[0]!;
    const out: Finding[] = [];
    for (const other of ordered.slice(1)) {
      const diffs = compareConditions(by.get(base)!, by.get(other)!);
      if (diffs.length === 0) continue;
      const exact = diffs.filter((d) => d.class === 'exact').map((d) => d.key);
      const measured = diffs.filter((d) => d.class === 'measured').map((d) => d.key);
      out.push({
        code: 'conditions-differ', severity: exact.length ? 'warning' : 'info', capture_id: other,
        message: msg.differ(base, other, exact, measured), advice: msg.differAdvice(exact.length > 0),
        compared_with_capture: base, exact_differences: exact.length, measured_differences: measured.length,
      });
    }
    return out;
  },
});
