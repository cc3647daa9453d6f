/**
 * The capture generators: the committed samples regenerate byte for byte, and
 * each file agrees with its own ground truth (counts, true times, the
 * exporter's derived fields, busy/gap numbers recomputed independently here).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  IGPU_PREFILL_DEFAULTS,
  SAMPLE_FILES,
  generateFromDispatches,
  generateIreeperf,
  writeBigIreeperf,
  writeSampleSet,
  type KernelTruth,
  type SegmentTruth,
  type TimelineTruth,
} from '../ireeperf';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sampleDir = join(repo, 'captures', 'sample');
const tmp = mkdtempSync(join(tmpdir(), 'tickwise-gen-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Row = Record<string, unknown> & { record_type: string };

/** The parts of a truth document these tests read. */
interface Truth {
  capture: { records: Record<string, number> };
  clock: {
    tick_hz_true: number;
    tick_hz_declared: number | null;
    ns_per_tick_true: number;
    offset_ns: number;
    samples: number;
    wide_sample_ids: number[];
    fits: Record<'iree_exporter' | 'first_last_bracket_midpoint' | 'weighted_least_squares_midpoint', { error_ppm: number }>;
  };
  overall: TimelineTruth;
  segments: SegmentTruth[];
  kernels: KernelTruth[];
  dispatches: { keys: string[]; event_id: number[]; submission_id: number[]; kernel: number[]; start_ns: number[]; end_ns: number[] };
  steady_span_ns: number;
  row_groups: {
    kernels: { count: number; group_ms_steady: number; mean_dispatch_ns_steady: number; mean_vs_flops_ratio: number }[];
  };
  cross_device: { overlap_ns: number; npu_busy_overlapped_fraction: number };
}

function longerThan(t: TimelineTruth, thresholdNs: number): number {
  const g = t.gaps.longer_than.find((x) => x.threshold_ns === thresholdNs);
  if (!g) throw new Error(`no gap threshold ${thresholdNs}`);
  return g.count;
}

function rows(text: string): Row[] {
  const lines = text.split('\n');
  expect(lines.pop()).toBe('');
  return lines.map((l, i) => {
    try {
      return JSON.parse(l) as Row;
    } catch (e) {
      throw new Error(`line ${i + 1} is not JSON: ${String(e)}`);
    }
  });
}

function num(r: Row, k: string): number {
  const v = r[k];
  if (typeof v !== 'number') throw new Error(`${r.record_type}.${k} is not a number: ${String(v)}`);
  return v;
}

/** IREE's exporter mapping, re-implemented here with exact integers. */
function exporterMap(first: Row, last: Row): (tick: number) => number {
  const t0 = BigInt(num(first, 'device_tick'));
  const h0 = BigInt(num(first, 'host_cpu_timestamp_ns'));
  const d = BigInt(num(last, 'device_tick')) - t0;
  const n = BigInt(num(last, 'host_cpu_timestamp_ns')) - h0;
  return (tick) => {
    const t = BigInt(tick);
    return t >= t0 ? Number(h0 + ((t - t0) * n + d / 2n) / d) : Number(h0 - ((t0 - t) * n + d / 2n) / d);
  };
}

function unionIntervals(intervals: [number, number][]): [number, number][] {
  const iv = [...intervals].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [s, e] of iv) {
    const last = out[out.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else out.push([s, e]);
  }
  return out;
}

/** Union/gap numbers recomputed by sort-and-merge (independent of truth.ts). */
function unionStats(intervals: [number, number][]) {
  const u = unionIntervals(intervals);
  const gaps = u.slice(1).map(([s], i) => s - u[i]![1]);
  return {
    busy: u.reduce((a, [s, e]) => a + e - s, 0),
    gaps,
    span: u[u.length - 1]![1] - u[0]![0],
    sum: intervals.reduce((a, [s, e]) => a + e - s, 0),
  };
}

