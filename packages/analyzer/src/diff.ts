/**
 * Comparing two runs, or two parts of one: two captures, two segments of
 * captures, or two kernel groups (globs) of one capture. Per kernel:
 * launches, total, mean and median per launch and work per launch, with
 * deltas and ratios (B over A); busy, idle and gap shares side by side;
 * which libraries changed build; which conditions differ.
 *
 * ```
 * side A = (capture, segment, kernel glob?)    side B = (...)
 *   each side: planAnalysis --launchRowsSql (+ glob)--> kernelSideSql per device
 *              gaps() per device (when the sides are different timelines)
 *   pair kernels by (device, kernel) [kernel groups: one row "A vs B"]
 *     --> deltas, ratios; sorted by |total B - total A| (what moved the wall time most)
 *   provenance rows of A vs B by (role, name): build_id, sha256, size, path, markers
 *   conditions of A vs B: compareConditions (exact keys, measured keys beyond tolerance)
 *   runChecks(busy-machine, driver-errors, thermal, conditions-differ) on the two captures
 * ```
 */
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { conditionRowsSql, compareConditions, CONDITION_ROW_SHAPE, type ConditionDifference } from './checks/conditions';
import { runChecks } from './checks/run';
import type { CheckCode, CheckThresholds, Finding } from './checks/types';
import { DEFAULT_GAP_THRESHOLD_NS, gaps, type GapScope } from './gaps';
import { KERNEL_SIDE_SHAPE, N_SHAPE } from './launch-shapes';
import { planAnalysis } from './plan';
import { kernelGlobSql } from './sql/cost';
import { unionLengthSql } from './sql/intervals';
import { kernelSideSql, launchRowsSql } from './sql/launches';
import { sqlInt } from './sql/quote';

/** One side of a diff. */
export interface DiffSide {
  readonly captureId: number;
  /** `all` (default), `first`, `last`, `steady` or a segment index. */
  readonly segment?: string | undefined;
  /** A kernel glob: this side is that kernel group (both sides need one). */
  readonly kernel?: string | undefined;
}

/** Options of {@link diff}. */
export interface DiffOptions {
  readonly a: DiffSide;
  readonly b: DiffSide;
  /** Only this device ordinal (on both sides). */
  readonly device?: number | undefined;
  readonly reps?: number | undefined;
  /** Gap threshold for the gap shares (default 200 us). */
  readonly thresholdNs?: bigint | undefined;
  /** Rows per launch where the source carries neither rows nor workgroup counts. */
  readonly rowsPerDispatch?: number | undefined;
  /** Threshold overrides of the condition checks. */
  readonly thresholds?: Partial<CheckThresholds> | undefined;
  /** Times within this relative distance count as the same (default {@link DIFF_TOLERANCE_FRACTION}); counts must match exactly. */
  readonly toleranceFraction?: number | undefined;
}

/**
 * Default relative tolerance of "the same": 0.01 %. Two imports of one run
 * agree exactly; two captures of the same work differ by a few ns per
 * dispatch through their own clock fits, which is not a change.
 */
export const DIFF_TOLERANCE_FRACTION = 1e-4;

/** What is compared. */
export const DiffMode = {
  captures: 'two captures',
  segments: 'two segment selections of one capture',
  kernels: 'two kernel groups (globs)',
} as const;
/** Key of {@link DiffMode}. */
export type DiffMode = keyof typeof DiffMode;

/** One kernel (or kernel group) on one side. */
export interface KernelSide {
  readonly device: number;
  readonly count: number;
  readonly total_ns: bigint;
  readonly mean_ns: number;
  readonly median_ns: number;
  /** Mean rows or workgroups per launch (null: unknown). */
  readonly work_per_launch: number | null;
  readonly work_unit: string | null;
  /** Distinct work sizes among its launches. */
  readonly work_levels: number;
  /** mean_ns / work_per_launch. */
  readonly ns_per_work: number | null;
  /** total_ns / the device's busy time (union of its selected dispatches). */
  readonly share_of_busy: number | null;
}

