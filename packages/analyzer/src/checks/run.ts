/**
 * Running the checks over a store.
 *
 * ```
 * store --captures in scope--> scope
 *   --segments: the analyzer's resolveSegments (what --segment selects), or the
 *     local splitter where it refuses a capture; busy time per segment by
 *     segmentStatsSql--> RuleContext
 *   for each rule in CHECK_RULES: rule.sql(scope) --DuckDB--> rows --rule.evaluate(rows, ctx)--> findings
 *   --sorted: errors first, then warnings, then info
 * ```
 */
import type { Row, Store } from '@tickwise/store';
import { formatNs } from '@tickwise/time';
import { segmentCaptures } from '../segments';
import { memoKey, readOnce } from '../read-memo';
import { SEGMENT_STATS_SHAPE, TOP_GAPS_SHAPE, cutsFromGaps, segmentStatsSql, topGapsSql } from './segments-local';
import { CHECK_RULES } from './registry';
import {
  CheckCode, DEFAULT_THRESHOLDS, type CheckOptions, type FindingValue, type CheckScope, type CheckSegment, type CheckThresholds, type Finding, type FindingSeverity, type RuleContext,
} from './types';

const SEVERITY_ORDER: Record<FindingSeverity, number> = { error: 0, warning: 1, info: 2 };

/** One check as it ran: how many findings, and what it measured (issue 18.9: `check --json` lists every check). */
export interface CheckRun {
  readonly code: CheckCode;
  /** What the check looks for. */
  readonly checks: string;
  readonly findings: number;
  /** The loudest finding, or null when it passed. */
  readonly worst: FindingSeverity | null;
  /** What it compared, finding or not (the wall-clock reference's ratio); empty when it measures nothing to quote. */
  readonly figures: readonly Record<string, FindingValue>[];
}

/** Runs every rule (or `opts.codes`) and returns the findings, errors first. */
export async function runChecks(store: Store, opts: CheckOptions = {}): Promise<Finding[]> {
  return (await runCheckSuite(store, opts)).findings;
}

/** Runs every rule (or `opts.codes`): the findings, errors first, and one {@link CheckRun} per rule in rule order. */
export async function runCheckSuite(store: Store, opts: CheckOptions = {}): Promise<{ findings: Finding[]; checks: CheckRun[] }> {
  const thresholds = { ...DEFAULT_THRESHOLDS, ...(opts.thresholds ?? {}) };
  const ids = opts.captureIds
    ? [...opts.captureIds]
    : (await store.query({ capture_id: 'number' }, 'SELECT capture_id FROM captures ORDER BY capture_id')).map((r) => r.capture_id);
  const scope: CheckScope = { captureIds: ids };
  const atLeast = opts.atLeast;
  const codes = (opts.codes ?? (Object.keys(CHECK_RULES) as CheckCode[]))
    .filter((code) => atLeast === undefined || SEVERITY_ORDER[CHECK_RULES[code].worst] <= SEVERITY_ORDER[atLeast]);
  const rowsOf = new Map<CheckCode, Row[]>();
  for (const code of codes) {
    const rule = CHECK_RULES[code];
    rowsOf.set(code, rule.sql ? await store.rows(rule.sql(scope)) : []);
  }
  const base = { thresholds, pin: opts.pin ?? null, wallRefs: opts.wallRefs ?? [], captureIds: ids };
  // the segmentation (the suite's costliest step) only when a rule reads it
  const segmented = codes.some((code) => CHECK_RULES[code].needsSegments(rowsOf.get(code)!, base));
  const ctx: RuleContext = { ...base, segments: segmented ? await checkSegments(store, ids, thresholds) : [] };
  const findings: Finding[] = [];
  const checks: CheckRun[] = [];
  for (const code of codes) {
    const rule = CHECK_RULES[code];
    const rows = rowsOf.get(code)!;
    const mine = rule.evaluate(rows, ctx);
    const beyond = mine.find((f) => SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[rule.worst]);
    if (beyond) throw new Error(`check ${code} gave a finding of severity ${beyond.severity}, beyond its declared worst (${rule.worst}): declare it, or a verb's header misses it`);
    findings.push(...mine);
    const worst = mine.reduce<FindingSeverity | null>((w, f) => (w === null || SEVERITY_ORDER[f.severity] < SEVERITY_ORDER[w] ? f.severity : w), null);
    checks.push({ code, checks: CheckCode[code], findings: mine.length, worst, figures: rule.figures ? rule.figures(rows, ctx) : [] });
  }
  // stable: rule order within a severity
  const sorted = findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);
  return { findings: sorted, checks };
}

