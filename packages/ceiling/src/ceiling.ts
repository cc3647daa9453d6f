import { costAt, measuredRows, type CostSource, type EngineCost } from './cost-curve';
import { checkFraction, endToEndSpeedup } from './end-to-end';
import { ceilingMessages as msg } from './messages';
import { requiredTile, type RequiredTile } from './required-tile';
import { sensitivityTable, type SensitivityRow } from './sensitivity';
import { MAX_ROWS, balanceGroups, bestSplit, gpuOnlyMs, splitAt, splitProblem, type SplitPoint, type SplitProblem } from './split-model';
import { TickwiseError } from '@tickwise/time';
import { speedupRange, type SpeedupRange } from './uncertainty';

/** Everything the model needs: the GEMM, both engines' costs, and the optional questions. */
export interface CeilingInput {
  /** M: rows of the GEMM to split. */
  readonly rows: number;
  /** G: rows per group / NPU tile (default 256). */
  readonly group_rows?: number | undefined;
  /** iGPU cost per G-row group (constant or a curve in M). */
  readonly gpu: EngineCost;
  /** NPU cost per G-row tile (constant or a curve in M). */
  readonly npu: EngineCost;
  /** Join/sync cost paid once when the NPU takes any group, in ms (default 0). */
  readonly sync_overhead_ms?: number | undefined;
  /** Share of the prefill that the split GEMMs take (0..1), for the end-to-end speedup. */
  readonly splittable_fraction?: number | null | undefined;
  /** Where the splittable fraction came from. */
  readonly splittable_fraction_source?: CostSource | null | undefined;
  /** A per-GEMM speedup to ask "what must the NPU reach" for. */
  readonly target_speedup?: number | null | undefined;
  /** How many k either side of the optimum the `by_k` table shows (default 4). */
  readonly table_radius?: number | undefined;
}

/** One point of the chart's curve: speedup versus groups on the NPU. */
export interface CurvePoint {
  /** k. */
  readonly npu_groups: number;
  /** Speedup with today's costs. */
  readonly speedup: number;
  /** Wall time with today's costs. */
  readonly split_ms: number;
  /** Speedup if the NPU tile ran at the required time (null without a feasible target). */
  readonly speedup_at_required_tile: number | null;
}

/** A cost evaluated outside its curve's measured rows. */
export interface ExtrapolationFlag {
  /** Which engine. */
  readonly engine: 'gpu' | 'npu';
  /** The rows it was evaluated at. */
  readonly rows: number;
  /** Below or above the measured range. */
  readonly side: 'below' | 'above';
  /** The measured range. */
  readonly measured_min_rows: number;
  /** The measured range. */
  readonly measured_max_rows: number;
  /** Which output number it affects. */
  readonly affects: string;
}

/** The split ceiling, with every number the CLI, the Markdown block and the chart print. */
export interface CeilingResult {
  /** `constant` when both costs are single numbers, `curve` when either is a curve in M. */
  readonly model: 'constant' | 'curve';
  /** M. */
  readonly rows: number;
  /** G. */
  readonly group_rows: number;
  /** ceil(M / G). */
  readonly groups: number;
  /** floor(M / G): the most groups the NPU can take. */
  readonly full_groups: number;
  /** M mod G (the partial group stays on the iGPU). */
  readonly remainder_rows: number;
  /** iGPU ms per group at M (the iGPU-only case). */
  readonly gpu_group_ms: number;
  /** NPU ms per tile at the split's rows (at G rows when k = 0). */
  readonly npu_tile_ms: number;
  /** Sync overhead, ms. */
  readonly sync_overhead_ms: number;
  /** Best k: groups on the NPU. */
  readonly npu_groups: number;
  /** Groups left on the iGPU (counting a partial one). */
  readonly gpu_groups: number;
  /** Rows on the iGPU at the split. */
  readonly gpu_rows_at_split: number;
  /** Rows on the NPU at the split. */
  readonly npu_rows_at_split: number;
  /** n x g: all rows on the iGPU. */
  readonly gpu_only_ms: number;
  /** Wall time at the best split. */
  readonly split_ms: number;
  /** iGPU time at the best split. */
  readonly gpu_ms_at_split: number;
  /** NPU time at the best split. */
  readonly npu_ms_at_split: number;
  /** gpu_only_ms / split_ms (>= 1: k = 0 is allowed). */
  readonly speedup: number;
  /** gpu_only_ms - split_ms. */
  readonly saved_ms: number;
  /** Continuous balance point k* (n g / (g + t) for constants). */
  readonly balance_groups: number;
  /** Share of the prefill the split GEMMs take, when known. */
  readonly splittable_fraction: number | null;
  /** 1 / ((1 - f) + f / speedup), when f is known. */
  readonly end_to_end_speedup: number | null;
  /** The target asked for, if any. */
  readonly target_speedup: number | null;
  /** Largest NPU tile ms that reaches the target (null without a target or when infeasible). */
  readonly required_npu_tile_ms: number | null;
  /** Groups on the NPU at that requirement. */
  readonly required_npu_groups: number | null;
  /** Today's tile ms / required tile ms: how many times faster the NPU must get. */
  readonly required_npu_tile_factor: number | null;
  /** The iGPU ms per group that reaches the target with no split at all (g / target). */
  readonly required_gpu_group_ms: number | null;
  /** The full requirement, with a note when infeasible. */
  readonly required: RequiredTile | null;
  /** Speedup for every k within `table_radius` of the optimum (and the balance point's neighbours). */
  readonly by_k: readonly SplitPoint[];
  /** Speedup versus k for the chart (0 up to a few times the optimum). */
  readonly curve: readonly CurvePoint[];
  /** Speedup range from the costs' p10/p90, when measured. */
  readonly speedup_range: SpeedupRange | null;
  /** Each input +-10 % and +-25 %. */
  readonly sensitivity: readonly SensitivityRow[];
  /** Costs that were evaluated outside the measured rows, for the reported numbers. */
  readonly extrapolation: readonly ExtrapolationFlag[];
  /** Where each input came from. */
  readonly sources: {
    readonly gpu: CostSource | null;
    readonly npu: CostSource | null;
    readonly splittable_fraction: CostSource | null;
  };
  /** Things a reader must know to trust the numbers (partial group, held costs, single-point curves). */
  readonly notes: readonly string[];
}

