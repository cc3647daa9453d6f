import type { CostSource } from '../cost-curve';
import type { SplitPoint } from '../split-model';
import { bootstrapStrategies, type BootstrapOptions, type BootstrapResult, type StrategySpread } from './bootstrap';
import { scheduleEnergy, type EnergyEstimate, type EnginePower } from './energy';
import { exhaustiveSchedule, makespanLowerBound, type MakespanBound } from './exhaustive';
import { handoffMs, type StageGraph } from './graph';
import { prefillSpecFromMeasured, type FitReport, type MeasuredPrefill } from './measured';
import { criticalPath, engineUse, STRATEGIES, STRATEGY_NAMES, type CriticalPath, type EngineUse, type Schedule, type StrategyId } from './schedule';
import { chunksOf, prefillGraph, stageCostMs, type PrefillSpec, type StageCostModel, type StageKind } from './stages';
import { allGpuSchedule, perGemmSchedule, pipelinedSchedule, pipelinedSearchSchedule, type ProgressFn } from './strategies';

/** The measured prefill a model is checked against (from the capture the costs came from). */
export interface CaptureReference {
  /** Mean span of one selected prefill (first dispatch start to last end). */
  readonly span_ms: number;
  /** Mean busy time (union of dispatches) per prefill. */
  readonly busy_ms: number;
  /** Mean summed dispatch time per prefill. */
  readonly sum_ms: number;
  /** Kernels the graph leaves out, ms per prefill. */
  readonly unmodelled: readonly { readonly kernel: string; readonly ms: number }[];
  /** Prefills (segments) averaged. */
  readonly segments: number;
  /** Rows per dispatch in the capture (the reproduction runs the model at this micro-batch). */
  readonly rows_per_dispatch: number;
  /** Which capture and segments, in one line. */
  readonly source: string;
}

/** Measured energy of the selected prefills, when the capture carries power samples. */
export interface MeasuredEnergy {
  readonly segments: readonly { readonly segment: number; readonly joules: number; readonly mean_w: number; readonly span_ms: number; readonly samples: number }[];
  /** Mean joules per prefill. */
  readonly joules_per_prefill: number;
  /** Which metric, device, how integrated. */
  readonly source: string;
}

/** Everything {@link scheduleModel} takes. */
export interface ScheduleModelInput {
  readonly measured: MeasuredPrefill;
  /** Error bars; null or absent: none. */
  readonly bootstrap?: BootstrapOptions | null | undefined;
  /** Heuristic vs optimum on a cut-down graph of the same costs (default 1 layer x 2 micro-batches); null: skip. */
  readonly exhaustive_check?: { readonly layers?: number | undefined; readonly chunks?: number | undefined; readonly max_nodes?: number | undefined } | null | undefined;
  /** The local search after HEFT (default: on, 1500 list schedules at most); null: off. */
  readonly search?: { readonly max_evaluations?: number | undefined } | null | undefined;
  /** Also search the full graph exhaustively when it has at most this many tasks (default 14). */
  readonly exhaustive_max_tasks?: number | undefined;
  /** Per-engine power for the modelled energy. */
  readonly power?: readonly EnginePower[] | null | undefined;
  readonly measured_energy?: MeasuredEnergy | null | undefined;
  /** The capture to reproduce. */
  readonly capture?: CaptureReference | null | undefined;
  /** Where the handoff came from, in one line. */
  readonly handoff_source?: string | undefined;
  /** Notes from whoever gathered the inputs. */
  readonly notes?: readonly string[] | undefined;
  /** Progress of the slow parts (local search, bootstrap), for a progress line. */
  readonly on_progress?: ProgressFn | undefined;
}

/** One strategy's outcome on the full graph. */
export interface StrategyResult {
  readonly strategy: StrategyId;
  readonly name: string;
  readonly description: string;
  readonly makespan_ms: number;
  /** all-iGPU makespan / this one. */
  readonly speedup: number;
  readonly saved_ms: number;
  readonly engines: readonly EngineUse[];
  /** Bootstrap spread (absent for `optimal`). */
  readonly interval: StrategySpread | null;
  /** For `optimal`: whether the search finished. */
  readonly proven_optimal: boolean | null;
  readonly energy: EnergyEstimate | null;
}