/** Checks one capture text against its truth document; returns its rows. */
function checkCapture(text: string, truth: Truth): Row[] {
  const all = rows(text);
  expect(all[0]!.record_type).toBe('schema');
  expect(all[1]).toMatchObject({ record_type: 'session', event: 'begin' });
  expect(all[all.length - 1]).toMatchObject({ record_type: 'session', event: 'end' });
  for (const r of all) expect(r['schema_version']).toBe(15);

  const counts: Record<string, number> = {};
  for (const r of all) counts[r.record_type] = (counts[r.record_type] ?? 0) + 1;
  expect(counts).toEqual(truth.capture.records);

  const device = all.find((r) => r.record_type === 'device')!;
  expect(device['timestamp_frequency_hz'] ?? null).toBe(truth.clock.tick_hz_declared);

  const npt = truth.clock.ns_per_tick_true as number;
  const off = truth.clock.offset_ns as number;
  const clocks = all.filter((r) => r.record_type === 'clock_correlation');
  expect(clocks.length).toBe(truth.clock.samples);
  for (const c of clocks) {
    const latch = off + num(c, 'device_tick') * npt;
    expect(num(c, 'host_time_begin_ns')).toBeLessThanOrEqual(latch);
    expect(num(c, 'host_time_end_ns')).toBeGreaterThanOrEqual(latch);
    expect(num(c, 'host_time_uncertainty_ns')).toBe(num(c, 'host_time_end_ns') - num(c, 'host_time_begin_ns'));
  }
  const first = clocks[0]!;
  const last = clocks[clocks.length - 1]!;
  const map = exporterMap(first, last);

  for (const r of all) {
    if (r.record_type !== 'dispatch_event' && r.record_type !== 'queue_device_event') continue;
    const s = num(r, 'start_tick');
    const e = num(r, 'end_tick');
    expect(r['duration_ticks']).toBe(e - s);
    expect(r['valid']).toBe(true);
    expect(r['clock_fit_first_sample_id']).toBe(first['sample_id']);
    expect(r['clock_fit_last_sample_id']).toBe(last['sample_id']);
    expect(r['start_driver_host_cpu_time_ns']).toBe(map(s));
    expect(r['end_driver_host_cpu_time_ns']).toBe(map(e));
    expect(r['duration_ns']).toBe(map(e) - map(s));
    // Within 1 ns plus what the exporter's slope error (40 ns of CPU-timestamp jitter over the fit span) gives.
    const slack = 1 + Math.ceil(((e - s) * npt * 40) / (num(last, 'host_cpu_timestamp_ns') - num(first, 'host_cpu_timestamp_ns')));
    expect(Math.abs(num(r, 'duration_ns') - (e - s) * npt)).toBeLessThanOrEqual(slack);
    expect(s).toBeGreaterThan(num(first, 'device_tick'));
    expect(e).toBeLessThan(num(last, 'device_tick'));
  }

  // The per-dispatch truth columns are the file's rows, in order, through the true clock.
  const dispatches = all.filter((r) => r.record_type === 'dispatch_event');
  const cols = truth.dispatches;
  expect(cols.event_id.length).toBe(dispatches.length);
  dispatches.forEach((r, i) => {
    expect(r['event_id']).toBe(cols.event_id[i]);
    expect(r['submission_id']).toBe(cols.submission_id[i]);
    expect(r['key']).toBe(cols.keys[cols.kernel[i]]);
    expect(off + num(r, 'start_tick') * npt).toBe(cols.start_ns[i]);
    expect(off + num(r, 'end_tick') * npt).toBe(cols.end_ns[i]);
  });

  const byKey = new Map<string, { count: number; total: number }>();
  for (const r of dispatches) {
    const k = byKey.get(r['key'] as string) ?? { count: 0, total: 0 };
    k.count++;
    k.total += (num(r, 'end_tick') - num(r, 'start_tick')) * npt;
    byKey.set(r['key'] as string, k);
  }
  expect(truth.kernels.length).toBe(byKey.size);
  for (const k of truth.kernels) expect(byKey.get(k.key)).toEqual({ count: k.count, total: k.total_ns });

  const u = unionStats(dispatches.map((r) => [off + num(r, 'start_tick') * npt, off + num(r, 'end_tick') * npt]));
  const o = truth.overall;
  expect(o.dispatches).toBe(dispatches.length);
  expect(o.busy_ns).toBe(u.busy);
  expect(o.sum_dur_ns).toBe(u.sum);
  expect(o.span_ns).toBe(u.span);
  expect(o.idle_ns).toBe(u.span - u.busy);
  expect(o.gaps.count).toBe(u.gaps.length);
  for (const g of o.gaps.longer_than) expect(g.count).toBe(u.gaps.filter((x) => x > g.threshold_ns).length);
  expect(truth.segments.reduce((a, s) => a + s.dispatches, 0)).toBe(dispatches.length);
  return all;
}

function readTruth(name: string): Truth {
  return JSON.parse(readFileSync(join(sampleDir, name), 'utf8')) as Truth;
}