function extrapolationFlags(p: SplitProblem, engine: 'gpu' | 'npu', rows: number, affects: string): ExtrapolationFlag[] {
  const cost = engine === 'gpu' ? p.gpu : p.npu;
  const range = measuredRows(cost);
  if (range === null || rows <= 0) return [];
  const c = costAt(cost, rows);
  if (c.extrapolated === null) return [];
  return [{ engine, rows, side: c.extrapolated, measured_min_rows: range.min, measured_max_rows: range.max, affects }];
}

/** Most points of the chart's curve; beyond, k is sampled evenly (with the marked k kept). */
export const MAX_CURVE_POINTS = 401;

/** The k the chart draws: every k in 0..max, or, for many groups, an even sample with `keep` in it. */
function chartGroups(max: number, keep: readonly number[]): number[] {
  if (max + 1 <= MAX_CURVE_POINTS) return Array.from({ length: max + 1 }, (_, k) => k);
  const ks = new Set<number>();
  const step = max / (MAX_CURVE_POINTS - 1);
  for (let i = 0; i < MAX_CURVE_POINTS; i++) ks.add(Math.round(i * step));
  for (const k of keep) if (k >= 0 && k <= max) ks.add(k);
  return [...ks].sort((a, b) => a - b);
}

/**
 * The split ceiling of one GEMM, from per-group costs.
 *
 * ```
 *  CeilingInput ──> splitProblem (M, G -> n groups; partial group on the iGPU)
 *                     │
 *                     ├─> bestSplit: the best k in 0..floor(M/G), wall = max(iGPU, NPU) + sync
 *                     │     (closed form: only the k next to each piece's critical points; any M in ms)
 *                     │     (each engine's cost read at the rows it gets: curve or constant)
 *                     ├─> balanceGroups: k* where both finish together
 *                     ├─> endToEndSpeedup: Amdahl over the splittable fraction
 *                     ├─> requiredTile: the NPU tile time for a target speedup
 *                     ├─> speedupRange: p10/p90 corners
 *                     └─> sensitivityTable: each input +-10 %, +-25 %
 *                   ──> CeilingResult ──> ceilingText / ceilingMarkdown / ceilingSpec
 * ```
 *
 * Worked example (domain.md): g = 0.40 ms, t = 6.0 ms, M = 8192 -> 32
 * groups, 2 on the NPU, 12.0 ms against 12.8 ms, 1.067x, k* = 2.0;
 * end-to-end 1.039x at 60 %; a 1.15x target needs t <= 2.23 ms.
 */
