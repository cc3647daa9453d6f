import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { captureFacts, errorFindingsHeader, provenanceLine, rowGroupCost, segments, type CaptureFacts, type CostResult } from '@tickwise/analyzer';
import { openInputs } from '@tickwise/capture';
import {
  DEFAULT_GROUP_ROWS,
  SENSITIVITY_INPUTS,
  ceiling,
  ceilingMarkdown,
  ceilingSpec,
  constantCost,
  costCurve,
  formatChangePct,
  formatFraction,
  formatGroups,
  formatMs,
  formatSpeedup,
  parseCostCsv,
  rangeLine,
  requirementLine,
  sourceLines,
  type CeilingResult,
  type CostPoint,
  type CostSource,
  type EngineCost,
} from '@tickwise/ceiling';
import { TickwiseError, nsToMsLossy } from '@tickwise/time';
import { durationOption, importOptions, msOption, rowsOption, usageError } from '../options';
import { formatJson, formatTable, out } from '../output';

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
const COST_OPTION: Record<Engine, string> = { gpu: 'gpu-group-ms', npu: 'npu-tile-ms' };

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

/** What one capture input gave: the analyzer's cost and the prefill share of the matched kernels. */
interface CaptureCost {
  readonly input: string;
  readonly cost: CostResult;
  readonly segment_note: string | null;
  readonly provenance: string;
  readonly capture: CaptureFacts | null;
  /** Summed time of the matched kernels in the selected segments / summed span of those segments. */
  readonly prefill_share: { readonly kernel_ns: number; readonly span_ns: number; readonly segments: number } | null;
}

/**
 * Costs one capture input with the analyzer. The segment: as given, else
 * `steady` (all but the cold first pass) when the device's kernels repeat,
 * else `all` with a note (a capture with one repetition has no steady part).
 */
async function costOneCapture(engine: Engine, input: string, args: Args, kernel: string, rowsPerDispatch: number, groupRows: number): Promise<CaptureCost> {
  const { store } = await openInputs([input], importOptions({ inputs: [input], format: args['input-format'], 'tick-hz': args['tick-hz'] }));
  try {
    const given = args[`${engine}-segment`];
    const base = { kernel, rowsPerDispatch, groupRows, captureId: args[`${engine}-capture`], device: args[`${engine}-device`], reps: args[`${engine}-reps`] };
    let cost: CostResult;
    let note: string | null = null;
    if (given !== undefined) {
      cost = await rowGroupCost(store, { ...base, segment: given });
    } else {
      const all = await rowGroupCost(store, { ...base, segment: 'all' });
      if (all.segments_selected >= 2) {
        cost = await rowGroupCost(store, { ...base, captureId: all.capture_id, device: all.device, segment: 'steady' });
      } else {
        cost = all;
        note = `${input}: one segment (no repetition found), so all ${all.dispatch_count} dispatches were used; a cold first pass cannot be told apart (--${engine}-segment, --${engine}-reps)`;
      }
    }
    const segs = (await segments(store, { captureId: cost.capture_id, device: cost.device, reps: base.reps })).devices[0]?.segments ?? [];
    const picked = new Set(cost.per_segment.map((p) => p.segment));
    const chosen = segs.filter((x) => picked.has(x.segment));
    const spanNs = chosen.reduce((a, x) => a + Number(x.span_ns), 0);
    const kernelNs = cost.matched_kernels.reduce((a, k) => a + Number(k.total_ns), 0);
    // a number from a capture with an error finding is announced as such first
    const errors = await errorFindingsHeader(store, { captureIds: [cost.capture_id] });
    if (errors) process.stderr.write(`${input}:\n${errors}`);
    return {
      input,
      cost,
      segment_note: note,
      provenance: await provenanceLine(store, cost.capture_id),
      capture: (await captureFacts(store, [cost.capture_id]))[0] ?? null,
      prefill_share: spanNs > 0 ? { kernel_ns: kernelNs, span_ns: spanNs, segments: chosen.length } : null,
    };
  } finally {
    await store.close();
  }
}

