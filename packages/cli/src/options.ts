import { existsSync } from 'node:fs';
import type { Argv, Options } from 'yargs';
import { TickwiseError, isTimeUnit, parseDurationNs, parseFrequencyHz, type Ns, type TimeUnit } from '@tickwise/time';
import { FORMAT_NAMES, STDIN_ARG, isFormatName, isTraceClock, openInputs, type ImportOptions, type TraceClock } from '@tickwise/capture/open';
import type { DeviceKind, Store } from '@tickwise/store';
import { logSkipped } from './output';

/**
 * Options every verb that reads captures accepts. On the command line the
 * input format is `--input-format` (every verb) and `--format` is always the
 * output format (issue 18.6); `format` here is the input format for callers
 * that build these arguments by hand (parsed arguments never carry it:
 * {@link withJson} takes the output `--format` away).
 */
export interface InputArgs {
  inputs: string[];
  'input-format'?: string | undefined;
  /** The input format, for hand-built arguments (see above). */
  format?: string | undefined;
  'tick-hz'?: string | undefined;
  'device-kind'?: string | undefined;
  'boottime-offset'?: string | undefined;
  'trace-clock'?: string | undefined;
  'trace-time-unit'?: string | undefined;
  json?: boolean | undefined;
}

/**
 * A duration option: shown as `<duration>` with its units in the help (not
 * `[string]`), taken as text (`200` stays "200", which parseDuration refuses
 * for its missing unit), and it needs a value.
 */
export function durationOpt(describe: string, example = '200us'): Options {
  return { describe: `${describe} [<duration>: a number with a unit ns|us|ms|s, e.g. ${example}]`, coerce: (v: unknown) => String(v), requiresArg: true };
}

/** Adds `--input-format`: the format of capture inputs, one of the registered readers. */
export function withInputFormat<T>(y: Argv<T>): Argv<T & { 'input-format'?: string | undefined }> {
  return y.option('input-format', { type: 'string', requiresArg: true, describe: `format of capture inputs (default: detected from content): ${FORMAT_NAMES.join(', ')}` }) as unknown as Argv<T & { 'input-format'?: string | undefined }>;
}

/** Adds the clock options of the rocprofv3/rocpd/Chrome trace/HeteroMosaic readers (see ImportOptions). */
export function withClockOptions<T>(y: Argv<T>): Argv<T> {
  return y
    .option('boottime-offset', durationOpt('CLOCK_BOOTTIME - CLOCK_MONOTONIC of the capturing host (the recorder\'s boottime_minus_monotonic_ns): puts rocprofv3/rocpd times on host_monotonic', '5000000000ns'))
    .option('trace-clock', { type: 'string', choices: ['monotonic', 'boottime', 'realtime'], describe: 'the clock a Chrome/HeteroMosaic trace\'s timestamps come from; recorded as an assumption' })
    .option('trace-time-unit', { type: 'string', choices: ['ns', 'us', 'ms', 's'], describe: 'the unit a Chrome trace\'s ts/dur are written in when not the format\'s us; recorded as an assumption' }) as unknown as Argv<T>;
}

/** Adds the positional inputs and the import options to a verb. */
export function withInputs<T>(y: Argv<T>): Argv<T & InputArgs> {
  return withInputFormat(y
    .positional('inputs', { type: 'string', array: true, describe: 'a .duckdb store, or capture files (imported in memory); - for stdin', demandOption: true }))
    .option('tick-hz', { type: 'string', describe: 'assume this tick rate (e.g. 100MHz) for devices with no time base; recorded as an assumption' })
    .option('device-kind', { type: 'string', choices: ['gpu', 'npu', 'cpu', 'other'], describe: 'device kind when the source does not say' })
    .option('boottime-offset', durationOpt('CLOCK_BOOTTIME - CLOCK_MONOTONIC of the capturing host: puts rocprofv3/rocpd times on host_monotonic', '5000000000ns'))
    .option('trace-clock', { type: 'string', choices: ['monotonic', 'boottime', 'realtime'], describe: 'the clock a Chrome/HeteroMosaic trace\'s timestamps come from' })
    .option('trace-time-unit', { type: 'string', choices: ['ns', 'us', 'ms', 's'], describe: 'the unit a Chrome trace\'s ts/dur are written in when not us' }) as unknown as Argv<T & InputArgs>;
}

/** Output formats of the verbs that print text or JSON. */
export const TEXT_OR_JSON = ['text', 'json'] as const;

/**
 * Adds `--json` and `--format text|json` (the output format, as in ceiling,
 * report and sql; `--format json` is `--json`). The parsed arguments carry
 * `json` only: `format` is taken away, so it can never be read as an input
 * format.
 */
