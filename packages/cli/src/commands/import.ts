import { stat } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { discardEarlyScans, expandInputs, freeMemoryPromptlyFor, importInput, importWallRefs, provenanceOf, startConditionSampling, startImportEarly, storeConditions, storeProvenance, type LibraryResolution } from '@tickwise/capture';
import { withAtomicStore } from '@tickwise/store';
import { installViews } from '@tickwise/analyzer';
import { TickwiseError } from '@tickwise/time';
import { durationOpt, durationOption, importOptions, withClockOptions, withInputFormat, withJson, type InputArgs } from '../options';
import { formatJson, log, logSkipped, out } from '../output';
import { importProgress } from '../progress';
import { loaderEnv } from './provenance';

interface Args extends InputArgs {
  db: string;
  label?: string;
  wall?: string;
  'provenance-of'?: string;
  env?: string[];
  marker?: string[];
  'conditions-from-host'?: boolean;
  'lock-wait'?: string;
}

/** A repeatable string option's value(s) as a list. */
function toList(v: unknown): string[] {
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** `tickwise import <files...> --db run.duckdb`: atomic import into a store. */
export const importCommand: CommandModule<object, Args> = {
  command: 'import <inputs..>',
  describe: 'import capture files into a DuckDB store (all or nothing)',
  builder: (y) =>
    withJson(withInputFormat(withClockOptions(
      y
        .positional('inputs', { type: 'string', array: true, demandOption: true, describe: 'capture files or directories; - for stdin' })
        .option('db', { type: 'string', demandOption: true, describe: 'the store file to create or add to (.duckdb)' })
        .option('tick-hz', { type: 'string', describe: 'assume a tick rate (e.g. 100MHz) for devices with no time base' })
        .option('device-kind', { type: 'string', choices: ['gpu', 'npu', 'cpu', 'other'], describe: 'device kind when the source does not say' })
        .option('label', { type: 'string', describe: 'label for the capture' })
        .option('wall', { type: 'string', requiresArg: true, describe: 'llama-bench output (-o csv|json|jsonl|md|sql): wall-clock references tied to each imported capture' })
        .option('provenance-of', { type: 'string', requiresArg: true, describe: 'the program that made the captures: store the libraries it loads (path, mtime, build-id, sha256, markers) with each' })
        // repeated flags, not `array: true`: an array option would swallow the inputs after it
        .option('env', { type: 'string', requiresArg: true, coerce: toList, describe: 'with --provenance-of: the loader environment the program ran with, K=V (LD_LIBRARY_PATH, LD_PRELOAD)' })
        .option('marker', { type: 'string', requiresArg: true, coerce: toList, describe: 'with --provenance-of: count this string in every library (a kernel-generation tag)' })
        .option('lock-wait', { ...durationOpt('how long to wait while another tickwise process writes the same store (0s fails at once)', '300s'), default: '300s' })
        .option('conditions-from-host', { type: 'boolean', describe: 'attach this host\'s conditions (load, temperatures, clocks, driver versions, kernel-log errors, allowlisted env) sampled during the import to each capture' }),
    ))) as never,
  handler: async (args) => {
    if (!/\.(duckdb|db)$/i.test(args.db)) throw new TickwiseError('usage', `--db ${args.db}: a store file ends in .duckdb`);
    if ((args.env || args.marker) && !args['provenance-of']) throw new TickwiseError('usage', '--env and --marker go with --provenance-of <program>');
    // resolve before touching the store: a bad program leaves it as it was
    const provenance: LibraryResolution | null = args['provenance-of']
      ? await provenanceOf(args['provenance-of'], { env: loaderEnv(args.env), markers: args.marker ?? [] })
      : null;
    const conditions = args['conditions-from-host']
      ? startConditionSampling({ env: { ...process.env, ...(args.env ? loaderEnv(args.env) : {}) }, argvAbsentWhy: 'the capture was imported; the command that made it is not known (tickwise capture records it)' })
      : null;
    // a directory stands for the captures in it (and below it); what else it holds is named and passed over
    const { inputs, skipped, formats } = await expandInputs(args.inputs, importOptions(args));
    // before the store is opened (DuckDB's library loaded): its allocator reads the setting once
    await freeMemoryPromptlyFor(inputs, formats, importOptions(args).format);
    logSkipped(skipped);
    const results = await withAtomicStore(args.db, async (store) => {
      const done = [];
      for (const input of inputs) {
        const stdin = input === '-' || input === '/dev/stdin';
        const shown = stdin ? '<stdin>' : input; // as errors and captures.path name it
        const size = stdin ? 0 : await stat(input).then((s) => s.size, () => 0);
        const bar = importProgress(`import ${shown}`, size);
        bar.watch(store);
        try {
          // a file a folder's walk detected keeps that format (not detected twice)
          const found = formats.get(input);
          // the store keeps the import's memory bound: the next input sets its own, and the store is closed after
          const opts = { ...importOptions(args, bar.phase), keepImportMemory: true, ...(args.label ? { label: args.label } : {}), ...(found !== undefined ? { format: found } : {}) };
          const r = await importInput(store, input, opts);
          const wall_refs = args.wall ? (await importWallRefs(store, args.wall, r.capture_id)).refs.length : 0;
          const provenance_files = provenance ? await storeProvenance(store, r.capture_id, provenance) : 0;
          done.push({ input: shown, ...r, wall_refs, provenance_files });
        } finally {
          bar.stop();
        }
      }
      if (conditions) {
        const rows = await conditions.stop();
        for (const r of done) await storeConditions(store, r.capture_id, rows);
      }
      // the analyses as views in the file, for `tickwise sql` and any DuckDB client
      await installViews(store, { temporary: false });
      return done;
    }, {
      lock_wait_ms: Number(durationOption(args['lock-wait'], 'lock-wait') ?? 0n) / 1e6,
      on_lock_wait: (pid) => log(`waiting for the store: another tickwise process${pid !== null ? ` (pid ${pid})` : ''} is writing ${args.db}`),
      // the first input's scan starts while DuckDB loads and the store opens (its reader takes it over)
      on_locked: () => startImportEarly(inputs, formats, importOptions(args)).catch(() => undefined),
    }).finally(discardEarlyScans);
    if (args.json) {
      out(formatJson({ db: args.db, imported: results, skipped }));
      return;
    }
    for (const r of results) {
      out(`imported ${r.input} as capture ${r.capture_id} (${r.format}): ${r.records} records, ${r.dispatches} dispatches, ${r.diagnostics} diagnostics` +
        (args.wall ? `, ${r.wall_refs} wall reference(s) from ${args.wall}` : '') +
        (provenance ? `, provenance of ${provenance.executable} (${r.provenance_files} file(s))` : ''));
    }
    log(`store: ${args.db}  (tickwise info ${args.db}; tickwise sql ${args.db} "select ...")`);
  },
};
