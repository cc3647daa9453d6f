import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { QueryError } from '@tickwise/store';
import { isTickwiseError } from '@tickwise/time';
import { COMMANDS } from './commands/index';
import { STDIN_ARG } from '@tickwise/capture';

/**
 * The tickwise CLI entry: parse, dispatch to a verb, map errors to exit codes
 * (0 ok, 1 a check found an error, 2 bad usage or input). Users never see a
 * stack trace for bad input; an unexpected error says it is a bug.
 */
export async function main(argv: string[]): Promise<number> {
  // yargs drops a bare '-': pass stdin through as a name it keeps
  let cli = yargs(argv.map((a) => (a === '-' ? STDIN_ARG : a)))
    .scriptName('tickwise')
    .usage('$0 <verb> [inputs] [options]\n\nDispatch-timeline analysis for iGPU + NPU edge chips.')
    .strict()
    .demandCommand(1, 'name a verb: tickwise --help lists them')
    .help()
    .version(false)
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((msg, err) => {
      throw err ?? new UsageError(msg);
    });
  for (const c of COMMANDS) cli = cli.command(c);
  try {
    await cli.parseAsync();
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (e) {
    return reportError(e);
  }
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
  if (e instanceof QueryError) {
    process.stderr.write(`tickwise: ${e.message.split('\n')[0]}\n`);
    return 2;
  }
  process.stderr.write(`tickwise: internal error (a bug, please report): ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  return 70;
}

const code = await main(hideBin(process.argv));
process.exitCode = code;