/** A stage's cost on one engine, as the model uses it. */
export interface StageCostRow {
  readonly kind: StageKind;
  readonly engine: string;
  /** `rows`, `attention`, `fixed`, `scaled`. */
  readonly model: StageCostModel['model'];
  /** ms for the first micro-batch. */
  readonly first_chunk_ms: number;
  /** ms for the last micro-batch (differs from the first for attention, or a short last micro-batch). */
  readonly last_chunk_ms: number;
  /** Sum over every instance in one prefill. */
  readonly prefill_ms: number;
  readonly fit: FitReport | null;
  readonly source: CostSource | null;
}

/** One bar of the Gantt chart. */
export interface GanttBar {
  readonly task: number;
  readonly name: string;
  readonly kind: string;
  readonly layer: number | null;
  readonly chunk: number | null;
  readonly engine: string;
  readonly start_ms: number;
  readonly end_ms: number;
  readonly rows: number;
}

/** The model's answer. */
export interface ScheduleModelResult {
  readonly model: {
    readonly layers: number;
    readonly prompt_rows: number;
    readonly microbatch_rows: number;
    readonly chunks: number;
    readonly group_rows: number;
    readonly engines: readonly { readonly id: string; readonly name: string }[];
    readonly reference_engine: string;
    readonly handoff_ms: number;
    readonly handoff_source: string;
    readonly stages: readonly StageKind[];
    readonly tasks: number;
  };
  readonly stage_costs: readonly StageCostRow[];
  readonly strategies: readonly StrategyResult[];
  /** The shortest strategy on the full graph (ties: the simpler one). */
  readonly best: StrategyId;
  readonly critical_path: CriticalPath;
  /** The best schedule's bars, for the Gantt chart. */
  readonly gantt: { readonly strategy: StrategyId; readonly bars: readonly GanttBar[] };
  /** Per GEMM kind: ceiling's best split of its first micro-batch (every micro-batch of full size splits the same). */
  readonly per_gemm_splits: readonly { readonly kind: string; readonly rows: number; readonly split: SplitPoint; readonly instances: number }[];
  readonly exhaustive_check: ExhaustiveCheck | null;
  /** No schedule of the full graph is shorter than this; the optimum lies between it and the best found. */
  readonly lower_bound: MakespanBound & { readonly best_excess_max: number };
  readonly reproduction: Reproduction | null;
  /** What the model does not contain, with a size where the capture shows one. */
  readonly left_out: readonly { readonly what: string; readonly ms_per_prefill: number | null }[];
  readonly uncertainty: BootstrapResult | null;
  readonly energy: { readonly power: readonly EnginePower[]; readonly measured: MeasuredEnergy | null; readonly available: boolean; readonly note: string };
  readonly notes: readonly string[];
}

/** Heuristic vs optimum on a cut-down graph. */
export interface ExhaustiveCheck {
  readonly layers: number;
  readonly chunks: number;
  readonly tasks: number;
  readonly all_gpu_ms: number;
  readonly per_gemm_ms: number;
  /** HEFT. */
  readonly heuristic_ms: number;
  /** HEFT + search (null when the search is off). */
  readonly search_ms: number | null;
  readonly optimal_ms: number;
  /** (HEFT - optimal) / optimal. */
  readonly heuristic_excess: number;
  /** (HEFT + search - optimal) / optimal. */
  readonly search_excess: number | null;
  readonly proven_optimal: boolean;
  readonly nodes: number;
}

/** All-iGPU model against the measured prefill. */
export interface Reproduction {
  readonly model_ms: number;
  readonly measured_span_ms: number;
  /** (model - measured) / measured. */
  readonly error: number;
  /** Within 5 %. */
  readonly within_5pct: boolean;
  readonly microbatch_rows: number;
  readonly source: string;
  /** measured span = model + these (up to the fit's rounding). */
  readonly accounted: readonly { readonly what: string; readonly ms: number }[];
  /** measured span - model - accounted. */
  readonly residual_ms: number;
}

