import type { CommandModule } from 'yargs';
import { collectReport, collectSchedule, reportHtml, reportMarkdown, type CeilingOptions } from '@tickwise/report';
import { writeFileAtomic } from '@tickwise/store';
import { nsToMsLossy } from '@tickwise/time';
import { durationOption, withStore, type InputArgs, msOption, rowsOption, usageError } from '../options';
import { log, out } from '../output';
import { scheduleText } from '../schedule-text';

interface Args {
  inputs: string[];
  out?: string;
  format: 'html' | 'md';
  title?: string;
  schedule?: boolean;
  'schedule-microbatch'?: string;
  'min-gap'?: string;
  'max-intervals'?: number;
  ceiling?: boolean;
  'gpu-kernel'?: string;
  'gpu-rows-per-dispatch'?: string;
  'gpu-group-ms'?: string;
  'npu-kernel'?: string;
  'npu-rows-per-dispatch'?: string;
  'npu-tile-ms'?: string;
  rows?: string;
  'group-rows'?: string;
  'target-speedup'?: string;
  'splittable-fraction'?: string;
  'sync-overhead'?: string;
  'sync-overhead-ms'?: string;
  params?: number;
  tokens?: number;
  'input-format'?: string;
  'tick-hz'?: string;
  'device-kind'?: string;
}

function numberOption(text: string | undefined, name: string, ok: (v: number) => boolean, want: string): number | undefined {
  if (text === undefined) return undefined;
  const t = String(text).trim().replace(/x$/i, '');
  const v = t.endsWith('%') ? Number(t.slice(0, -1)) / 100 : Number(t);
  if (!Number.isFinite(v) || !ok(v)) throw usageError(`--${name} ${text}: ${want}`);
  return v;
}

/** `--sync-overhead <duration>` in ms; the old `--sync-overhead-ms N` is refused with the new spelling. */
function syncOverheadMs(argv: Args): number | undefined {
  const old = argv['sync-overhead-ms'];
  if (old !== undefined) throw usageError(`--sync-overhead-ms ${old}: the option is now --sync-overhead with a unit, as in tickwise ceiling: --sync-overhead ${old}ms`);
  const ns = durationOption(argv['sync-overhead'], 'sync-overhead');
  return ns === undefined ? undefined : nsToMsLossy(ns);
}