/**
 * Per-group costs from captures: one point per input, at that input's rows per
 * dispatch (its M). One input gives a constant cost; several give a curve.
 */
async function costFromCaptures(engine: Engine, args: Args, groupRows: number): Promise<{ cost: EngineCost; captures: CaptureCost[] }> {
  const inputs = list(args[engine]);
  const kernel = args[`${engine}-kernel`];
  const rpd = list(args[`${engine}-rows-per-dispatch`]).map((t) => rowsOption(t, `${engine}-rows-per-dispatch`)!);
  if (!kernel) throw usageError(`--${engine} needs --${engine}-kernel GLOB (the GEMM kernels to cost)`);
  if (rpd.length === 0) throw usageError(`--${engine} needs --${engine}-rows-per-dispatch N (the rows one dispatch covers, e.g. the ubatch)`);
  if (rpd.length !== 1 && rpd.length !== inputs.length) {
    throw usageError(`--${engine}-rows-per-dispatch: give one value, or one per --${engine} input (${inputs.length})`);
  }
  const got: CaptureCost[] = [];
  for (let i = 0; i < inputs.length; i++) {
    got.push(await costOneCapture(engine, inputs[i]!, args, kernel, rpd.length === 1 ? rpd[0]! : rpd[i]!, groupRows));
  }
  const points: CostPoint[] = got.map((g) => ({ rows: g.cost.rows_per_dispatch, ms: g.cost.group_ms, p10_ms: g.cost.group_ms_p10, p90_ms: g.cost.group_ms_p90 }));
  const parts = got.map((g) => {
    const c = g.cost;
    return `${g.provenance.replace(/^# /, '')}: device ${c.device}, kernel ${c.kernel} (${c.matched_kernels.map((k) => k.kernel).join(', ')}), ` +
      `segment ${c.segment} (${c.segments_selected} selected), ${c.dispatch_count} dispatches of ${c.rows_per_dispatch} rows, ` +
      `mean ${formatMs(c.mean_dispatch_ns / 1e6)} ms -> ${formatMs(c.group_ms)} ms per ${c.group_rows}-row group (p10 ${formatMs(c.group_ms_p10)}, p90 ${formatMs(c.group_ms_p90)})`;
  });
  const details = got.map((g) => ({
    input: g.input,
    capture: g.capture,
    provenance: g.provenance,
    device: g.cost.device,
    kernel: g.cost.kernel,
    matched_kernels: g.cost.matched_kernels,
    segment: g.cost.segment,
    segments_selected: g.cost.segments_selected,
    dispatch_count: g.cost.dispatch_count,
    rows_per_dispatch: g.cost.rows_per_dispatch,
    mean_dispatch_ns: g.cost.mean_dispatch_ns,
    group_ms: g.cost.group_ms,
    group_ms_p10: g.cost.group_ms_p10,
    group_ms_p90: g.cost.group_ms_p90,
    excluded_dispatches: g.cost.excluded_dispatches,
    note: g.segment_note,
  }));
  const source: CostSource = { from: inputs.length === 1 ? 'capture' : 'captures', line: parts.join('; '), details: { captures: details } };
  if (points.length === 1) {
    const p = points[0]!;
    return { cost: constantCost(p.ms, { p10_ms: p.p10_ms, p90_ms: p.p90_ms, source, what: `${ENGINE_NAME[engine]} cost` }), captures: got };
  }
  return { cost: costCurve(points, { source, what: `${ENGINE_NAME[engine]} cost curve` }), captures: got };
}