/** One kernel compared. Ratios are B / A. */
export interface KernelDiff {
  readonly device: number;
  readonly kernel: string;
  readonly status: 'same' | 'changed' | 'only_a' | 'only_b';
  readonly a: KernelSide | null;
  readonly b: KernelSide | null;
  readonly count_delta: number;
  readonly total_delta_ns: bigint;
  readonly mean_delta_ns: number | null;
  readonly median_delta_ns: number | null;
  readonly count_ratio: number | null;
  readonly total_ratio: number | null;
  /** Per-launch ratio (mean). */
  readonly mean_ratio: number | null;
  readonly median_ratio: number | null;
  readonly work_ratio: number | null;
  /** Time per unit of work, B over A (same unit only). */
  readonly ns_per_work_ratio: number | null;
}

/** Busy, idle and gaps of one device on one side. */
export interface TimelineSide {
  readonly dispatches: number;
  readonly segments: number;
  readonly span_ns: bigint;
  readonly busy_ns: bigint;
  readonly idle_ns: bigint;
  readonly busy_fraction: number | null;
  readonly idle_fraction: number | null;
  readonly gap_count: number;
  readonly gaps_over_threshold: number;
  /** Share of idle time in gaps longer than the threshold. */
  readonly over_threshold_share_of_idle: number | null;
  /** Share of idle time between submissions. */
  readonly between_submissions_share_of_idle: number | null;
}

/** One device's timeline compared. */
export interface TimelineDiff {
  readonly device: number;
  readonly kind: string;
  readonly a: TimelineSide | null;
  readonly b: TimelineSide | null;
  readonly span_delta_ns: bigint | null;
  readonly busy_delta_ns: bigint | null;
  readonly idle_delta_ns: bigint | null;
  /** Percentage points / 100 (b - a). */
  readonly idle_fraction_delta: number | null;
  readonly same: boolean;
}

/** One library's identity. */
export interface LibraryIdentity {
  readonly path: string | null;
  readonly build_id: string | null;
  readonly sha256: string | null;
  readonly size_bytes: number | null;
  readonly markers: string | null;
}

/** A library that differs between the two captures. */
export interface ProvenanceDiff {
  readonly role: string | null;
  readonly name: string;
  readonly status: 'changed' | 'only_a' | 'only_b';
  /** Fields that differ: build_id, sha256, size_bytes, path, markers. */
  readonly changed: readonly string[];
  readonly a: LibraryIdentity | null;
  readonly b: LibraryIdentity | null;
}

/** A side as the result names it. */
export interface DiffSideFacts {
  readonly capture_id: number;
  readonly segment: string;
  readonly kernel: string | null;
}

/** Result of {@link diff}. */
export interface DiffResult {
  readonly mode: DiffMode;
  readonly a: DiffSideFacts;
  readonly b: DiffSideFacts;
  readonly sort_rule: string;
  readonly threshold_ns: bigint;
  readonly kernels: readonly KernelDiff[];
  /** Empty when both sides are one timeline (kernel groups of one capture and segment). */
  readonly timeline: readonly TimelineDiff[];
  readonly provenance: readonly ProvenanceDiff[];
  readonly conditions: readonly ConditionDifference[];
  /** Findings of busy-machine, driver-errors, thermal and conditions-differ for the two captures. */
  readonly findings: readonly Finding[];
  /** Kernels, timelines, libraries and conditions that differ. */
  readonly differences: number;
  /** No kernel, timeline, library or condition differs (times within tolerance_fraction). */
  readonly identical: boolean;
  readonly tolerance_fraction: number;
  readonly notes: readonly string[];
}

/** The condition checks a diff runs. */
export const DIFF_CHECK_CODES: readonly CheckCode[] = ['busy-machine', 'driver-errors', 'thermal', 'conditions-differ'];

/** How kernels are sorted. */
export const DIFF_SORT_RULE = 'by |total_ns B - total_ns A| (the kernels that moved the summed device time most first), then by name';

const ratio = (b: number | null | undefined, a: number | null | undefined) => (a !== null && a !== undefined && b !== null && b !== undefined && a !== 0 ? b / a : null);
const absBig = (x: bigint) => (x < 0n ? -x : x);