/** Qualitative gaps of the model, always listed. */
export const MODEL_LEAVES_OUT: readonly string[] = [
  'the dispatcher the pipelined schedules need: one that issues stages of different micro-batches in any order the graph allows, one at a time per engine (no two kernels at once on one engine), and syncs engines at the handoff cost',
  'host time between submissions (launch, wait, wake-up): the model starts a stage as soon as its inputs and engine are free',
  'memory-bandwidth contention: both engines share one memory, and running them together can slow each below its measured cost',
  'power and thermal limits shared by the engines (a busy NPU can lower the iGPU clock)',
  'kernel re-selection at other micro-batch sizes: costs scale linearly in rows from the measured rows per dispatch',
  'the cold first pass (program-cache misses, first-touch of weights): costs come from the selected (steady) repetitions',
  'any work outside the stage graph (sampling, host-side tokenisation, KV-cache copies not dispatched as kernels)',
];

function toGantt(g: StageGraph, s: Schedule): GanttBar[] {
  return s.placements.map((p) => {
    const t = g.tasks[p.task]!;
    return { task: p.task, name: t.name, kind: t.kind, layer: t.layer, chunk: t.chunk, engine: p.engine, start_ms: p.start_ms, end_ms: p.end_ms, rows: p.rows };
  });
}

function cutSpec(spec: PrefillSpec, layers: number, chunks: number): PrefillSpec {
  return { ...spec, layers: Math.min(spec.layers, layers), prompt_rows: Math.min(spec.prompt_rows, chunks * spec.microbatch_rows) };
}

/**
 * The schedule model of one prefill: stage graph, strategies, the best
 * schedule's critical path and Gantt bars, error bars and energy.
 *
 * ```
 *  MeasuredPrefill ─ prefillSpecFromMeasured (means; attention's line over positions)
 *    └─> prefillGraph ─┬─> allGpuSchedule ......... the baseline (sum of stage costs)
 *                      ├─> perGemmSchedule ........ ceiling's bestSplit per GEMM
 *                      ├─> pipelinedSchedule ...... HEFT over engine subsets
 *                      ├─> pipelinedSearchSchedule  HEFT + local search over engine choice
 *                      └─> exhaustiveSchedule ..... on the full graph when tiny,
 *                                                   else on a cut-down graph beside HEFT
 *  bootstrapStrategies: the same over resampled dispatches -> median, 90 % interval
 *  scheduleEnergy: per-engine active/idle power x busy/idle time
 *  capture reference: all-iGPU at the capture's rows per dispatch vs its span
 * ```
 */
