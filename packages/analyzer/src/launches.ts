/**
 * Per-launch costs: what each launch of a kernel carries (rows, or
 * workgroups) against what it takes, to find launches that pay a fixed
 * latency instead of doing work (an LM head launched one row at a time
 * while the layers launch the whole batch).
 *
 * ```
 * planAnalysis (one time source per device, --segment)
 *   --launchRowsSql (+ --kernel GLOB)--> rows with workgroup counts and rows
 *   --launchGroupsSql--> per (kernel, work per launch): launches, total, mean, median
 *   per kernel: best time per unit of work over its groups (the largest-work group, usually)
 *     --> per group: ns per work, per-work ratio to the best, per-launch ratio, excess time,
 *         latency-bound when the per-work ratio >= latencyRatio or time per launch is flat in work
 *   queue_events.host_ns vs first dispatch start --> submit-to-start latency per submission
 *   host_events EXEC_CMD -> completion --> NPU submit-to-completion, commands per EXEC_CMD
 *   dispatch --correlation id--> its launch call (Kineto, recorder CUDA; see sql/work.ts)
 *     --> launch-to-start delay, launches per API and per kernel, queue depth over time,
 *         idle after which the next kernel was launched late --> the launch-bound verdict
 * ```
 */
import type { RowOf, Shape, Store } from '@tickwise/store';
import { TickwiseError, quantileSorted } from '@tickwise/time';
import { analyzerMessages } from './messages';
import { planAnalysis } from './plan';
import { byDevice, deviceKey, rowsOfBatches, type DeviceBatch } from './group';
import { isSharedDomain, whereLabel, type DevicePlan, type SelectionOptions } from './selection';
import { LAUNCH_GROUP_SHAPE, NPU_COMMAND_SHAPE, SUBMIT_LATENCY_SHAPE } from './launch-shapes';
import { kernelGlobSql } from './sql/cost';
import { launchApisSql, launchCorrelationSql, launchesPerKernelSql, launchGroupsSql, launchRowsSql, npuCommandsSql, queueDepthSql, submitLatencySql } from './sql/launches';
import { devicesOnlySql } from './sql/selection';
import { correlatedWorkSql } from './sql/work';

/** Options of {@link launches}. */
export interface LaunchesOptions extends SelectionOptions {
  /** Only kernels matching this glob (case-sensitive; `*`, `?`, `[...]`). */
  readonly kernel?: string | undefined;
  /** Rows one launch covers, for sources that carry neither rows nor workgroup counts. */
  readonly rowsPerDispatch?: number | undefined;
  /** Latency-bound when time per unit of work is at least this many times the kernel's best (default 4). */
  readonly latencyRatio?: number | undefined;
  /** Latency-bound when time per launch grows with work at most this elasticity (d log t / d log w; default 0.25; 1 = proportional). */
  readonly flatElasticity?: number | undefined;
  /** Submissions listed per device, slowest first (default 10). */
  readonly slowestSubmissions?: number | undefined;
}

/** Defaults of {@link LaunchesOptions}. */
export const LAUNCH_DEFAULTS = { latencyRatio: 4, flatElasticity: 0.25, slowestSubmissions: 10 } as const;

/** Unit of work per launch. */
export type WorkUnit = 'rows' | 'workgroups' | 'rows (given)';

