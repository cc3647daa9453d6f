import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { openInputs } from '@tickwise/capture/open';
import { DEFAULT_GROUP_ROWS, ceiling, ceilingMarkdown, ceilingSpec, parseCostCsv, type CeilingResult } from '@tickwise/ceiling';
import { ceilingInputs, checkCaptureOptions, type CaptureInput, type EngineCostOptions } from '@tickwise/inputs';
import { TickwiseError, nsToMsLossy } from '@tickwise/time';
import { ceilingText } from '../ceiling-text';
import { durationOption, importOptions, msOption, rowsOption, usageError } from '../options';
import { formatJson, out } from '../output';

const FORMATS = ['text', 'json', 'md', 'vega-lite'] as const;
type OutputFormat = (typeof FORMATS)[number];

interface Args {
  rows?: string | undefined;
  'group-rows'?: string | undefined;
  'gpu-group-ms'?: string | undefined;
  'gpu-group-ms-p10'?: string | undefined;
  'gpu-group-ms-p90'?: string | undefined;
  'npu-tile-ms'?: string | undefined;
  'npu-tile-ms-p10'?: string | undefined;
  'npu-tile-ms-p90'?: string | undefined;
  'gpu-cost-csv'?: string | undefined;
  'npu-cost-csv'?: string | undefined;
  gpu?: string[] | undefined;
  npu?: string[] | undefined;
  'gpu-kernel'?: string | undefined;
  'npu-kernel'?: string | undefined;
  'gpu-rows-per-dispatch'?: string[] | undefined;
  'npu-rows-per-dispatch'?: string[] | undefined;
  'gpu-segment'?: string | undefined;
  'npu-segment'?: string | undefined;
  'gpu-reps'?: number | undefined;
  'npu-reps'?: number | undefined;
  'gpu-capture'?: number | undefined;
  'npu-capture'?: number | undefined;
  'gpu-device'?: number | undefined;
  'npu-device'?: number | undefined;
  'sync-overhead'?: string | undefined;
  'splittable-fraction'?: string | undefined;
  'target-speedup'?: string | undefined;
  format: OutputFormat;
  json?: boolean | undefined;
  'input-format'?: string | undefined;
  'tick-hz'?: string | undefined;
}

type Engine = 'gpu' | 'npu';
const ENGINE_NAME: Record<Engine, string> = { gpu: 'iGPU', npu: 'NPU' };
const COST_OPTION: Record<Engine, 'gpu-group-ms' | 'npu-tile-ms'> = { gpu: 'gpu-group-ms', npu: 'npu-tile-ms' };

function fractionOption(text: string): number {
  const t = String(text).trim();
  const m = /^([0-9]*\.?[0-9]+)\s*(%?)$/.exec(t);
  const v = m ? Number(m[1]) / (m[2] ? 100 : 1) : NaN;
  if (!(v >= 0 && v <= 1)) throw usageError(`--splittable-fraction ${t}: write a share of the prefill in [0, 1] (0.6 or 60%), or auto (from the --gpu capture)`);
  return v;
}

function speedupOption(text: string | undefined): number | null {
  if (text === undefined) return null;
  const t = String(text).trim();
  const m = /^([0-9]*\.?[0-9]+)\s*x?$/i.exec(t);
  const v = m ? Number(m[1]) : NaN;
  if (!(v > 1) || !Number.isFinite(v)) throw usageError(`--target-speedup ${t}: write a speedup above 1 (e.g. 1.15 or 1.15x)`);
  return v;
}