/**
 * The figures of checks that passed, one line each, for the human output:
 * `wall-clock-mismatch passed: capture 1 device 0: llama-bench pp512 avg ... is 1.0027x ... (agrees: 0.8x..1.25x)`.
 */
export function formatPassedFigures(checks: readonly CheckRun[]): string {
  const lines: string[] = [];
  for (const c of checks) {
    for (const f of c.figures) {
      if (c.code === 'wall-clock-mismatch' && f['agrees'] === true) {
        const ratio = Number(f['wall_over_span_ratio']);
        lines.push(`${c.code} passed: capture ${f['capture_id']} device ${f['device']}: llama-bench ${f['test']} avg ${formatNs(BigInt(f['wall_avg_ns'] as bigint))} is ${ratio.toFixed(4)}x the capture's steady segment span ${formatNs(BigInt(f['span_ns'] as bigint))} (agrees: within ${f['range']})`);
      }
    }
  }
  return lines.join('\n');
}

/**
 * Segments of every (capture, device) in scope, cut where the analyzer's
 * `resolveSegments` cuts them (so `check` and `--segment` agree); a capture
 * it refuses (a device without a time base, nothing timed) falls back to
 * the local splitter. Busy time (the union) per segment from SQL.
 */
export function checkSegments(store: Store, captureIds: readonly number[], t: CheckThresholds): Promise<CheckSegment[]> {
  return readOnce(store, memoKey('check-segments', captureIds, t), () => findCheckSegments(store, captureIds, t));
}

async function findCheckSegments(store: Store, captureIds: readonly number[], t: CheckThresholds): Promise<CheckSegment[]> {
  const cuts: { capture_id: number; device: number; cut_ns: bigint }[] = [];
  // every capture's devices at once (100 captures of 8 devices, one capture at a time: 700 statements)
  const { devices, refused: fallback } = await segmentCaptures(store, captureIds);
  for (const d of devices) for (const s of d.segments.slice(1)) cuts.push({ capture_id: d.capture_id, device: d.device, cut_ns: s.start_ns });
  if (fallback.length > 0) for (const c of cutsFromGaps(await store.query(TOP_GAPS_SHAPE, topGapsSql({ captureIds: fallback })), t)) cuts.push(c);
  return store.query(SEGMENT_STATS_SHAPE, segmentStatsSql({ captureIds: captureIds }, cuts));
}

/** True when any finding is an error (`tickwise check` exits 1). */
export function hasErrors(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.severity === 'error');
}

/** One line per finding: `error wall-clock-mismatch: <message>`. */
export function formatFindingLine(f: Finding): string {
  return `${f.severity} ${f.code}: ${f.message}`;
}

/**
 * The lines a verb that prints numbers about captures puts first: every
 * error finding, one line each, and a pointer to `tickwise check`. Empty
 * when there is no error. Runs the checks that need no pin or wall
 * reference (those come from `tickwise check --pin/--wall`), plus any
 * stored wall references.
 */
export async function errorFindingsHeader(store: Store, opts: CheckOptions = {}): Promise<string> {
  return errorFindingsText(await runChecks(store, { ...opts, atLeast: 'error' }));
}

/** {@link errorFindingsHeader}'s lines from findings already found. */
export function errorFindingsText(findings: readonly Finding[]): string {
  const errors = findings.filter((f) => f.severity === 'error');
  if (errors.length === 0) return '';
  return [...errors.map((f) => `!! ${formatFindingLine(f)}`), `!! ${errors.length} error finding(s): the numbers below may be wrong (tickwise check <input> for advice)`].join('\n') + '\n';
}
