/**
 * A Chrome trace's scan: its plan (what the scanner extracts, converts and
 * routes), whether it streams, and its start before the store opens. Light
 * on purpose (no DuckDB, no store, no reader): the CLI's entry loads it
 * before the rest of the CLI (`@tickwise/capture/early`), so the scan of a
 * large trace starts ~0.1 s sooner, while the CLI's modules load;
 * {@link importChromeTrace} in chrome-trace.ts takes the run over.
 */
import { join } from 'node:path';
import { NS_PER } from '@tickwise/time';
import type { ImportOptions } from './ireeperf-jsonl';
import { STAGE_PART_BYTES, scaleDecimal, spansParts, startScanEarly, type NdjsonPart, type ScanOptions } from '../json-records';
import type { SourceFile } from '../source-file';
import type {} from '../reader-options'; // its ImportOptions fields

/** Top-level keys kept as metadata. */
const META_KEYS = ['displayTimeUnit', 'baseTimeNanoseconds', 'traceName', 'schemaVersion', 'otherData', 'deviceProperties', 'distributedInfo', 'metadata'] as const;

/**
 * ts/dur are staged as ns text, exact to the femtosecond: an integer when the
 * value is whole ns (the common case: Kineto writes at most 3 decimals of
 * us), else with 6 decimals ("1700000000124000.5"), so that an end is
 * round(ts + dur), not round(ts) + round(dur). The SQL takes the integer
 * path (a cast) unless a text has a point (then integer femtoseconds, summed and rounded half
 * away from zero); HUGEINT division, 25x slower, is never used.
 */
const FS_PER_NS = 1_000_000n;

/** fs integer text -> ns text: "123000500000" -> "123000.5", "123000000000" -> "123000", "-500000" -> "-0.5", "0" -> "0". */
export function fsToNsText(fs: string | null): string | null {
  if (fs === null) return null;
  const neg = fs.startsWith('-');
  const digits = neg ? fs.slice(1) : fs;
  if (digits.endsWith('000000')) return digits.length === 6 ? '0' : fs.slice(0, -6);
  const padded = digits.padStart(7, '0');
  const frac = padded.slice(-6).replace(/0+$/, '');
  // zero ("0" fs) has no fraction: "0", not "0." (which read as a fraction, and sent the trace's SQL down the exact branch)
  return `${neg ? '-' : ''}${padded.slice(0, -6)}${frac === '' ? '' : `.${frac}`}`;
}

/** The phases read from the stage (the rest, with no table, go to raw_records as they are). */
const TABLED_PHASES = ['X', 'B', 'E', 'i', 'I', 'R', 'C', 'M'];

/** Event fields read as exact text. */
export const EXACT = ['ts', 'dur', 'tts', 'tdur'] as const;

/**
 * Whether a trace's host spans are written while it is scanned (a trace of
 * several parts; `TICKWISE_CHROME_STREAM=1` any, `=0` none, to compare: the
 * rows are the same), and through the host lane (streamed traces, the native
 * scanner: X events of a host category in parts of their own, loaded straight
 * into host_events by HostSpanStream.loadLane; `TICKWISE_CHROME_LANE=0`
 * stages them with the rest, to compare).
 */
export function chromeStreaming(src: SourceFile): { streamOn: boolean; laneOn: boolean } {
  const streamEnv = process.env['TICKWISE_CHROME_STREAM'];
  const streamOn = streamEnv === '1' || (streamEnv !== '0' && spansParts(src));
  return { streamOn, laneOn: streamOn && process.env['TICKWISE_CHROME_LANE'] !== '0' };
}

/** Where a Chrome trace's scan reports: its staged parts, its host lane's parts and categories, a restart. */
export interface ChromeScanHooks {
  readonly onPart: (part: NdjsonPart) => void;
  readonly onLanePart: (part: NdjsonPart) => void;
  readonly onCategory: (category: string) => void;
  readonly onRestart: () => void;
}