async function sideKernels(store: Store, side: DiffSide, opts: DiffOptions, label: string | undefined): Promise<(KernelSide & { kernel: string })[]> {
  const plan = await planAnalysis(store, { captureId: side.captureId, device: opts.device, segment: side.segment, reps: opts.reps });
  const out: (KernelSide & { kernel: string })[] = [];
  for (const dev of plan.devices) {
    const scope = { capture_id: dev.capture_id, device: dev.device, queue: null };
    const busy = (await store.query(N_SHAPE, `SELECT ${unionLengthSql(`(${launchRowsSql(plan.spec, scope)})`)} AS n`))[0]?.n ?? 0n;
    const rows = await store.query(KERNEL_SIDE_SHAPE, kernelSideSql(launchRowsSql(plan.spec, scope, side.kernel ? kernelGlobSql(side.kernel) : undefined), opts.rowsPerDispatch, label));
    for (const r of rows) {
      out.push({
        device: dev.device, kernel: r.kernel, count: r.count, total_ns: r.total_ns, mean_ns: r.mean_ns, median_ns: r.median_ns,
        work_per_launch: r.work_per_launch, work_unit: r.work_unit, work_levels: r.work_levels,
        ns_per_work: r.work_per_launch ? r.mean_ns / r.work_per_launch : null,
        share_of_busy: busy > 0n ? Number(r.total_ns) / Number(busy) : null,
      });
    }
  }
  return out;
}

/** True when x and y are within `tol` of each other, relative to the larger. */
function near(x: number | bigint, y: number | bigint, tol: number): boolean {
  const p = Number(x);
  const q = Number(y);
  return p === q || Math.abs(p - q) <= tol * Math.max(Math.abs(p), Math.abs(q));
}

function kernelDiff(device: number, kernel: string, a: KernelSide | null, b: KernelSide | null, tol: number): KernelDiff {
  const same = a !== null && b !== null && a.count === b.count && near(a.total_ns, b.total_ns, tol) && near(a.mean_ns, b.mean_ns, tol) &&
    near(a.median_ns, b.median_ns, tol) && (a.work_per_launch ?? -1) === (b.work_per_launch ?? -1) && a.work_unit === b.work_unit;
  const sameUnit = a?.work_unit !== null && a?.work_unit === b?.work_unit;
  return {
    device, kernel,
    status: a === null ? 'only_b' : b === null ? 'only_a' : same ? 'same' : 'changed',
    a, b,
    count_delta: (b?.count ?? 0) - (a?.count ?? 0),
    total_delta_ns: (b?.total_ns ?? 0n) - (a?.total_ns ?? 0n),
    mean_delta_ns: a && b ? b.mean_ns - a.mean_ns : null,
    median_delta_ns: a && b ? b.median_ns - a.median_ns : null,
    count_ratio: ratio(b?.count, a?.count),
    total_ratio: a && b ? ratio(Number(b.total_ns), Number(a.total_ns)) : null,
    mean_ratio: ratio(b?.mean_ns, a?.mean_ns),
    median_ratio: ratio(b?.median_ns, a?.median_ns),
    work_ratio: sameUnit ? ratio(b?.work_per_launch, a?.work_per_launch) : null,
    ns_per_work_ratio: sameUnit ? ratio(b?.ns_per_work, a?.ns_per_work) : null,
  };
}

function timelineSide(s: GapScope): TimelineSide {
  const share = (x: bigint, of: bigint) => (of > 0n ? Number(x) / Number(of) : null);
  return {
    dispatches: s.dispatches, segments: s.segments, span_ns: s.span_ns, busy_ns: s.busy_ns, idle_ns: s.idle_ns,
    busy_fraction: share(s.busy_ns, s.span_ns), idle_fraction: s.idle_fraction, gap_count: s.gap_count,
    gaps_over_threshold: s.gaps_over_threshold.count, over_threshold_share_of_idle: s.gaps_over_threshold.share_of_idle,
    between_submissions_share_of_idle: share(s.between_submissions.idle_ns, s.idle_ns),
  };
}

async function sideTimeline(store: Store, side: DiffSide, opts: DiffOptions): Promise<Map<number, { kind: string; t: TimelineSide }>> {
  const r = await gaps(store, { captureId: side.captureId, device: opts.device, segment: side.segment, reps: opts.reps, thresholdNs: opts.thresholdNs });
  return new Map(r.scopes.filter((s) => s.queue === null).map((s) => [s.device, { kind: s.kind, t: timelineSide(s) }]));
}

const PROVENANCE_SHAPE = {
  role: 'string?', name: 'string?', path: 'string?', size_bytes: 'number?', build_id: 'string?', sha256: 'string?', markers: 'string?',
} as const;

