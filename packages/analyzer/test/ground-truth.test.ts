/**
 * Ground truth: on the generator's sample captures (captures/sample/), the
 * analyses recover the generator's TRUE busy, idle, gap counts, overlap,
 * per-kernel means and row-group costs (igpu-prefill.truth.json,
 * npu-tiles.truth.json). The truth is in true host ns; the capture holds
 * device ticks at 100 MHz placed through a clock fit, so every dispatch may
 * be off by up to one tick (10 ns): sums and spans are allowed 10 ns per
 * dispatch, means 10 ns, counts nothing. Absolute times also carry the
 * fit's offset error (about 0.1 us here; the clock fit is tested in the
 * capture package): they are allowed 1 us.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { gaps, kernelStats, overlap, resolveSegments, rowGroupCost } from '@tickwise/analyzer';
import { ROOT, tickwise } from './goldens';

const SAMPLE = join(ROOT, 'captures/sample');
const IGPU = join(SAMPLE, 'igpu-prefill.ireeperf.jsonl');
const NPU = join(SAMPLE, 'npu-tiles.ireeperf.jsonl');
const HAVE = existsSync(IGPU) && existsSync(join(SAMPLE, 'igpu-prefill.truth.json')) && existsSync(NPU);
if (!HAVE) console.warn(`ground-truth tests skipped: ${SAMPLE} lacks the generated sample (scripts/gen-sample writes it)`);

const TICK_NS = 10;
/** Allowed error of an absolute time (the clock fit's offset). */
const ABS_NS = 1000;

interface GapTruth { count: number; idle_ns: number; longer_than: { threshold_ns: number; count: number; idle_ns: number }[] }
interface TimelineTruth {
  dispatches: number; start_ns: number; end_ns: number; span_ns: number; busy_ns: number; idle_ns: number;
  overlap_ns: number; overlap_cross_submission_ns: number; max_in_flight: number; gaps: GapTruth;
}
interface KernelTruth { key: string; count: number; total_ns: number; mean_ns: number; min_ns: number; max_ns: number; per_segment: { segment: number; count: number; mean_ns: number }[] }
interface Truth {
  overall: TimelineTruth;
  segments: (TimelineTruth & { segment: number })[];
  kernels: KernelTruth[];
  model: { weight_params: number; prompt_tokens: number; ubatch_rows: number };
  row_groups: {
    group_rows: number;
    kernels: { key: string; count: number; mean_dispatch_ns_all: number; mean_dispatch_ns_steady: number; group_ms_steady: number; group_ms_all: number; group_ms_from_flops: number; mean_vs_flops_ratio: number }[];
    flops: { engine_tflops: number; gemm_time_ns_per_steady_prefill: number };
  };
}
interface NpuTruth { overall: TimelineTruth; cross_device: { overlap_ns: number; igpu_busy_overlapped_fraction: number; npu_busy_overlapped_fraction: number } }

const within = (actual: bigint | number, expected: number, tol: number) => expect(Math.abs(Number(actual) - expected)).toBeLessThanOrEqual(tol);

