import type { CommandModule } from 'yargs';
import {
  STAGE_ROLES,
  captureFacts,
  isStageRole,
  kernelSamples,
  provenanceLine,
  segmentEnergy,
  stageSamples,
  type KernelSamplesResult,
  type SegmentEnergy,
  type StageFound,
  type StageRole,
  type StageSamplesResult,
} from '@tickwise/analyzer';
import { openInputs } from '@tickwise/capture';
import {
  DEFAULT_GROUP_ROWS,
  GEMM_STAGES,
  MODEL_LEAVES_OUT,
  STRATEGY_NAMES,
  constantCost,
  formatMs,
  formatSpeedup,
  scheduleGanttSpec,
  scheduleModel,
  type CaptureReference,
  type CriticalStep,
  type EnginePower,
  type MeasuredCost,
  type MeasuredEnergy,
  type MeasuredPrefill,
  type MeasuredStage,
  type SamplePart,
  type ScheduleModelResult,
  type StageKind,
} from '@tickwise/ceiling';
import { nsToMsLossy } from '@tickwise/time';
import { durationOption, importOptions, msOption, rowsOption, usageError } from '../options';
import { formatJson, formatTable, out } from '../output';

const FORMATS = ['text', 'json', 'vega-lite'] as const;
type OutputFormat = (typeof FORMATS)[number];

/** Parsed options of `tickwise schedule` (the report reuses them). */
export interface Args {
  gpu: string;
  npu?: string | undefined;
  'npu-kernel'?: string | undefined;
  'npu-rows-per-dispatch'?: string | undefined;
  'npu-segment'?: string | undefined;
  'npu-reps'?: number | undefined;
  'npu-capture'?: number | undefined;
  'npu-device'?: number | undefined;
  'npu-tile-ms'?: string | undefined;
  'npu-tile-shape'?: string | undefined;
  'npu-stage'?: string[] | undefined;
  microbatch?: string | undefined;
  'rows-per-dispatch'?: string | undefined;
  layers?: string | undefined;
  tokens?: string | undefined;
  segment?: string | undefined;
  reps?: number | undefined;
  capture?: number | undefined;
  device?: number | undefined;
  stage?: string[] | undefined;
  handoff?: string | undefined;
  'group-rows'?: string | undefined;
  bootstrap: number;
  seed: number;
  exhaustive: string;
  'gpu-active-w'?: string | undefined;
  'gpu-idle-w'?: string | undefined;
  'npu-active-w'?: string | undefined;
  'npu-idle-w'?: string | undefined;
  format: OutputFormat;
  json?: boolean | undefined;
  'input-format'?: string | undefined;
  'tick-hz'?: string | undefined;
}

/** The analyzer's roles are the model's stage kinds, one for one (a new role breaks the build until mapped). */
const ROLE_TO_KIND: Record<StageRole, StageKind> = {
  embed: 'embed', attn_norm: 'attn_norm', qkv: 'qkv', rope: 'rope', attention: 'attention', attn_output: 'attn_output',
  ffn_norm: 'ffn_norm', ffn_gate: 'ffn_gate', ffn_up: 'ffn_up', ffn_act: 'ffn_act', ffn_down: 'ffn_down', head: 'head',
};

const ENGINES = [{ id: 'gpu', name: 'iGPU' }, { id: 'npu', name: 'NPU' }] as const;

/** A power in W (the option's name carries the unit), or with a unit (4500mW). */
function wattOption(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const t = String(text).trim();
  const m = /^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(W|mW|kW)?$/.exec(t);
  const per: Record<string, number> = { W: 1, mW: 1e-3, kW: 1e3 };
  const v = m ? Number(m[1]) * per[m[2] ?? 'W']! : NaN;
  if (!(v >= 0) || !Number.isFinite(v)) throw usageError(`--${name} ${t}: write a power in W (e.g. 35 or 35W, 800mW)`);
  return v;
}

