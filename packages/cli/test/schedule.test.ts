import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, json, tickwise } from './run-cli';

const GPU = 'captures/sample/igpu-prefill.ireeperf.jsonl';
const NPU = 'captures/sample/npu-tiles.ireeperf.jsonl';
const TRUTH = JSON.parse(readFileSync(join(ROOT, 'captures/sample/igpu-prefill.truth.json'), 'utf8'));
const NPU_TRUTH = JSON.parse(readFileSync(join(ROOT, 'captures/sample/npu-tiles.truth.json'), 'utf8'));
const FIXTURES = resolve(ROOT, '../shared/fixtures/iree');
const HAVE_FIXTURES = existsSync(join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'));
if (!HAVE_FIXTURES) console.warn(`skipping the IREE fixture case: ${FIXTURES} is absent`);
const tmp = mkdtempSync(join(tmpdir(), 'tickwise-schedule-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// one run of the sample, shared by the tests that only read it
const SAMPLE = json('schedule', GPU, '--npu', NPU, '--microbatch', '512', '--bootstrap', '40');
const steady = TRUTH.segments[1];

describe('tickwise schedule on the sample capture', () => {
  it('reads the prefill structure from the capture: 28 layers x 4 ubatches of 512 rows, every kernel a stage', () => {
    expect(SAMPLE.structure).toMatchObject({ layers: 28, ubatches: 4, prompt_rows: 2048, rows_per_dispatch: 512 });
    expect(SAMPLE.structure.unmatched).toEqual([]);
    const kernelsOf = (role: string) => SAMPLE.structure.stages.find((s: { role: string }) => s.role === role).kernels.map((k: { kernel: string }) => k.kernel);
    expect(kernelsOf('qkv')).toEqual(['prefill_dispatch_2_matmul_512x5120x3072_f16']);
    expect(kernelsOf('attn_output')).toEqual(['prefill_dispatch_5_matmul_512x3072x3072_f16']);
    expect(kernelsOf('ffn_gate')).toEqual(['prefill_dispatch_6_matmul_512x8192x3072_f16']);
    expect(kernelsOf('ffn_up')).toEqual(['prefill_dispatch_7_matmul_512x8192x3072_f16']);
    expect(kernelsOf('ffn_down')).toEqual(['prefill_dispatch_9_matmul_512x3072x8192_f16']);
    expect(kernelsOf('attn_norm')).toEqual(kernelsOf('ffn_norm'));
    expect(kernelsOf('head')).toEqual(['prefill_dispatch_10_rms_norm_1x3072_f16', 'prefill_dispatch_11_matmul_1x128256x3072_f16']);
    expect(SAMPLE.model).toMatchObject({ layers: 28, chunks: 4, microbatch_rows: 512, tasks: 4 * (1 + 28 * 10) + 1 });
  });

  it('all-iGPU reproduces the measured steady prefill span within 5 %, against the generator truth', () => {
    const p = SAMPLE.reproduction;
    expect(p.within_5pct).toBe(true);
    expect(Math.abs(p.measured_span_ms - steady.span_ns / 1e6)).toBeLessThan(0.001);
    expect(Math.abs(p.model_ms - steady.span_ns / 1e6) / (steady.span_ns / 1e6)).toBeLessThan(0.05);
    // the model is the dispatches' summed time: what it leaves out is the idle (host gaps) and the overlap it serialises
    expect(p.model_ms).toBeCloseTo(steady.sum_dur_ns / 1e6, 3);
    const idle = p.accounted.find((a: { what: string }) => /host gaps/.test(a.what));
    expect(idle.ms).toBeCloseTo(steady.idle_ns / 1e6, 3);
    const overlap = p.accounted.find((a: { what: string }) => /in flight together/.test(a.what));
    expect(overlap.ms).toBeCloseTo(-(steady.sum_dur_ns - steady.busy_ns) / 1e6, 3);
    expect(Math.abs(p.residual_ms)).toBeLessThan(1e-6);
    const leftOut = SAMPLE.left_out.map((x: { what: string }) => x.what).join('\n');
    expect(leftOut).toMatch(/host gaps between submissions/);
    expect(leftOut).toMatch(/memory-bandwidth contention/);
  });

  it("fits attention over micro-batch position: the generator's 40 us per dispatch and 4 x 24 x 128 FLOP per row pair at 10 TFLOP/s", () => {
    const att = SAMPLE.stage_costs.find((c: { kind: string }) => c.kind === 'attention');
    expect(att.model).toBe('attention');
    expect(att.fit.line.positions).toBe(4);
    expect(att.fit.line.r2).toBeGreaterThan(0.98);
    // first micro-batch: 40 us + 1.2288e-6 ms x 512 x 256; last: x (1536 + 256)
    // (the generator's non-GEMM kernels carry 4 % noise per dispatch: 28 dispatches per position leave about 1 %)
    expect(att.first_chunk_ms / (0.04 + 1.2288e-6 * 512 * 256)).toBeCloseTo(1, 1);
    expect(Math.abs(att.last_chunk_ms / (0.04 + 1.2288e-6 * 512 * 1792) - 1)).toBeLessThan(0.02);
  });

  it('compares strategies with bootstrap error bars and the repetitions behind them; the best uses the NPU', () => {
    const byId = Object.fromEntries(SAMPLE.strategies.map((s: { strategy: string }) => [s.strategy, s]));
    expect(Object.keys(byId)).toEqual(['all_gpu', 'per_gemm_split', 'pipelined', 'pipelined_search']);
    expect(byId.all_gpu.speedup).toBe(1);
    // a 512-row GEMM is 2 groups: with a 6 ms NPU tile against 0.87 ms per iGPU group no split pays (ceiling's answer too)
    expect(byId.per_gemm_split.speedup).toBe(1);
    expect(byId.pipelined_search.speedup).toBeGreaterThan(1.05);
    expect(byId.pipelined_search.makespan_ms).toBeLessThanOrEqual(byId.pipelined.makespan_ms);
    expect(SAMPLE.best).toBe('pipelined_search');
    const u = SAMPLE.uncertainty;
    expect(u).toMatchObject({ replicates: 40, seed: 1, coverage: 0.9, repetitions: [{ capture: 'gpu', segments: 1 }, { capture: 'npu', segments: 1 }] });
    expect(u.dispatches).toBe(1126 + 40);
    for (const s of u.strategies) expect(s.speedup.low).toBeLessThanOrEqual(s.speedup.high);
    const npu = byId.pipelined_search.engines.find((e: { engine: string }) => e.engine === 'npu');
    expect(npu.utilisation).toBeGreaterThan(0.5);
  });

  it('the handoff defaults to the NPU capture\'s host turnaround, and the critical path spans the makespan', () => {
    expect(SAMPLE.model.handoff_source).toMatch(/^measured: median idle between consecutive NPU dispatches/);
    expect(SAMPLE.model.handoff_ms).toBeGreaterThan(0.04);
    expect(SAMPLE.model.handoff_ms).toBeLessThan(0.2);
    const best = SAMPLE.strategies.find((s: { strategy: string }) => s.strategy === SAMPLE.best);
    expect(SAMPLE.critical_path.length_ms).toBeCloseTo(best.makespan_ms, 6);
    expect(SAMPLE.gantt.bars).toHaveLength(SAMPLE.model.tasks);
  });

  it('bounds the optimum of the full graph from below: the best found is within a few % of it', () => {
    const best = SAMPLE.strategies.find((s: { strategy: string }) => s.strategy === SAMPLE.best);
    expect(SAMPLE.lower_bound.bound_ms).toBeLessThanOrEqual(best.makespan_ms);
    expect(SAMPLE.lower_bound.best_excess_max).toBeLessThan(0.1);
  });

  it('checks HEFT against the optimum on a cut-down graph of the same costs', () => {
    const x = SAMPLE.exhaustive_check;
    expect(x).toMatchObject({ layers: 1, chunks: 2, tasks: 23, proven_optimal: true });
    expect(x.optimal_ms).toBeLessThanOrEqual(x.search_ms);
    expect(x.search_ms).toBeLessThanOrEqual(x.heuristic_ms);
  });

  it('says energy is not available: the sample carries no power samples and no power was given', () => {
    expect(SAMPLE.energy.available).toBe(false);
    expect(SAMPLE.energy.note).toMatch(/measured energy: not available \(the captures carry no power samples\)/);
    expect(SAMPLE.energy.note).toMatch(/modelled energy: not available/);
  });

  it('prints it for people: provenance first, the strategies, the reproduction and what the model leaves out', () => {
    const r = tickwise('schedule', GPU, '--npu', NPU, '--microbatch', '512', '--bootstrap', '20');
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^# iGPU input: capture 1: captures\/sample\/igpu-prefill\.ireeperf\.jsonl \(ireeperf-jsonl v15/);
    expect(lines[1]).toMatch(/^# NPU input: capture 1: captures\/sample\/npu-tiles\.ireeperf\.jsonl/);
    expect(r.stdout).toMatch(/^schedule model: 28 layers x 4 micro-batches of 512 rows \(2048-row prompt\), 1125 stages; engines iGPU, NPU$/m);
    expect(r.stdout).toMatch(/^all-iGPU +893 ms +1\.000x/m);
    expect(r.stdout).toMatch(/^pipelined \(HEFT \+ search\) \* /m);
    expect(r.stdout).toMatch(/^best: pipelined \(HEFT \+ search\), .* \(median .*x, 90 % interval .*x \.\. .*x\)$/m);
    expect(r.stdout).toMatch(/error bars: 20 bootstrap replicates \(seed 1\) over 1 repetition of the iGPU capture and 1 repetition of the NPU capture/);
    expect(r.stdout).toMatch(/^model vs capture: all-iGPU at 512 rows 893 ms vs measured span 905 ms \(-1\.4 %, within 5 %\)$/m);
    expect(r.stdout).toMatch(/^the model leaves out:\n {2}- idle inside the span \(host gaps between submissions, barrier bubbles\) \(\+14\.8 ms per prefill in the capture\)$/m);
    expect(r.stdout).toMatch(/^heuristic vs optimum, on a cut-down graph of the same costs \(1 layer x 2 micro-batches, 23 stages\):$/m);
    expect(r.stdout).toMatch(/qkv on NPU: .*scaled by FLOPs to qkv's 5120x3072 \(x0\.6250\): an assumption, not measured/);
  });

  it('is seeded: the same seed gives the same intervals', () => {
    const again = json('schedule', GPU, '--npu', NPU, '--microbatch', '512', '--bootstrap', '40');
    expect(again.uncertainty).toEqual(SAMPLE.uncertainty);
  });
});

describe('the per-GEMM strategy equals tickwise ceiling on the same inputs', () => {
  it('a 2048-row micro-batch: ffn_gate splits as `tickwise ceiling --rows 2048` splits it, sync = the handoff', () => {
    const s = json('schedule', GPU, '--npu', NPU, '--microbatch', '2048', '--handoff', '126949ns', '--bootstrap', '0', '--exhaustive', 'off');
    const gate = s.per_gemm_splits.find((x: { kind: string }) => x.kind === 'ffn_gate');
    const c = json('ceiling', '--gpu', GPU, '--gpu-kernel', '*dispatch_6_matmul*', '--gpu-rows-per-dispatch', '512', '--npu', NPU, '--npu-kernel', '*', '--npu-rows-per-dispatch', '256', '--rows', '2048', '--sync-overhead', '126949ns');
    expect(gate.rows).toBe(2048);
    expect(gate.split.npu_groups).toBe(c.npu_groups);
    expect(gate.split.npu_groups).toBeGreaterThan(0);
    expect(gate.split.split_ms).toBe(c.split_ms);
    expect(gate.split.gpu_ms).toBe(c.gpu_ms_at_split);
    expect(gate.split.npu_ms).toBe(c.npu_ms_at_split);
    expect(gate.split.speedup).toBe(c.speedup);
    // the NPU tile ms is the truth's t, the iGPU group ms the truth's g
    expect(c.npu_tile_ms).toBeCloseTo(NPU_TRUTH.split_inputs.t_ms, 5);
    expect(c.gpu_group_ms).toBeCloseTo(NPU_TRUTH.split_inputs.g_ms, 5);
    expect(s.notes.join('\n')).toMatch(/micro-batch 2048 rows differs from the capture's 512 rows per dispatch/);
  });

  it('with --npu-tile-ms instead of a capture: the same as ceiling --npu-tile-ms on every GEMM of that shape', () => {
    const s = json('schedule', GPU, '--npu-tile-ms', '2.5', '--microbatch', '1024', '--handoff', '50us', '--bootstrap', '0', '--exhaustive', 'off');
    const c = json('ceiling', '--gpu', GPU, '--gpu-kernel', '*dispatch_7_matmul*', '--gpu-rows-per-dispatch', '512', '--npu-tile-ms', '2.5', '--rows', '1024', '--sync-overhead', '50us');
    const up = s.per_gemm_splits.find((x: { kind: string }) => x.kind === 'ffn_up');
    expect(up.split.split_ms).toBe(c.split_ms);
    expect(up.split.npu_groups).toBe(c.npu_groups);
    const src = s.stage_costs.find((x: { kind: string; engine: string }) => x.kind === 'qkv' && x.engine === 'npu').source.line;
    expect(src).toMatch(/^--npu-tile-ms 2\.5 per 256-row tile of 8192x3072 \(the ffn_gate GEMM; --npu-tile-shape to change\), scaled by FLOPs to qkv/);
  });
});

describe('energy from power samples', () => {
  // the sample with a hwmon-style power metric: 30 W at 10 ms steps over the steady prefill, 8 W in the gap before and after
  const start = BigInt(steady.start_ns);
  const end = BigInt(steady.end_ns);
  const lines = readFileSync(join(ROOT, GPU), 'utf8').trimEnd().split('\n');
  const sample = (id: number, t: bigint, mw: number, unit = 'mW', name = 'gpu.power') =>
    `{"schema_version":15,"record_type":"device_metric_sample","source_record_index":901,"sample_id":${id},"source_id":7,"flags":1,"physical_device_ordinal":0,"host_time_domain":"iree_host_time_ns","host_time_begin_ns":${t},"host_time_end_ns":${t},"host_time_uncertainty_ns":0,"values":[{"metric_id":1,"name":"${name}","unit":"${unit}","value_kind":"u64","semantic":"instant","plot_hint":"number","flags":0,"value":${mw},"value_bits":${mw}}]}`;
  const extra = [`{"schema_version":15,"record_type":"device_metric_source","source_record_index":900,"source_id":7,"physical_device_ordinal":0,"device_class":"gpu","device_class_value":2,"flags":0,"source_kind":1,"source_revision":1,"metric_count":1,"name":"hwmon"}`];
  let id = 1;
  extra.push(sample(id++, start - 50_000_000n, 8000));
  // inside the capture's own segment (its fitted times lie within tens of ns of the truth's)
  for (let t = start + 1000n; t < end - 1000n; t += 10_000_000n) extra.push(sample(id++, t, 30000));
  extra.push(sample(id++, end - 1000n, 30000));
  extra.push(sample(id++, end + 50_000_000n, 8000));
  extra.push(sample(id++, end + 60_000_000n, 5, 'count', 'soc.power_state'));
  const file = join(tmp, 'igpu-power.ireeperf.jsonl');
  writeFileSync(file, [...lines.slice(0, -1), ...extra, lines[lines.length - 1]].join('\n') + '\n');

  it('measures joules per prefill from the samples, and models each strategy from active and idle power', () => {
    const s = json('schedule', file, '--npu', NPU, '--npu-active-w', '6', '--npu-idle-w', '1', '--bootstrap', '0', '--exhaustive', 'off');
    const spanS = Number(end - start) / 1e9;
    // the capture's segment is its fitted first start to last end, within tens of ns of the truth's
    expect(s.energy.measured.joules_per_prefill).toBeCloseTo(30 * spanS, 4);
    expect(s.energy.measured.segments[0].mean_w).toBeCloseTo(30, 9);
    const gpuPower = s.energy.power.find((p: { engine: string }) => p.engine === 'gpu');
    expect(gpuPower.active_w).toBeCloseTo(30, 9);
    expect(gpuPower.idle_w).toBeCloseTo(8, 9);
    expect(s.energy.available).toBe(true);
    const all = s.strategies.find((x: { strategy: string }) => x.strategy === 'all_gpu');
    // all-iGPU: the iGPU busy the whole makespan at 30 W, the NPU idle beside it at 1 W
    expect(all.energy.joules).toBeCloseTo((30 * all.makespan_ms + 1 * all.makespan_ms) / 1e3, 9);
    expect(s.notes.join('\n')).toMatch(/power metric soc\.power_state \(unit count\): not a power unit/);
  });

  it('says which power is missing when a model needs it', () => {
    const s = json('schedule', file, '--npu', NPU, '--bootstrap', '0', '--exhaustive', 'off');
    expect(s.energy.available).toBe(false);
    expect(s.energy.note).toMatch(/modelled energy: not available \(give --npu-active-w, --npu-idle-w\)/);
    expect(s.energy.measured.joules_per_prefill).toBeGreaterThan(0);
  });
});

describe('the Gantt chart of the best schedule', () => {
  it('is a Vega-Lite spec that vega-lite 6 compiles and vega renders, with no warnings', async () => {
    const r = tickwise('schedule', GPU, '--npu', NPU, '--microbatch', '512', '--bootstrap', '0', '--exhaustive', 'off', '--format', 'vega-lite');
    expect(r.code).toBe(0);
    const spec = JSON.parse(r.stdout);
    expect(spec.$schema).toBe('https://vega.github.io/schema/vega-lite/v5.json');
    expect(spec.data.values).toHaveLength(1125);
    expect(spec.encoding.y.sort).toEqual(['iGPU', 'NPU']);
    const req = createRequire(join(ROOT, 'packages/report/package.json'));
    const vl = (await import(req.resolve('vega-lite'))) as { compile: (s: unknown, o: unknown) => { spec: unknown } };
    const vega = (await import(req.resolve('vega'))) as { parse: (s: unknown) => unknown; View: new (r: unknown, o: unknown) => { toSVG: () => Promise<string> } };
    const warnings: string[] = [];
    const logger = { level() { return this; }, warn: (...a: unknown[]) => warnings.push(a.join(' ')), info() {}, debug() {}, error: (...a: unknown[]) => warnings.push(a.join(' ')) };
    const compiled = vl.compile(spec, { logger });
    const svg = await new vega.View(vega.parse(compiled.spec), { renderer: 'none' }).toSVG();
    expect(warnings).toEqual([]);
    expect(svg).toMatch(/^<svg/);
    expect(svg).toContain('pipelined (HEFT + search)');
  });
});

describe('usage errors exit 2 with one line', () => {
  const cases: [string[], RegExp][] = [
    [['--handoff', '100'], /^tickwise: --handoff: invalid duration: 100 \(write a unit/],
    [['--stage', 'bogus=*x*'], /^tickwise: --stage bogus=\*x\*: write ROLE=GLOB\[,GLOB\] with ROLE one of embed, attn_norm/],
    [['--npu', NPU, '--npu-tile-ms', '6'], /^tickwise: give the NPU cost one way: --npu CAPTURE or --npu-tile-ms X, not both/],
    [['--exhaustive', '3'], /^tickwise: --exhaustive 3: write LAYERSxMICROBATCHES/],
    [['--npu-stage', 'attention=fast'], /^tickwise: --npu-stage attention=fast: write ROLE=FACTOR/],
    [['--microbatch', '0'], /^tickwise: --microbatch 0: write a whole number/],
  ];
  for (const [extra, want] of cases) {
    it(extra.join(' '), () => {
      const r = tickwise('schedule', GPU, '--bootstrap', '0', ...extra);
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(want);
      expect(r.stderr).not.toMatch(/at .*\.ts:\d+/);
    });
  }

  it('a capture with no layer structure asks for --layers or --tokens', () => {
    const r = tickwise('schedule', NPU, '--bootstrap', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: cannot tell layers from micro-batches in capture 1 \(npu-tiles\.ireeperf\.jsonl\) device 0: give --layers N or --tokens N$/m);
  });

  it.skipIf(!HAVE_FIXTURES)('a capture whose kernels are not recognised names the --stage option and lists its kernels (IREE fixture)', () => {
    const r = tickwise('schedule', join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'), '--bootstrap', '0');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no GEMM kernel name carries an MxNxK shape; give --rows-per-dispatch N/);
    const r2 = tickwise('schedule', join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'), '--bootstrap', '0', '--rows-per-dispatch', '512');
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/was recognised as a layer stage \(qkv, attention, ffn_down, \.\.\.\); name them with --stage ROLE=GLOB\. Kernels: sa_matmul_dispatch_1_matmul_f32/);
  });
});
