import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { isTickwiseError } from '@tickwise/time';
import type { Argv, CommandModule } from 'yargs';
import { VERBS, type Verb } from './commands/index';
import { DURATION_OPTIONS } from './duration-options';
import { EXAMPLES, EXAMPLES_NOTE } from './examples';
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
export async function main(argv: string[], opts: { exitProcess?: boolean } = {}): Promise<number> {
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
    const word = argv.find((a) => !a.startsWith('-'));
    if (word !== undefined && named === undefined) throw new UsageError(unknownVerb(word));
    const context: FailContext = { verb: named?.name, usage: named?.name ?? '', options: () => [] };
    let cli = yargs(argv)
      .scriptName('tickwise')
      .usage('$0 <verb> [inputs] [options]\n\nDispatch-timeline analysis for iGPU + NPU edge chips.')
      .strict()
      .demandCommand(1, 'name a verb: tickwise --help lists them')
      .help()
      .version(false)
      .exitProcess(opts.exitProcess ?? true)
      .option('version', { type: 'boolean', describe: 'print the version and exit' })
      .wrap(Math.min(110, process.stdout.columns || 100))
      .fail((msg, err) => {
        // yargs' own errors (YError: a missing value) are usage errors too; others pass through
        if (err && err.name !== 'YError') throw err;
        throw new UsageError(usageMessage(msg ?? err?.message, argv, context), context.verb);
      });
    for (const v of VERBS) cli = cli.command(v === named ? withExamples(await v.load(), v.name, context) : stub(v));
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

class UsageError extends Error {
  constructor(message: string, readonly verb?: string | undefined) {
    super(message);
  }
}

/** What the failure handler knows: the verb being parsed and its option names (filled by its builder). */
interface FailContext {
  verb: string | undefined;
  /** The verb's command line as it declares it (`gaps <inputs..>`). */
  usage: string;
  options: () => string[];
}

/** Edit distance (Levenshtein), for suggestions. */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_v, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur.push(Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1)));
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest of `names` to `word`, when close enough to be a typo (or `word` is a prefix of it). */
export function closest(word: string, names: readonly string[]): string | undefined {
  let best: { name: string; d: number } | undefined;
  for (const name of names) {
    const d = name.startsWith(word) && word.length >= 2 ? 0.5 : editDistance(word, name);
    if (!best || d < best.d) best = { name, d };
  }
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  return best && best.d <= limit ? best.name : undefined;
}

function unknownVerb(word: string): string {
  const guess = closest(word, VERBS.map((v) => v.name));
  return guess
    ? `unknown verb \`${word}\`: did you mean \`${guess}\`? (tickwise ${guess} --help shows its options and examples)`
    : `unknown verb \`${word}\` (tickwise --help lists the verbs)`;
}

/** camelCase -> kebab-case ("minGpa" -> "min-gpa"). */
function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

/**
 * yargs' failure messages, said for people: unknown options with a
 * suggestion (no camelCase duplicates), bad choices with the list, a
 * missing value named by its option.
 */
function usageMessage(msg: string | undefined, argv: readonly string[], ctx: FailContext): string {
  const text = msg ?? 'bad usage';
  const unknown = /^Unknown arguments?: (.*)$/s.exec(text);
  if (unknown) {
    const names = unknown[1]!.split(', ').map((n) => n.replace(/^"|"$/g, ''));
    const given = new Set(names.filter((n) => !/[A-Z]/.test(n) || !names.includes(kebab(n))));
    const known = ctx.options().filter((o) => !/[A-Z]/.test(o));
    const lines: string[] = [];
    for (const n of given) {
      const isOption = argv.some((a) => a === `--${n}` || a.startsWith(`--${n}=`) || a === `-${n}` || a === `--no-${n}`);
      if (!isOption) {
        lines.push(`unexpected argument \`${n}\``);
        continue;
      }
      const guess = closest(n, known);
      lines.push(`unknown option --${n}${guess ? `: did you mean --${guess}?` : ''}`);
    }
    return lines.join('\n');
  }
  const invalid = [...text.matchAll(/Argument: ([^,]+), Given: (.*?), Choices: (.*)$/gm)];
  if (invalid.length) {
    const inputFormat = ctx.options().includes('input-format');
    return invalid.map((m) => `--${m[1]} ${m[2]!.replace(/"/g, '')}: not one of ${m[3]!.replace(/"/g, '')}` +
      (m[1] === 'format' && inputFormat ? ' (--format is the output format; the input format is --input-format)' : '')).join('\n');
  }
  if (/^Not enough non-option arguments/.test(text) && ctx.verb) {
    return ctx.usage.includes('<inputs..>')
      ? `${ctx.verb} needs its inputs: a .duckdb store or capture files (- for stdin), e.g. tickwise ${ctx.verb} run.duckdb`
      : `missing an argument: tickwise ${ctx.usage}`;
  }
  const noValue = /^Not enough arguments following: (.*)$/.exec(text);
  if (noValue) return `--${noValue[1]} needs a value`;
  const missing = /^Missing required arguments?: (.*)$/.exec(text);
  if (missing) return `missing ${missing[1]!.split(', ').map((n) => (argv.length && /^[a-z]/.test(n) && !/^inputs$|^args$|^file$|^notebook$/.test(n) ? `--${n}` : `<${n}>`)).join(', ')}`;
  return text;
}

