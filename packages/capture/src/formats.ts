import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname } from 'node:path';
import { TickwiseError } from '@tickwise/time';
import { TABLE_NAMES, tableColumns, type Store } from '@tickwise/store';
import { FORMAT_NAMES, isFormatName, type FormatName } from './format-names';
import { importIreeperfJsonl, type ImportOptions, type ImportResult } from './readers/ireeperf-jsonl';
import { openSource, readHead, type SourceFile } from './source-file';
import { beginImportMemory, importMemoryInForce } from './capture-rows';
import { importRecorderDir, sniffRecorderDir } from './recorder-import';
import { importRocprofCsv, importRocprofJson, sniffRocprofCsv } from './readers/rocprofv3';
import { sniffRocprofJson } from './readers/rocprofv3-scan';
import { importRocpd, sniffRocpd } from './readers/rocpd';
import { importChromeTrace } from './readers/chrome-trace';
import { sniffChromeTrace } from './readers/chrome-scan';
import { importHeteroMosaic, sniffHeteroMosaic } from './readers/heteromosaic-jsonl';
import { importHrxDeviceProfile, sniffHrxDeviceProfile } from './readers/hrx-device-profile';

/** A capture reader: puts one source into the store. */
export type Reader = (store: Store, src: SourceFile, opts: ImportOptions) => Promise<ImportResult>;

/** A format tickwise can import, with its reader and a content sniffer. */
export interface FormatSpec {
  readonly description: string;
  readonly read: Reader;
  /** True when the first bytes (or the directory) look like this format. */
  readonly sniff: (head: string, src: SourceFile, isDirectory: boolean) => boolean;
}

/**
 * Every import format, in detection order. Adding a format means adding its
 * name to FORMAT_NAMES (format-names.ts) and an entry here; the CLI's
 * `--input-format` choices and detection come from these.
 */
export const FORMATS: Readonly<Record<FormatName, FormatSpec>> = {
  'ireeperf-jsonl': {
    description: "IREE's `iree-profile export --format=ireeperf-jsonl` stream (schema 15, and derived variants)",
    read: importIreeperfJsonl,
    sniff: (head) => /"record_type"\s*:/.test(head) && /ireeperf-jsonl|"schema_version"/.test(head),
  },
  'rocprofv3-csv': {
    description: "rocprofv3's kernel trace CSV (`--kernel-trace --output-format csv`, or rocpd2csv's out_kernel_trace.csv): ns on CLOCK_BOOTTIME",
    read: importRocprofCsv,
    sniff: (head) => sniffRocprofCsv(head),
  },
  'rocprofv3-json': {
    description: "rocprofv3's JSON output (`--output-format json`, results.json): kernel dispatches, HIP/HSA/marker API calls, memory copies",
    read: importRocprofJson,
    sniff: (head) => sniffRocprofJson(head),
  },
  rocpd: {
    description: "rocprofv3's rocpd SQLite database (`<pid>_results.db`, the default output since ROCm 7)",
    read: importRocpd,
    sniff: (head) => sniffRocpd(head),
  },
  'chrome-trace': {
    description: 'Chrome trace JSON (Trace Event Format: Perfetto JSON, PyTorch/Kineto .pt.trace.json[.gz]): ts/dur in microseconds',
    read: importChromeTrace,
    sniff: (head) => sniffChromeTrace(head),
  },
  'heteromosaic-jsonl': {
    description: 'HeteroMosaic-style stage trace JSON lines (run_id, chunk_id, layer_id, stage, start_ts_us, end_ts_us; steady clock)',
    read: importHeteroMosaic,
    sniff: (head) => sniffHeteroMosaic(head),
  },
  'tickwise-recorder': {
    description: "a capture directory written by tickwise's native recorder (records.twr + meta.json; native/FORMAT.md)",
    read: importRecorderDir,
    sniff: (_head, src, isDirectory) => sniffRecorderDir(src.path, isDirectory),
  },
  'hrx-device-profile': {
    description: "the hrx runtime's DeviceProfile JSON (frequency_hz, intervals of start_tick/end_tick)",
    read: importHrxDeviceProfile,
    sniff: (head) => sniffHrxDeviceProfile(head),
  },
};