/** One launch group: a kernel at one work per launch. */
export interface LaunchGroup {
  readonly capture_id: number;
  readonly device: number;
  readonly kernel: string;
  /** Rows (from the source or --rows-per-dispatch) or workgroups (x*y*z) per launch; null: unknown. */
  readonly work_per_launch: number | null;
  readonly work_unit: WorkUnit | null;
  readonly workgroup_count: readonly [number, number, number] | null;
  readonly rows_per_launch: number | null;
  readonly launches: number;
  readonly submissions: number;
  readonly total_ns: bigint;
  readonly mean_ns: number;
  readonly median_ns: number;
  readonly p10_ns: number;
  readonly p90_ns: number;
  readonly min_ns: bigint;
  readonly max_ns: bigint;
  /** mean_ns / work_per_launch. */
  readonly ns_per_work: number | null;
  /** The lowest ns_per_work among this kernel's groups (same capture, device, unit). */
  readonly best_ns_per_work: number | null;
  /** The work per launch of that best group. */
  readonly best_work_per_launch: number | null;
  /** ns_per_work / best_ns_per_work (1 for the best group). */
  readonly per_work_ratio: number | null;
  /** mean_ns / the best group's mean_ns. */
  readonly per_launch_ratio: number | null;
  /** work_per_launch / the best group's. */
  readonly work_ratio: number | null;
  /** d log(time per launch) / d log(work) from this group to the best one (1: proportional, 0: flat). */
  readonly elasticity: number | null;
  /** total_ns minus what these launches' work would take at the best time per work: the time a bigger launch would save. */
  readonly excess_ns: number;
  readonly latency_bound: boolean;
  readonly reason: string | null;
}

/** Host submit to device start of one device. */
export interface SubmitLatency {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
  /** Submissions with both a host submit time and a timed dispatch. */
  readonly submissions: number;
  readonly mean_ns: number | null;
  readonly median_ns: number | null;
  readonly p90_ns: number | null;
  readonly min_ns: bigint | null;
  readonly max_ns: bigint | null;
  /** Submissions whose first dispatch starts before the host submit time (a clock problem). */
  readonly negative: number;
  /** null when computed; else why not. */
  readonly note: string | null;
  /** The slowest submissions. */
  readonly slowest: readonly { queue: number | null; submission_id: string; submit_ns: bigint; first_start_ns: bigint; latency_ns: bigint; dispatches: number }[];
}

/** NPU commands of one hardware context. */
export interface NpuCommands {
  readonly capture_id: number;
  readonly device: number | null;
  readonly hwctx: string | null;
  readonly exec_calls: number;
  readonly commands: number;
  readonly commands_per_exec: number;
  /** EXEC_CMDs whose completion was observed. */
  readonly completed: number;
  readonly mean_submit_to_complete_ns: number | null;
  readonly median_submit_to_complete_ns: number | null;
  readonly p90_submit_to_complete_ns: number | null;
  readonly max_submit_to_complete_ns: bigint | null;
  /** Time inside the EXEC_CMD ioctl, mean. */
  readonly mean_exec_ioctl_ns: number | null;
}

/** When a device is called launch-bound (see {@link LaunchCorrelation.verdict}). */
export const LAUNCH_BOUND_RULE = {
  idleFractionMin: 0.5,
  hostWaitShareMin: 0.5,
  text: 'launch-bound: the device is idle >= 50 % of its span and >= 50 % of that idle ends with a kernel whose launch call came after the idle began (the host was late); partly launch-bound: the host-wait share holds but the device is idle less; else not launch-bound',
} as const;

/** Verdicts of {@link LaunchCorrelation}. */
export type LaunchVerdict = 'launch-bound' | 'partly launch-bound' | 'not launch-bound' | 'unknown';

