import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allGpuSchedule,
  bootstrapStrategies,
  fitLine,
  fitMeasuredCost,
  prefillGraph,
  prefillSpecFromMeasured,
  scheduleEnergy,
  scheduleGanttSpec,
  scheduleModel,
  seededRng,
  validateSchedule,
  type MeasuredCost,
  type MeasuredPrefill,
  type SamplePart,
  type StageKind,
} from '../src/index';

const U = 512;
const G = 256;
const src = { from: 'capture' as const, line: 'test' };

/** Dispatches as the sample's generator makes them: a base time per kernel x (1 + 1.2 % noise), per segment and position. */
function part(kernel: string, capture: string, baseNs: (pos: number) => number, opts: { segments: number; positions: number; perPosition: number; seed: number }): SamplePart {
  const rng = seededRng(opts.seed);
  const dur_ns: number[] = [];
  const segment: number[] = [];
  const position: number[] = [];
  for (let s = 0; s < opts.segments; s++) {
    for (let p = 0; p < opts.positions; p++) {
      for (let i = 0; i < opts.perPosition; i++) {
        const noise = 1 + 0.012 * (rng.next() + rng.next() + rng.next() - 1.5) * 2;
        dur_ns.push(Math.round(baseNs(p) * noise));
        segment.push(s + 1);
        position.push(p);
      }
    }
  }
  return { kernel, capture, per_instance: 1, dur_ns, segment, position };
}

const attentionNs = (p: number) => 40_000 + (4 * 24 * 128 * U * (p * U + U / 2)) / 10_000;

function measured(segments: number, layers = 4, chunks = 4): MeasuredPrefill {
  const opts = (seed: number) => ({ segments, positions: chunks, perPosition: layers, seed });
  const rows = (kernel: string, ms: number, seed: number): MeasuredCost => ({
    form: 'dispatches', fit: 'rows', rows_per_dispatch: U, parts: [part(kernel, 'gpu', () => ms * 1e6, opts(seed))], scale: 1, whole_tiles: false, source: src,
  });
  const npu: SamplePart = part('npu_tile', 'npu', () => 6e6, { segments: 1, positions: 1, perPosition: 40, seed: 99 });
  const tile = (scale: number): MeasuredCost => ({ form: 'dispatches', fit: 'rows', rows_per_dispatch: G, parts: [npu], scale, whole_tiles: true, source: src });
  const stage = (kind: StageKind, gpu: MeasuredCost, n: MeasuredCost | null = null) => ({ kind, cost: { gpu, npu: n } });
  return {
    layers,
    prompt_rows: chunks * U,
    microbatch_rows: U,
    group_rows: G,
    engines: [{ id: 'gpu', name: 'iGPU' }, { id: 'npu', name: 'NPU' }],
    reference_engine: 'gpu',
    stages: [
      stage('qkv', rows('qkv', 1.161, 1), tile(5120 / 8192)),
      stage('attention', { form: 'dispatches', fit: 'attention', rows_per_dispatch: U, parts: [part('attention', 'gpu', attentionNs, opts(2))], scale: 1, whole_tiles: false, source: src }),
      stage('attn_output', rows('out', 0.722, 3), tile(3072 / 8192)),
      stage('ffn_gate', rows('gate', 1.731, 4), tile(1)),
      stage('ffn_down', rows('down', 1.854, 5), tile(1)),
    ],
    handoff: { default_ms: 0.127 },
  };
}