/** Detects a source's format by content (file name only as a tie-breaker). */
export async function detectFormat(src: SourceFile): Promise<string> {
  const isDirectory = (await stat(src.path)).isDirectory();
  const head = isDirectory ? '' : await readHead(src);
  if (!isDirectory && head.length === 0 && src.compression === 'none') {
    throw new TickwiseError('empty-input', 'the file is empty: no records to import', { file: src.displayPath });
  }
  for (const name of FORMAT_NAMES) {
    if (FORMATS[name].sniff(head, src, isDirectory)) return name;
  }
  if (src.compression === 'zstd' && /\.jsonl(\.zst)?$/.test(src.displayPath)) return 'ireeperf-jsonl';
  throw new TickwiseError(
    'unknown-format',
    `cannot tell the format of this input (known: ${FORMAT_NAMES.join(', ')}); pass --input-format NAME`,
    { file: src.displayPath, line: 1 },
  );
}

/** Imports one input (path or `-`) into the store, detecting its format (the package exports it as `importInput`). */
export async function importInputNow(store: Store, input: string, opts: ImportOptions & { format?: string } = {}): Promise<ImportResult> {
  const src = await openSource(input);
  try {
    let format: string;
    try {
      format = opts.format ?? (await detectFormat(src));
    } catch (e) {
      throw readerFailure(e, 'detected', src.displayPath);
    }
    if (!isFormatName(format)) throw new TickwiseError('unknown-format', `unknown format "${format}" (known: ${FORMAT_NAMES.join(', ')})`);
    const spec = FORMATS[format];
    if (src.isDirectory && format !== 'tickwise-recorder') {
      throw new TickwiseError('usage', `a directory: --input-format ${format} reads a file (only tickwise-recorder reads a capture directory)`, { file: src.displayPath });
    }
    // the id the reader takes (the store's next): a failed import's rows are removed, whatever the reader left
    const captureId = await store.nextCaptureId();
    await writeRowGroupsPromptly(store);
    // the store's memory bound is the import's while it runs (the reader sets it), the caller's again after
    const endImportMemory = await beginImportMemory(store, opts.keepImportMemory !== true);
    try {
      return await spec.read(store, src, opts);
    } catch (e) {
      await discardCapture(store, captureId).catch(() => undefined);
      throw outOfMemory(e, importMemoryInForce(store), src.displayPath) ?? readerFailure(e, format, src.displayPath);
    } finally {
      // (a store the failure left unusable refuses it: the import's own error is the one to tell)
      await endImportMemory().catch(() => undefined);
    }
  } finally {
    await src.cleanup();
  }
}

/** The stores {@link writeRowGroupsPromptly} has set. */
const promptStores = new WeakSet<Store>();

/**
 * Has DuckDB write each row group of a large insert as soon as it is full
 * (`write_buffer_row_group_count = 1`; DuckDB's default buffers five, with
 * their text uncompressed): an import's last inserts peaked with those in
 * memory. 1 M rocpd dispatches: 670-695 -> 517-599 MB peak RSS, with
 * 394-character kernel names 1066 -> 701 MB, as fast; the Chrome and
 * ireeperf imports unchanged (their bound is elsewhere). Once per store.
 */
async function writeRowGroupsPromptly(store: Store): Promise<void> {
  if (promptStores.has(store)) return;
  promptStores.add(store);
  await store.run('SET write_buffer_row_group_count = 1');
}

/**
 * Removes every row of capture `captureId` (and of any later id: none
 * exists unless the failed import made it) from the store's tables. A reader
 * undoes what it can when it fails, but not all of it (a Chrome trace's rows
 * written after its scan committed, the tables of a reader that failed
 * half-way): left behind, they would be taken for the next import's, which
 * gets the same id. The CLI's `import` discards its whole copy of the store
 * on failure; a verb's in-memory store is dropped; this is for a library
 * caller's own store.
 */