/** Launch calls linked to one device's kernels (correlation ids). */
export interface LaunchCorrelation {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
  readonly kernels: number;
  /** Kernels linked to a launch call. */
  readonly linked: number;
  /** Distinct launch calls (correlation ids) among them. */
  readonly launch_calls: number;
  /** Kernels per launch call (> 1: graph launches, multi-kernel calls). */
  readonly kernels_per_launch: number | null;
  /** Device start minus launch call start. */
  readonly delay: { readonly mean_ns: number | null; readonly median_ns: number | null; readonly p90_ns: number | null; readonly p99_ns: number | null; readonly min_ns: bigint | null; readonly max_ns: bigint | null; readonly negative: number };
  readonly apis: readonly { readonly api: string; readonly op: string | null; readonly launches: number }[];
  /** The kernels with the most launches. */
  readonly per_kernel: readonly { readonly kernel: string; readonly launches: number; readonly linked: number; readonly median_delay_ns: number | null; readonly total_ns: bigint }[];
  /** Time spent at each queue depth (launched, not finished); the last bucket is "that many or more". */
  readonly queue_depth: readonly { readonly depth: number; readonly ns: bigint }[];
  readonly max_queue_depth: number;
  /** Time-weighted mean queue depth from the first launch to the last end. */
  readonly mean_queue_depth: number | null;
  readonly span_ns: bigint;
  readonly idle_ns: bigint;
  readonly idle_fraction: number | null;
  /** Idle that ended with a kernel launched after the idle began. */
  readonly host_wait_idle_ns: bigint;
  readonly host_wait_share_of_idle: number | null;
  readonly verdict: LaunchVerdict;
  /** null when computed; else why not. */
  readonly note: string | null;
}

/** Queue depths at and above this are one bucket. */
export const QUEUE_DEPTH_CAP = 8;

const LAUNCH_CORRELATION_SHAPE = {
  capture_id: 'number', device: 'number',
  rows: 'number', linked: 'number', launch_calls: 'number', mean_delay_ns: 'number?', median_delay_ns: 'number?', p90_delay_ns: 'number?', p99_delay_ns: 'number?',
  min_delay_ns: 'bigint?', max_delay_ns: 'bigint?', negative_delay: 'number', span_ns: 'bigint?', idle_ns: 'bigint', host_wait_idle_ns: 'bigint', gaps: 'number', host_wait_gaps: 'number',
} as const;

const LAUNCH_API_SHAPE = { capture_id: 'number', device: 'number', api: 'string', op: 'string?', launches: 'number' } as const;
const LAUNCH_KERNEL_SHAPE = { capture_id: 'number', device: 'number', kernel: 'string', launches: 'number', linked: 'number', median_delay_ns: 'number?', total_ns: 'bigint' } as const;
const QUEUE_DEPTH_SHAPE = { capture_id: 'number', device: 'number', depth: 'number', ns: 'bigint', max_depth: 'number' } as const;

/** A device with no rows selected: its correlation totals. */
const NO_CORRELATION_ROWS = {
  rows: 0, linked: 0, launch_calls: 0, mean_delay_ns: null, median_delay_ns: null, p90_delay_ns: null, p99_delay_ns: null,
  min_delay_ns: null, max_delay_ns: null, negative_delay: 0, span_ns: null, idle_ns: 0n, host_wait_idle_ns: 0n, gaps: 0, host_wait_gaps: 0,
};