export function scheduleModel(input: ScheduleModelInput): ScheduleModelResult {
  const m = input.measured;
  const { spec, fits } = prefillSpecFromMeasured(m);
  const g = prefillGraph(spec);
  const G = m.group_rows;
  const chunks = chunksOf(spec.prompt_rows, spec.microbatch_rows);
  const notes: string[] = [...(input.notes ?? [])];
  for (const f of fits) notes.push(...f.notes);

  const schedules = new Map<StrategyId, Schedule>();
  schedules.set('all_gpu', allGpuSchedule(g));
  const perGemm = perGemmSchedule(g);
  schedules.set('per_gemm_split', perGemm.schedule);
  const piped = pipelinedSchedule(g);
  schedules.set('pipelined', piped.schedule);
  const searched = input.search === null ? null : pipelinedSearchSchedule(g, { max_evaluations: input.search?.max_evaluations, on_progress: input.on_progress });
  if (searched) schedules.set('pipelined_search', searched.schedule);
  let fullProven: boolean | null = null;
  if (g.tasks.length <= (input.exhaustive_max_tasks ?? 14)) {
    const ex = exhaustiveSchedule(g, { incumbent: searched?.schedule ?? piped.schedule });
    schedules.set('optimal', ex.schedule);
    fullProven = ex.proven_optimal;
  }
  const boot = input.bootstrap ? bootstrapStrategies(m, { ...input.bootstrap, search_assignment: searched?.assignment, search_rank: searched?.rank, on_progress: input.on_progress }) : null;
  const power = input.power ?? [];
  const base = schedules.get('all_gpu')!.makespan_ms;
  const strategies: StrategyResult[] = [...schedules].map(([id, s]) => {
    const energy = power.length ? scheduleEnergy(g, s, power) : null;
    return {
      strategy: id,
      name: STRATEGY_NAMES[id],
      description: STRATEGIES[id],
      makespan_ms: s.makespan_ms,
      speedup: base / s.makespan_ms,
      saved_ms: base - s.makespan_ms,
      engines: engineUse(g, s),
      interval: boot?.strategies.find((x) => x.strategy === id) ?? null,
      proven_optimal: id === 'optimal' ? fullProven : null,
      energy,
    };
  });
  const bound = makespanLowerBound(g);
  let best = strategies[0]!;
  for (const s of strategies) if (s.makespan_ms < best.makespan_ms * (1 - 1e-9)) best = s;
  const bestSchedule = schedules.get(best.strategy)!;
  if (piped.engines_used.length < g.engines.length) {
    notes.push(`the HEFT schedule uses ${piped.engines_used.join(', ')} only: with every engine, HEFT found nothing shorter`);
  }
  if (searched && searched.evaluations >= (input.search?.max_evaluations ?? 1500)) {
    notes.push(`the local search after HEFT stopped at its budget of ${searched.evaluations} list schedules; a larger budget may find a shorter schedule`);
  }

  const stage_costs: StageCostRow[] = [];
  for (const s of spec.stages) {
    for (const e of spec.engines) {
      const c = s.cost[e.id];
      if (c === undefined || c === null) continue;
      const once = s.kind === 'head';
      const first = once ? stageCostMs(s, e.id, 1, spec.prompt_rows - 1, G)! : stageCostMs(s, e.id, chunks[0]!.rows, chunks[0]!.start, G)!;
      const lastChunk = chunks[chunks.length - 1]!;
      const last = once ? first : stageCostMs(s, e.id, lastChunk.rows, lastChunk.start, G)!;
      const perChunk = s.kind === 'embed' || once ? 1 : spec.layers;
      const prefill = once ? first : chunks.reduce((a, ch) => a + perChunk * stageCostMs(s, e.id, ch.rows, ch.start, G)!, 0);
      const fit = fits.find((f) => f.kind === s.kind && f.engine === e.id) ?? null;
      stage_costs.push({ kind: s.kind, engine: e.id, model: c.model, first_chunk_ms: first, last_chunk_ms: last, prefill_ms: prefill, fit, source: fit?.source ?? null });
    }
  }

  const splitsByKind = new Map<string, { kind: string; rows: number; split: SplitPoint; instances: number }>();
  for (const s of perGemm.splits) {
    const prev = splitsByKind.get(s.kind);
    if (prev) splitsByKind.set(s.kind, { ...prev, instances: prev.instances + 1 });
    else splitsByKind.set(s.kind, { kind: s.kind, rows: s.split.gpu_rows + s.split.npu_rows, split: s.split, instances: 1 });
  }

  let exhaustive_check: ExhaustiveCheck | null = null;
  if (input.exhaustive_check !== null) {
    const o = input.exhaustive_check ?? {};
    const cut = prefillGraph(cutSpec(spec, o.layers ?? 1, o.chunks ?? 2));
    const h = pipelinedSchedule(cut).schedule;
    const hs = input.search === null ? null : pipelinedSearchSchedule(cut, { max_evaluations: input.search?.max_evaluations }).schedule;
    const ex = exhaustiveSchedule(cut, { incumbent: hs ?? h, max_nodes: o.max_nodes });
    exhaustive_check = {
      layers: Math.min(spec.layers, o.layers ?? 1),
      chunks: chunksOf(Math.min(spec.prompt_rows, (o.chunks ?? 2) * spec.microbatch_rows), spec.microbatch_rows).length,
      tasks: cut.tasks.length,
      all_gpu_ms: allGpuSchedule(cut).makespan_ms,
      per_gemm_ms: perGemmSchedule(cut).schedule.makespan_ms,
      heuristic_ms: h.makespan_ms,
      search_ms: hs?.makespan_ms ?? null,
      optimal_ms: ex.schedule.makespan_ms,
      heuristic_excess: (h.makespan_ms - ex.schedule.makespan_ms) / ex.schedule.makespan_ms,
      search_excess: hs ? (hs.makespan_ms - ex.schedule.makespan_ms) / ex.schedule.makespan_ms : null,
      proven_optimal: ex.proven_optimal,
      nodes: ex.nodes,
    };
  }

  let reproduction: Reproduction | null = null;
  const left_out: { what: string; ms_per_prefill: number | null }[] = [];
  const cap = input.capture;
  if (cap) {
    const atCapture = cap.rows_per_dispatch === spec.microbatch_rows ? g : prefillGraph({ ...spec, microbatch_rows: cap.rows_per_dispatch });
    const model = allGpuSchedule(atCapture).makespan_ms;
    const idle = cap.span_ms - cap.busy_ms;
    const overlap = cap.sum_ms - cap.busy_ms;
    const unmodelled = cap.unmodelled.reduce((a, u) => a + u.ms, 0);
    const accounted = [
      { what: 'idle inside the span (host gaps between submissions, barrier bubbles)', ms: idle },
      { what: 'dispatches in flight together in the capture, run one after another by the model', ms: -overlap },
      { what: 'kernels not in the stage graph', ms: unmodelled },
    ];
    reproduction = {
      model_ms: model,
      measured_span_ms: cap.span_ms,
      error: (model - cap.span_ms) / cap.span_ms,
      within_5pct: Math.abs(model - cap.span_ms) <= 0.05 * cap.span_ms,
      microbatch_rows: cap.rows_per_dispatch,
      source: cap.source,
      accounted,
      residual_ms: cap.span_ms - model - accounted.reduce((a, x) => a + x.ms, 0),
    };
    left_out.push({ what: accounted[0]!.what, ms_per_prefill: idle });
    left_out.push({ what: accounted[1]!.what, ms_per_prefill: -overlap });
    if (cap.unmodelled.length) left_out.push({ what: `kernels not in the stage graph: ${cap.unmodelled.map((u) => u.kernel).join(', ')}`, ms_per_prefill: unmodelled });
  }
  for (const w of MODEL_LEAVES_OUT) if (!(cap && w.startsWith('host time'))) left_out.push({ what: w, ms_per_prefill: null });

  const handoff = handoffMs(m.handoff, m.reference_engine, m.engines.find((e) => e.id !== m.reference_engine)?.id ?? m.reference_engine);
  const energyAvailable = strategies.some((s) => s.energy !== null && s.energy.joules !== null);
  return {
    model: {
      layers: spec.layers,
      prompt_rows: spec.prompt_rows,
      microbatch_rows: spec.microbatch_rows,
      chunks: chunks.length,
      group_rows: G,
      engines: spec.engines.map((e) => ({ id: e.id, name: e.name })),
      reference_engine: spec.reference_engine,
      handoff_ms: handoff,
      handoff_source: input.handoff_source ?? `${handoff} ms`,
      stages: spec.stages.map((s) => s.kind),
      tasks: g.tasks.length,
    },
    stage_costs,
    strategies,
    best: best.strategy,
    critical_path: criticalPath(g, bestSchedule),
    gantt: { strategy: best.strategy, bars: toGantt(g, bestSchedule) },
    per_gemm_splits: [...splitsByKind.values()],
    exhaustive_check,
    lower_bound: { ...bound, best_excess_max: best.makespan_ms / bound.bound_ms - 1 },
    reproduction,
    left_out,
    uncertainty: boot,
    energy: {
      power,
      measured: input.measured_energy ?? null,
      available: energyAvailable,
      note: energyNote(power, strategies, input.measured_energy ?? null),
    },
    notes,
  };
}

function energyNote(power: readonly EnginePower[], strategies: readonly StrategyResult[], measured: MeasuredEnergy | null): string {
  const miss = [...new Set(strategies.flatMap((s) => s.energy?.missing ?? []))];
  const modelled = power.length === 0
    ? 'modelled energy: not available (no power samples in the captures and no --gpu-active-w/--gpu-idle-w/--npu-active-w/--npu-idle-w)'
    : miss.length
      ? `modelled energy: not available (give ${miss.join(', ')})`
      : 'modelled energy: per engine, active W x busy time + idle W x idle time over the makespan';
  const meas = measured === null ? 'measured energy: not available (the captures carry no power samples)' : `measured energy: ${measured.source}`;
  return `${meas}; ${modelled}`;
}
