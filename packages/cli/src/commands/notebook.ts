import { readFile, writeFile } from 'node:fs/promises';
import type { Argv, CommandModule } from 'yargs';
import { provenanceLines } from '@tickwise/analyzer';
import { parseNotebook, renderNotebookHtml, reportMessages, runNotebook } from '@tickwise/report';
import { TickwiseError } from '@tickwise/time';
import { withInputFormat, withStore, type InputArgs } from '../options';
import { log } from '../output';

interface RunArgs {
  notebook: string;
  db: string[];
  out: string;
  'input-format'?: string;
  'tick-hz'?: string;
  'device-kind'?: string;
}

const runCommand: CommandModule<object, RunArgs> = {
  command: 'run <notebook>',
  describe: 'run a notebook\'s sql and vega-lite cells against a store; write one self-contained HTML page',
  builder: (y) =>
    withInputFormat(y)
      .positional('notebook', { type: 'string', demandOption: true, describe: 'a Markdown notebook (notebooks/*.md)' })
      .option('db', { type: 'string', array: true, demandOption: true, describe: 'a .duckdb store (or capture files, imported in memory)' })
      .option('out', { type: 'string', demandOption: true, describe: 'the HTML file to write' })
      .option('tick-hz', { type: 'string', describe: 'assume a tick rate for devices with no time base' })
      .option('device-kind', { type: 'string', choices: ['gpu', 'npu', 'cpu'], describe: 'device kind when the source does not say' })
      .example('$0 notebook run notebooks/idle-anatomy.md --db run.duckdb --out idle.html', 'run a notebook against a store into one HTML page')
      .example('$0 notebook run notebooks/capture-to-ceiling.md --db captures/sample/igpu-prefill.ireeperf.jsonl --out c.html', 'against a capture file (imported in memory)') as never,
  handler: async (argv) => {
    let text: string;
    try {
      text = await readFile(argv.notebook, 'utf8');
    } catch (e) {
      throw new TickwiseError('unreadable-input', reportMessages.notebookUnreadable((e as Error).message), { file: argv.notebook, cause: e });
    }
    const nb = parseNotebook(text, argv.notebook);
    const inputs: InputArgs = { inputs: argv.db.map(String), format: argv['input-format'], 'tick-hz': argv['tick-hz'], 'device-kind': argv['device-kind'] };
    const html = await withStore(inputs, async (store) => {
      const run = await runNotebook(store, nb);
      const ids = (await store.rows(`SELECT capture_id FROM captures ORDER BY 1`)).map((r) => Number(r['capture_id']));
      return renderNotebookHtml(run, { provenance: await provenanceLines(store, ids) });
    });
    try {
      await writeFile(argv.out, html);
    } catch (e) {
      throw new TickwiseError('cannot-write', reportMessages.cannotWrite(argv.out, (e as Error).message), { cause: e });
    }
    const cells = nb.cells.filter((c) => c.kind !== 'markdown').length;
    log(`wrote ${argv.out} (${cells} cells of ${argv.notebook}, ${html.length} bytes, no network needed)`);
  },
};

/** `tickwise notebook run nb.md --db run.duckdb --out nb.html`. */
export const notebookCommand: CommandModule<object, object> = {
  command: 'notebook',
  describe: 'notebooks: Markdown with ```sql and ```vega-lite cells (notebooks/*.md)',
  builder: (y: Argv) => y.command(runCommand as CommandModule<object, never>).demandCommand(1, 'name an action: tickwise notebook run nb.md --db run.duckdb --out nb.html'),
  handler: () => undefined,
};
