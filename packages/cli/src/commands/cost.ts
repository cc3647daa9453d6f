import type { CommandModule } from 'yargs';
import { kernelCost } from '@tickwise/inputs';
import { withAnalysis, selectionOptions, header, captures, dur, excludedNote, type AnalysisArgs } from '../analysis-options';
import { withStore } from '../options';
import { formatJson, formatTable, out } from '../output';

interface Args extends AnalysisArgs {
  kernel: string;
  'rows-per-dispatch': number;
  'group-rows': number;
  params?: number;
  tokens?: number;
  'gemm-kernels'?: string;
}

const ms = (v: number | null) => (v === null ? '-' : `${v.toFixed(4)} ms`);

/** `tickwise cost <input> --kernel GLOB --rows-per-dispatch 512`: per-row-group cost. */
export const costCommand: CommandModule<object, Args> = {
  command: 'cost <inputs..>',
  describe: 'per-row-group cost of a kernel: group_ms = dispatch_ms x group_rows / rows_per_dispatch; with --params/--tokens a FLOP reading too',
  builder: (y) =>
    withAnalysis(y)
      .option('kernel', { type: 'string', demandOption: true, describe: 'kernel name glob (case-sensitive: * ? [..]), e.g. "*matmul_512x8192x3072*"' })
      .option('rows-per-dispatch', { type: 'number', demandOption: true, describe: 'rows one dispatch covers (the ubatch, e.g. 512)' })
      .option('group-rows', { type: 'number', default: 256, describe: 'rows of a group (the NPU tile)' })
      .option('params', { type: 'number', describe: 'weight parameters of the GEMMs of one prefill (e.g. 4.02e9), for the FLOP reading' })
      .option('tokens', { type: 'number', describe: 'tokens (rows) of one prefill (e.g. 16384), for the FLOP reading' })
      .option('gemm-kernels', { type: 'string', describe: 'glob of the GEMM kernels whose time makes the FLOP rate (default: matmul/gemm/mmt names with a <rows-per-dispatch>xNxK shape)' })
      // the default of every cost and model input: steady where the capture repeats, else all (as ceiling, schedule and report)
      .option('segment', { type: 'string', default: undefined, describe: 'all | first | last | steady (all but the first) | N; default: steady where the capture repeats, else all' }) as never,
  handler: async (args) => {
    await withStore(args, async (store) => {
      const k = await kernelCost(store, {
        ...selectionOptions(args),
        kernel: args.kernel,
        rowsPerDispatch: args['rows-per-dispatch'],
        groupRows: args['group-rows'],
        params: args.params,
        tokens: args.tokens,
        gemmKernels: args['gemm-kernels'],
      }, { options: '--segment, --reps' });
      const r = k.cost;
      const segmentFrom = k.segment_defaulted ? 'the default: steady where the capture repeats, else all' : '--segment';
      if (args.json) {
        out(formatJson({ ...r, segment_from: segmentFrom, segment_note: k.segment_note, captures: await captures(store, [r.capture_id]) }));
        return;
      }
      const lines = [await header(store, [r.capture_id])];
      lines.push(`cost of a ${r.group_rows}-row group of "${r.kernel}" on capture ${r.capture_id} device ${r.device} (one dispatch = ${r.rows_per_dispatch} rows); segment ${r.segment} (${r.segments_selected} selected; ${segmentFrom})`);
      if (k.segment_note) lines.push(`note: ${k.segment_note}`);
      lines.push(formatTable(['kernel', 'dispatches'], r.matched_kernels.map((k) => ({ kernel: k.kernel, dispatches: k.dispatch_count }))));
      lines.push('\n' + formatTable(['segment', 'dispatches', 'mean', 'median'], r.per_segment.map((p) => ({ segment: p.segment, dispatches: p.dispatch_count, mean: dur(p.mean_dispatch_ns), median: dur(p.median_dispatch_ns) }))));
      lines.push(`\ndispatches ${r.dispatch_count}: mean ${dur(r.mean_dispatch_ns)}, median ${dur(r.median_dispatch_ns)}, p10 ${dur(r.p10_dispatch_ns)}, p90 ${dur(r.p90_dispatch_ns)}`);
      lines.push(`group_ms ${ms(r.group_ms)} (mean-based), ${ms(r.group_ms_median)} (median-based), p10-p90 ${ms(r.group_ms_p10)} - ${ms(r.group_ms_p90)}`);
      const f = r.flops;
      if (f) {
        lines.push(`\nFLOP reading: 2 x ${f.params} params x ${f.tokens} tokens = ${f.flops_per_prefill.toExponential(4)} FLOP per prefill over ${dur(f.gemm_time_ns_per_prefill)} of GEMM time per prefill (${f.prefills} selected; ${f.gemm_kernels}: ${f.gemm_kernels_matched.length} kernels)`);
        lines.push(`  engine ${f.tflops.toFixed(3)} TFLOP/s; group ${f.gemm_shape ? `${r.group_rows}x${f.gemm_shape.n}x${f.gemm_shape.k}` : '?'}: group_ms_from_flops ${ms(f.group_ms_from_flops)}; measured / FLOP reading = ${f.ratio === null ? '-' : f.ratio.toFixed(3)}`);
        if (f.note) lines.push(`  note: ${f.note}`);
      }
      out(lines.join('\n') + excludedNote(r.excluded_dispatches));
    });
  },
};
