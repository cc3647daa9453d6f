/**
 * Collecting a report from a store: the analyzer's numbers, arranged for
 * the page. The entry point of `tickwise report`.
 *
 * ```
 * store ──provenanceLines, runChecks──────────────> provenance, findings (top of the page)
 *       ──planSources, gaps, overlap, segments────> one ReportDevice per (capture, device)
 *       ──timelineIntervalsSql (all devices)──────> busy intervals, at most maxIntervals each
 *       ──gapHistogramSql (all devices)───────────> log2 buckets, idle by class
 *       ──kernelStats (steady segments if any)────> kernel breakdown (all devices in one call)
 *       ──rowGroupCost (per GEMM kernel)──────────> per-row-group cost table
 *       ──resolveCeiling─> ceiling() ─────────────> speedup curve, optimum, required tile
 *   = ReportData ──> reportHtml | reportMarkdown (pure)
 * ```
 */
import {
  byDevice, DEFAULT_GAP_THRESHOLD_NS, deviceKey, gaps, rowsOfBatches, type DeviceBatch, gemmShapeFromName, kernelStats, overlap, planAnalysis, planSources,
  provenanceLines, rowGroupCost, runChecks, segments, selectionSql, type Finding, type IdleBreakdown,
} from '@tickwise/analyzer';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { reportMessages as msg } from '../messages';
import { GAP_HISTOGRAM_SHAPE, gapHistogramSql } from '../sql/gap-histogram';
import { TIMELINE_INTERVAL_SHAPE, timelineIntervalsSql } from '../sql/timeline';
import { globLiteral, resolveCeiling, type CeilingOptions } from './ceiling-inputs';
import type { CostRow, HistogramBar, ReportCeiling, ReportData, ReportDevice, ReportKernel, ReportSegment, TimelineInterval } from './model';
import { coverageOf, timelineGroups } from './groups';
import { reportVerdict } from './verdict';

/** Options of {@link collectReport}. */
export interface ReportOptions {
  readonly title?: string | undefined;
  /** The gap threshold marked on the histogram (default 200 us). */
  readonly thresholdNs?: bigint | undefined;
  /** Most timeline intervals per device (default 2000). */
  readonly maxIntervals?: number | undefined;
  /** Ceiling inputs; null leaves the ceiling out. */
  readonly ceiling?: CeilingOptions | null | undefined;
  /** Weight parameters and prompt tokens, for the FLOP reading of the cost table. */
  readonly params?: number | undefined;
  readonly tokens?: number | undefined;
}

/** Default most intervals per device on the timeline. */
export const DEFAULT_MAX_INTERVALS = 2000;

const KIND_NAME: Record<string, string> = { gpu: 'GPU', npu: 'NPU', cpu: 'CPU', other: 'accelerator' };

/** An integrated GPU by its name (Radeon 780M/890M/8060S..., gfx1103/gfx115x, Strix/Phoenix APUs, "Radeon Graphics"). */
const INTEGRATED = /\b(igpu|integrated|apu|strix|phoenix|hawk ?point|krackan|radeon\s*(\(tm\)\s*)?graphics|radeon\s*(\d{3,4}[ms])|gfx11(0[3]|5\d))\b/i;

/**
 * The word a device is called by: `iGPU` for a GPU named as integrated, or a
 * GPU with no name in a capture of this project's home ground (IREE/recorder
 * captures of a Ryzen AI machine, which do not name it); `GPU` for any other
 * (an H200 is not an iGPU); NPU, CPU, accelerator.
 */
export function deviceKindName(kind: string, name: string | null, format: string | null): string {
  if (kind !== 'gpu') return KIND_NAME[kind] ?? kind;
  if (name !== null && name !== '') return INTEGRATED.test(name) ? 'iGPU' : 'GPU';
  return format === 'ireeperf-jsonl' || format === 'tickwise-recorder' || format === 'heteromosaic-jsonl' ? 'iGPU' : 'GPU';
}

function deviceLabel(kindName: string, capture: string, captureId: number, device: number): string {
  return `${kindName} · ${capture} (capture ${captureId}, device ${device})`;
}

