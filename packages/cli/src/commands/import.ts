import { stat } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { importInput } from '@tickwise/capture';
import { withAtomicStore } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importOptions, withJson, type InputArgs } from '../options';
import { formatJson, log, out } from '../output';
import { importProgress } from '../progress';

interface Args extends InputArgs {
  db: string;
  label?: string;
}

/** `tickwise import <files...> --db run.duckdb`: atomic import into a store. */
export const importCommand: CommandModule<object, Args> = {
  command: 'import <inputs..>',
  describe: 'import capture files into a DuckDB store (all or nothing)',
  builder: (y) =>
    withJson(
      y
        .positional('inputs', { type: 'string', array: true, demandOption: true, describe: 'capture files or directories; - for stdin' })
        .option('db', { type: 'string', demandOption: true, describe: 'the store file to create or add to (.duckdb)' })
        .option('format', { type: 'string', describe: 'input format (default: detected from content)' })
        .option('tick-hz', { type: 'string', describe: 'assume a tick rate (e.g. 100MHz) for devices with no time base' })
        .option('device-kind', { type: 'string', choices: ['gpu', 'npu', 'cpu'], describe: 'device kind when the source does not say' })
        .option('label', { type: 'string', describe: 'label for the capture' }),
    ) as never,
  handler: async (args) => {
    if (!/\.(duckdb|db)$/i.test(args.db)) throw new TickwiseError('usage', `--db ${args.db}: a store file ends in .duckdb`);
    const results = await withAtomicStore(args.db, async (store) => {
      const done = [];
      for (const input of args.inputs) {
        const size = input === '-' || input === '/dev/stdin' ? 0 : await stat(input).then((s) => s.size, () => 0);
        const bar = importProgress(`import ${input}`, size);
        bar.watch(store);
        try {
          const opts = { ...importOptions(args, bar.phase), ...(args.label ? { label: args.label } : {}) };
          done.push({ input, ...(await importInput(store, input, opts)) });
        } finally {
          bar.stop();
        }
      }
      return done;
    });
    if (args.json) {
      out(formatJson({ db: args.db, imported: results }));
      return;
    }
    for (const r of results) {
      out(`imported ${r.input} as capture ${r.capture_id} (${r.format}): ${r.records} records, ${r.dispatches} dispatches, ${r.diagnostics} diagnostics`);
    }
    log(`store: ${args.db}  (tickwise info ${args.db}; tickwise sql ${args.db} "select ...")`);
  },
};
