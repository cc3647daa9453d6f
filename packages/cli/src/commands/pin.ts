import { writeFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { TickwiseError } from '@tickwise/time';
import { makePin } from '@tickwise/capture';
import { log, out } from '../output';
import { provenanceFromArgs, withProvenanceOptions, type ProvenanceArgs } from './provenance';

/** Arguments of `tickwise pin`. */
export interface PinArgs extends ProvenanceArgs {
  out?: string | undefined;
}

/**
 * `tickwise pin <exe> --out pin.json [--env K=V ...] [--marker STR ...]`:
 * writes the expected size, build-id, sha256 and marker counts of the program
 * and every library it would load (schema `tickwise-pin/1`), for
 * `check --pin` to compare against later. (Pinning from a store comes later.)
 */
export const pinCommand: CommandModule<object, PinArgs> = {
  command: 'pin <file>',
  describe: 'write a pin: the build-ids, sizes, sha256 and marker counts of a program and the libraries it loads',
  builder: (y) =>
    withProvenanceOptions(
      y
        .positional('file', { type: 'string', describe: 'the program (or file) to pin', demandOption: true })
        .option('out', { type: 'string', requiresArg: true, describe: 'where to write the pin JSON (default: stdout)' }),
    ) as never,
  handler: async (args) => {
    const res = await provenanceFromArgs(args);
    const pin = makePin(res);
    const text = JSON.stringify(pin, null, 2) + '\n';
    if (args.out === undefined || args.out === '-') out(text);
    else {
      try {
        writeFileSync(args.out, text);
      } catch (e) {
        throw new TickwiseError('unwritable', `cannot write the pin: ${(e as Error).message}`, { file: args.out, cause: e });
      }
    }
    const where = args.out === undefined || args.out === '-' ? 'stdout' : args.out;
    log(`tickwise: pinned ${pin.files.length} file(s) to ${where}${pin.unresolved?.length ? `; not found, not pinned: ${pin.unresolved.join(', ')}` : ''}`);
    for (const n of res.notes) log(`tickwise: note: ${n}`);
  },
};
