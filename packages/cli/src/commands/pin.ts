import { writeFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { TickwiseError } from '@tickwise/time';
import { isStorePath, makePin, observedFilesFromStore, provenanceCaptureIds, type Pin } from '@tickwise/capture';
import { Store } from '@tickwise/store';
import { log, out } from '../output';
import { provenanceFromArgs, withProvenanceOptions, type ProvenanceArgs } from './provenance';

/** Arguments of `tickwise pin`. */
export interface PinArgs extends ProvenanceArgs {
  out?: string | undefined;
  capture?: number | undefined;
}

/**
 * A pin from a store's provenance rows (what `import --provenance-of` or the
 * recorder stored): of `--capture N`, or of the one capture that has them.
 */
async function pinFromStore(path: string, capture: number | undefined): Promise<{ pin: Pin; note: string }> {
  let store: Store;
  try {
    store = await Store.open(path, { readOnly: true });
  } catch (e) {
    throw new TickwiseError('unreadable-input', `cannot open store: ${(e as Error).message.split('\n')[0]}`, { file: path, cause: e });
  }
  try {
    const ids = await provenanceCaptureIds(store);
    if (ids.length === 0) throw new TickwiseError('no-provenance', 'no capture in this store has provenance rows (import with --provenance-of <program>)', { file: path });
    const id = capture ?? (ids.length === 1 ? ids[0]! : undefined);
    if (id === undefined) throw new TickwiseError('usage', `captures ${ids.join(', ')} have provenance: pass --capture N to say which to pin`, { file: path });
    if (!ids.includes(id)) throw new TickwiseError('usage', `capture ${id} has no provenance rows (captures with them: ${ids.join(', ')})`, { file: path });
    return { pin: makePin(await observedFilesFromStore(store, id)), note: `from capture ${id} of ${path}` };
  } finally {
    await store.close();
  }
}

/**
 * `tickwise pin <exe> --out pin.json [--env K=V ...] [--marker STR ...]`:
 * writes the expected size, build-id, sha256 and marker counts of the program
 * and every library it would load (schema `tickwise-pin/1`), for
 * `check --pin` to compare against later. `tickwise pin <store.duckdb>
 * [--capture N]` pins the provenance stored with a capture instead.
 */
export const pinCommand: CommandModule<object, PinArgs> = {
  command: 'pin <file>',
  describe: 'write a pin: the build-ids, sizes, sha256 and marker counts of a program and the libraries it loads',
  builder: (y) =>
    withProvenanceOptions(
      y
        .positional('file', { type: 'string', describe: 'the program (or file) to pin, or a .duckdb store whose capture has provenance', demandOption: true })
        .option('capture', { type: 'number', requiresArg: true, describe: 'with a store: the capture whose provenance to pin' })
        .option('out', { type: 'string', requiresArg: true, describe: 'where to write the pin JSON (default: stdout)' }),
    ) as never,
  handler: async (args) => {
    const fromStore = isStorePath(args.file) ? await pinFromStore(args.file, args.capture) : null;
    if (fromStore && (args.env || args.marker)) log('tickwise: --env and --marker are ignored for a store (its provenance was taken at import)');
    const res = fromStore ? null : await provenanceFromArgs(args);
    const pin = fromStore ? fromStore.pin : makePin(res!);
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
    log(`tickwise: pinned ${pin.files.length} file(s)${fromStore ? ` ${fromStore.note}` : ''} to ${where}${pin.unresolved?.length ? `; not found, not pinned: ${pin.unresolved.join(', ')}` : ''}`);
    for (const n of res?.notes ?? []) log(`tickwise: note: ${n}`);
  },
};