/** One engine's cost from exactly one of: a number, a CSV sweep, captures. */
async function engineCost(engine: Engine, args: Args, groupRows: number): Promise<{ cost: EngineCost; captures: CaptureCost[] }> {
  const opt = COST_OPTION[engine];
  const given = [
    args[opt as 'gpu-group-ms' | 'npu-tile-ms'] !== undefined ? `--${opt}` : null,
    args[`${engine}-cost-csv`] !== undefined ? `--${engine}-cost-csv` : null,
    list(args[engine]).length > 0 ? `--${engine}` : null,
  ].filter((x): x is string => x !== null);
  if (given.length === 0) throw usageError(`give the ${ENGINE_NAME[engine]} cost: --${opt} N, --${engine}-cost-csv FILE, or --${engine} CAPTURE with --${engine}-kernel`);
  if (given.length > 1) throw usageError(`give the ${ENGINE_NAME[engine]} cost one way, not ${given.join(' and ')}`);
  const pOpts = [`${opt}-p10`, `${opt}-p90`] as const;
  if (given[0] !== `--${opt}` && pOpts.some((o) => args[o as keyof Args] !== undefined)) {
    throw usageError(`--${pOpts[0]}/--${pOpts[1]} go with --${opt}; a CSV gives p10_ms/p90_ms columns, captures give their own`);
  }
  if (given[0] === `--${opt}`) {
    const text = String(args[opt as keyof Args]);
    const ms = msOption(text, opt)!;
    const p10 = msOption(args[pOpts[0] as keyof Args] as string | undefined, pOpts[0]);
    const p90 = msOption(args[pOpts[1] as keyof Args] as string | undefined, pOpts[1]);
    const spread = p10 !== undefined || p90 !== undefined ? ` (p10 ${p10 ?? '-'}, p90 ${p90 ?? '-'})` : '';
    return { cost: constantCost(ms, { p10_ms: p10, p90_ms: p90, what: `--${opt}`, source: { from: 'number', line: `--${opt} ${text}${spread}` } }), captures: [] };
  }
  if (given[0] === `--${engine}-cost-csv`) {
    const file = String(args[`${engine}-cost-csv`]);
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (e) {
      throw new TickwiseError('unreadable-input', `cannot read cost CSV: ${(e as Error).message}`, { file, cause: e });
    }
    return { cost: parseCostCsv(text, { file, groupRows, what: `${ENGINE_NAME[engine]} cost CSV` }), captures: [] };
  }
  return costFromCaptures(engine, args, groupRows);
}

/**
 * `--splittable-fraction auto`: the split kernels' share of the prefill, from
 * the --gpu capture(s): time of the kernels --gpu-kernel matches in the
 * selected segments over those segments' spans (first dispatch start to last
 * dispatch end, on the device). With several captures (a sweep), the one whose
 * rows per dispatch is closest to M.
 */
function autoFraction(gpu: readonly CaptureCost[], rows: number): { fraction: number; source: CostSource } {
  if (gpu.length === 0) throw usageError('--splittable-fraction auto reads the prefill from the --gpu capture; give --gpu, or a number (0.6 or 60%)');
  const g = [...gpu].sort((a, b) => Math.abs(a.cost.rows_per_dispatch - rows) - Math.abs(b.cost.rows_per_dispatch - rows))[0]!;
  const share = g.prefill_share;
  if (share === null) throw new TickwiseError('no-span', `--splittable-fraction auto: ${g.input} has no prefill span for the selected segments; give the fraction as a number`);
  const fraction = Math.min(1, share.kernel_ns / share.span_ns);
  return {
    fraction,
    source: {
      from: 'capture',
      line: `auto: ${g.provenance.replace(/^# /, '')}: kernels ${g.cost.kernel} take ${formatMs(share.kernel_ns / 1e6)} ms of ${formatMs(share.span_ns / 1e6)} ms ` +
        `of prefill span over ${share.segments} segment${share.segments === 1 ? '' : 's'} (${g.cost.segment}) = ${formatFraction(fraction)} (summed kernel time over the device span)`,
      details: { input: g.input, capture_id: g.cost.capture_id, device: g.cost.device, kernel: g.cost.kernel, kernel_ns: share.kernel_ns, span_ns: share.span_ns, segments: share.segments },
    },
  };
}