describe('sample captures', () => {
  it('regenerate byte-identical to the committed files', () => {
    const regen = join(tmp, 'sample');
    writeSampleSet(regen, { igpu: true, npu: true });
    const committed = readdirSync(sampleDir).sort();
    expect(committed).toEqual(Object.values(SAMPLE_FILES).sort());
    for (const name of committed) {
      const same = readFileSync(join(sampleDir, name)).equals(readFileSync(join(regen, name)));
      expect(same, `${name} differs from its regeneration (scripts/gen-sample --all, then review the diff)`).toBe(true);
    }
  });

  it('regenerate byte-identical through scripts/gen-sample', () => {
    const out = join(tmp, 'cli');
    execFileSync(join(repo, 'scripts', 'gen-sample'), ['--all', '--out-dir', out], { stdio: 'pipe' });
    for (const name of Object.values(SAMPLE_FILES)) {
      expect(readFileSync(join(out, name)).equals(readFileSync(join(sampleDir, name))), name).toBe(true);
    }
  });

  it('stay under 3 MB each', () => {
    for (const name of readdirSync(sampleDir)) expect(statSync(join(sampleDir, name)).size).toBeLessThan(3_000_000);
  });

  it('iGPU capture agrees with its truth', () => {
    const truth = readTruth(SAMPLE_FILES.igpuTruth);
    const all = checkCapture(readFileSync(join(sampleDir, SAMPLE_FILES.igpu), 'utf8'), truth);
    expect(truth.clock.tick_hz_true).toBe(100_000_000);
    expect(truth.clock.tick_hz_declared).toBe(99_810_000);
    expect(truth.clock.wide_sample_ids.length).toBeGreaterThanOrEqual(3);
    expect(Math.abs(truth.clock.fits.weighted_least_squares_midpoint.error_ppm)).toBeLessThan(1);
    expect(Math.abs(truth.clock.fits.first_last_bracket_midpoint.error_ppm)).toBeGreaterThan(10);
    expect(truth.segments.length).toBe(2);
    expect(truth.overall.overlap_cross_submission_ns).toBe(0);
    expect(truth.overall.max_in_flight).toBe(2);
    expect(truth.overall.overlap_ns).toBe(truth.overall.sum_dur_ns - truth.overall.busy_ns);
    const [cold, warm] = truth.segments as [SegmentTruth, SegmentTruth];
    expect(cold.span_ns).toBeGreaterThan(warm.span_ns * 1.1);
    expect(cold.busy_fraction).toBeLessThan(warm.busy_fraction);
    expect(longerThan(cold, 200_000)).toBeGreaterThan(longerThan(warm, 200_000));
    // One long host gap, between the prefills.
    expect(longerThan(truth.overall, 10_000_000)).toBe(1);
    // Weight GEMMs: prefills x layers x ubatches dispatches; group = mean x 256 / 512; FLOP reading agrees.
    expect(truth.row_groups.kernels.length).toBe(5);
    for (const g of truth.row_groups.kernels) {
      expect(g.count).toBe(2 * 28 * 4);
      expect(g.group_ms_steady).toBeCloseTo(g.mean_dispatch_ns_steady / 2 / 1e6, 6);
      expect(g.mean_vs_flops_ratio).toBeGreaterThan(0.8);
      expect(g.mean_vs_flops_ratio).toBeLessThan(1.25);
    }
    const q = all.filter((r) => r.record_type === 'queue_event');
    expect(q.length).toBe(2 * (4 * 28 + 1));
    expect(q.map((r) => r['submission_id'])).toEqual(q.map((_, i) => i + 1));
  });

  it('llama-bench reference agrees with the steady prefill span', () => {
    const truth = readTruth(SAMPLE_FILES.igpuTruth);
    const csv = readFileSync(join(sampleDir, SAMPLE_FILES.llamaBenchCsv), 'utf8').trim().split('\n');
    expect(csv.length).toBe(2);
    const header = csv[0]!.split(',');
    const values = csv[1]!.slice(1, -1).split('","');
    expect(values.length).toBe(header.length);
    const rec = Object.fromEntries(header.map((h, i) => [h, values[i]!]));
    expect(rec['n_prompt']).toBe('2048');
    expect(rec['n_ubatch']).toBe('512');
    const json = JSON.parse(readFileSync(join(sampleDir, SAMPLE_FILES.llamaBenchJson), 'utf8'))[0];
    expect(Object.keys(json).slice(0, header.length)).toEqual(header);
    expect(String(json.avg_ns)).toBe(rec['avg_ns']);
    const samples = json.samples_ns as number[];
    expect(json.avg_ns).toBe(Math.floor(samples.reduce((a, b) => a + b, 0) / samples.length));
    const ratio = json.avg_ns / truth.steady_span_ns;
    expect(ratio).toBeGreaterThan(0.99);
    expect(ratio).toBeLessThan(1.01);
  });

  it('NPU capture agrees with its truth and overlaps the iGPU run', () => {
    const truth = readTruth(SAMPLE_FILES.npuTruth);
    const all = checkCapture(readFileSync(join(sampleDir, SAMPLE_FILES.npu), 'utf8'), truth);
    for (const r of all.filter((x) => x.record_type === 'dispatch_event')) {
      expect(r['command_buffer_id']).toBe(0);
      expect(r['command_index']).toBe(4294967295);
    }
    expect(truth.kernels[0]!.mean_ns / 1e6).toBeGreaterThan(5.8);
    expect(truth.kernels[0]!.mean_ns / 1e6).toBeLessThan(6.2);
    const igpu = readTruth(SAMPLE_FILES.igpuTruth);
    const pairs = (c: Truth['dispatches']): [number, number][] => c.start_ns.map((s, i) => [s, c.end_ns[i]!]);
    const ui = unionIntervals(pairs(igpu.dispatches));
    const un = unionIntervals(pairs(truth.dispatches));
    let overlap = 0;
    for (const [a, b] of un) for (const [c, e] of ui) overlap += Math.max(0, Math.min(b, e) - Math.max(a, c));
    expect(truth.cross_device.overlap_ns).toBe(overlap);
    expect(truth.cross_device.npu_busy_overlapped_fraction).toBeGreaterThan(0.5);
    expect(truth.overall.start_ns).toBeGreaterThan(igpu.segments[1]!.start_ns);
    expect(truth.overall.end_ns).toBeLessThan(igpu.segments[1]!.end_ns);
  });
});