describe('fitting costs to measured dispatches', () => {
  it('rows: group_ms is the mean dispatch ns x G / U / 1e6, as the analyzer and tickwise ceiling compute it', () => {
    const p = part('k', 'gpu', () => 1_731_000, { segments: 1, positions: 4, perPosition: 28, seed: 7 });
    const f = fitMeasuredCost('ffn_gate', 'gpu', { form: 'dispatches', fit: 'rows', rows_per_dispatch: U, parts: [p], scale: 1, whole_tiles: false, source: src }, G);
    const mean = p.dur_ns.reduce((a, x) => a + x, 0) / p.dur_ns.length;
    expect(f.model.model).toBe('rows');
    if (f.model.model !== 'rows' || f.model.per_group.kind !== 'constant') throw new Error('unexpected model');
    expect(f.model.per_group.ms).toBe((mean * G) / U / 1e6);
    expect(f.model.per_group.p10_ms!).toBeLessThan(f.model.per_group.ms);
    expect(f.report.dispatches).toBe(112);
  });

  it("attention: the line over positions recovers the generator's 40 us per dispatch and its FLOP rate", () => {
    const exact = part('a', 'gpu', attentionNs, { segments: 1, positions: 4, perPosition: 28, seed: 1 });
    const noiseless = { ...exact, dur_ns: exact.position.map((p) => attentionNs(p)) };
    const f = fitMeasuredCost('attention', 'gpu', { form: 'dispatches', fit: 'attention', rows_per_dispatch: U, parts: [noiseless], scale: 1, whole_tiles: false, source: src }, G);
    if (f.model.model !== 'attention') throw new Error('unexpected model');
    expect(f.model.per_dispatch_ms).toBeCloseTo(0.04, 9);
    expect(f.model.ms_per_row_pair).toBeCloseTo((4 * 24 * 128) / 1e10, 15);
    expect(f.report.line!.r2).toBeCloseTo(1, 12);
    const noisy = fitMeasuredCost('attention', 'gpu', { form: 'dispatches', fit: 'attention', rows_per_dispatch: U, parts: [exact], scale: 1, whole_tiles: false, source: src }, G);
    if (noisy.model.model !== 'attention') throw new Error('unexpected model');
    expect(noisy.model.ms_per_row_pair / ((4 * 24 * 128) / 1e10)).toBeCloseTo(1, 2);
  });

  it('attention at one position only: no slope to fit, so all of it is taken as rate, and a note says so', () => {
    const one = part('a', 'gpu', () => 500_000, { segments: 1, positions: 1, perPosition: 10, seed: 2 });
    const f = fitMeasuredCost('attention', 'gpu', { form: 'dispatches', fit: 'attention', rows_per_dispatch: U, parts: [one], scale: 1, whole_tiles: false, source: src }, G);
    if (f.model.model !== 'attention') throw new Error('unexpected model');
    expect(f.model.per_dispatch_ms).toBe(0);
    expect(f.model.ms_per_row_pair * U * (U / 2)).toBeCloseTo(f.report.instance_ms, 9);
    expect(f.report.notes.join(' ')).toMatch(/one micro-batch position only/);
  });

  it('fitLine: exact on a line, slope 0 on one x', () => {
    expect(fitLine([0, 1, 2, 3], [1, 3, 5, 7])).toMatchObject({ a: 1, b: 2, r2: 1, distinct_x: 4 });
    expect(fitLine([2, 2], [1, 3])).toMatchObject({ a: 2, b: 0, r2: null, distinct_x: 1 });
  });
});

describe('bootstrap error bars', () => {
  it('are seeded: equal seeds equal intervals; the interval holds the median; the repetitions behind it are counted', () => {
    const m = measured(3);
    const a = bootstrapStrategies(m, { replicates: 40, seed: 9 });
    const b = bootstrapStrategies(m, { replicates: 40, seed: 9 });
    const c = bootstrapStrategies(m, { replicates: 40, seed: 10 });
    expect(a).toEqual(b);
    expect(a.strategies).not.toEqual(c.strategies);
    expect(a.repetitions).toEqual([{ capture: 'gpu', segments: 3 }, { capture: 'npu', segments: 1 }]);
    expect(a.dispatches).toBe(5 * 3 * 16 + 40);
    expect(a.notes).toEqual(['npu: one repetition only, so the interval reflects the spread of its dispatches, not run-to-run variation']);
    for (const s of a.strategies) {
      expect(s.speedup.low).toBeLessThanOrEqual(s.speedup.median);
      expect(s.speedup.median).toBeLessThanOrEqual(s.speedup.high);
    }
    const all = a.strategies.find((s) => s.strategy === 'all_gpu')!;
    expect(all.speedup).toEqual({ median: 1, low: 1, high: 1 });
    // the all-iGPU spread is the spread of a mean of 240 dispatches at 1.2 %: well under 1 %
    expect(all.makespan_ms.high / all.makespan_ms.low - 1).toBeLessThan(0.01);
  });

  it('holds the point estimate inside the interval of the all-iGPU makespan', () => {
    const m = measured(2);
    const point = allGpuSchedule(prefillGraph(prefillSpecFromMeasured(m).spec)).makespan_ms;
    const b = bootstrapStrategies(m, { replicates: 100, seed: 1 });
    const all = b.strategies.find((s) => s.strategy === 'all_gpu')!.makespan_ms;
    expect(point).toBeGreaterThan(all.low);
    expect(point).toBeLessThan(all.high);
  });
});