export function ceiling(input: CeilingInput): CeilingResult {
  if (input.rows > MAX_ROWS) throw new TickwiseError('invalid-input', msg.tooManyRows('rows (M)', input.rows, MAX_ROWS));
  if ((input.group_rows ?? 0) > MAX_ROWS) throw new TickwiseError('invalid-input', msg.tooManyRows('group rows (G)', input.group_rows, MAX_ROWS));
  const p = splitProblem(input);
  const f = input.splittable_fraction === null || input.splittable_fraction === undefined ? null : checkFraction(input.splittable_fraction);
  const target = input.target_speedup ?? null;
  const best = bestSplit(p);
  const only = gpuOnlyMs(p);
  const balance = balanceGroups(p);
  const req = target === null ? null : requiredTile(p, target);

  const radius = input.table_radius ?? 4;
  const ks = new Set<number>();
  for (let k = best.npu_groups - radius; k <= best.npu_groups + radius; k++) ks.add(k);
  ks.add(Math.floor(balance));
  ks.add(Math.ceil(balance));
  const byK = [...ks].filter((k) => k >= 0 && k <= p.full_groups).sort((a, b) => a - b).map((k) => splitAt(p, k));

  const reqProblem: SplitProblem | null =
    req && req.feasible && req.npu_tile_ms !== null ? { ...p, npu: { kind: 'constant', ms: req.npu_tile_ms } } : null;
  const chartMax = Math.min(p.full_groups, Math.max(16, 2 * Math.max(best.npu_groups, req?.npu_groups ?? 0, Math.ceil(balance)) + 4));
  const curve: CurvePoint[] = [];
  for (const k of chartGroups(chartMax, [best.npu_groups, req?.npu_groups ?? 0, Math.floor(balance), Math.ceil(balance)])) {
    const s = splitAt(p, k);
    curve.push({
      npu_groups: k,
      speedup: s.speedup,
      split_ms: s.split_ms,
      speedup_at_required_tile: reqProblem ? splitAt(reqProblem, k).speedup : null,
    });
  }

  const flags: ExtrapolationFlag[] = [
    ...extrapolationFlags(p, 'gpu', p.rows, 'gpu_only_ms'),
    ...extrapolationFlags(p, 'gpu', best.gpu_rows, 'split_ms'),
    ...extrapolationFlags(p, 'npu', best.npu_rows, 'split_ms'),
    ...(req?.npu_groups ? extrapolationFlags(p, 'npu', req.npu_groups * p.group_rows, 'required_npu_tile_factor') : []),
    ...(req?.npu_groups ? extrapolationFlags(p, 'gpu', p.rows - req.npu_groups * p.group_rows, 'required_npu_tile_ms') : []),
  ];

  const notes: string[] = [];
  if (p.full_groups === 0) notes.push(msg.fewerRowsThanGroup(p.rows, p.group_rows));
  if (p.remainder_rows > 0) {
    notes.push(
      `${p.rows} rows = ${p.full_groups} whole ${p.group_rows}-row groups + ${p.remainder_rows} rows: the partial group stays on the iGPU ` +
        `(the NPU runs whole tiles; a partial tile would cost a whole one), and the iGPU's cost is taken per row`,
    );
  }
  for (const [engine, cost] of [['iGPU', p.gpu], ['NPU', p.npu]] as const) {
    if (cost.kind === 'curve' && cost.points.length === 1) {
      notes.push(`the ${engine} cost curve has one point (${cost.points[0]!.rows} rows): its cost is held constant at every M`);
    }
  }
  if (flags.length > 0) {
    notes.push('some costs were read outside the measured rows: the nearest measured value was held (no slope extrapolated); see extrapolation');
  }
  if (best.npu_groups === 0) {
    notes.push(p.full_groups === 0 ? 'no split is possible' : 'no split pays: every k > 0 is slower than the iGPU alone, so the best is k = 0 (speedup 1)');
  }

  return {
    model: p.gpu.kind === 'constant' && p.npu.kind === 'constant' ? 'constant' : 'curve',
    rows: p.rows,
    group_rows: p.group_rows,
    groups: p.groups,
    full_groups: p.full_groups,
    remainder_rows: p.remainder_rows,
    gpu_group_ms: costAt(p.gpu, p.rows).ms,
    npu_tile_ms: best.npu_tile_ms ?? costAt(p.npu, p.group_rows).ms,
    sync_overhead_ms: p.sync_overhead_ms,
    npu_groups: best.npu_groups,
    gpu_groups: p.groups - best.npu_groups,
    gpu_rows_at_split: best.gpu_rows,
    npu_rows_at_split: best.npu_rows,
    gpu_only_ms: only,
    split_ms: best.split_ms,
    gpu_ms_at_split: best.gpu_ms,
    npu_ms_at_split: best.npu_ms,
    speedup: best.speedup,
    saved_ms: only - best.split_ms,
    balance_groups: balance,
    splittable_fraction: f,
    end_to_end_speedup: f === null ? null : endToEndSpeedup(f, best.speedup),
    target_speedup: target,
    required_npu_tile_ms: req?.npu_tile_ms ?? null,
    required_npu_groups: req?.npu_groups ?? null,
    required_npu_tile_factor: req?.npu_tile_factor ?? null,
    required_gpu_group_ms: req?.gpu_group_ms ?? null,
    required: req,
    by_k: byK,
    curve,
    speedup_range: speedupRange(p, f),
    sensitivity: sensitivityTable(p, f),
    extrapolation: flags,
    sources: { gpu: p.gpu.source ?? null, npu: p.npu.source ?? null, splittable_fraction: input.splittable_fraction_source ?? null },
    notes,
  };
}