function list(v: string[] | string | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** `--stage qkv='*qkv*,*wq*'` (repeatable) -> globs per role. */
function stagePatterns(items: readonly string[]): Partial<Record<StageRole, string[]>> {
  const out: Partial<Record<StageRole, string[]>> = {};
  for (const it of items) {
    const i = it.indexOf('=');
    const role = i > 0 ? it.slice(0, i).trim() : '';
    const globs = i > 0 ? it.slice(i + 1).split(',').map((g) => g.trim()).filter(Boolean) : [];
    if (!isStageRole(role) || globs.length === 0) {
      throw usageError(`--stage ${it}: write ROLE=GLOB[,GLOB] with ROLE one of ${Object.keys(STAGE_ROLES).join(', ')} (e.g. --stage 'qkv=*attn_qkv*')`);
    }
    out[role] = [...(out[role] ?? []), ...globs];
  }
  return out;
}

/** `--npu-stage attention=1.5` (repeatable) -> factor per role. */
function npuFactors(items: readonly string[]): Map<StageRole, number> {
  const out = new Map<StageRole, number>();
  for (const it of items) {
    const m = /^([a-z_]+)=([0-9]*\.?[0-9]+)x?$/.exec(it.trim());
    if (!m || !isStageRole(m[1]!) || !(Number(m[2]) > 0)) {
      throw usageError(`--npu-stage ${it}: write ROLE=FACTOR, the NPU's time for that stage as a multiple of the iGPU's (e.g. attention=1.5); ROLE one of ${Object.keys(STAGE_ROLES).join(', ')}`);
    }
    out.set(m[1] as StageRole, Number(m[2]));
  }
  return out;
}

function shapeOption(text: string | undefined): { n: number; k: number } | undefined {
  if (text === undefined) return undefined;
  const m = /^(\d+)x(\d+)$/.exec(String(text).trim());
  if (!m) throw usageError(`--npu-tile-shape ${text}: write NxK of the GEMM the tile time is for (e.g. 8192x3072)`);
  return { n: Number(m[1]), k: Number(m[2]) };
}

function exhaustiveOption(text: string): { layers: number; chunks: number } | null {
  const t = String(text).trim();
  if (t === 'off') return null;
  const m = /^(\d+)x(\d+)$/.exec(t);
  if (!m || Number(m[1]) < 1 || Number(m[2]) < 1) throw usageError(`--exhaustive ${t}: write LAYERSxMICROBATCHES (e.g. 1x2) for the cut-down graph to search exhaustively, or off`);
  return { layers: Number(m[1]), chunks: Number(m[2]) };
}

/** Sum of N x K of a role's GEMM parts (x dispatches per instance), or null when a part has no shape. */
function stageNK(s: StageFound): number | null {
  let nk = 0;
  for (const p of s.parts) {
    if (!p.shape) return null;
    nk += p.per_instance * p.shape.n * p.shape.k;
  }
  return nk;
}

function partsOf(s: StageFound, capture: string): SamplePart[] {
  return s.parts.map((p) => ({ kernel: p.kernel, capture, per_instance: p.per_instance, dur_ns: p.dur_ns, segment: p.segment, position: p.position }));
}

/** Energy from a capture's power samples: the metric on the wanted device if any, else the first. */
function pickEnergy(metrics: readonly SegmentEnergy[], device: number): SegmentEnergy | null {
  return metrics.find((m) => m.device === device) ?? metrics[0] ?? null;
}

/** What {@link gather} found. */
export interface Gathered {
  measured: MeasuredPrefill;
  capture: CaptureReference;
  power: EnginePower[];
  measuredEnergy: MeasuredEnergy | null;
  handoffSource: string;
  notes: string[];
  provenance: string[];
  captures: unknown[];
  gpu: StageSamplesResult;
  npu: KernelSamplesResult | null;
}

/** Reads both captures and turns them into the model's inputs. */
/** Reads the captures into the model's measured inputs (also used by `tickwise report --schedule`). */
export async function gather(args: Args): Promise<Gathered> {
  const groupRows = rowsOption(args['group-rows'], 'group-rows') ?? DEFAULT_GROUP_ROWS;
  const tileMs = msOption(args['npu-tile-ms'], 'npu-tile-ms');
  if (args.npu !== undefined && tileMs !== undefined) throw usageError('give the NPU cost one way: --npu CAPTURE or --npu-tile-ms X, not both');
  const factors = npuFactors(list(args['npu-stage']));
  const patterns = stagePatterns(list(args.stage));
  const given = durationOption(args.handoff, 'handoff');
  const microbatchGiven = rowsOption(args.microbatch, 'microbatch');
  const rowsGiven = rowsOption(args['rows-per-dispatch'], 'rows-per-dispatch');
  const layersGiven = rowsOption(args.layers, 'layers');
  const tokensGiven = rowsOption(args.tokens, 'tokens');
  const npuRowsGiven = rowsOption(args['npu-rows-per-dispatch'], 'npu-rows-per-dispatch');
  const tileShape = shapeOption(args['npu-tile-shape']);
  for (const id of ['gpu', 'npu'] as const) for (const k of ['active', 'idle'] as const) wattOption(args[`${id}-${k}-w`], `${id}-${k}-w`);
  const notes: string[] = [];
  const provenance: string[] = [];
  const captures: unknown[] = [];
  const imp = (input: string) => importOptions({ inputs: [input], format: args['input-format'], 'tick-hz': args['tick-hz'] });

  // the iGPU capture: stages, structure, segments, power
  const g = await openInputs([args.gpu], imp(args.gpu));
  let gpu: StageSamplesResult;
  let gpuEnergy: { metrics: SegmentEnergy[]; skipped: string[] };
  try {
    gpu = await stageSamples(g.store, {
      captureId: args.capture,
      device: args.device,
      segment: args.segment,
      reps: args.reps,
      rowsPerDispatch: rowsGiven,
      layers: layersGiven,
      tokens: tokensGiven,
      patterns,
    });
    provenance.push((await provenanceLine(g.store, gpu.capture_id)).replace(/^# /, '# iGPU input: '));
    captures.push({ role: 'gpu', input: args.gpu, capture: (await captureFacts(g.store, [gpu.capture_id]))[0] ?? null });
    gpuEnergy = await segmentEnergy(g.store, gpu.capture_id, gpu.segments, gpu.all_segments);
  } finally {
    await g.store.close();
  }
  notes.push(...gpu.notes);
  const gpuLabel = `${args.gpu} (capture ${gpu.capture_id} device ${gpu.device}, segment ${gpu.segment}: ${gpu.segments.length} prefill${gpu.segments.length === 1 ? '' : 's'})`;
  const microbatch = microbatchGiven ?? gpu.rows_per_dispatch;
  if (microbatchGiven === undefined) notes.push(`--microbatch not given: ${microbatch} rows, the capture's rows per dispatch`);
  if (microbatch !== gpu.rows_per_dispatch) {
    notes.push(`micro-batch ${microbatch} rows differs from the capture's ${gpu.rows_per_dispatch} rows per dispatch: costs are scaled linearly in rows (attention by its fitted line), not measured at ${microbatch}`);
  }

  // the NPU: a capture, a number, or nothing
  let npu: KernelSamplesResult | null = null;
  let npuEnergy: { metrics: SegmentEnergy[]; skipped: string[] } | null = null;
  if (args.npu !== undefined) {
    const n = await openInputs([args.npu], imp(args.npu));
    try {
      npu = await kernelSamples(n.store, { captureId: args['npu-capture'], device: args['npu-device'], segment: args['npu-segment'], reps: args['npu-reps'], kernel: args['npu-kernel'] ?? '*', kind: 'npu' });
      provenance.push((await provenanceLine(n.store, npu.capture_id)).replace(/^# /, '# NPU input: '));
      captures.push({ role: 'npu', input: args.npu, capture: (await captureFacts(n.store, [npu.capture_id]))[0] ?? null });
      npuEnergy = await segmentEnergy(n.store, npu.capture_id, npu.segments, npu.all_segments);
    } finally {
      await n.store.close();
    }
    notes.push(...npu.notes);
  }
  const npuTiles = npu === null ? [] : npu.kernels.filter((k) => k.shape !== null);
  if (npu !== null && npuTiles.length === 0) {
    throw usageError(`--npu ${args.npu}: no kernel name carries an MxNxK GEMM shape, so its tiles cannot be matched to the model's GEMMs; narrow --npu-kernel to the GEMM tiles, or give the tile time with --npu-tile-ms X (--npu-tile-shape NxK)`);
  }
  const hasNpu = npu !== null || tileMs !== undefined;
  const engines = hasNpu ? [...ENGINES] : [ENGINES[0]];
  if (!hasNpu) notes.push('no NPU given (--npu CAPTURE or --npu-tile-ms X): only the iGPU runs, so every strategy is the all-iGPU schedule');

  // the GEMM the --npu-tile-ms time is for
  const byRole = new Map(gpu.stages.map((s) => [s.role, s] as const));
  let tileNK: { nk: number; what: string } | null = null;
  if (tileMs !== undefined) {
    const shape = tileShape;
    if (shape) tileNK = { nk: shape.n * shape.k, what: `${shape.n}x${shape.k}` };
    else {
      const ref = byRole.get('ffn_gate') ?? byRole.get('ffn_up') ?? gpu.stages.find((s) => GEMM_STAGES.includes(ROLE_TO_KIND[s.role]));
      const nk = ref ? stageNK(ref) : null;
      if (ref && nk !== null) {
        const p = ref.parts[0]!.shape!;
        tileNK = { nk, what: `${p.n}x${p.k} (the ${ref.role} GEMM; --npu-tile-shape to change)` };
      }
    }
  }

  const stages: MeasuredStage[] = gpu.stages.map((s) => {
    const kind = ROLE_TO_KIND[s.role];
    const fit = kind === 'attention' ? 'attention' : kind === 'head' ? 'fixed' : 'rows';
    const gpuCost: MeasuredCost = {
      form: 'dispatches',
      fit,
      rows_per_dispatch: gpu.rows_per_dispatch,
      parts: partsOf(s, 'gpu'),
      scale: 1,
      whole_tiles: false,
      source: {
        from: 'capture',
        line: `${gpuLabel}: ${s.parts.map((p) => `${p.kernel} (${p.dur_ns.length} dispatches${p.per_instance !== 1 ? `, ${p.per_instance} per stage` : ''}${p.shared_by.length > 1 ? `, shared by ${p.shared_by.join('+')}` : ''})`).join(' + ')}; ${s.rule}`,
        details: { capture_id: gpu.capture_id, device: gpu.device, segment: gpu.segment, kernels: s.parts.map((p) => p.kernel), rule: s.rule },
      },
    };
    let npuCost: MeasuredCost | null = null;
    const nk = stageNK(s);
    if (hasNpu && GEMM_STAGES.includes(kind)) {
      if (nk === null) notes.push(`${s.role}: its kernels carry no MxNxK shape, so the NPU cost cannot be matched or scaled: it stays on the iGPU`);
      else if (npu !== null) {
        const exact = s.parts.length === 1 ? npuTiles.find((t) => t.shape!.n === s.parts[0]!.shape!.n && t.shape!.k === s.parts[0]!.shape!.k) : undefined;
        const tile = exact ?? [...npuTiles].sort((a, b) => b.dur_ns.length - a.dur_ns.length)[0]!;
        const tNK = tile.shape!.n * tile.shape!.k;
        const scale = exact ? s.parts[0]!.per_instance : nk / tNK;
        const U = npuRowsGiven ?? tile.shape!.m;
        npuCost = {
          form: 'dispatches',
          fit: 'rows',
          rows_per_dispatch: U,
          parts: [{ kernel: tile.kernel, capture: 'npu', per_instance: 1, dur_ns: tile.dur_ns, segment: tile.segment, position: tile.dur_ns.map(() => 0) }],
          scale,
          whole_tiles: true,
          source: {
            from: 'capture',
            line: `${args.npu} (capture ${npu.capture_id} device ${npu.device}, segment ${npu.segment}): ${tile.kernel}, ${tile.dur_ns.length} dispatches of ${U} rows` +
              (exact ? '' : `; scaled by FLOPs to ${s.role}'s ${s.parts.map((p) => `${p.shape!.n}x${p.shape!.k}`).join('+')} (x${scale.toFixed(4)}): an assumption, not measured`),
            details: { capture_id: npu.capture_id, device: npu.device, kernel: tile.kernel, rows_per_dispatch: U, scale, measured_shape: !!exact },
          },
        };
      } else if (tileMs !== undefined && tileNK !== null) {
        const scale = nk / tileNK.nk;
        npuCost = {
          form: 'model',
          model: { model: 'rows', per_group: constantCost(tileMs * scale, { what: '--npu-tile-ms' }), whole_tiles: true },
          source: { from: 'number', line: `--npu-tile-ms ${args['npu-tile-ms']} per ${groupRows}-row tile of ${tileNK.what}${scale === 1 ? '' : `, scaled by FLOPs to ${s.role} (x${scale.toFixed(4)}): an assumption`}` },
        };
      }
    }
    const f = factors.get(s.role);
    if (hasNpu && f !== undefined) {
      npuCost = { form: 'model', model: { model: 'scaled', of: 'gpu', factor: f }, source: { from: 'number', line: `--npu-stage ${s.role}=${f}: the NPU at ${f} x the iGPU's time (a what-if)` } };
    }
    const cost: Record<string, MeasuredCost | null> = { gpu: gpuCost };
    if (hasNpu) cost['npu'] = npuCost;
    return { kind, cost };
  });
  for (const r of factors.keys()) if (!byRole.has(r)) notes.push(`--npu-stage ${r}: no such stage in the capture`);

  // handoff: given, else the NPU's host turnaround, else 0
  let handoffMs = 0;
  let handoffSource: string;
  if (given !== undefined) {
    handoffMs = nsToMsLossy(given);
    handoffSource = `--handoff ${args.handoff}`;
  } else if (npu !== null && npu.median_gap_ns !== null) {
    handoffMs = npu.median_gap_ns / 1e6;
    handoffSource = `measured: median idle between consecutive NPU dispatches in ${args.npu} (${npu.gaps} gaps): the host's turnaround from one completion to the next start (--handoff to change)`;
  } else {
    handoffSource = hasNpu ? 'not given and not measured: 0 (optimistic; give --handoff 100us or an NPU capture)' : 'one engine: no handoff';
    if (hasNpu) notes.push('handoff 0: no --handoff and no NPU capture to measure it from, so engine changes are free in this answer (optimistic)');
  }

  // the capture the all-iGPU model should reproduce
  const nSeg = gpu.segments.length;
  const mean = (f: (s: (typeof gpu.segments)[number]) => bigint) => gpu.segments.reduce((a, s) => a + Number(f(s)), 0) / nSeg / 1e6;
  const capture: CaptureReference = {
    span_ms: mean((s) => s.span_ns),
    busy_ms: mean((s) => s.busy_ns),
    sum_ms: mean((s) => s.sum_dur_ns),
    unmodelled: gpu.unmatched.map((u) => ({ kernel: u.kernel, ms: u.ns_per_prefill / 1e6 })),
    segments: nSeg,
    rows_per_dispatch: gpu.rows_per_dispatch,
    source: `${gpuLabel}: mean span of segment${nSeg === 1 ? '' : 's'} ${gpu.segments.map((s) => s.segment).join(', ')}`,
  };

  // power: flags, else measured
  const gE = pickEnergy(gpuEnergy.metrics, gpu.device);
  const nE = npuEnergy && npu ? pickEnergy(npuEnergy.metrics, npu.device) : null;
  for (const s of [...gpuEnergy.skipped, ...(npuEnergy?.skipped ?? [])]) notes.push(`power metric ${s}: not a power unit tickwise reads (W, mW, uW), left out of the energy`);
  const measuredEnergy: MeasuredEnergy | null = gE
    ? {
        segments: gE.segments,
        joules_per_prefill: gE.segments.reduce((a, s) => a + s.joules, 0) / Math.max(1, gE.segments.length),
        source: `${gE.metric} of ${args.gpu} device ${gE.device ?? '?'} over ${gE.segments.length} prefill segment${gE.segments.length === 1 ? '' : 's'}; ${gE.method}`,
      }
    : null;
  const power: EnginePower[] = [];
  const engPower = (id: 'gpu' | 'npu', e: SegmentEnergy | null, input: string | undefined) => {
    const a = wattOption(args[`${id}-active-w`], `${id}-active-w`);
    const i = wattOption(args[`${id}-idle-w`], `${id}-idle-w`);
    const segMean = e && e.segments.length ? e.segments.reduce((x, s) => x + s.mean_w, 0) / e.segments.length : null;
    const active = a ?? segMean;
    const idle = i ?? e?.outside_mean_w ?? null;
    const src = [
      a !== undefined ? `--${id}-active-w ${args[`${id}-active-w`]}` : segMean !== null ? `active: measured mean ${segMean.toFixed(2)} W of ${e!.metric} over the prefill segments of ${input} (taken as active power)` : `active: unknown`,
      i !== undefined ? `--${id}-idle-w ${args[`${id}-idle-w`]}` : e?.outside_mean_w != null ? `idle: measured mean ${e.outside_mean_w.toFixed(2)} W of ${e.metric} outside the prefills (${e.outside_samples} samples)` : 'idle: unknown',
    ].join('; ');
    if (active !== null || idle !== null) power.push({ engine: id, active_w: active, idle_w: idle, source: src });
  };
  engPower('gpu', gE, args.gpu);
  if (hasNpu) engPower('npu', nE, args.npu);
  if (power.length && hasNpu) {
    for (const id of ['gpu', 'npu'] as const) if (!power.some((p) => p.engine === id)) power.push({ engine: id, active_w: null, idle_w: null, source: 'unknown' });
  }

  return {
    measured: {
      layers: gpu.layers,
      prompt_rows: gpu.prompt_rows,
      microbatch_rows: microbatch,
      group_rows: groupRows,
      engines,
      reference_engine: 'gpu',
      stages,
      handoff: { default_ms: handoffMs },
    },
    capture,
    power,
    measuredEnergy,
    handoffSource,
    notes,
    provenance,
    captures,
    gpu,
    npu,
  };
}

/** A one-line progress report on a TTY (the model runs synchronously, so it writes as it goes); nothing when piped. */
function progressLine(): ((phase: string, done: number, total: number) => void) | undefined {
  if (!process.stderr.isTTY) return undefined;
  let last = 0;
  return (phase, done, total) => {
    const now = Date.now();
    if (now - last < 100 && done < total) return;
    last = now;
    process.stderr.write(`\r\x1b[K${phase} ${done}/${total}`);
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
// below a femtosecond is float noise of a difference of sums (-5.68e-12 ms): printed as 0
const signedMs = (x: number) => (Math.abs(x) < 1e-9 ? '0 ms' : `${x >= 0 ? '+' : '-'}${formatMs(Math.abs(x))} ms`);

/** Runs of consecutive critical-path steps on one engine: "iGPU 40 stages (L0 c0 embed .. L3 c0 ffn_down) 30.1 ms". */
function pathRuns(steps: readonly CriticalStep[], names: Map<string, string>): string[] {
  const runs: { engine: string; first: CriticalStep; last: CriticalStep; n: number; ms: number; handoff: number }[] = [];
  for (const s of steps) {
    const r = runs[runs.length - 1];
    if (r && r.engine === s.engine) {
      r.last = s;
      r.n++;
      r.ms += s.end_ms - s.start_ms;
    } else runs.push({ engine: s.engine, first: s, last: s, n: 1, ms: s.end_ms - s.start_ms, handoff: s.handoff_ms });
  }
  const eng = (e: string) => e.split('+').map((x) => names.get(x) ?? x).join('+');
  return runs.map((r) => `${eng(r.engine)}: ${r.n} stage${r.n === 1 ? '' : 's'} (${r.first.name}${r.n > 1 ? ` .. ${r.last.name}` : ''}) ${formatMs(r.ms)} ms${r.handoff > 0 ? ` after a ${formatMs(r.handoff)} ms handoff` : ''}`);
}

/** The human report. */
export function scheduleText(r: ScheduleModelResult, provenance: readonly string[]): string {
  const names = new Map(r.model.engines.map((e) => [e.id, e.name]));
  const L: string[] = [...provenance, ''];
  const m = r.model;
  L.push(`schedule model: ${m.layers} layers x ${m.chunks} micro-batch${m.chunks === 1 ? '' : 'es'} of ${m.microbatch_rows} rows (${m.prompt_rows}-row prompt), ${m.tasks} stages; engines ${m.engines.map((e) => e.name).join(', ')}`);
  L.push(`handoff between engines: ${formatMs(m.handoff_ms)} ms (${m.handoff_source})`);
  L.push('');
  const u = r.uncertainty;
  const cols = ['strategy', 'makespan', 'speedup', ...(u ? ['median', `${Math.round(u.coverage * 100)} % interval`] : []), ...m.engines.map((e) => `${e.name} busy`)];
  const rows = r.strategies.map((s) => {
    const row: Record<string, unknown> = {
      strategy: `${s.name}${s.strategy === r.best ? ' *' : ''}${s.proven_optimal === false ? ' (not proven)' : ''}`,
      makespan: `${formatMs(s.makespan_ms)} ms`,
      speedup: formatSpeedup(s.speedup),
    };
    if (u) {
      row['median'] = s.interval ? formatSpeedup(s.interval.speedup.median) : '-';
      row[`${Math.round(u.coverage * 100)} % interval`] = s.interval ? `${formatSpeedup(s.interval.speedup.low)} .. ${formatSpeedup(s.interval.speedup.high)}` : '-';
    }
    for (const e of s.engines) row[`${names.get(e.engine)} busy`] = `${formatMs(e.busy_ms)} ms (${pct(e.utilisation)})`;
    return row;
  });
  L.push(formatTable(cols, rows));
  const best = r.strategies.find((s) => s.strategy === r.best)!;
  const bi = best.interval;
  L.push('');
  L.push(`best: ${best.name}, ${formatMs(best.makespan_ms)} ms, ${formatSpeedup(best.speedup)} over all-iGPU` +
    (u && bi ? ` (median ${formatSpeedup(bi.speedup.median)}, ${Math.round(u.coverage * 100)} % interval ${formatSpeedup(bi.speedup.low)} .. ${formatSpeedup(bi.speedup.high)})` : ''));
  const lb = r.lower_bound;
  L.push(`no schedule of this graph takes less than ${formatMs(lb.bound_ms)} ms (${lb.load_ms >= lb.path_ms ? 'the work at each engine\'s speed' : 'the longest least-cost path'}; path ${formatMs(lb.path_ms)} ms, load ${formatMs(lb.load_ms)} ms): the best found is at most ${pct(lb.best_excess_max)} above the optimum`);
  if (u) {
    L.push(`error bars: ${u.replicates} bootstrap replicates (seed ${u.seed}) over ${u.repetitions.map((x) => `${x.segments} repetition${x.segments === 1 ? '' : 's'} of the ${names.get(x.capture) ?? x.capture} capture`).join(' and ')}, ${u.dispatches} dispatches; ${u.method}`);
    for (const n of u.notes) L.push(`  note: ${n.replace(/^(gpu|npu):/, (x) => `${names.get(x.slice(0, -1)) ?? x}:`)}`);
  } else L.push('error bars: off (--bootstrap 0)');
  L.push('');
  const cp = r.critical_path;
  L.push(`critical path of the best schedule: ${cp.steps.length} stages, ${formatMs(cp.length_ms)} ms (handoff on it ${formatMs(cp.handoff_ms)} ms)`);
  L.push(`  by engine: ${cp.by_engine.map((e) => `${e.engine.split('+').map((x) => names.get(x) ?? x).join('+')} ${formatMs(e.ms)} ms`).join(', ')}`);
  L.push(`  by stage: ${cp.by_kind.map((k) => `${k.kind} ${formatMs(k.ms)} ms (${k.steps})`).join(', ')}`);
  const runs = pathRuns(cp.steps, names);
  const shown = runs.length <= 12 ? runs : [...runs.slice(0, 6), `... ${runs.length - 12} more runs ...`, ...runs.slice(-6)];
  for (const x of shown) L.push(`  ${x}`);
  if (r.per_gemm_splits.length) {
    L.push('');
    L.push(`per-GEMM split (tickwise ceiling of each GEMM: M = its rows, sync = the handoff):`);
    L.push(formatTable(['gemm', 'rows', 'npu_groups', 'gpu_ms', 'npu_ms', 'split_ms', 'speedup', 'instances'], r.per_gemm_splits.map((s) => ({
      gemm: s.kind, rows: s.rows, npu_groups: s.split.npu_groups, gpu_ms: formatMs(s.split.gpu_ms), npu_ms: formatMs(s.split.npu_ms),
      split_ms: formatMs(s.split.split_ms), speedup: formatSpeedup(s.split.speedup), instances: s.instances,
    }))));
  }
  L.push('');
  L.push(`stage costs (ms per stage: first and last micro-batch, and summed over one prefill as if every instance ran on that engine)`);
  L.push(formatTable(['stage', 'engine', 'model', 'first', 'last', 'per prefill'], r.stage_costs.map((c) => ({
    stage: c.kind, engine: names.get(c.engine) ?? c.engine, model: c.model,
    first: formatMs(c.first_chunk_ms), last: formatMs(c.last_chunk_ms), 'per prefill': formatMs(c.prefill_ms),
  }))));
  const att = r.stage_costs.find((c) => c.kind === 'attention' && c.fit?.line);
  if (att?.fit?.line) {
    const l = att.fit.line;
    L.push(`  attention: fitted over ${l.positions} micro-batch positions: ${formatMs(l.a_ms)} ms + ${formatMs(l.b_ms_per_position)} ms x position${l.r2 === null ? '' : ` (R^2 ${l.r2.toFixed(4)})`}: cost grows with the keys attended`);
  }
  L.push('  sources:');
  const seen = new Set<string>();
  for (const c of r.stage_costs) {
    const line = `${c.kind} on ${names.get(c.engine) ?? c.engine}: ${c.source?.line ?? '-'}`;
    if (!seen.has(line)) L.push(`    ${line}`);
    seen.add(line);
  }
  if (r.exhaustive_check) {
    const x = r.exhaustive_check;
    L.push('');
    L.push(`heuristic vs optimum, on a cut-down graph of the same costs (${x.layers} layer${x.layers === 1 ? '' : 's'} x ${x.chunks} micro-batch${x.chunks === 1 ? '' : 'es'}, ${x.tasks} stages):`);
    L.push(`  all-iGPU ${formatMs(x.all_gpu_ms)} ms, per-GEMM ${formatMs(x.per_gemm_ms)} ms, HEFT ${formatMs(x.heuristic_ms)} ms (+${pct(x.heuristic_excess)})` +
      (x.search_ms !== null && x.search_excess !== null ? `, HEFT + search ${formatMs(x.search_ms)} ms (+${pct(x.search_excess)})` : '') +
      `, optimum ${formatMs(x.optimal_ms)} ms ` + (x.proven_optimal ? `(proven, ${x.nodes} search nodes)` : `(best found in ${x.nodes} nodes, not proven optimal)`));
  }
  if (r.reproduction) {
    const p = r.reproduction;
    L.push('');
    L.push(`model vs capture: all-iGPU at ${p.microbatch_rows} rows ${formatMs(p.model_ms)} ms vs measured span ${formatMs(p.measured_span_ms)} ms (${p.error >= 0 ? '+' : ''}${pct(p.error)}, ${p.within_5pct ? 'within' : 'NOT within'} 5 %)`);
    L.push(`  ${p.source}`);
    for (const a of p.accounted) L.push(`  ${signedMs(a.ms)}  ${a.what}`);
    L.push(`  ${signedMs(p.residual_ms)}  residual`);
  }
  L.push('');
  L.push('the model leaves out:');
  for (const w of r.left_out) L.push(`  - ${w.what}${w.ms_per_prefill === null ? '' : ` (${signedMs(w.ms_per_prefill)} per prefill in the capture)`}`);
  L.push('');
  L.push(`energy: ${r.energy.note}`);
  if (r.energy.measured) {
    const me = r.energy.measured;
    L.push(`  measured: ${me.joules_per_prefill.toFixed(3)} J per prefill (${me.segments.map((s) => `segment ${s.segment}: ${s.joules.toFixed(3)} J, mean ${s.mean_w.toFixed(2)} W, ${s.samples} samples`).join('; ')})`);
  }
  for (const p of r.energy.power) L.push(`  ${names.get(p.engine) ?? p.engine} power: ${p.source}`);
  for (const s of r.strategies) {
    if (s.energy && s.energy.joules !== null) {
      const base = r.strategies[0]!.energy?.joules ?? null;
      L.push(`  modelled ${s.name}: ${s.energy.joules.toFixed(3)} J${base ? ` (${((s.energy.joules / base - 1) * 100).toFixed(1)} % vs all-iGPU)` : ''}`);
    }
  }
  if (r.notes.length) {
    L.push('');
    L.push('notes');
    for (const n of r.notes) L.push(`  - ${n}`);
  }
  return L.join('\n');
}

/**
 * `tickwise schedule <gpu-capture> [--npu CAPTURE | --npu-tile-ms X] --microbatch 512`:
 * what a micro-batched iGPU + NPU prefill could take, per strategy.
 *
 * ```
 *  gpu capture --analyzer stageSamples--> stages, layers x ubatches, dispatches, power
 *  npu capture --analyzer kernelSamples--> tile times per GEMM shape, host turnaround
 *    └─> MeasuredPrefill ─> @tickwise/ceiling scheduleModel ─> text | JSON | Gantt (Vega-Lite)
 * ```
 */
export const scheduleCommand: CommandModule<object, Args> = {
  command: 'schedule <gpu>',
  describe: 'schedule model: all-iGPU, per-GEMM split, micro-batch pipelining (HEFT) and the optimum on small graphs, with error bars and energy',
  builder: (y) =>
    y
      .positional('gpu', { type: 'string', describe: 'the iGPU prefill capture (or a store)', demandOption: true })
      .option('npu', { type: 'string', describe: 'NPU capture with GEMM tiles (kernel names with MxNxK)', group: 'NPU' })
      .option('npu-kernel', { type: 'string', describe: 'glob of the NPU tile kernels (default *)', group: 'NPU' })
      .option('npu-rows-per-dispatch', { type: 'string', describe: 'rows one NPU dispatch covers (default: the M of its name)', group: 'NPU' })
      .option('npu-segment', { type: 'string', describe: 'segments of the NPU capture (default steady when it repeats, else all)', group: 'NPU' })
      .option('npu-reps', { type: 'number', describe: 'repetitions in the NPU capture', group: 'NPU' })
      .option('npu-capture', { type: 'number', describe: 'capture id in an NPU store', group: 'NPU' })
      .option('npu-device', { type: 'number', describe: 'device ordinal in the NPU capture', group: 'NPU' })
      .option('npu-tile-ms', { type: 'string', describe: 'instead of --npu: NPU ms per G-row tile of --npu-tile-shape (other GEMMs scaled by FLOPs)', group: 'NPU' })
      .option('npu-tile-shape', { type: 'string', describe: 'NxK of the GEMM --npu-tile-ms is for (default: the ffn_gate GEMM)', group: 'NPU' })
      .option('npu-stage', { type: 'string', array: true, describe: 'ROLE=FACTOR: let the NPU run a non-GEMM stage at FACTOR x the iGPU time (what-if), e.g. attention=1.5', group: 'NPU' })
      .option('microbatch', { type: 'string', describe: 'rows per micro-batch (default: the capture\'s rows per dispatch)', group: 'model' })
      .option('handoff', { type: 'string', describe: 'cost of handing a result to the other engine, with a unit (100us); default: measured from the NPU capture', group: 'model' })
      .option('group-rows', { type: 'string', describe: `G: rows per NPU tile / split group (default ${DEFAULT_GROUP_ROWS})`, group: 'model' })
      .option('bootstrap', { type: 'number', default: 200, describe: 'bootstrap replicates for the error bars (0: off)', group: 'model' })
      .option('seed', { type: 'number', default: 1, describe: 'bootstrap seed', group: 'model' })
      .option('exhaustive', { type: 'string', default: '1x2', describe: 'LAYERSxMICROBATCHES of the cut-down graph searched exhaustively beside HEFT, or off', group: 'model' })
      .option('rows-per-dispatch', { type: 'string', describe: 'rows one iGPU dispatch covers in the capture (default: the M of the GEMM names)', group: 'iGPU capture' })
      .option('layers', { type: 'string', describe: 'layers of the model (default: from the capture)', group: 'iGPU capture' })
      .option('tokens', { type: 'string', describe: 'prompt rows of one prefill (default: from the capture)', group: 'iGPU capture' })
      .option('segment', { type: 'string', describe: 'prefills to read: all | first | last | steady | N (default steady when it repeats, else all)', group: 'iGPU capture' })
      .option('reps', { type: 'number', describe: 'repetitions (prefills) in the capture, when known', group: 'iGPU capture' })
      .option('capture', { type: 'number', describe: 'capture id in a store holding several', group: 'iGPU capture' })
      .option('device', { type: 'number', describe: 'device ordinal', group: 'iGPU capture' })
      .option('stage', { type: 'string', array: true, describe: `ROLE=GLOB[,GLOB]: the kernels of a stage, replacing its default rule (roles: ${Object.keys(STAGE_ROLES).join(', ')})`, group: 'iGPU capture' })
      .option('gpu-active-w', { type: 'string', describe: 'iGPU power while busy, W (default: measured, when the capture has power samples)', group: 'energy' })
      .option('gpu-idle-w', { type: 'string', describe: 'iGPU power while idle, W', group: 'energy' })
      .option('npu-active-w', { type: 'string', describe: 'NPU power while busy, W', group: 'energy' })
      .option('npu-idle-w', { type: 'string', describe: 'NPU power while idle, W', group: 'energy' })
      .option('input-format', { type: 'string', describe: 'format of the captures (default: detected)' })
      .option('tick-hz', { type: 'string', describe: 'assume a tick rate for devices with no time base' })
      .option('format', { type: 'string', choices: FORMATS, default: 'text', describe: 'output: text, json, vega-lite (Gantt chart of the best schedule)' })
      .option('json', { type: 'boolean', describe: 'same as --format json' }) as never,
  handler: async (args) => {
    const reps = args.bootstrap;
    if (!(Number.isSafeInteger(reps) && reps >= 0)) throw usageError(`--bootstrap ${reps}: write a whole number of replicates (0 turns the error bars off)`);
    if (!Number.isSafeInteger(args.seed)) throw usageError(`--seed ${args.seed}: write a whole number`);
    const ex = exhaustiveOption(args.exhaustive);
    const g = await gather(args);
    const result = scheduleModel({
      measured: g.measured,
      bootstrap: reps > 0 ? { replicates: reps, seed: args.seed } : null,
      exhaustive_check: ex,
      power: g.power.length ? g.power : null,
      measured_energy: g.measuredEnergy,
      capture: g.capture,
      handoff_source: g.handoffSource,
      notes: g.notes,
      on_progress: progressLine(),
    });
    if (process.stderr.isTTY) process.stderr.write('\r\x1b[K');
    const format: OutputFormat = args.json ? 'json' : args.format;
    if (format === 'json') {
      out(formatJson({
        ...result,
        provenance: g.provenance,
        captures: g.captures,
        structure: {
          layers: g.gpu.layers, ubatches: g.gpu.ubatches, prompt_rows: g.gpu.prompt_rows, structure_from: g.gpu.structure_from,
          rows_per_dispatch: g.gpu.rows_per_dispatch, rows_per_dispatch_from: g.gpu.rows_per_dispatch_from,
          stages: g.gpu.stages.map((s) => ({ role: s.role, rule: s.rule, instances_per_prefill: s.instances_per_prefill, kernels: s.parts.map((p) => ({ kernel: p.kernel, dispatches: p.dur_ns.length, per_instance: p.per_instance, shared_by: p.shared_by })) })),
          unmatched: g.gpu.unmatched,
        },
        strategy_names: STRATEGY_NAMES,
        model_leaves_out: MODEL_LEAVES_OUT,
      }));
    } else if (format === 'vega-lite') out(formatJson(scheduleGanttSpec(result)));
    else out(scheduleText(result, g.provenance));
  },
};