/** Every device's launch correlation: four statements for all devices (the last three over the devices with linked rows only; the window ones per device for a few: see deviceBatches). */
async function launchCorrelations(store: Store, spec: Parameters<typeof launchRowsSql>[0], devices: readonly DevicePlan[]): Promise<LaunchCorrelation[]> {
  const all = correlatedWorkSql(spec, undefined, 'kernels');
  const batchOf = (b: DeviceBatch) => b.select((sc) => correlatedWorkSql(spec, sc, 'kernels'), all);
  const totals = new Map((await rowsOfBatches(devices, devices.length, (b) => store.query(LAUNCH_CORRELATION_SHAPE, launchCorrelationSql(batchOf(b), b.oneDevice)))).map((r) => [deviceKey(r), r]));
  const linked = devices.filter((d) => (totals.get(deviceKey(d))?.linked ?? 0) > 0);
  const rel = devicesOnlySql(all, linked, devices.length);
  const perDevice = async <S extends Shape & { capture_id: 'number'; device: 'number' }>(shape: S, sql: string) => (linked.length === 0 ? new Map<string, RowOf<S>[]>() : byDevice(await store.query(shape, sql)));
  const apis = await perDevice(LAUNCH_API_SHAPE, launchApisSql(rel));
  const perKernel = await perDevice(LAUNCH_KERNEL_SHAPE, launchesPerKernelSql(rel, 10));
  const depths = byDevice(await rowsOfBatches(linked, devices.length, (b) => store.query(QUEUE_DEPTH_SHAPE, queueDepthSql(batchOf(b), QUEUE_DEPTH_CAP, b.oneDevice))));
  return devices.map((dev) => {
    const key = deviceKey(dev);
    const t = totals.get(key) ?? NO_CORRELATION_ROWS;
    const span = t.span_ns ?? 0n;
    const idleFraction = span > 0n ? Number(t.idle_ns) / Number(span) : null;
    const base = {
      capture_id: dev.capture_id, device: dev.device, kind: dev.kind, kernels: t.rows, linked: t.linked, launch_calls: t.launch_calls,
      kernels_per_launch: t.launch_calls > 0 ? t.linked / t.launch_calls : null,
      span_ns: span, idle_ns: t.idle_ns, idle_fraction: idleFraction,
    };
    if (t.linked === 0) {
      return {
        ...base, delay: { mean_ns: null, median_ns: null, p90_ns: null, p99_ns: null, min_ns: null, max_ns: null, negative: 0 }, apis: [], per_kernel: [], queue_depth: [],
        max_queue_depth: 0, mean_queue_depth: null, host_wait_idle_ns: 0n, host_wait_share_of_idle: null, verdict: 'unknown' as const,
        note: 'no kernel is linked to a launch call (the source has no correlation ids, or no launch API records)',
      };
    }
    const depth = depths.get(key) ?? [];
    const depthTime = depth.reduce((a, d) => a + d.ns, 0n);
    const share = t.idle_ns > 0n ? Number(t.host_wait_idle_ns) / Number(t.idle_ns) : null;
    const hostLate = share !== null && share >= LAUNCH_BOUND_RULE.hostWaitShareMin;
    const verdict: LaunchVerdict = idleFraction === null ? 'unknown'
      : hostLate && idleFraction >= LAUNCH_BOUND_RULE.idleFractionMin ? 'launch-bound'
      : hostLate ? 'partly launch-bound' : 'not launch-bound';
    return {
      ...base,
      delay: { mean_ns: t.mean_delay_ns, median_ns: t.median_delay_ns, p90_ns: t.p90_delay_ns, p99_ns: t.p99_delay_ns, min_ns: t.min_delay_ns, max_ns: t.max_delay_ns, negative: t.negative_delay },
      apis: (apis.get(key) ?? []).map(({ api, op, launches }) => ({ api, op, launches })),
      per_kernel: (perKernel.get(key) ?? []).map(({ kernel, launches, linked, median_delay_ns, total_ns }) => ({ kernel, launches, linked, median_delay_ns, total_ns })),
      queue_depth: depth.map((d) => ({ depth: d.depth, ns: d.ns })),
      max_queue_depth: depth[0]?.max_depth ?? 0,
      mean_queue_depth: depthTime > 0n ? depth.reduce((a, d) => a + d.depth * Number(d.ns), 0) / Number(depthTime) : null,
      host_wait_idle_ns: t.host_wait_idle_ns, host_wait_share_of_idle: share, verdict,
      note: t.linked < t.rows ? `${t.rows - t.linked} of ${t.rows} kernels have no launch call linked` : null,
    };
  });
}

/** Result of {@link launches}. */
export interface LaunchesResult {
  readonly segment: string;
  readonly kernel: string | null;
  readonly excluded_dispatches: number;
  readonly latency_rule: string;
  /** Sorted by excess_ns (largest first), then total_ns. */
  readonly groups: readonly LaunchGroup[];
  readonly submit_latency: readonly SubmitLatency[];
  readonly npu_commands: readonly NpuCommands[];
  /** Per device: kernels linked to their launch calls, and the launch-bound verdict. */
  readonly launch_correlation: readonly LaunchCorrelation[];
  readonly launch_bound_rule: string;
}