describe('energy', () => {
  it('is active W x busy + idle W x idle over the makespan, for every engine; unknown powers are named', () => {
    const g = prefillGraph(prefillSpecFromMeasured(measured(1)).spec);
    const s = allGpuSchedule(g);
    const e = scheduleEnergy(g, s, [
      { engine: 'gpu', active_w: 40, idle_w: 8, source: 'test' },
      { engine: 'npu', active_w: 6, idle_w: 1, source: 'test' },
    ]);
    expect(e.joules).toBeCloseTo((40 * s.makespan_ms + 1 * s.makespan_ms) / 1e3, 9);
    const missing = scheduleEnergy(g, s, [{ engine: 'gpu', active_w: 40, idle_w: null, source: 'test' }]);
    expect(missing.joules).toBeNull();
    expect(missing.missing).toEqual(['--gpu-idle-w', '--npu-active-w', '--npu-idle-w']);
  });
});

const GOLDEN = join(import.meta.dirname, 'golden', 'schedule-gantt.vl.json');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';

function normalise(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? v : Number(v.toPrecision(6));
  if (Array.isArray(v)) return v.map(normalise);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, normalise(x)]));
  return v;
}

describe('scheduleModel and its Gantt chart', () => {
  const r = scheduleModel({
    measured: measured(2, 2, 2),
    bootstrap: { replicates: 30, seed: 4 },
    exhaustive_max_tasks: 24,
    power: [{ engine: 'gpu', active_w: 40, idle_w: 8, source: 'test' }, { engine: 'npu', active_w: 6, idle_w: 1, source: 'test' }],
  });

  it('compares the strategies, names the best, and checks HEFT against the optimum on the same costs', () => {
    expect(r.strategies.map((s) => s.strategy)).toEqual(['all_gpu', 'per_gemm_split', 'pipelined', 'pipelined_search', 'optimal']);
    const opt = r.strategies.find((s) => s.strategy === 'optimal')!;
    expect(opt.proven_optimal).toBe(true);
    for (const s of r.strategies) expect(s.makespan_ms).toBeGreaterThanOrEqual(opt.makespan_ms - 1e-9);
    expect(r.best).toBe('optimal');
    expect(r.model).toMatchObject({ layers: 2, chunks: 2, microbatch_rows: 512, tasks: 20, handoff_ms: 0.127 });
    expect(r.exhaustive_check!.optimal_ms).toBeLessThanOrEqual(r.exhaustive_check!.heuristic_ms);
    expect(r.uncertainty!.replicates).toBe(30);
    expect(opt.interval).toBeNull();
    expect(r.strategies.find((s) => s.strategy === 'pipelined_search')!.interval).not.toBeNull();
    expect(r.energy.available).toBe(true);
    expect(r.left_out.map((x) => x.what).join('\n')).toMatch(/host time between submissions/);
  });

  it('draws the best schedule: one bar per placement, lanes per engine, the critical path outlined (golden)', () => {
    const best = r.strategies.find((s) => s.strategy === r.best)!;
    const spec = scheduleGanttSpec(r) as { data: { values: { critical: boolean }[] }; $schema: string };
    expect(spec.$schema).toBe('https://vega.github.io/schema/vega-lite/v5.json');
    expect(spec.data.values).toHaveLength(r.gantt.bars.length);
    expect(spec.data.values.filter((v) => v.critical).length).toBe(new Set(r.critical_path.steps.map((s) => s.task)).size);
    expect(JSON.stringify(spec)).toContain(`"text":"optimal (B&B): ${best.makespan_ms.toPrecision(3)} ms`);
    const text = JSON.stringify(normalise(spec), null, 2) + '\n';
    if (UPDATE || !existsSync(GOLDEN)) {
      writeFileSync(GOLDEN, text);
      if (!UPDATE) throw new Error('wrote missing golden schedule-gantt.vl.json: review it and run again');
    } else expect(text).toBe(readFileSync(GOLDEN, 'utf8'));
  });

  it('the best schedule is valid on its graph', () => {
    const g = prefillGraph(prefillSpecFromMeasured(measured(2, 2, 2)).spec);
    const bars = r.gantt.bars.map((b) => ({ task: b.task, engine: b.engine, start_ms: b.start_ms, end_ms: b.end_ms, rows: b.rows }));
    const finish = g.tasks.map((t) => Math.max(...bars.filter((b) => b.task === t.id).map((b) => b.end_ms)));
    const start = g.tasks.map((t) => Math.min(...bars.filter((b) => b.task === t.id).map((b) => b.start_ms)));
    expect(validateSchedule(g, { strategy: r.best, makespan_ms: Math.max(...finish), placements: bars, finish_ms: finish, start_ms: start })).toEqual([]);
  });
});
