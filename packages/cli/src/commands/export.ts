import type { CommandModule } from 'yargs';
import { exportParquet, exportPerfettoJson } from '@tickwise/report';
import { TickwiseError } from '@tickwise/time';
import { withInputFormat, withStore, type InputArgs } from '../options';
import { formatJson, formatTable, log, out } from '../output';

const EXPORT_FORMATS = ['perfetto-json', 'parquet'] as const;
type ExportFormat = (typeof EXPORT_FORMATS)[number];

interface Args {
  inputs: string[];
  format: ExportFormat;
  out: string;
  partition?: boolean;
  force?: boolean;
  submissions?: boolean;
  json?: boolean;
  'input-format'?: string;
  'tick-hz'?: string;
  'device-kind'?: string;
}

/** `tickwise export <input> --format perfetto-json|parquet --out PATH`. */
export const exportCommand: CommandModule<object, Args> = {
  command: 'export <inputs..>',
  describe: 'write the store for other tools: Chrome trace JSON for Perfetto\'s UI, or Parquet for pandas/polars',
  builder: (y) =>
    withInputFormat(y)
      .positional('inputs', { type: 'string', array: true, demandOption: true, describe: 'a .duckdb store, or capture files (imported in memory); - for stdin' })
      .option('format', { type: 'string', choices: EXPORT_FORMATS, demandOption: true, describe: 'perfetto-json: one file; parquet: a folder with one file per table' })
      .option('out', { type: 'string', demandOption: true, describe: 'the file (perfetto-json) or folder (parquet) to write' })
      .option('partition', { type: 'boolean', default: false, describe: 'parquet: hive-partition each table by capture_id (<table>/capture_id=N/)' })
      .option('force', { type: 'boolean', default: false, describe: 'parquet: replace a non-empty --out folder' })
      .option('submissions', { type: 'boolean', default: true, describe: 'perfetto-json: also draw submissions (--no-submissions: dispatches only)' })
      .option('json', { type: 'boolean', default: false, describe: 'print what was written as JSON' })
      .option('tick-hz', { type: 'string', describe: 'assume a tick rate (e.g. 100MHz) for devices with no time base; recorded as an assumption' })
      .option('device-kind', { type: 'string', choices: ['gpu', 'npu', 'cpu'], describe: 'device kind when the source does not say' }) as never,
  handler: async (argv) => {
    const inputArgs: InputArgs = { inputs: argv.inputs.map(String), format: argv['input-format'], 'tick-hz': argv['tick-hz'], 'device-kind': argv['device-kind'] };
    if (argv.partition && argv.format !== 'parquet') throw new TickwiseError('usage', '--partition goes with --format parquet');
    await withStore(inputArgs, async (store) => {
      if (argv.format === 'perfetto-json') {
        const s = await exportPerfettoJson(store, argv.out, { submissions: argv.submissions !== false });
        if (argv.json) out(formatJson(s));
        else {
          log(`wrote ${s.path}: ${s.dispatch_slices} dispatch slices, ${s.submission_slices} submission slices, ${s.host_slices} host slices, ` +
            `${s.flows} launch -> kernel flows, ${s.processes} processes (capture x device, and a host process per capture), ` +
            `${s.threads} threads (queue lanes and host threads), ${s.bytes} bytes; open it in https://ui.perfetto.dev`);
        }
        if (s.negative_duration_rows > 0) log(`warning: ${s.negative_duration_rows} dispatch row(s) end before they start; left out`);
        return;
      }
      const files = await exportParquet(store, argv.out, { partition: argv.partition ?? false, force: argv.force ?? false });
      if (argv.json) out(formatJson(files));
      else {
        out(formatTable(['table', 'rows', 'path'], files.map((f) => ({ table: f.table, rows: f.rows, path: f.path + (f.partitioned ? '/' : '') }))));
        log(`wrote ${files.length} tables under ${argv.out} (manifest: tickwise-export.json)`);
      }
    });
  },
};