function quantile(sorted: readonly number[], q: number): number | null {
  return sorted.length === 0 ? null : quantileSorted(sorted, q);
}

/**
 * Per-launch view of every selected device: launch groups with their work
 * and cost per unit of work, latency-bound groups flagged; submit-to-start
 * latency per device where the source has host submit times; NPU commands
 * where the source has EXEC_CMD and completion records.
 */
export async function launches(store: Store, opts: LaunchesOptions = {}): Promise<LaunchesResult> {
  const ratioMin = opts.latencyRatio ?? LAUNCH_DEFAULTS.latencyRatio;
  const flat = opts.flatElasticity ?? LAUNCH_DEFAULTS.flatElasticity;
  if (opts.rowsPerDispatch !== undefined && !(Number.isSafeInteger(opts.rowsPerDispatch) && opts.rowsPerDispatch > 0)) {
    throw new TickwiseError('usage', analyzerMessages.badRows('rows-per-dispatch', opts.rowsPerDispatch));
  }
  const plan = await planAnalysis(store, opts);
  const glob = opts.kernel ? kernelGlobSql(opts.kernel) : undefined;
  // every device from a fixed number of statements, not several per device (for a few devices, the heavy ones
  // per device: see deviceBatches)
  const groups: LaunchGroup[] = [];
  const raw = byDevice(await rowsOfBatches(plan.devices, plan.devices.length, (b) => store.query(LAUNCH_GROUP_SHAPE,
    launchGroupsSql(b.select((sc) => launchRowsSql(plan.spec, sc, glob), launchRowsSql(plan.spec, undefined, glob)), opts.rowsPerDispatch))));
  const correlation = await launchCorrelations(store, plan.spec, plan.devices);
  const submitted = await submitLatencies(store, plan.spec, plan.devices, opts.slowestSubmissions ?? LAUNCH_DEFAULTS.slowestSubmissions);
  const latency: SubmitLatency[] = [];
  plan.devices.forEach((dev, i) => {
    // a loop, not push(...): a spread of 200k groups (kernels named per template instance) overflows the call stack
    for (const g of evaluateGroups(dev.capture_id, dev.device, raw.get(deviceKey(dev)) ?? [], ratioMin, flat)) groups.push(g);
    const lc = correlation[i]!;
    const sl = submitted[i]!;
    // a source with launch calls but no submissions: say where the launch numbers are instead
    latency.push(sl.submissions === 0 && lc.linked > 0 ? { ...sl, note: `no submissions in this source; its ${lc.linked} kernels are linked to launch calls instead (launch-to-start delay below)` } : sl);
  });
  if (opts.kernel && groups.length === 0) {
    throw new TickwiseError('nothing-selected', analyzerMessages.costNoMatch(opts.kernel, []));
  }
  groups.sort((a, b) => b.excess_ns - a.excess_ns || (b.total_ns > a.total_ns ? 1 : b.total_ns < a.total_ns ? -1 : 0) || a.kernel.localeCompare(b.kernel));
  // NPU commands live in host_events: a capture may have them and no timed dispatch
  const captureIds = opts.captureId !== undefined
    ? [opts.captureId]
    : (await store.query({ capture_id: 'number' }, 'SELECT capture_id FROM captures ORDER BY capture_id')).map((r) => r.capture_id);
  return {
    segment: plan.segment,
    kernel: opts.kernel ?? null,
    excluded_dispatches: plan.excluded_dispatches,
    latency_rule: `latency-bound: time per unit of work >= ${ratioMin}x the same kernel's best (at more work per launch), or time per launch grows with work at an elasticity <= ${flat} (flat)`,
    groups,
    submit_latency: latency,
    npu_commands: await npuCommands(store, captureIds),
    launch_correlation: correlation,
    launch_bound_rule: LAUNCH_BOUND_RULE.text,
  };
}