/** The scan of a Chrome trace into `dir` (one plan whoever starts it: {@link importChromeTrace}, {@link startChromeScanEarly}). */
export function chromeScanOptions(dir: string, opts: ImportOptions, laneOn: boolean, hooks: ChromeScanHooks): ScanOptions {
  const nsPerUnit = NS_PER[opts.traceTimeUnit ?? 'us'];
  // ns exact to the femtosecond (see FS_PER_NS): scaled to fs, then the point put back; the same for the native
  // scanner when the scale is a power of ten (every TimeUnit's is)
  const conversion = {
    exactKeys: EXACT,
    exactText: false,
    convert: (_key: string, text: string) => fsToNsText(scaleDecimal(text, nsPerUnit * FS_PER_NS)),
    ...(/^10*$/.test(String(nsPerUnit * FS_PER_NS)) ? { nativeConvert: { kind: 'fs' as const, pow10: String(nsPerUnit * FS_PER_NS).length - 1 } } : {}),
    partBytes: STAGE_PART_BYTES,
  };
  return {
    mode: 'document',
    records: [{
      paths: [['[]'], ['traceEvents', '[]']],
      out: join(dir, 'events.ndjson'),
      ...conversion,
      onPart: hooks.onPart,
      ...(laneOn ? { hostLane: {
        to: 1, kindKey: 'ph', kind: 'X', catKey: 'cat', nameKey: 'name', pidKey: 'pid', tidKey: 'tid', argsKey: 'args', corrKey: 'correlation',
        tsKey: 'ts', durKey: 'dur', onCategory: hooks.onCategory,
      } } : {}),
      // events of a phase with no table (flows: 171k of a 174 MB Kineto trace's 546k events) go
      // to raw_records as they are, not staged and read back (the native scanner only;
      // TICKWISE_CHROME_ROUTE=0 stages them, for comparison: the store is the same)
      ...(process.env['TICKWISE_CHROME_ROUTE'] === '0' ? {} : { route: { key: 'ph', keep: TABLED_PHASES, out: join(dir, 'untabled.usv') } }),
      // B/E events paired per (pid, tid) as they are scanned, when the scanner can be sure they are the pairs the
      // SQL below finds (the native scanner only; TICKWISE_CHROME_PAIRS=0 pairs them in SQL, for comparison)
      ...(process.env['TICKWISE_CHROME_PAIRS'] === '0' ? {} : { pairs: { kindKey: 'ph', open: 'B', close: 'E', timeKey: 'ts', groupKeys: ['pid', 'tid'], out: join(dir, 'pairs.tsv') } }),
    }, ...(laneOn ? [{ paths: [], out: join(dir, 'host.tsv'), partBytes: STAGE_PART_BYTES, onPart: hooks.onLanePart }] : [])],
    capture: META_KEYS.map((k) => [k]),
    onRestart: hooks.onRestart,
  };
}

/**
 * Starts the native scan of a Chrome trace that streams (several parts)
 * before the store is open, and {@link importChromeTrace} takes the run over
 * (the same plan, in the same folder; another plan, such as another time
 * unit, stops it and scans again). Its parts wait on disk until then.
 * Nothing starts for a trace the TypeScript scanner would read, or when a
 * scan of the file already runs.
 */
export async function startChromeScanEarly(src: SourceFile, opts: ImportOptions = {}): Promise<void> {
  const { streamOn, laneOn } = chromeStreaming(src);
  if (!streamOn) return;
  const idle = () => undefined;
  await startScanEarly(src, 'chrome', (dir) => chromeScanOptions(dir, opts, laneOn, { onPart: idle, onLanePart: idle, onCategory: idle, onRestart: idle }));
}

/**
 * True when the events in a trace's first bytes (`head`) are mostly B/E: its
 * spans wait in the stage for their ends (see HostSpanStream), so the import
 * holds its stage to the end rather than writing spans as they come. A guess
 * from the head, for the allocator's setting only (open-inputs.ts): either
 * answer imports the same rows.
 */
export function beginEndHeavy(head: string): boolean {
  let be = 0;
  let other = 0;
  for (const m of head.matchAll(/"ph"\s*:\s*"([^"\\]*)"/g)) {
    if (m[1] === 'B' || m[1] === 'E') be++;
    else if (m[1] !== 'M') other++;
  }
  return be > 0 && be >= other;
}

/** True when the first bytes look like a Chrome trace JSON (object with traceEvents & co., or an array of events). */
export function sniffChromeTrace(head: string): boolean {
  if (/^\s*\{\s*"(traceEvents|displayTimeUnit|schemaVersion|deviceProperties|distributedInfo|otherData|traceName|systemTraceEvents|baseTimeNanoseconds)"\s*:/.test(head)) {
    return !/"rocprofiler-sdk-tool"/.test(head.slice(0, 200));
  }
  if (/"traceEvents"\s*:\s*\[/.test(head)) return true;
  return /^\s*\[\s*\{[\s\S]{0,4000}?"ph"\s*:\s*"/.test(head);
}