function list(v: string[] | string | undefined): string[] {
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** One engine's cost options from exactly one of: a number, a CSV sweep, captures (checked before any capture is read). */
async function engineOptions(engine: Engine, args: Args, groupRows: number): Promise<EngineCostOptions & { inputs: string[] }> {
  const opt = COST_OPTION[engine];
  const inputs = list(args[engine]);
  const given = [
    args[opt] !== undefined ? `--${opt}` : null,
    args[`${engine}-cost-csv`] !== undefined ? `--${engine}-cost-csv` : null,
    inputs.length > 0 ? `--${engine}` : null,
  ].filter((x): x is string => x !== null);
  if (given.length === 0) throw usageError(`give the ${ENGINE_NAME[engine]} cost: --${opt} N, --${engine}-cost-csv FILE, or --${engine} CAPTURE with --${engine}-kernel`);
  if (given.length > 1) throw usageError(`give the ${ENGINE_NAME[engine]} cost one way, not ${given.join(' and ')}`);
  const pOpts = [`${opt}-p10`, `${opt}-p90`] as const;
  if (given[0] !== `--${opt}` && pOpts.some((o) => args[o] !== undefined)) {
    throw usageError(`--${pOpts[0]}/--${pOpts[1]} go with --${opt}; a CSV gives p10_ms/p90_ms columns, captures give their own`);
  }
  if (given[0] === `--${opt}`) {
    const text = String(args[opt]);
    const p10 = msOption(args[pOpts[0]], pOpts[0]);
    const p90 = msOption(args[pOpts[1]], pOpts[1]);
    const spread = p10 !== undefined || p90 !== undefined ? ` (p10 ${p10 ?? '-'}, p90 ${p90 ?? '-'})` : '';
    return { number: { ms: msOption(text, opt)!, p10_ms: p10, p90_ms: p90, line: `--${opt} ${text}${spread}`, what: `--${opt}` }, inputs: [] };
  }
  if (given[0] === `--${engine}-cost-csv`) {
    const file = String(args[`${engine}-cost-csv`]);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new TickwiseError('unreadable-input', `cannot read cost CSV: ${(e as Error).message}`, { file, cause: e });
    }
    return { curve: parseCostCsv(text, { file, groupRows, what: `${ENGINE_NAME[engine]} cost CSV` }), inputs: [] };
  }
  const rowsPerDispatch = list(args[`${engine}-rows-per-dispatch`]).map((t) => rowsOption(t, `${engine}-rows-per-dispatch`)!);
  const kernel = args[`${engine}-kernel`];
  checkCaptureOptions(engine, { kernel, rowsPerDispatch, captures: inputs.length });
  const selection = { captureId: args[`${engine}-capture`], device: args[`${engine}-device`], segment: args[`${engine}-segment`], reps: args[`${engine}-reps`] };
  return { kernel, rowsPerDispatch, selection, inputs };
}

/** Opens every capture input (one store each), runs `use`, closes them. */
async function withCaptures<T>(inputs: readonly string[], args: Args, use: (c: CaptureInput[]) => Promise<T>): Promise<T> {
  const opened: CaptureInput[] = [];
  try {
    for (const input of inputs) {
      opened.push({ input, store: (await openInputs([input], importOptions({ inputs: [input], format: args['input-format'], 'tick-hz': args['tick-hz'] }))).store });
    }
    return await use(opened);
  } finally {
    for (const c of opened) await c.store.close();
  }
}

/**
 * `tickwise ceiling`: how much splitting one prefill GEMM by rows between the
 * iGPU and the NPU buys, at which split, and what the NPU would need.
 *
 * ```
 *  costs: --gpu-group-ms / --gpu-cost-csv / --gpu CAPTURE (analyzer rowGroupCost)
 *         --npu-tile-ms  / --npu-cost-csv / --npu CAPTURE
 *     └─> @tickwise/ceiling ceiling() ─> text | JSON | Markdown | Vega-Lite
 * ```
 */