/** Per-work numbers and flags of one device's groups (pure). */
export function evaluateGroups(
  capture_id: number, device: number, raw: readonly { kernel: string; rows_src: number | null; wx: number | null; wy: number | null; wz: number | null; work: number | null; work_unit: string | null; launches: number; submissions: number; total_ns: bigint; mean_ns: number; median_ns: number; p10_ns: number; p90_ns: number; min_ns: bigint; max_ns: bigint }[],
  ratioMin: number, flat: number,
): LaunchGroup[] {
  const nsPerWork = (r: (typeof raw)[number]) => (r.work !== null && r.work > 0 ? r.mean_ns / r.work : null);
  // the best (lowest time per unit of work) group of each kernel and unit
  const best = new Map<string, (typeof raw)[number]>();
  for (const r of raw) {
    const v = nsPerWork(r);
    if (v === null) continue;
    const key = `${r.kernel}\u0000${r.work_unit}`;
    const b = best.get(key);
    if (!b || v < nsPerWork(b)! || (v === nsPerWork(b) && r.work! > b.work!)) best.set(key, r);
  }
  return raw.map((r): LaunchGroup => {
    const v = nsPerWork(r);
    const b = best.get(`${r.kernel}\u0000${r.work_unit}`);
    const bv = b ? nsPerWork(b) : null;
    const perWork = v !== null && bv !== null && bv > 0 ? v / bv : null;
    const perLaunch = b && b.mean_ns > 0 ? r.mean_ns / b.mean_ns : null;
    const workRatio = b && r.work !== null && b.work ? r.work / b.work : null;
    const elasticity = b && b !== r && workRatio !== null && workRatio !== 1 && perLaunch !== null && perLaunch > 0 ? Math.log(perLaunch) / Math.log(workRatio) : null;
    const excess = bv !== null && r.work !== null ? Math.max(0, Number(r.total_ns) - r.launches * r.work * bv) : 0;
    const reasons: string[] = [];
    if (b && b !== r && perWork !== null && perWork >= ratioMin) {
      reasons.push(`${perWork.toFixed(1)}x the time per ${unitWord(r.work_unit)} of the same kernel at ${b.work} ${unitWord(r.work_unit)}s per launch`);
    }
    if (b && b !== r && elasticity !== null && workRatio !== null && workRatio < 1 && elasticity <= flat) {
      reasons.push(`time per launch nearly flat in work (${(1 / workRatio).toFixed(1)}x the work takes ${(1 / perLaunch!).toFixed(2)}x the time: elasticity ${elasticity.toFixed(2)})`);
    }
    const wg = r.wx !== null && r.wy !== null && r.wz !== null ? ([r.wx, r.wy, r.wz] as const) : null;
    return {
      capture_id, device, kernel: r.kernel, work_per_launch: r.work, work_unit: (r.work_unit as WorkUnit | null), workgroup_count: wg,
      rows_per_launch: r.rows_src ?? (r.work_unit === 'rows (given)' ? r.work : null),
      launches: r.launches, submissions: r.submissions, total_ns: r.total_ns, mean_ns: r.mean_ns, median_ns: r.median_ns, p10_ns: r.p10_ns, p90_ns: r.p90_ns,
      min_ns: r.min_ns, max_ns: r.max_ns,
      ns_per_work: v, best_ns_per_work: bv, best_work_per_launch: b?.work ?? null, per_work_ratio: perWork, per_launch_ratio: perLaunch, work_ratio: workRatio,
      elasticity, excess_ns: Math.round(excess), latency_bound: reasons.length > 0, reason: reasons.length ? reasons.join('; ') : null,
    };
  });
}

function unitWord(u: string | null): string {
  return u === 'workgroups' ? 'workgroup' : 'row';
}