export function withJson<T>(y: Argv<T>): Argv<T & { json?: boolean }> {
  return y
    .option('json', { type: 'boolean', default: false, describe: 'machine-readable JSON (field names carry units); same as --format json' })
    .option('format', { type: 'string', choices: [...TEXT_OR_JSON], requiresArg: true, describe: 'output format: text (default) or json (same as --json)' })
    .middleware((argv: Record<string, unknown>) => {
      if (argv['format'] === 'json') argv['json'] = true;
      delete argv['format'];
    }) as unknown as Argv<T & { json?: boolean }>;
}

/** Import options from parsed arguments. */
export function importOptions(args: InputArgs, onProgress?: (phase: string) => void): ImportOptions & { format?: string } {
  const o: {
    format?: string; assumeTickHz?: number; deviceKind?: DeviceKind; onProgress?: (p: string) => void;
    boottimeOffsetNs?: bigint; traceClock?: TraceClock; traceTimeUnit?: TimeUnit;
  } = {};
  const format = args['input-format'] ?? args.format;
  if (format !== undefined) {
    if (!isFormatName(format)) throw usageError(`--input-format ${format}: not an input format; one of ${FORMAT_NAMES.join(', ')} (default: detected from content)`);
    o.format = format;
  }
  if (args['tick-hz']) o.assumeTickHz = parseFrequencyHz(args['tick-hz']);
  if (args['device-kind']) o.deviceKind = args['device-kind'] as DeviceKind;
  const offset = durationOption(args['boottime-offset'], 'boottime-offset');
  if (offset !== undefined) o.boottimeOffsetNs = offset;
  if (args['trace-clock'] && isTraceClock(args['trace-clock'])) o.traceClock = args['trace-clock'];
  if (args['trace-time-unit'] && isTimeUnit(args['trace-time-unit'])) o.traceTimeUnit = args['trace-time-unit'];
  if (onProgress) o.onProgress = onProgress;
  return o;
}

/** Opens a verb's inputs as a store; closes it after `work`. */
export async function withStore<T>(args: InputArgs, work: (store: Store) => Promise<T>): Promise<T> {
  checkInputsExist(args.inputs);
  const { store, skipped } = await openInputs(args.inputs, importOptions(args));
  logSkipped(skipped);
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/**
 * A missing store is one line, exit 2 (not DuckDB's "Cannot open database
 * ... in read-only mode"). A missing capture file is the reader's to say
 * (`PATH: cannot read: ENOENT ...`).
 */
export function checkInputsExist(inputs: readonly string[]): void {
  for (const input of inputs) {
    if (input === STDIN_ARG || input === '-' || !/\.(duckdb|db)$/i.test(input) || existsSync(input)) continue;
    throw new TickwiseError('no-such-input', `no such store: ${input}`);
  }
}

/** Parses a `--min-gap`-style option: a duration with a unit. */
export function durationOption(text: string | undefined, name: string): Ns | undefined {
  if (text === undefined) return undefined;
  try {
    return parseDurationNs(String(text));
  } catch (e) {
    if (e instanceof TickwiseError) throw new TickwiseError(e.code, `--${name}: ${e.message}`);
    throw e;
  }
}

/** A usage error (exit 2) with the message as given. */
export function usageError(message: string): TickwiseError {
  return new TickwiseError('usage', message);
}

/** A count of rows: a whole number >= 1 (`--rows 8192`). */
export function rowsOption(text: string | undefined, name: string, example = '8192'): number | undefined {
  if (text === undefined) return undefined;
  const t = String(text).trim();
  if (!/^\d+$/.test(t) || Number(t) < 1) throw usageError(`--${name} ${t}: write a whole number of rows (e.g. ${example})`);
  return Number(t);
}

/**
 * A cost in ms for an option whose name carries the unit (`--gpu-group-ms
 * 0.40`); a number with a unit (`400us`) is taken too. Positive unless
 * `allowZero`.
 */
export function msOption(text: string | undefined, name: string, opts: { allowZero?: boolean; example?: string } = {}): number | undefined {
  if (text === undefined) return undefined;
  const t = String(text).trim();
  const m = /^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ns|us|µs|ms|s)?$/.exec(t);
  const perUnit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1e3 };
  const v = m ? Number(m[1]) * perUnit[m[2] ?? 'ms']! : NaN;
  const ok = opts.allowZero ? v >= 0 : v > 0;
  if (!ok || !Number.isFinite(v)) {
    throw usageError(`--${name} ${t}: write a ${opts.allowZero ? '' : 'positive '}time in ms (e.g. ${opts.example ?? '0.40'}), or with a unit (400us)`);
  }
  return v;
}
