import type { CommandModule } from 'yargs';
import { TickwiseError } from '@tickwise/time';
import { sqlString } from '@tickwise/store';
import { installViews } from '@tickwise/analyzer';
import { withInputFormat, withStore, type InputArgs } from '../options';
import { formatCsv, formatJson, formatTable, out } from '../output';

interface Args extends InputArgs {
  args: string[];
  out?: string;
}

/** `tickwise sql <input...> "<query>"`: SQL over the store. */
export const sqlCommand: CommandModule<object, Args> = {
  command: 'sql <args..>',
  describe: 'run SQL over a store or captures: tickwise sql run.duckdb "select ..."',
  builder: (y) =>
    withInputFormat(y)
      .positional('args', { type: 'string', array: true, demandOption: true, describe: 'inputs, then the query (last)' })
      .option('format', { type: 'string', choices: ['table', 'csv', 'json'], default: 'table', requiresArg: true, describe: 'output format on stdout; values exactly as stored (the input format is --input-format)' })
      .option('out', { type: 'string', describe: 'write the result to a file instead: .parquet, .csv or .json' })
      .option('tick-hz', { type: 'string', describe: 'assume a tick rate for devices with no time base' }) as never,
  handler: async (argv) => {
    const all = argv.args.map(String);
    if (all.length < 2) throw new TickwiseError('usage', 'usage: tickwise sql <store-or-captures...> "<query>"');
    const query = all[all.length - 1]!;
    const inputs = all.slice(0, -1);
    const outputFormat = (argv as unknown as { format: string }).format;
    const inputArgs: InputArgs = { inputs, 'input-format': (argv as unknown as Record<string, string | undefined>)['input-format'], 'tick-hz': argv['tick-hz'] };
    await withStore(inputArgs, async (store) => {
      await installViews(store);
      if (argv.out) {
        const ext = argv.out.split('.').pop()?.toLowerCase();
        const fmt = ext === 'parquet' ? 'PARQUET' : ext === 'csv' ? 'CSV, HEADER' : ext === 'json' ? 'JSON, ARRAY true' : null;
        if (!fmt) throw new TickwiseError('usage', `--out ${argv.out}: write .parquet, .csv or .json`);
        await store.run(`COPY (${query.replace(/;\s*$/, '')}) TO ${sqlString(argv.out)} (FORMAT ${fmt})`);
        process.stderr.write(`wrote ${argv.out}\n`);
        return;
      }
      const { columns, rows } = await store.table(query);
      if (outputFormat === 'json') out(formatJson(rows));
      else if (outputFormat === 'csv') out(formatCsv(columns, rows));
      else out(formatTable(columns, rows, { maxCell: Number(process.env['TICKWISE_MAX_CELL'] ?? 200) }));
    });
  },
};