async function provenanceDiff(store: Store, a: number, b: number): Promise<ProvenanceDiff[]> {
  const q = (id: number) => store.query(PROVENANCE_SHAPE,
    `SELECT role, name, path, size_bytes, build_id, sha256, markers::VARCHAR AS markers FROM provenance WHERE capture_id = ${sqlInt(id)} ORDER BY role, name, path`);
  const key = (r: { role: string | null; name: string | null; path: string | null }) => `${r.role ?? ''}\u0000${r.name ?? r.path ?? ''}`;
  const ident = (r: (Awaited<ReturnType<typeof q>>)[number]): LibraryIdentity => ({ path: r.path, build_id: r.build_id, sha256: r.sha256, size_bytes: r.size_bytes, markers: r.markers });
  const ma = new Map((await q(a)).map((r) => [key(r), r]));
  const mb = new Map((await q(b)).map((r) => [key(r), r]));
  const out: ProvenanceDiff[] = [];
  for (const k of [...new Set([...ma.keys(), ...mb.keys()])].sort()) {
    const x = ma.get(k);
    const y = mb.get(k);
    const name = (x?.name ?? y?.name ?? x?.path ?? y?.path) ?? '';
    const role = x?.role ?? y?.role ?? null;
    if (!x || !y) {
      out.push({ role, name, status: x ? 'only_a' : 'only_b', changed: [], a: x ? ident(x) : null, b: y ? ident(y) : null });
      continue;
    }
    const changed = (['build_id', 'sha256', 'size_bytes', 'path', 'markers'] as const).filter((f) => x[f] !== y[f]);
    if (changed.length) out.push({ role, name, status: 'changed', changed, a: ident(x), b: ident(y) });
  }
  // libraries whose build changed first
  return out.sort((p, q2) => Number(q2.changed.includes('build_id') || q2.changed.includes('sha256')) - Number(p.changed.includes('build_id') || p.changed.includes('sha256')));
}

/**
 * Compares side A with side B (see the module comment). `diff` of a side
 * with itself reports no differences.
 */
