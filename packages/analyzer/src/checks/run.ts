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
import type { Store } from '@tickwise/store';
import { isTickwiseError } from '@tickwise/time';
import { resolveSegments } from '../segments';
import { SEGMENT_STATS_SHAPE, TOP_GAPS_SHAPE, cutsFromGaps, segmentStatsSql, topGapsSql } from './segments-local';
import { CHECK_RULES } from './registry';
import {
  DEFAULT_THRESHOLDS, type CheckCode, type CheckOptions, type CheckScope, type CheckSegment, type CheckThresholds, type Finding, type FindingSeverity, type RuleContext,
} from './types';

const SEVERITY_ORDER: Record<FindingSeverity, number> = { error: 0, warning: 1, info: 2 };

/** Runs every rule (or `opts.codes`) and returns the findings, errors first. */
export async function runChecks(store: Store, opts: CheckOptions = {}): Promise<Finding[]> {
  const thresholds = { ...DEFAULT_THRESHOLDS, ...(opts.thresholds ?? {}) };
  const ids = opts.captureIds
    ? [...opts.captureIds]
    : (await store.query({ capture_id: 'number' }, 'SELECT capture_id FROM captures ORDER BY capture_id')).map((r) => r.capture_id);
  const scope: CheckScope = { captureIds: ids };
  const ctx: RuleContext = {
    thresholds,
    pin: opts.pin ?? null,
    wallRefs: opts.wallRefs ?? [],
    segments: await checkSegments(store, ids, thresholds),
    captureIds: ids,
  };
  const codes = opts.codes ?? (Object.keys(CHECK_RULES) as CheckCode[]);
  const findings: Finding[] = [];
  for (const code of codes) {
    const rule = CHECK_RULES[code];
    const rows = rule.sql ? await store.rows(rule.sql(scope)) : [];
    findings.push(...rule.evaluate(rows, ctx));
  }
  // stable: rule order within a severity
  return findings
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY_ORDER[a.f.severity] - SEVERITY_ORDER[b.f.severity] || a.i - b.i)
    .map(({ f }) => f);
}

/**
 * Segments of every (capture, device) in scope, cut where the analyzer's
 * `resolveSegments` cuts them (so `check` and `--segment` agree); a capture
 * it refuses (a device without a time base, nothing timed) falls back to
 * the local splitter. Busy time (the union) per segment from SQL.
 */
export async function checkSegments(store: Store, captureIds: readonly number[], t: CheckThresholds): Promise<CheckSegment[]> {
  const cuts: { capture_id: number; device: number; cut_ns: bigint }[] = [];
  const fallback: number[] = [];
  for (const id of captureIds) {
    try {
      const r = await resolveSegments(store, { captureId: id, segment: 'all' });
      for (const d of r.devices) for (const s of d.segments.slice(1)) cuts.push({ capture_id: d.capture_id, device: d.device, cut_ns: s.start_ns });
    } catch (e) {
      if (!isTickwiseError(e)) throw e;
      fallback.push(id);
    }
  }
  if (fallback.length > 0) cuts.push(...cutsFromGaps(await store.query(TOP_GAPS_SHAPE, topGapsSql({ captureIds: fallback })), t));
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
  const errors = (await runChecks(store, opts)).filter((f) => f.severity === 'error');
  if (errors.length === 0) return '';
  return [...errors.map((f) => `!! ${formatFindingLine(f)}`), `!! ${errors.length} error finding(s): the numbers below may be wrong (tickwise check <input> for advice)`].join('\n') + '\n';
}
