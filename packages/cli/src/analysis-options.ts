/**
 * Options and output helpers shared by the analysis verbs (segments, gaps,
 * overlap, kernels, cost): which captures/devices/segments to read, and the
 * provenance header every human output starts with.
 */
import type { Argv } from 'yargs';
import { captureFacts, DEFAULT_WORK, errorFindingsHeader, formatFindingLine, isWorkSet, provenanceLines, runChecks, WorkSet, type CaptureFacts, type SelectionOptions } from '@tickwise/analyzer';
import type { Store } from '@tickwise/store';
import { formatNs, TickwiseError } from '@tickwise/time';
import { withInputs, withJson, type InputArgs } from './options';

/** Arguments of an analysis verb. */
export interface AnalysisArgs extends InputArgs {
  capture?: number | undefined;
  device?: number | undefined;
  segment?: string | undefined;
  reps?: number | undefined;
}

/** Adds inputs, `--json`, `--capture`, `--device`, `--segment`, `--reps`. */
export function withAnalysis<T>(y: Argv<T>): Argv<T & AnalysisArgs> {
  return withJson(withInputs(y))
    .option('capture', { type: 'number', describe: 'only this capture id (tickwise info lists them)' })
    .option('device', { type: 'number', describe: 'only this device ordinal' })
    .option('segment', {
      type: 'string',
      default: 'all',
      describe: 'all | first | last | steady (all but the first) | N (index as tickwise segments lists it, 0 = first)',
    })
    .option('reps', { type: 'number', describe: 'the capture holds this many repetitions (prefills); default: detected' }) as unknown as Argv<T & AnalysisArgs>;
}

/** `--work kernels|all`: which device work counts as busy. */
export function withWork<T>(y: Argv<T>): Argv<T & { work?: string | undefined }> {
  return y.option('work', {
    type: 'string',
    choices: ['kernels', 'all'],
    describe: `busy = kernels only, or all device work (kernels + copies + memsets per queue/stream); default ${DEFAULT_WORK}`,
  }) as unknown as Argv<T & { work?: string | undefined }>;
}

/** The `--work` value (default {@link DEFAULT_WORK}). */
export function workOption(v: string | undefined): WorkSet {
  if (v === undefined) return DEFAULT_WORK;
  if (!isWorkSet(v)) throw new TickwiseError('usage', `--work: ${v} is not one of kernels, all`);
  return v;
}

/** The line every gaps/overlap output states its work set with. */
export function workLine(work: WorkSet, leftOut: { rows: number; sum_dur_ns: bigint } | null): string {
  const dflt = work === DEFAULT_WORK ? ' (the default)' : '';
  const note = leftOut && leftOut.rows > 0 ? `; ${leftOut.rows} copies/memsets (${formatNs(leftOut.sum_dur_ns)} summed) not counted: --work all counts them` : '';
  return `work: ${work}${dflt}: ${WorkSet[work]}${note}`;
}

/** Selection options from parsed arguments. */
export function selectionOptions(args: AnalysisArgs): SelectionOptions {
  for (const [name, v] of [['capture', args.capture], ['device', args.device]] as const) {
    if (v !== undefined && !(Number.isSafeInteger(v) && v >= 0)) {
      throw new TickwiseError('usage', `--${name}: ${Number.isNaN(v) ? 'not a number' : v}: write a ${name} number, a whole number >= 0 (tickwise info lists them)`);
    }
  }
  return { captureId: args.capture, device: args.device, segment: args.segment, reps: args.reps };
}

/**
 * What every human output about captures starts with: their provenance lines,
 * then any check finding of severity error (a number printed below such a
 * line may be wrong, so it is said first).
 */
export async function header(store: Store, captureIds: Iterable<number>): Promise<string> {
  const ids = [...new Set(captureIds)];
  const lines = await provenanceLines(store, ids);
  const scope = ids.length ? { captureIds: ids } : {};
  const errors = await errorFindingsHeader(store, scope);
  // a device read with the wrong kind changes what every verb says about it: said here too (issue 18.12)
  const kind = (await runChecks(store, { ...scope, codes: ['device-kind-npu-names'] })).map((f) => `!! ${formatFindingLine(f)}`).join('\n');
  return [lines, errors.trimEnd(), kind].filter((x) => x !== '').join('\n');
}

/** Provenance facts for a JSON result. */
export async function captures(store: Store, captureIds: Iterable<number>): Promise<CaptureFacts[]> {
  return captureFacts(store, captureIds);
}

/** A duration for humans ("1.234 ms"); '-' for none. */
export function dur(v: bigint | number | null | undefined): string {
  if (v === null || v === undefined) return '-';
  return typeof v === 'bigint' ? formatNs(v) : formatNs(BigInt(Math.round(v)));
}

/** A fraction as a percentage ("12.43 %"); '-' for none. */
export function pct(v: number | null | undefined): string {
  return v === null || v === undefined ? '-' : `${(v * 100).toFixed(2)} %`;
}

/** A note on excluded rows, or nothing. */
export function excludedNote(n: number): string {
  return n > 0 ? `\n${n} dispatch row${n === 1 ? '' : 's'} left out of time math (valid = false or no time); tickwise info lists them` : '';
}