/** Collects everything a report shows; see the module comment. */
export async function collectReport(store: Store, opts: ReportOptions = {}): Promise<ReportData> {
  const threshold = opts.thresholdNs ?? DEFAULT_GAP_THRESHOLD_NS;
  const maxIntervals = opts.maxIntervals ?? DEFAULT_MAX_INTERVALS;
  const ids = (await store.query({ capture_id: 'number' }, `SELECT capture_id FROM captures ORDER BY capture_id`)).map((r) => r.capture_id);
  const provenance = ids.length ? (await provenanceLines(store, ids)).split('\n') : [];
  const findings: Finding[] = await runChecks(store);
  const plan = await planSources(store);
  if (plan.devices.length === 0) throw new TickwiseError('no-dispatches', msg.noDispatches());
  const ov = await overlap(store);
  const segs = await segments(store);
  const kindNames = new Map(
    (await store.query({ capture_id: 'number', device: 'number', kind: 'string', name: 'string?', format: 'string?' },
      `SELECT d.capture_id, d.device, d.kind, d.name, c.format FROM devices d LEFT JOIN captures c USING (capture_id)`))
      .map((r) => [`${r.capture_id}/${r.device}`, deviceKindName(r.kind, r.name, r.format)]),
  );

  // every device's numbers over the segments its kernels and costs use (issue 18.4: one default on the page)
  const devices: ReportDevice[] = [];
  const breakdowns = new Map<string, IdleBreakdown | null>();
  // lookups by device key (a find per device was devices x devices)
  const segsOf = new Map(segs.devices.map((s) => [deviceKey(s), s]));
  const segListOf = (d: { capture_id: number; device: number }): ReportSegment[] =>
    (segsOf.get(deviceKey(d))?.segments ?? [])
      .map((s) => ({ segment: s.segment, role: s.role, start_ns: s.start_ns, end_ns: s.end_ns, dispatches: s.dispatch_count }));
  const choiceOf = (d: { capture_id: number; device: number }): 'steady' | 'all' => (segListOf(d).length >= 2 ? 'steady' : 'all');
  // One gaps and one overlap call for every device, not a call each (its plan, its segmentation: seconds more on
  // 64 GPUs): a device's numbers come from SQL scoped to it, and `steady` over all of them reads each device that
  // repeats steady and each other one whole, which is each one's own choice.
  const steadyWhereItCan = plan.devices.some((d) => choiceOf(d) === 'steady') ? 'steady' : 'all';
  const shared = {
    gaps: await gaps(store, { segment: steadyWhereItCan, thresholdNs: threshold }),
    overlap: steadyWhereItCan === 'all' ? ov : await overlap(store, { segment: steadyWhereItCan }),
  };
  const deviceScopes = new Map(shared.gaps.scopes.filter((s) => s.queue === null).map((s) => [deviceKey(s), s]));
  const overlapOf = new Map(shared.overlap.devices.map((x) => [deviceKey(x), x]));
  for (const d of plan.devices) {
    const segList = segListOf(d);
    const choice = choiceOf(d);
    const scope = deviceScopes.get(deviceKey(d))!;
    const o = overlapOf.get(deviceKey(d));
    breakdowns.set(`${d.capture_id}/${d.device}`, scope.idle_breakdown);
    devices.push({
      capture_id: d.capture_id,
      device: d.device,
      kind: d.kind,
      label: deviceLabel(kindNames.get(`${d.capture_id}/${d.device}`) ?? d.kind, d.label.split('/').pop()!, d.capture_id, d.device),
      row_label: `${kindNames.get(`${d.capture_id}/${d.device}`) ?? d.kind} · device ${d.device}`,
      group: 0,
      clock_domain: d.clock_domain,
      time_source: d.time_source,
      dispatches: scope.dispatches,
      span_ns: scope.span_ns,
      busy_ns: scope.busy_ns,
      idle_ns: scope.idle_ns,
      idle_fraction: scope.idle_fraction,
      sum_dur_ns: scope.sum_dur_ns,
      gap_count: scope.gap_count,
      max_gap_ns: scope.max_gap_ns,
      gaps_over_threshold: scope.gaps_over_threshold.count,
      idle_over_threshold_ns: scope.gaps_over_threshold.idle_ns,
      between_submissions: { count: scope.between_submissions.count, idle_ns: scope.between_submissions.idle_ns },
      within_submission: { count: scope.within_submission.count, idle_ns: scope.within_submission.idle_ns },
      cross_submission_inflight_ns: o?.cross_submission_inflight_ns ?? null,
      segments: segList,
      steady_choice: choice,
      coverage: coverageOf(choice, segList),
    });
  }
  const labels = new Map(devices.map((d) => [deviceKey(d), d.label]));
  const labelOf = (capture_id: number, device: number) => labels.get(deviceKey({ capture_id, device }))!;

  // timeline: busy intervals per device, aggregated
  const intervals: TimelineInterval[] = [];
  const aggregation: ReportData['timeline']['aggregation'][number][] = [];
  // one statement for all devices, or one each for a few (see deviceBatches)
  const scoped = (spec: typeof plan.spec, b: DeviceBatch) => b.select((sc) => selectionSql(spec, sc), selectionSql(spec));
  const timelineRows = byDevice(await rowsOfBatches(devices, devices.length, (b) => store.query(TIMELINE_INTERVAL_SHAPE, timelineIntervalsSql(scoped(plan.spec, b), maxIntervals, b.oneDevice))));
  for (const d of devices) {
    const rows = timelineRows.get(deviceKey(d)) ?? [];
    for (const r of rows) intervals.push({ label: d.label, start_ns: r.start_ns, end_ns: r.end_ns, busy_ns: r.busy_ns, dispatches: r.dispatches, blocks: r.blocks });
    aggregation.push({ label: d.label, raw_blocks: rows[0]?.raw_blocks ?? 0, intervals: rows.length, merged_gap_max_ns: rows[0]?.merged_gap_max_ns ?? null });
  }
  const origin = intervals.reduce((m, r) => (r.start_ns < m ? r.start_ns : m), intervals[0]?.start_ns ?? 0n);

  // timelines: captures that share a clock and overlap in time are drawn together; every other capture alone
  const groups = timelineGroups(devices, plan.devices, intervals);
  const grouped: ReportDevice[] = devices.map((d) => {
    const group = groups.findIndex((g) => g.labels.includes(d.label));
    // rows of one capture's timeline need only kind and device; a shared timeline names the capture too
    const row = groups[group]!.capture_ids.length > 1 ? `${kindNames.get(`${d.capture_id}/${d.device}`) ?? d.kind} · capture ${d.capture_id} device ${d.device}` : d.row_label;
    return { ...d, group, row_label: row };
  });
  devices.splice(0, devices.length, ...grouped);
  const groupOf = new Map(devices.map((d) => [deviceKey(d), d.group]));
  const sameGroup = (a: { capture_id: number; device: number }, b: { capture_id: number; device: number }) => groupOf.get(deviceKey(a)) === groupOf.get(deviceKey(b));

  // gap histogram, idle split by class
  // over the segments the Devices table counts, so the two agree: `steady` over every device reads each one that
  // repeats steady and each other one whole (its steady_choice); all devices in one query
  const histogramPlan = await planAnalysis(store, { segment: steadyWhereItCan });
  const histogramRows = byDevice(await rowsOfBatches(devices, devices.length, (b) => store.query(GAP_HISTOGRAM_SHAPE, gapHistogramSql(scoped(histogramPlan.spec, b), b.oneDevice))));
  const histogram: HistogramBar[] = [];
  for (const d of devices) {
    for (const h of histogramRows.get(deviceKey(d)) ?? []) {
      histogram.push({ label: d.label, bucket: h.bucket, lo_ns: h.lo_ns, hi_ns: h.hi_ns, class: h.between ? 'between submissions' : 'inside a submission', count: h.count, idle_ns: h.idle_ns });
    }
  }

  // kernels and per-row-group costs, over steady segments where a device has them
  const kernels: ReportKernel[] = [];
  const costs: CostRow[] = [];
  // `steady` over every device: each one that repeats steady, each other one whole (its steady_choice); one call
  const allKernels = byDevice((await kernelStats(store, { segment: steadyWhereItCan })).kernels);
  for (const d of devices) {
    const mine = allKernels.get(deviceKey(d)) ?? [];
    for (const s of mine) kernels.push({ ...s, label: d.label });
    for (const s of mine) {
      const shape = gemmShapeFromName(s.kernel);
      if (!shape || shape.m <= 1 || !/(matmul|gemm|mmt)/i.test(s.kernel)) continue;
      const U = d.kind === 'gpu' && opts.ceiling?.gpuRowsPerDispatch !== undefined ? opts.ceiling.gpuRowsPerDispatch : shape.m;
      const c = await rowGroupCost(store, {
        kernel: globLiteral(s.kernel), rowsPerDispatch: U, groupRows: opts.ceiling?.groupRows ?? 256, segment: d.steady_choice,
        captureId: d.capture_id, device: d.device,
        ...(opts.params !== undefined && opts.tokens !== undefined ? { params: opts.params, tokens: opts.tokens } : {}),
      });
      costs.push({
        label: d.label, kernel: s.kernel, rows_per_dispatch: U, group_rows: c.group_rows, segment: c.segment, dispatch_count: c.dispatch_count,
        mean_dispatch_ns: c.mean_dispatch_ns, group_ms: c.group_ms, group_ms_p10: c.group_ms_p10, group_ms_p90: c.group_ms_p90,
        group_ms_from_flops: c.flops?.group_ms_from_flops ?? null,
      });
    }
  }

  const ceilingData: ReportCeiling = opts.ceiling === null ? { kind: 'off' } : await resolveCeiling(store, opts.ceiling ?? {}, devices, kernels);

  const notes: string[] = [
    `Busy time is the union of dispatch intervals; idle = span - busy; a gap is a maximal idle interval. Gaps "between submissions" are those no submission spans (the device waited for the host); the rest lie inside a submission.`,
    `Device, kernel and cost numbers use the steady segments (all but the first, cold pass) of devices with repetitions, and all dispatches of devices with one segment; each table says which, and the gap histogram holds the gaps the Devices table counts (within those segments). The timelines show every dispatch.`,
    `Each capture has its own timeline, from its first dispatch; captures share one only when their devices are on one clock and ran at the same time, and only devices that ran together are compared in "busy at the same time".`,
    `Timeline: each device's dispatches are merged into busy blocks (the union); when a device has more than ${maxIntervals} blocks, the shortest gaps between blocks are closed until ${maxIntervals} remain, and each bar is shaded by the share of it that is busy.`,
  ];
  for (const a of aggregation) {
    if (a.merged_gap_max_ns !== null) notes.push(`${a.label}: ${a.raw_blocks} busy blocks drawn as ${a.intervals} bars (gaps up to ${a.merged_gap_max_ns} ns closed).`);
  }
  const verdict = reportVerdict(devices, breakdowns, ceilingData, findings);
  return {
    verdict,
    title: opts.title ?? `tickwise report: ${[...new Set(devices.map((d) => d.label.split(' (')[0]))].join(', ')}`,
    provenance,
    findings,
    threshold_ns: threshold,
    devices,
    device_pairs: ov.device_pairs.filter((p) => sameGroup(p.a, p.b)).map((p) => ({
      a: labelOf(p.a.capture_id, p.a.device), b: labelOf(p.b.capture_id, p.b.device), overlap_ns: p.overlap_ns,
      fraction_of_a: p.overlap_fraction_of_a, fraction_of_b: p.overlap_fraction_of_b,
    })),
    timeline: { origin_ns: origin, max_intervals: maxIntervals, intervals, aggregation, groups },
    histogram,
    kernels,
    costs,
    ceiling: ceilingData,
    notes,
  };
}
