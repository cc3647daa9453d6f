/**
 * `tickwise import`'s early start: the CLI's entry (dist/tickwise.mjs, made
 * by scripts/build-cli.mjs) runs {@link importEarly} before it loads the CLI
 * itself. A large Chrome trace's or rocprofv3 JSON's scan then starts ~0.1 s
 * sooner (~100 ms after exec, against ~220 ms): while yargs,
 * the verb's modules and DuckDB load on one core, the scanner runs on the
 * other, which idled. It reads the command line without yargs, and only its
 * plain shape: `import <input> ... --db <store>.duckdb` with long options.
 * Anything else (a short option, --help, no store, another input format)
 * starts nothing, and the import starts its scan as before (once the store's
 * lock is held). A wrong guess costs only the scan: the reader takes the
 * run over when its plan is the same, else stops it; a run no reader takes
 * is stopped when the import ends or the process exits.
 */
import { existsSync } from 'node:fs';
import { startScanFromEntry } from '@tickwise/capture/early';

/** `tickwise import`'s options that take no value. */
const FLAGS = new Set(['json', 'conditions-from-host', 'help', 'version']);

/** What the early start needs of a `tickwise import` command line; null when it should not start. */
export interface EarlyImport {
  readonly input: string;
  readonly db: string;
  readonly traceTimeUnit?: 'ns' | 'us' | 'ms' | 's';
  /** The input format the command line names, when it is one the early start knows. */
  readonly format?: 'chrome-trace' | 'rocprofv3-json';
}

/** `argv` (the arguments after the program) read as `tickwise import` would be, or null: see the module comment. */
export function earlyImportOf(argv: readonly string[]): EarlyImport | null {
  if (argv[0] !== 'import') return null;
  const positional: string[] = [];
  const opts = new Map<string, string>();
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (a.startsWith('--')) {
      const eq = a.indexOf('=');
      // yargs takes --traceTimeUnit for --trace-time-unit
      const name = (eq < 0 ? a.slice(2) : a.slice(2, eq)).replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
      if (eq >= 0) opts.set(name, a.slice(eq + 1));
      else if (FLAGS.has(name) || name.startsWith('no-')) {
        if (argv[i + 1] === 'true' || argv[i + 1] === 'false') i++;
        opts.set(name, 'true');
      } else opts.set(name, argv[++i] ?? '');
      continue;
    }
    if (a.startsWith('-') && a !== '-') return null;
    positional.push(a);
  }
  const db = opts.get('db');
  const input = positional[0];
  if (opts.has('help') || opts.has('version') || db === undefined || !/\.(duckdb|db)$/i.test(db) || input === undefined || input === '-') return null;
  const format = opts.get('input-format');
  if (format !== undefined && format !== 'chrome-trace' && format !== 'rocprofv3-json') return null;
  const unit = opts.get('trace-time-unit');
  if (unit !== undefined && unit !== 'ns' && unit !== 'us' && unit !== 'ms' && unit !== 's') return null;
  return { input, db, ...(unit !== undefined ? { traceTimeUnit: unit } : {}), ...(format !== undefined ? { format } : {}) };
}

/**
 * Starts the scan of the first input of a `tickwise import` command line
 * when it is a large Chrome trace or a rocprofv3 JSON and no other process writes the store
 * (its lock, `<store>.tickwise-lock` as @tickwise/store's storeLockPath
 * names it, is absent: a writer may hold it for minutes). Never throws.
 */
export async function importEarly(argv: readonly string[]): Promise<boolean> {
  const early = earlyImportOf(argv);
  if (early === null || existsSync(`${early.db}.tickwise-lock`)) return false;
  const { input, db: _db, ...opts } = early;
  return startScanFromEntry(input, opts);
}