export async function diff(store: Store, opts: DiffOptions): Promise<DiffResult> {
  const { a, b } = opts;
  if ((a.kernel === undefined) !== (b.kernel === undefined)) {
    throw new TickwiseError('usage', 'kernel groups are compared in pairs: give both --a-kernel GLOB and --b-kernel GLOB');
  }
  const segA = a.segment ?? 'all';
  const segB = b.segment ?? 'all';
  const mode: DiffMode = a.kernel !== undefined ? 'kernels' : a.captureId === b.captureId && segA !== segB ? 'segments' : 'captures';
  const notes: string[] = [];
  const tol = opts.toleranceFraction ?? DIFF_TOLERANCE_FRACTION;
  const label = mode === 'kernels' ? `${a.kernel} vs ${b.kernel}` : undefined;

  const ka = await sideKernels(store, a, opts, label);
  const kb = await sideKernels(store, b, opts, label);
  if (mode === 'kernels') {
    if (ka.length === 0) throw new TickwiseError('nothing-selected', `--a-kernel ${a.kernel}: no selected dispatch of capture ${a.captureId} matches (a case-sensitive glob: * ? [..])`);
    if (kb.length === 0) throw new TickwiseError('nothing-selected', `--b-kernel ${b.kernel}: no selected dispatch of capture ${b.captureId} matches (a case-sensitive glob: * ? [..])`);
  }
  const kernels: KernelDiff[] = [];
  if (mode === 'kernels' && ka.length === 1 && kb.length === 1 && ka[0]!.device !== kb[0]!.device) {
    // one group on each of two devices (an iGPU kernel against an NPU one): pair them
    notes.push(`group A runs on device ${ka[0]!.device}, group B on device ${kb[0]!.device}; the row is under device ${ka[0]!.device}`);
    kernels.push(kernelDiff(ka[0]!.device, label!, ka[0]!, kb[0]!, tol));
  } else {
    const key = (k: { device: number; kernel: string }) => `${k.device}\u0000${k.kernel}`;
    const ma = new Map(ka.map((k) => [key(k), k]));
    const mb = new Map(kb.map((k) => [key(k), k]));
    for (const k of new Set([...ma.keys(), ...mb.keys()])) {
      const x = ma.get(k) ?? null;
      const y = mb.get(k) ?? null;
      const r = (x ?? y)!;
      kernels.push(kernelDiff(r.device, r.kernel, x, y, tol));
    }
  }
  kernels.sort((p, q) => {
    const d = absBig(q.total_delta_ns) - absBig(p.total_delta_ns);
    return d > 0n ? 1 : d < 0n ? -1 : p.device - q.device || p.kernel.localeCompare(q.kernel);
  });

  // busy/idle/gaps: only when the two sides are different timelines
  const timeline: TimelineDiff[] = [];
  const thresholdNs: bigint = opts.thresholdNs ?? DEFAULT_GAP_THRESHOLD_NS;
  if (a.captureId !== b.captureId || segA !== segB) {
    const ta = await sideTimeline(store, a, opts);
    const tb = await sideTimeline(store, b, opts);
    for (const device of [...new Set([...ta.keys(), ...tb.keys()])].sort((x, y) => x - y)) {
      const x = ta.get(device)?.t ?? null;
      const y = tb.get(device)?.t ?? null;
      const same = x !== null && y !== null && x.dispatches === y.dispatches && x.gap_count === y.gap_count && x.gaps_over_threshold === y.gaps_over_threshold &&
        near(x.span_ns, y.span_ns, tol) && Math.abs(Number(y.busy_ns - x.busy_ns)) <= tol * Number(x.span_ns > y.span_ns ? x.span_ns : y.span_ns) &&
        Math.abs(Number(y.idle_ns - x.idle_ns)) <= tol * Number(x.span_ns > y.span_ns ? x.span_ns : y.span_ns);
      timeline.push({
        device, kind: ta.get(device)?.kind ?? tb.get(device)?.kind ?? 'unknown', a: x, b: y,
        span_delta_ns: x && y ? y.span_ns - x.span_ns : null,
        busy_delta_ns: x && y ? y.busy_ns - x.busy_ns : null,
        idle_delta_ns: x && y ? y.idle_ns - x.idle_ns : null,
        idle_fraction_delta: x && y && x.idle_fraction !== null && y.idle_fraction !== null ? y.idle_fraction - x.idle_fraction : null,
        same,
      });
      if (x && y && x.segments !== y.segments) {
        notes.push(`device ${device}: side A adds up ${x.segments} segment(s), side B ${y.segments}: totals compare unlike amounts of work (choose one segment each, or --segment steady with equal repetitions)`);
      }
    }
  } else {
    notes.push('both groups are from one capture and segment selection: one timeline, so busy/idle/gaps are not compared');
  }

  const provenance = a.captureId !== b.captureId ? await provenanceDiff(store, a.captureId, b.captureId) : [];
  let conditions: ConditionDifference[] = [];
  if (a.captureId !== b.captureId) {
    const ca = await store.query(CONDITION_ROW_SHAPE, conditionRowsSql({ captureIds: [a.captureId] }));
    const cb = await store.query(CONDITION_ROW_SHAPE, conditionRowsSql({ captureIds: [b.captureId] }));
    if (ca.length === 0 || cb.length === 0) {
      const none = [ca.length === 0 ? a.captureId : null, cb.length === 0 ? b.captureId : null].filter((x) => x !== null);
      notes.push(`no conditions recorded for capture ${none.join(' and ')} (import --conditions-from-host, or tickwise capture): conditions not compared`);
    } else {
      conditions = compareConditions(ca, cb);
    }
  }
  const findings = await runChecks(store, {
    captureIds: [...new Set([a.captureId, b.captureId])],
    codes: DIFF_CHECK_CODES,
    ...(opts.thresholds ? { thresholds: opts.thresholds } : {}),
  });

  const differences = kernels.filter((k) => k.status !== 'same').length + timeline.filter((t) => !t.same).length + provenance.length + conditions.length;
  return {
    mode,
    a: { capture_id: a.captureId, segment: segA, kernel: a.kernel ?? null },
    b: { capture_id: b.captureId, segment: segB, kernel: b.kernel ?? null },
    sort_rule: DIFF_SORT_RULE,
    threshold_ns: thresholdNs,
    kernels,
    timeline,
    provenance,
    conditions,
    findings,
    differences,
    identical: differences === 0,
    tolerance_fraction: tol,
    notes,
  };
}