/** `tickwise report <input> --out report.html [--format html|md]`. */
export const reportCommand: CommandModule<object, Args> = {
  command: 'report <inputs..>',
  describe: 'one self-contained HTML report (timelines, gaps, kernels, row-group cost, split ceiling), or a Markdown summary',
  builder: (y) =>
    y
      .positional('inputs', { type: 'string', array: true, demandOption: true, describe: 'a .duckdb store, or capture files (imported in memory); - for stdin' })
      .option('out', { type: 'string', describe: 'the file to write (default: stdout for --format md; required for html)' })
      .option('format', { type: 'string', choices: ['html', 'md'], default: 'html', describe: 'html: one page, no network needed; md: a summary to paste into an issue' })
      .option('title', { type: 'string', describe: 'the report title' })
      .option('min-gap', { type: 'string', default: '200us', describe: 'the gap threshold marked on the histogram (a duration with a unit)' })
      .option('max-intervals', { type: 'number', default: 2000, describe: 'most timeline bars per device (busy blocks beyond are merged across their shortest gaps)' })
      .option('schedule', { type: 'boolean', default: false, describe: 'also run the micro-batch schedule model (tickwise schedule) on the iGPU and NPU captures of the input and draw its Gantt chart' })
      .option('schedule-microbatch', { type: 'string', describe: 'rows per micro-batch for --schedule (default: the capture\'s rows per dispatch)' })
      .option('ceiling', { type: 'boolean', default: true, describe: 'draw the split ceiling (--no-ceiling leaves it out)' })
      .option('gpu-kernel', { type: 'string', describe: 'ceiling: glob of the iGPU GEMM to split (default: derived from an NPU kernel of the same N x K)' })
      .option('gpu-rows-per-dispatch', { type: 'string', describe: 'ceiling and cost table: rows one iGPU dispatch covers (default: the M in the kernel name)' })
      .option('gpu-group-ms', { type: 'string', describe: 'ceiling: the iGPU cost per group, ms (instead of --gpu-kernel)' })
      .option('npu-kernel', { type: 'string', describe: 'ceiling: glob of the NPU GEMM (default: the NPU capture\'s GEMM)' })
      .option('npu-rows-per-dispatch', { type: 'string', describe: 'ceiling: rows one NPU dispatch covers (default: the M in the kernel name, else --group-rows)' })
      .option('npu-tile-ms', { type: 'string', describe: 'ceiling: the NPU cost per tile, ms (instead of an NPU capture)' })
      .option('rows', { type: 'string', describe: 'ceiling: M, the rows of the GEMM to split (default: the prompt of a stored llama-bench reference)' })
      .option('group-rows', { type: 'string', default: '256', describe: 'G: rows of a group, the NPU tile' })
      .option('target-speedup', { type: 'string', default: '1.15', describe: 'ceiling: the per-GEMM speedup the required-tile bar asks for' })
      .option('splittable-fraction', { type: 'string', describe: 'ceiling: share of the prefill the split GEMMs take (0.6 or 60%), for the end-to-end number' })
      .option('sync-overhead', { type: 'string', describe: 'ceiling: join/sync cost when the NPU takes any group, a duration with a unit (50us)' })
      // the old spelling: refused with the new one spelled out (hidden)
      .option('sync-overhead-ms', { type: 'string', hidden: true })
      .option('params', { type: 'number', describe: 'cost table: weight parameters of the model, for the FLOP reading (with --tokens)' })
      .option('tokens', { type: 'number', describe: 'cost table: tokens of one prefill, for the FLOP reading (with --params)' })
      .option('input-format', { type: 'string', describe: 'format of capture inputs (default: detected)' })
      .option('tick-hz', { type: 'string', describe: 'assume a tick rate for devices with no time base; recorded as an assumption' })
      .option('device-kind', { type: 'string', choices: ['gpu', 'npu', 'cpu'], describe: 'device kind when the source does not say' }) as never,
  handler: async (argv) => {
    if (argv.format === 'html' && !argv.out) throw usageError('--format html needs --out FILE (e.g. --out report.html)');
    const maxIntervals = argv['max-intervals'] ?? 2000;
    if (!Number.isSafeInteger(maxIntervals) || maxIntervals < 1) throw usageError(`--max-intervals ${maxIntervals}: write a whole number >= 1`);
    const ceilingOpts: CeilingOptions = {
      gpuKernel: argv['gpu-kernel'],
      gpuRowsPerDispatch: rowsOption(argv['gpu-rows-per-dispatch'], 'gpu-rows-per-dispatch'),
      gpuGroupMs: msOption(argv['gpu-group-ms'], 'gpu-group-ms'),
      npuKernel: argv['npu-kernel'],
      npuRowsPerDispatch: rowsOption(argv['npu-rows-per-dispatch'], 'npu-rows-per-dispatch'),
      npuTileMs: msOption(argv['npu-tile-ms'], 'npu-tile-ms'),
      rows: rowsOption(argv.rows, 'rows'),
      groupRows: rowsOption(argv['group-rows'], 'group-rows'),
      targetSpeedup: numberOption(argv['target-speedup'], 'target-speedup', (v) => v > 1, 'write a speedup above 1 (e.g. 1.15)'),
      splittableFraction: numberOption(argv['splittable-fraction'], 'splittable-fraction', (v) => v >= 0 && v <= 1, 'write a share in [0, 1] (0.6 or 60%)'),
      syncOverheadMs: syncOverheadMs(argv),
    };
    if (argv.ceiling === false && Object.entries(ceilingOpts).some(([k, v]) => v !== undefined && k !== 'groupRows' && k !== 'targetSpeedup' && k !== 'gpuRowsPerDispatch')) {
      throw usageError('--no-ceiling leaves the ceiling out: drop the ceiling options, or --no-ceiling');
    }
    if ((argv.params === undefined) !== (argv.tokens === undefined)) throw usageError('--params and --tokens go together (the FLOP reading needs both)');
    const inputs: InputArgs = { inputs: argv.inputs.map(String), format: argv['input-format'], 'tick-hz': argv['tick-hz'], 'device-kind': argv['device-kind'] };
    const microbatch = rowsOption(argv['schedule-microbatch'], 'schedule-microbatch');
    const text = await withStore(inputs, async (store) => {
      const collected = await collectReport(store, {
        title: argv.title,
        thresholdNs: durationOption(argv['min-gap'], 'min-gap'),
        maxIntervals,
        ceiling: argv.ceiling === false ? null : ceilingOpts,
        params: argv.params,
        tokens: argv.tokens,
      });
      // the schedule model on the same store: devices chosen by kind (or content), not by the order of the inputs
      const data = argv.schedule ? { ...collected, schedule: await collectSchedule(store, { microbatch, text: scheduleText }) } : collected;
      const errors = data.findings.filter((f) => f.severity === 'error');
      for (const f of errors) log(`!! error ${f.code}: ${f.message}`);
      if (data.ceiling.kind === 'missing') log(`note: no split ceiling in the report: it needs ${data.ceiling.missing.join('; ')}`);
      return argv.format === 'md' ? reportMarkdown(data) : reportHtml(data);
    });
    if (!argv.out) {
      out(text);
      return;
    }
    // all or nothing: a full disk leaves the old file (or none), never a truncated one
    await writeFileAtomic(argv.out, text);
    log(`wrote ${argv.out} (${argv.format}, ${text.length} bytes${argv.format === 'html' ? ', self-contained: opens with no network' : ''})`);
  },
};