describe.skipIf(!HAVE)('ground truth of the generated sample captures', () => {
  let store: Store;
  let truth: Truth;
  let npuTruth: NpuTruth;
  beforeAll(async () => {
    truth = JSON.parse(readFileSync(join(SAMPLE, 'igpu-prefill.truth.json'), 'utf8')) as Truth;
    npuTruth = JSON.parse(readFileSync(join(SAMPLE, 'npu-tiles.truth.json'), 'utf8')) as NpuTruth;
    const db = join(mkdtempSync(join(tmpdir(), 'tickwise-truth-')), 'sample.duckdb');
    for (const [file, kind] of [[IGPU, 'gpu'], [NPU, 'npu']] as const) {
      const r = tickwise(['import', file, '--db', db, '--device-kind', kind], ROOT);
      expect(r.status, r.stderr).toBe(0);
    }
    store = await Store.open(db, { readOnly: true });
  });
  afterAll(async () => {
    await store?.close();
  });

  it('whole capture: span, busy (union), idle within one tick per dispatch; gap count and gaps over each threshold exact', async () => {
    const o = truth.overall;
    const tol = TICK_NS * o.dispatches;
    for (const t of o.gaps.longer_than) {
      const r = await gaps(store, { captureId: 1, thresholdNs: BigInt(t.threshold_ns) });
      const s = r.scopes.find((x) => x.queue === null)!;
      expect(s.dispatches).toBe(o.dispatches);
      within(s.span_ns, o.span_ns, tol);
      within(s.busy_ns, o.busy_ns, tol);
      within(s.idle_ns, o.idle_ns, tol);
      expect(s.gap_count).toBe(o.gaps.count);
      expect(s.gaps_over_threshold.count).toBe(t.count);
      within(s.gaps_over_threshold.idle_ns, t.idle_ns, TICK_NS * 2 * t.count);
    }
  });

  it('segments: the two prefills (cold first, steady second) with their spans, busy, idle and gaps', async () => {
    const seg = await resolveSegments(store, { captureId: 1 });
    const d = seg.devices[0]!;
    expect(d.method).toBe('detected');
    expect(d.segments.map((s) => s.dispatch_count)).toEqual(truth.segments.map((s) => s.dispatches));
    for (const t of truth.segments) {
      const s = d.segments[t.segment]!;
      within(s.start_ns, t.start_ns, ABS_NS);
      within(s.end_ns, t.end_ns, ABS_NS);
      within(s.span_ns, t.span_ns, TICK_NS * t.dispatches);
      const g = (await gaps(store, { captureId: 1, segment: String(t.segment), thresholdNs: 200_000n })).scopes.find((x) => x.queue === null)!;
      expect(g.dispatches).toBe(t.dispatches);
      within(g.busy_ns, t.busy_ns, TICK_NS * t.dispatches);
      within(g.idle_ns, t.idle_ns, TICK_NS * t.dispatches);
      expect(g.gap_count).toBe(t.gaps.count);
      expect(g.gaps_over_threshold.count).toBe(t.gaps.longer_than.find((x) => x.threshold_ns === 200_000)!.count);
    }
    const steady = (await gaps(store, { captureId: 1, segment: 'steady' })).scopes.find((x) => x.queue === null)!;
    expect(steady.gap_count).toBe(truth.segments.slice(1).reduce((a, s) => a + s.gaps.count, 0));
  });

  it('overlap within the iGPU: >= 2 in flight (gate/up tails) within one tick per dispatch, none across submissions', async () => {
    const r = await overlap(store, { captureId: 1 });
    const d = r.devices[0]!;
    within(d.busy_ns, truth.overall.busy_ns, TICK_NS * truth.overall.dispatches);
    within(d.multi_inflight_ns, truth.overall.overlap_ns, TICK_NS * truth.overall.dispatches);
    expect(d.cross_submission_inflight_ns).toBe(BigInt(truth.overall.overlap_cross_submission_ns));
    expect(d.max_in_flight).toBe(truth.overall.max_in_flight);
  });

  it('overlap across iGPU and NPU captures on one host timeline', async () => {
    const r = await overlap(store);
    const p = r.device_pairs[0]!;
    expect(r.device_pairs).toHaveLength(1);
    expect([p.a.kind, p.b.kind]).toEqual(['gpu', 'npu']);
    const tol = TICK_NS * (truth.overall.dispatches + npuTruth.overall.dispatches);
    within(p.overlap_ns, npuTruth.cross_device.overlap_ns, tol);
    within(p.overlap_fraction_of_a!, npuTruth.cross_device.igpu_busy_overlapped_fraction, 1e-4);
    within(p.overlap_fraction_of_b!, npuTruth.cross_device.npu_busy_overlapped_fraction, 1e-4);
  });

  it('per-kernel count exact, total, mean, min, max within one tick per dispatch; per-segment means too', async () => {
    const all = (await kernelStats(store, { captureId: 1 })).kernels;
    expect(all.map((k) => k.kernel).sort()).toEqual(truth.kernels.map((k) => k.key).sort());
    for (const t of truth.kernels) {
      const k = all.find((x) => x.kernel === t.key)!;
      expect(k.count).toBe(t.count);
      within(k.total_ns, t.total_ns, TICK_NS * t.count);
      within(k.mean_ns, t.mean_ns, TICK_NS);
      within(k.min_ns, t.min_ns, TICK_NS);
      within(k.max_ns, t.max_ns, TICK_NS);
    }
    for (const segment of [0, 1]) {
      const ks = (await kernelStats(store, { captureId: 1, segment: String(segment) })).kernels;
      for (const t of truth.kernels) {
        const ts = t.per_segment.find((p) => p.segment === segment)!;
        const k = ks.find((x) => x.kernel === t.key)!;
        expect(k.count).toBe(ts.count);
        within(k.mean_ns, ts.mean_ns, TICK_NS);
      }
    }
  });

  it('per-row-group cost of each weight GEMM (steady and all) and the FLOP reading', async () => {
    const G = truth.row_groups.group_rows;
    const U = truth.model.ubatch_rows;
    for (const t of truth.row_groups.kernels) {
      const steady = await rowGroupCost(store, {
        kernel: t.key, rowsPerDispatch: U, groupRows: G, segment: 'steady', captureId: 1,
        params: truth.model.weight_params, tokens: truth.model.prompt_tokens,
      });
      expect(steady.dispatch_count).toBe(t.count / 2);
      within(steady.mean_dispatch_ns, t.mean_dispatch_ns_steady, TICK_NS);
      within(steady.group_ms, t.group_ms_steady, ((TICK_NS * G) / U) / 1e6 + 1e-6);
      within(steady.flops!.tflops, truth.row_groups.flops.engine_tflops, 1e-3);
      within(steady.flops!.gemm_time_ns_per_prefill, truth.row_groups.flops.gemm_time_ns_per_steady_prefill, TICK_NS * 5 * 112);
      within(steady.flops!.group_ms_from_flops!, t.group_ms_from_flops, 1e-5);
      within(steady.flops!.ratio!, t.mean_vs_flops_ratio, 1e-3);
      const all = await rowGroupCost(store, { kernel: t.key, rowsPerDispatch: U, groupRows: G, captureId: 1 });
      expect(all.dispatch_count).toBe(t.count);
      expect(all.per_segment.map((p) => p.dispatch_count)).toEqual([t.count / 2, t.count / 2]);
      within(all.mean_dispatch_ns, t.mean_dispatch_ns_all, TICK_NS);
      within(all.group_ms, t.group_ms_all, ((TICK_NS * G) / U) / 1e6 + 1e-6);
    }
  });
});