describe('generator API', () => {
  it('is deterministic and driven by its options', () => {
    const opts = { layers: 2, prompt_tokens: 1024, prefills: 3, seed: 7 };
    const a = generateIreeperf(opts);
    expect(generateIreeperf(opts).text).toBe(a.text);
    expect(generateIreeperf({ ...opts, seed: 8 }).text).not.toBe(a.text);
    checkCapture(a.text, a.truth as unknown as Truth);
    // 3 prefills x (2 ubatches x 2 layers x 10 + 2 gathers + final norm + lm_head).
    expect(a.counts['dispatch_event']).toBe(3 * (2 * 2 * 10 + 2 + 2));
    expect(() => generateIreeperf({ prompt_tokens: 1000 })).toThrow(/multiple of ubatch_rows/);
  });

  it('builds hand-made captures whose truth is the numbers given', () => {
    const base = IGPU_PREFILL_DEFAULTS.clock.offset_ns + 1_000_000_000;
    const us = 1_000;
    const cap = generateFromDispatches({
      dispatches: [
        { key: 'a_matmul_512x64x64_f16', start_ns: base, end_ns: base + 100 * us, submission: 1 },
        { key: 'b_norm', start_ns: base + 150 * us, end_ns: base + 300 * us, submission: 1 },
        { key: 'b_norm', start_ns: base + 250 * us, end_ns: base + 400 * us, submission: 1 },
        { key: 'a_matmul_512x64x64_f16', start_ns: base + 700 * us, end_ns: base + 800 * us, submission: 2 },
      ],
      clock: { tick_hz_declared: 100_000_000 },
    });
    checkCapture(cap.text, cap.truth as unknown as Truth);
    const o = cap.timeline.overall;
    expect(o.busy_ns).toBe(450 * us);
    expect(o.sum_dur_ns).toBe(500 * us);
    expect(o.overlap_ns).toBe(50 * us);
    expect(o.span_ns).toBe(800 * us);
    expect(o.gaps.count).toBe(2);
    expect(longerThan(o, 200_000)).toBe(1);
    expect(cap.counts['queue_event']).toBe(2);
  });

  it('writes big captures of at least the size asked for, deterministically', () => {
    const p1 = join(tmp, 'big1.jsonl');
    const p2 = join(tmp, 'big2.jsonl');
    const t1 = join(tmp, 'big1.truth.json');
    const r = writeBigIreeperf({ path: p1, mb: 4, truth_path: t1 });
    writeBigIreeperf({ path: p2, mb: 4 });
    expect(r.bytes).toBeGreaterThanOrEqual(4_000_000);
    const text = readFileSync(p1, 'utf8');
    expect(readFileSync(p2, 'utf8') === text).toBe(true);
    const all = rows(text);
    const counts: Record<string, number> = {};
    for (const row of all) counts[row.record_type] = (counts[row.record_type] ?? 0) + 1;
    expect(counts).toEqual(r.counts);
    expect(counts['dispatch_event']! / all.length).toBeGreaterThan(0.75);
    const truth = JSON.parse(readFileSync(t1, 'utf8')) as Truth;
    expect(truth.overall.dispatches).toBe(counts['dispatch_event']);
    expect(truth.kernels.reduce((a, k) => a + k.count, 0)).toBe(counts['dispatch_event']);
  });
});
