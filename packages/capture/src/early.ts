/**
 * `@tickwise/capture/early`: the door the CLI's entry opens before anything
 * else of the CLI loads (no DuckDB, no store, no reader, no yargs), to start
 * the native scan of a large Chrome trace or rocprofv3 JSON while the rest
 * loads. See {@link startScanFromEntry}.
 */
import { stat } from 'node:fs/promises';
import type { ImportOptions } from './readers/ireeperf-jsonl';
import { sniffChromeTrace, startChromeScanEarly } from './readers/chrome-scan';
import { sniffRocprofJson, startRocprofScanEarly } from './readers/rocprofv3-scan';
import { earlyScanDir, stopEarlyScansAtExit } from './json-records-native';
import { openSource, readHead, type SourceFile } from './source-file';
import type {} from './reader-options'; // its ImportOptions fields

/**
 * Starts the native scan of `src`, read as `format`, for its reader to take
 * over (see `startChromeScanEarly`, `startRocprofScanEarly`); nothing for
 * another format. The CLI entry's early start and the verb's, once the
 * store's lock is held (`startImportEarly`), both start it here.
 */
export async function startScanOf(src: SourceFile, format: string, opts: ImportOptions = {}): Promise<void> {
  if (format === 'chrome-trace') await startChromeScanEarly(src, opts);
  else if (format === 'rocprofv3-json') await startRocprofScanEarly(src);
}

/**
 * The CLI entry's early start (`tickwise import`, before yargs, the verb's
 * modules and DuckDB load: ~0.1-0.15 s of a start-up, on one core, while
 * the other idled): starts the scan of `input` when it is a regular file
 * whose first bytes look like a Chrome trace that streams or a rocprofv3
 * JSON (`format`, when given, must be that one). A guess: the format is
 * detected again after, by every sniffer, and a scan no reader takes is
 * stopped and its folder removed ({@link discardEarlyScans} when the import
 * ends, or at the process's exit when the CLI stopped before: a usage
 * error). Never throws; true when a scan started.
 */
export async function startScanFromEntry(input: string, opts: ImportOptions & { format?: 'chrome-trace' | 'rocprofv3-json' } = {}): Promise<boolean> {
  try {
    const st = await stat(input);
    if (!st.isFile()) return false;
    const src = await openSource(input);
    try {
      const head = await readHead(src);
      const sniffed = sniffChromeTrace(head) ? 'chrome-trace' : sniffRocprofJson(head) ? 'rocprofv3-json' : undefined;
      if (sniffed === undefined || (opts.format !== undefined && opts.format !== sniffed)) return false;
      await startScanOf(src, sniffed, opts);
      const started = earlyScanDir(src.path) !== undefined;
      if (started) stopEarlyScansAtExit();
      if (started && process.env['TICKWISE_TRACE_SCAN']) process.stderr.write(`tw-jsonscan: the early scan of ${src.displayPath} started before the CLI loaded\n`);
      return started;
    } finally {
      await src.cleanup();
    }
  } catch {
    return false;
  }
}