/** Every device's submit-to-start latency: one statement over the devices on a shared host clock. */
async function submitLatencies(
  store: Store, spec: Parameters<typeof launchRowsSql>[0], devices: readonly DevicePlan[], slowest: number,
): Promise<SubmitLatency[]> {
  const shared = devices.filter((d) => isSharedDomain(d.clock_domain));
  const rowsOf = shared.length === 0 ? new Map<string, never[]>()
    : byDevice(await store.query(SUBMIT_LATENCY_SHAPE, submitLatencySql(devicesOnlySql(launchRowsSql(spec), shared, devices.length))));
  return devices.map((dev) => {
    const base = { capture_id: dev.capture_id, device: dev.device, kind: dev.kind };
    const empty = { submissions: 0, mean_ns: null, median_ns: null, p90_ns: null, min_ns: null, max_ns: null, negative: 0, slowest: [] };
    if (!isSharedDomain(dev.clock_domain)) {
      return { ...base, ...empty, note: `${whereLabel(dev)} is on ${dev.clock_domain}: its device times cannot be compared with host submit times` };
    }
    const rows = rowsOf.get(deviceKey(dev)) ?? [];
    if (rows.length === 0) return { ...base, ...empty, note: 'no host submit times (queue_events.host_ns) for the submissions of its dispatches' };
    const lat = rows.map((r) => Number(r.latency_ns)).sort((a, b) => a - b);
    return {
      ...base,
      submissions: rows.length,
      mean_ns: lat.reduce((a, b) => a + b, 0) / lat.length,
      median_ns: quantile(lat, 0.5),
      p90_ns: quantile(lat, 0.9),
      min_ns: rows.reduce((m, r) => (r.latency_ns < m ? r.latency_ns : m), rows[0]!.latency_ns),
      max_ns: rows.reduce((m, r) => (r.latency_ns > m ? r.latency_ns : m), rows[0]!.latency_ns),
      negative: rows.filter((r) => r.latency_ns < 0n).length,
      note: null,
      slowest: [...rows].sort((a, b) => (b.latency_ns > a.latency_ns ? 1 : b.latency_ns < a.latency_ns ? -1 : 0)).slice(0, slowest)
        .map((r) => ({ queue: r.queue, submission_id: r.submission_id, submit_ns: r.submit_ns, first_start_ns: r.first_start_ns, latency_ns: r.latency_ns, dispatches: r.dispatches })),
    };
  });
}

async function npuCommands(store: Store, captureIds: readonly number[]): Promise<NpuCommands[]> {
  if (captureIds.length === 0) return [];
  const rows = await store.query(NPU_COMMAND_SHAPE, npuCommandsSql(captureIds));
  const by = new Map<string, (typeof rows)[number][]>();
  for (const r of rows) {
    const k = `${r.capture_id}\u0000${r.device}\u0000${r.hwctx}`;
    by.set(k, [...(by.get(k) ?? []), r]);
  }
  const out: NpuCommands[] = [];
  for (const list of by.values()) {
    const done = list.filter((r) => r.submit_to_complete_ns !== null).map((r) => r.submit_to_complete_ns!);
    const s = done.map(Number).sort((a, b) => a - b);
    const ioctl = list.map((r) => r.exec_ioctl_ns).filter((x): x is bigint => x !== null).map(Number);
    const commands = list.reduce((a, r) => a + r.cmd_count, 0);
    out.push({
      capture_id: list[0]!.capture_id, device: list[0]!.device, hwctx: list[0]!.hwctx,
      exec_calls: list.length, commands, commands_per_exec: commands / list.length, completed: done.length,
      mean_submit_to_complete_ns: s.length ? s.reduce((a, b) => a + b, 0) / s.length : null,
      median_submit_to_complete_ns: quantile(s, 0.5), p90_submit_to_complete_ns: quantile(s, 0.9),
      max_submit_to_complete_ns: done.length ? done.reduce((m, x) => (x > m ? x : m), done[0]!) : null,
      mean_exec_ioctl_ns: ioctl.length ? ioctl.reduce((a, b) => a + b, 0) / ioctl.length : null,
    });
  }
  return out;
}
