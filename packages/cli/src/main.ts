import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { isTickwiseError } from '@tickwise/time';
import { VERBS, type Verb } from './commands/index';
import { cliVersion } from './version';

/**
 * The tickwise CLI entry: parse, dispatch to a verb, map errors to exit codes
 * (0 ok, 1 a check found an error, 2 bad usage or input). Users never see a
 * stack trace for bad input; an unexpected error says it is a bug.
 *
 * Start-up is kept small: only the verb named on the command line is loaded
 * (with what it needs: DuckDB, readers, chart libraries); the others are
 * registered by name and description, enough for `--help` and suggestions.
 */
export async function main(argv: string[]): Promise<number> {
  try {
    // yargs drops a bare '-': pass stdin through as a name it keeps
    if (argv.includes('-')) {
      const { STDIN_ARG } = await import('@tickwise/capture');
      argv = argv.map((a) => (a === '-' ? STDIN_ARG : a));
    }
    if (argv[0] === '--version' || argv[0] === '-V') {
      process.stdout.write(`tickwise ${cliVersion()}\n`);
      return 0;
    }
    const named = namedVerb(argv);
    let cli = yargs(argv)
      .scriptName('tickwise')
      .usage('$0 <verb> [inputs] [options]\n\nDispatch-timeline analysis for iGPU + NPU edge chips.')
      .strict()
      .recommendCommands()
      .demandCommand(1, 'name a verb: tickwise --help lists them')
      .help()
      .version(false)
      .option('version', { type: 'boolean', describe: 'print the version and exit' })
      .wrap(Math.min(110, process.stdout.columns || 100))
      .fail((msg, err) => {
        throw err ?? new UsageError(msg);
      });
    for (const v of VERBS) cli = cli.command(v === named ? await v.load() : stub(v));
    await cli.parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e);
  }
}

/** The verb the command line names (its first word that is not an option), if it is one. */
function namedVerb(argv: readonly string[]): Verb | undefined {
  const first = argv.find((a) => !a.startsWith('-'));
  return VERBS.find((v) => v.name === first);
}

/** A verb that is not run: its name and description for the verb list. */
function stub(v: Verb): { command: string; describe: string; handler: () => void } {
  return { command: v.name, describe: v.describe, handler: () => undefined };
}

class UsageError extends Error {}

function reportError(e: unknown): number {
  if (isTickwiseError(e)) {
    process.stderr.write(`tickwise: ${e.where()}\n`);
    return e.exitCode;
  }
  if (e instanceof UsageError) {
    process.stderr.write(`tickwise: ${e.message}\n(tickwise --help lists verbs and options)\n`);
    return 2;
  }
  // a store query that failed (by name: the store module is not loaded for every verb)
  if (e instanceof Error && e.name === 'QueryError') {
    process.stderr.write(`tickwise: ${e.message.split('\n')[0]}\n`);
    return 2;
  }
  process.stderr.write(`tickwise: internal error (a bug, please report): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return 70;
}

const code = await main(hideBin(process.argv));
process.exitCode = code;