/**
 * Duration options a verb declared as plain strings get the <duration> form
 * in its help (the type tag dropped, the units said) and stay text when
 * parsed (`--handoff 100` reaches the verb as "100" and is refused for its
 * missing unit). Options made with durationOpt already read so. Uses yargs'
 * descriptions as the verb wrote them; if yargs' internals differ, the help
 * is left as it was.
 */
function showDurations(y: Argv<object>): void {
  try {
    const opts = (y as unknown as { getOptions(): { string: string[]; key: Record<string, unknown> } }).getOptions();
    const desc = (y as unknown as { getInternalMethods(): { getUsageInstance(): { getDescriptions(): Record<string, string | undefined> } } })
      .getInternalMethods().getUsageInstance().getDescriptions();
    for (const key of DURATION_OPTIONS) {
      if (!(key in opts.key) || (desc[key] ?? '').includes('<duration>')) continue;
      const i = opts.string.indexOf(key);
      if (i >= 0) opts.string.splice(i, 1);
      y.coerce(key, (v: unknown) => String(v));
      const words = (desc[key] ?? '').replace(/ ?\((?:a duration )?with a unit(?: \([^)]*\))?\)/, '').replace(/,? (?:a duration )?with a unit(?: \([^)]*\))?/, '');
      y.describe(key, `${words} [<duration>: a number with a unit ns|us|ms|s, e.g. ${key === 'min-gap' ? '200us' : '50us'}]`.trim());
    }
  } catch {
    // the help keeps the verb's own words
  }
}

/** A verb's module with its Examples section, and its option names made known to the failure handler. */
function withExamples(m: CommandModule<object, never>, name: string, ctx: FailContext): CommandModule<object, never> {
  const builder = m.builder;
  ctx.usage = String(Array.isArray(m.command) ? m.command[0] : m.command ?? name);
  return {
    ...m,
    builder: (y: Argv<object>) => {
      let r = (typeof builder === 'function' ? (builder as (y: Argv<object>) => Argv<object>)(y) : builder ? y.options(builder) : y) as Argv<object>;
      for (const [cmd, what] of EXAMPLES[name] ?? []) r = r.example(cmd, what);
      showDurations(r);
      if (EXAMPLES[name]?.some(([c]) => c.includes('$S'))) r = r.epilogue(EXAMPLES_NOTE);
      const inner = r;
      ctx.options = () => Object.keys((inner as unknown as { getOptions(): { key: Record<string, unknown> } }).getOptions().key);
      return r as never;
    },
  } as CommandModule<object, never>;
}

function reportError(e: unknown): number {
  if (isTickwiseError(e)) {
    process.stderr.write(`tickwise: ${e.where()}\n`);
    return e.exitCode;
  }
  if (e instanceof UsageError) {
    const hint = e.verb ? `(tickwise ${e.verb} --help lists its options, with examples)` : '(tickwise --help lists verbs and options)';
    process.stderr.write(`tickwise: ${e.message}\n${e.message.includes('--help') ? '' : `${hint}\n`}`);
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

/**
 * Every help text the CLI prints (`tickwise --help` under "", and each verb's
 * `tickwise <verb> --help`), laid out at each of `widths` columns, as the CLI
 * lays them out: the build renders them once (scripts/build-cli.mjs) so that
 * asking for help loads neither yargs nor the verb.
 */
export async function renderHelp(widths: readonly number[]): Promise<Record<string, Record<string, string>>> {
  const write = process.stdout.write;
  const columns = Object.getOwnPropertyDescriptor(process.stdout, 'columns');
  const out: Record<string, Record<string, string>> = {};
  try {
    for (const width of widths) {
      Object.defineProperty(process.stdout, 'columns', { value: width, configurable: true });
      const texts: Record<string, string> = {};
      for (const verb of ['', ...VERBS.map((v) => v.name)]) {
        let text = '';
        process.stdout.write = ((chunk: string | Uint8Array) => {
          text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
          return true;
        }) as typeof process.stdout.write;
        const rc = await main(verb === '' ? ['--help'] : [verb, '--help'], { exitProcess: false });
        process.stdout.write = write;
        if (rc === 0 && text.startsWith('tickwise ')) texts[verb] = text;
      }
      out[width] = texts;
    }
  } finally {
    process.stdout.write = write;
    if (columns) Object.defineProperty(process.stdout, 'columns', columns);
    else delete (process.stdout as { columns?: number }).columns;
  }
  return out;
}

// the build's help rendering (TICKWISE_BUILD_HELP_WIDTHS=80,100,110): the texts as JSON on stdout
const renderWidths = process.env['TICKWISE_BUILD_HELP_WIDTHS'];
if (renderWidths) {
  const texts = await renderHelp(renderWidths.split(',').map(Number));
  process.stdout.write(JSON.stringify(texts));
} else process.exitCode = await main(hideBin(process.argv));
