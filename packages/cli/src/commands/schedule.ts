import type { CommandModule } from 'yargs';
import { openInputs } from '@tickwise/capture/open';
import {
  DEFAULT_GROUP_ROWS, MODEL_LEAVES_OUT, STAGE_KINDS, STRATEGY_NAMES, isStageKind, scheduleGanttSpec, scheduleModel, type StageKind,
} from '@tickwise/ceiling';
import { scheduleInputs, type PowerOptions, type ScheduleInputOptions, type ScheduleInputs } from '@tickwise/inputs';
import type { Store } from '@tickwise/store';
import { nsToMsLossy } from '@tickwise/time';
import { durationOption, importOptions, msOption, rowsOption, usageError } from '../options';
import { formatJson, out } from '../output';
import { scheduleText } from '../schedule-text';

const FORMATS = ['text', 'json', 'vega-lite'] as const;
type OutputFormat = (typeof FORMATS)[number];

/** Parsed options of `tickwise schedule` (numbers as typed: {@link scheduleOptions} checks them). */
export interface Args {
  gpu: string; capture?: number; device?: number; segment?: string; reps?: number; stage?: string[];
  'rows-per-dispatch'?: string; layers?: string; tokens?: string;
  npu?: string; 'npu-kernel'?: string; 'npu-rows-per-dispatch'?: string; 'npu-segment'?: string; 'npu-reps'?: number;
  'npu-capture'?: number; 'npu-device'?: number; 'npu-tile-ms'?: string; 'npu-tile-shape'?: string; 'npu-stage'?: string[];
  microbatch?: string; handoff?: string; 'group-rows'?: string; bootstrap: number; seed: number; exhaustive: string;
  'gpu-active-w'?: string; 'gpu-idle-w'?: string; 'npu-active-w'?: string; 'npu-idle-w'?: string;
  format: OutputFormat; json?: boolean; 'input-format'?: string; 'tick-hz'?: string;
}

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

const STAGES = Object.keys(STAGE_KINDS).join(', ');

/** `--stage qkv='*qkv*,*wq*'` (repeatable) -> globs per stage. */
function stagePatterns(items: readonly string[]): Partial<Record<StageKind, string[]>> {
  const out: Partial<Record<StageKind, string[]>> = {};
  for (const it of items) {
    const i = it.indexOf('=');
    const role = i > 0 ? it.slice(0, i).trim() : '';
    const globs = i > 0 ? it.slice(i + 1).split(',').map((g) => g.trim()).filter(Boolean) : [];
    if (!isStageKind(role) || globs.length === 0) throw usageError(`--stage ${it}: write ROLE=GLOB[,GLOB] with ROLE one of ${STAGES} (e.g. --stage 'qkv=*attn_qkv*')`);
    out[role] = [...(out[role] ?? []), ...globs];
  }
  return out;
}

/** `--npu-stage attention=1.5` (repeatable) -> factor per stage. */
function npuFactors(items: readonly string[]): Map<StageKind, number> {
  const out = new Map<StageKind, number>();
  for (const it of items) {
    const m = /^([a-z_]+)=([0-9]*\.?[0-9]+)x?$/.exec(it.trim());
    if (!m || !isStageKind(m[1]!) || !(Number(m[2]) > 0)) {
      throw usageError(`--npu-stage ${it}: write ROLE=FACTOR, the NPU's time for that stage as a multiple of the iGPU's (e.g. attention=1.5); ROLE one of ${STAGES}`);
    }
    out.set(m[1] as StageKind, Number(m[2]));
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

/** The typed options of {@link scheduleInputs} from the command line (every number checked before any input is read). */
export function scheduleOptions(args: Args): Omit<ScheduleInputOptions, 'npu'> & { npu?: Omit<NonNullable<ScheduleInputOptions['npu']>, 'store'> } {
  const tileMs = msOption(args['npu-tile-ms'], 'npu-tile-ms');
  if (args.npu !== undefined && tileMs !== undefined) throw usageError('give the NPU cost one way: --npu CAPTURE or --npu-tile-ms X, not both');
  const handoffNs = durationOption(args.handoff, 'handoff');
  const power: PowerOptions = {};
  for (const id of ['gpu', 'npu'] as const) {
    for (const k of ['active', 'idle'] as const) {
      const name = `${id}-${k}-w` as const;
      const w = wattOption(args[name], name);
      if (w !== undefined) power[id] = { ...power[id], [k]: { w, line: `--${name} ${args[name]}` } };
    }
  }
  return {
    gpu: {
      input: args.gpu, captureId: args.capture, device: args.device, segment: args.segment, reps: args.reps,
      rowsPerDispatch: rowsOption(args['rows-per-dispatch'], 'rows-per-dispatch'), layers: rowsOption(args.layers, 'layers'),
      tokens: rowsOption(args.tokens, 'tokens'), patterns: stagePatterns(list(args.stage)),
    },
    ...(args.npu !== undefined ? {
      npu: {
        input: args.npu, captureId: args['npu-capture'], device: args['npu-device'], segment: args['npu-segment'], reps: args['npu-reps'],
        kernel: args['npu-kernel'], rowsPerDispatch: rowsOption(args['npu-rows-per-dispatch'], 'npu-rows-per-dispatch'),
      },
    } : {}),
    npuTile: tileMs === undefined ? undefined : { ms: tileMs, line: `--npu-tile-ms ${args['npu-tile-ms']}`, shape: shapeOption(args['npu-tile-shape']) },
    npuFactors: npuFactors(list(args['npu-stage'])),
    microbatch: rowsOption(args.microbatch, 'microbatch'),
    groupRows: rowsOption(args['group-rows'], 'group-rows') ?? DEFAULT_GROUP_ROWS,
    handoff: handoffNs === undefined ? undefined : { ms: nsToMsLossy(handoffNs), line: `--handoff ${args.handoff}` },
    power,
  };
}

/** Opens the iGPU input (and the NPU input, as its own store) and reads the schedule model's inputs. */
async function gather(args: Args): Promise<ScheduleInputs> {
  const opts = scheduleOptions(args);
  const imp = (input: string) => importOptions({ inputs: [input], format: args['input-format'], 'tick-hz': args['tick-hz'] });
  const g = await openInputs([args.gpu], imp(args.gpu));
  let n: { store: Store } | null = null;
  try {
    if (args.npu !== undefined) n = await openInputs([args.npu], imp(args.npu));
    return await scheduleInputs(g.store, { ...opts, ...(opts.npu && n ? { npu: { ...opts.npu, store: n.store } } : {}) });
  } finally {
    await g.store.close();
    if (n) await n.store.close();
  }
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
      .option('stage', { type: 'string', array: true, describe: `ROLE=GLOB[,GLOB]: the kernels of a stage, replacing its default rule (roles: ${STAGES})`, group: 'iGPU capture' })
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