export async function discardCapture(store: Store, captureId: number): Promise<void> {
  // the store's declared tables that carry a capture id
  const tables = TABLE_NAMES.filter((t) => tableColumns(t).some((c) => c.name === 'capture_id'));
  const clear = async () => {
    for (const t of tables) await store.run(`DELETE FROM ${t} WHERE capture_id >= ${captureId}`);
  };
  try {
    await clear();
  } catch {
    // a transaction the reader left aborted refuses the deletes: rolled back (its own rows with it), then again
    await store.run('ROLLBACK').catch(() => undefined);
    await clear();
  }
}

/**
 * DuckDB's "Out of Memory" anywhere in what a reader threw (a part's
 * error is wrapped as a bad record, DuckDB's as its cause), as the one
 * error it is: the machine's or the bound's, not the input's (exit code 1),
 * with the bound in force (`limit`) and how to give more. Else undefined.
 */
export function outOfMemory(e: unknown, limit: string | undefined, file: string): TickwiseError | undefined {
  if (e instanceof TickwiseError && e.code === 'usage') return undefined; // a bound the user gave that DuckDB refused: said
  for (let x = e, depth = 0; x instanceof Error && depth < 8; x = x.cause, depth++) {
    const m = /Out of Memory Error: [^\n]*/.exec(x.message);
    if (m === null) continue;
    const bound = process.env['TICKWISE_IMPORT_MEMORY'] ? `TICKWISE_IMPORT_MEMORY=${process.env['TICKWISE_IMPORT_MEMORY']}` : `the import's bound${limit === undefined ? '' : ` (${limit})`}`;
    return new TickwiseError('out-of-memory', `DuckDB ran out of memory under ${bound} (${m[0]}); set TICKWISE_IMPORT_MEMORY higher (e.g. 4GB) and import again`, { file, exitCode: 1, cause: e });
  }
  return undefined;
}

/**
 * What a reader threw, as the one error a user sees: a `TickwiseError` as
 * it is; anything else (a database's raw message, a library's exception on
 * a corrupt file) names the file and the format, with the first line of the
 * detail and no stack (code `reader-failed`: the reader should have said
 * more, and the import fuzz counts it as unclear).
 */
export function readerFailure(e: unknown, format: string, file: string): unknown {
  if (e instanceof TickwiseError) return e;
  if (!(e instanceof Error)) return e;
  const code = (e as NodeJS.ErrnoException).code;
  // the import's temporary files (staged records, parts, the scanner's output) filled their folder
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return new TickwiseError('no-space', `no room in ${tmpdir()} for the import's temporary files (${code}; they take about the input's size): free some, or set TMPDIR to a larger folder`, { file, cause: e });
  }
  // the temporary folder itself missing or not writable ($TMPDIR): the machine's setting, said as such
  const at = (e as NodeJS.ErrnoException).path;
  if ((code === 'ENOENT' || code === 'EACCES' || code === 'EROFS' || code === 'ENOTDIR') && typeof at === 'string' && dirname(at) === tmpdir()) {
    return new TickwiseError('no-temp', `cannot make the import's temporary files in ${tmpdir()} (${code}): set TMPDIR to a folder tickwise can write`, { file, cause: e });
  }
  // zlib's errors (Z_DATA_ERROR, Z_BUF_ERROR): a damaged or cut-off .gz
  if (typeof code === 'string' && code.startsWith('Z_')) {
    return new TickwiseError('bad-compression', `the gzip data is damaged or cut off (${e.message}): nothing was imported from it`, { file, cause: e });
  }
  const detail = e.message.split('\n')[0]!.replace(/^query failed: /, '').replace(/^(Conversion|Invalid Input|Out of Range|Binder|IO) Error: /, '');
  return new TickwiseError('reader-failed', `cannot import this ${format} input: ${detail}`, { file, cause: e });
}