/** Pads the named string columns to a common width on the left, so numbers line up. */
function alignRight(rows: Record<string, unknown>[], columns: readonly string[]): Record<string, unknown>[] {
  for (const c of columns) {
    const w = Math.max(c.length, ...rows.map((r) => String(r[c] ?? '').length));
    for (const r of rows) r[c] = String(r[c] ?? '').padStart(w);
  }
  return rows;
}

/** The human report: the answer, the table by k, sensitivity, sources and notes. */
export function ceilingText(r: CeilingResult): string {
  const lines: string[] = [];
  lines.push(`split ceiling: M = ${r.rows} rows, G = ${r.group_rows} -> ${r.groups} groups${r.remainder_rows ? ` (${r.full_groups} whole + ${r.remainder_rows} rows)` : ''}${r.model === 'curve' ? ', costs from curves in M' : ''}`);
  lines.push('');
  const kv: [string, string][] = [
    ['iGPU cost', `${formatMs(r.gpu_group_ms)} ms per group at ${r.rows} rows`],
    ['NPU cost', `${formatMs(r.npu_tile_ms)} ms per tile${r.model === 'curve' ? ` at ${r.npu_rows_at_split || r.group_rows} rows` : ''}`],
    ['sync overhead', `${formatMs(r.sync_overhead_ms)} ms`],
    ['best split', `${r.npu_groups} groups on the NPU (${r.npu_rows_at_split} rows), ${r.gpu_groups} on the iGPU (${r.gpu_rows_at_split} rows)`],
    ['iGPU only', `${formatMs(r.gpu_only_ms)} ms`],
    ['split', `${formatMs(r.split_ms)} ms (iGPU ${formatMs(r.gpu_ms_at_split)} ms, NPU ${formatMs(r.npu_ms_at_split)} ms${r.npu_groups > 0 && r.sync_overhead_ms > 0 ? `, sync ${formatMs(r.sync_overhead_ms)} ms` : ''})`],
    ['speedup', `${formatSpeedup(r.speedup)} (saves ${formatMs(r.saved_ms)} ms)`],
    ['balance point', `k* = ${formatGroups(r.balance_groups)} groups`],
  ];
  if (r.splittable_fraction !== null && r.end_to_end_speedup !== null) {
    kv.push(['end-to-end', `${formatSpeedup(r.end_to_end_speedup)} (${formatFraction(r.splittable_fraction)} of the prefill splits)`]);
  }
  const req = requirementLine(r);
  if (req !== null && r.target_speedup !== null) kv.push([`for ${formatSpeedup(r.target_speedup)}`, req]);
  const range = rangeLine(r);
  if (range !== null) kv.push(['p10..p90 range', range]);
  const w = Math.max(...kv.map(([k]) => k.length));
  for (const [k, v] of kv) lines.push(`${k.padEnd(w)}  ${v}`);
  lines.push('');
  lines.push('speedup by groups on the NPU (* = best)');
  const anyExtrapolated = r.by_k.some((s) => s.extrapolated.length > 0);
  lines.push(formatTable(
    ['k', 'gpu_rows', 'npu_rows', 'gpu_ms', 'npu_ms', 'split_ms', 'speedup', ...(anyExtrapolated ? ['note'] : [])],
    alignRight(r.by_k.map((s) => ({
      k: s.npu_groups === r.npu_groups ? `${s.npu_groups}*` : String(s.npu_groups),
      gpu_rows: s.gpu_rows, npu_rows: s.npu_rows,
      gpu_ms: formatMs(s.gpu_ms), npu_ms: formatMs(s.npu_ms), split_ms: formatMs(s.split_ms), speedup: formatSpeedup(s.speedup),
      note: s.extrapolated.length ? `extrapolated: ${s.extrapolated.join(', ')}` : '',
    })), ['k', 'gpu_ms', 'npu_ms', 'split_ms', 'speedup']),
  ));
  lines.push('');
  lines.push('sensitivity (each input changed alone)');
  const hasE2e = r.splittable_fraction !== null;
  lines.push(formatTable(
    ['input', 'change', 'value', 'k', 'speedup', 'vs_base', ...(hasE2e ? ['end_to_end'] : [])],
    alignRight(r.sensitivity.map((s) => ({
      input: SENSITIVITY_INPUTS[s.input], change: formatChangePct(s.change_pct),
      value: s.input === 'rows' ? String(s.value) : s.input === 'splittable_fraction' ? formatFraction(s.value) : `${formatMs(s.value)} ms`,
      k: s.npu_groups, speedup: formatSpeedup(s.speedup), vs_base: formatChangePct(s.speedup_change_pct),
      end_to_end: s.end_to_end_speedup === null ? '' : formatSpeedup(s.end_to_end_speedup),
    })), ['change', 'value', 'speedup', 'vs_base', 'end_to_end']),
  ));
  lines.push('');
  lines.push('sources');
  for (const l of sourceLines(r)) lines.push(`  ${l}`);
  if (r.extrapolation.length) {
    lines.push('');
    lines.push('extrapolated (cost held at the nearest measured point)');
    for (const x of r.extrapolation) lines.push(`  ${x.engine} at ${x.rows} rows, ${x.side} the measured ${x.measured_min_rows}..${x.measured_max_rows} rows (affects ${x.affects})`);
  }
  if (r.notes.length) {
    lines.push('');
    lines.push('notes');
    for (const n of r.notes) lines.push(`  - ${n}`);
  }
  return lines.join('\n');
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
    if (fractionText !== undefined && String(fractionText).trim() === 'auto' && list(args.gpu).length === 0) {
      throw usageError('--splittable-fraction auto reads the prefill from the --gpu capture; give --gpu, or a number (0.6 or 60%)');
    }
    const isAuto = fractionText !== undefined && String(fractionText).trim() === 'auto';
    const given = fractionText === undefined || isAuto ? null : fractionOption(fractionText);
    let rows = rowsOption(args.rows, 'rows');
    const gpu = await engineCost('gpu', args, groupRows);
    const npu = await engineCost('npu', args, groupRows);
    const notes: string[] = [...gpu.captures, ...npu.captures].map((c) => c.segment_note).filter((n): n is string => n !== null);
    if (rows === undefined) {
      const rpd = list(args['gpu-rows-per-dispatch']);
      if (list(args.gpu).length === 1 && rpd.length === 1) {
        rows = rowsOption(rpd[0], 'gpu-rows-per-dispatch')!;
        notes.push(`M taken from --gpu-rows-per-dispatch (${rows}): the GEMM as the iGPU runs it today`);
      } else {
        throw usageError('give --rows M (the rows of the GEMM to split, e.g. 8192)');
      }
    }
    const auto = isAuto ? autoFraction(gpu.captures, rows) : null;
    const fraction = auto ? auto.fraction : given;
    const result = ceiling({
      rows,
      group_rows: groupRows,
      gpu: gpu.cost,
      npu: npu.cost,
      sync_overhead_ms: syncNs === undefined ? 0 : nsToMsLossy(syncNs),
      splittable_fraction: fraction,
      splittable_fraction_source: auto ? auto.source : fraction === null ? null : { from: 'number', line: `--splittable-fraction ${String(fractionText)}` },
      target_speedup: target,
    });
    const r: CeilingResult = notes.length ? { ...result, notes: [...notes, ...result.notes] } : result;
    const format: OutputFormat = args.json ? 'json' : args.format;
    if (format === 'json') out(formatJson(r));
    else if (format === 'md') out(ceilingMarkdown(r));
    else if (format === 'vega-lite') out(formatJson(ceilingSpec(r)));
    else out(ceilingText(r));
  },
};