export const ceilingCommand: CommandModule<object, Args> = {
  command: 'ceiling',
  describe: 'split ceiling: the best iGPU/NPU row split of a GEMM, its speedup, and the NPU tile time a target needs',
  builder: (y) =>
    y
      .option('rows', { type: 'string', describe: 'M: rows of the GEMM to split (default with --gpu captures: the iGPU rows per dispatch)', group: 'GEMM' })
      .option('group-rows', { type: 'string', describe: `G: rows per group / NPU tile (default ${DEFAULT_GROUP_ROWS})`, group: 'GEMM' })
      .option('gpu-group-ms', { type: 'string', describe: 'iGPU ms per G-row group', group: 'costs as numbers' })
      .option('gpu-group-ms-p10', { type: 'string', describe: 'its p10 (for a speedup range)', group: 'costs as numbers' })
      .option('gpu-group-ms-p90', { type: 'string', describe: 'its p90', group: 'costs as numbers' })
      .option('npu-tile-ms', { type: 'string', describe: 'NPU ms per G-row tile', group: 'costs as numbers' })
      .option('npu-tile-ms-p10', { type: 'string', describe: 'its p10', group: 'costs as numbers' })
      .option('npu-tile-ms-p90', { type: 'string', describe: 'its p90', group: 'costs as numbers' })
      .option('gpu-cost-csv', { type: 'string', describe: 'iGPU cost curve: CSV rows,ms (ms per group at that M; optional p10_ms,p90_ms) or rows,total_ms', group: 'costs as curves' })
      .option('npu-cost-csv', { type: 'string', describe: 'NPU cost curve, same CSV shape', group: 'costs as curves' })
      .option('gpu', { type: 'string', array: true, describe: 'iGPU capture(s) or store; several at different M make a curve', group: 'costs from captures' })
      .option('gpu-kernel', { type: 'string', describe: 'glob of the iGPU GEMM kernels to cost', group: 'costs from captures' })
      .option('gpu-rows-per-dispatch', { type: 'string', array: true, describe: 'rows one iGPU dispatch covers (one, or one per --gpu)', group: 'costs from captures' })
      .option('npu', { type: 'string', array: true, describe: 'NPU capture(s) or store', group: 'costs from captures' })
      .option('npu-kernel', { type: 'string', describe: 'glob of the NPU kernels to cost', group: 'costs from captures' })
      .option('npu-rows-per-dispatch', { type: 'string', array: true, describe: 'rows one NPU dispatch covers (one, or one per --npu)', group: 'costs from captures' })
      .option('gpu-segment', { type: 'string', describe: 'segments of the --gpu capture to cost: all | first | last | steady | N (default: steady when it repeats, else all)', group: 'costs from captures' })
      .option('npu-segment', { type: 'string', describe: 'segments of the --npu capture (same default)', group: 'costs from captures' })
      .option('gpu-reps', { type: 'number', describe: 'repetitions (prefills) in the --gpu capture, when known', group: 'costs from captures' })
      .option('npu-reps', { type: 'number', describe: 'repetitions in the --npu capture, when known', group: 'costs from captures' })
      .option('gpu-capture', { type: 'number', describe: 'capture id in a --gpu store holding several', group: 'costs from captures' })
      .option('npu-capture', { type: 'number', describe: 'capture id in a --npu store', group: 'costs from captures' })
      .option('gpu-device', { type: 'number', describe: 'device ordinal in the --gpu capture', group: 'costs from captures' })
      .option('npu-device', { type: 'number', describe: 'device ordinal in the --npu capture', group: 'costs from captures' })
      .option('input-format', { type: 'string', describe: 'format of capture inputs (default: detected)', group: 'costs from captures' })
      .option('tick-hz', { type: 'string', describe: 'assume a tick rate for devices with no time base', group: 'costs from captures' })
      .option('sync-overhead', { type: 'string', describe: 'join/sync cost when the NPU takes any group, with a unit (50us)' })
      .option('splittable-fraction', { type: 'string', describe: 'share of the prefill the split GEMMs take: 0.6, 60%, or auto (from the --gpu capture)' })
      .option('target-speedup', { type: 'string', describe: 'per-GEMM speedup to ask the required NPU tile time for (1.15)' })
      .option('format', { type: 'string', choices: FORMATS, default: 'text', describe: 'output: text, json, md (a Markdown block), vega-lite (a chart spec)' })
      .option('json', { type: 'boolean', describe: 'same as --format json' }) as never,
  handler: async (args) => {
    const groupRows = rowsOption(args['group-rows'], 'group-rows') ?? DEFAULT_GROUP_ROWS;
    const syncNs = durationOption(args['sync-overhead'], 'sync-overhead');
    const target = speedupOption(args['target-speedup']);
    const fractionText = args['splittable-fraction'];
    const isAuto = fractionText !== undefined && String(fractionText).trim() === 'auto';
    if (isAuto && list(args.gpu).length === 0) throw usageError('--splittable-fraction auto reads the prefill from the --gpu capture; give --gpu, or a number (0.6 or 60%)');
    const fraction = fractionText === undefined || isAuto ? undefined : { value: fractionOption(fractionText), line: `--splittable-fraction ${String(fractionText)}` };
    const rows = rowsOption(args.rows, 'rows');
    const gpu = await engineOptions('gpu', args, groupRows);
    const npu = await engineOptions('npu', args, groupRows);
    const r = await withCaptures([...gpu.inputs, ...npu.inputs], args, async (opened) => {
      const got = await ceilingInputs(null, {
        gpu: { ...gpu, captures: opened.slice(0, gpu.inputs.length) },
        npu: { ...npu, captures: opened.slice(gpu.inputs.length) },
        rows, groupRows, syncOverheadMs: syncNs === undefined ? 0 : nsToMsLossy(syncNs), targetSpeedup: target, splittableFraction: isAuto ? 'auto' : fraction,
      });
      // a number from a capture with an error finding is announced as such first
      if (got.kind === 'inputs') for (const c of [...got.captures.gpu, ...got.captures.npu]) if (c.error_findings) process.stderr.write(`${c.input}:\n${c.error_findings}`);
      return got;
    });
    if (r.kind === 'missing') throw usageError('give --rows M (the rows of the GEMM to split, e.g. 8192)');
    const result = ceiling(r.input);
    const res: CeilingResult = r.notes.length ? { ...result, notes: [...r.notes, ...result.notes] } : result;
    const format: OutputFormat = args.json ? 'json' : args.format;
    if (format === 'json') out(formatJson(res));
    else if (format === 'md') out(ceilingMarkdown(res));
    else if (format === 'vega-lite') out(formatJson(ceilingSpec(res)));
    else out(ceilingText(res));
  },
};
