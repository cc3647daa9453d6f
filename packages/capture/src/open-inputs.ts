import { closeSync, openSync, readSync } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Store, redactStoredConditions } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { ImportOptions, ImportResult } from './readers/ireeperf-jsonl';

/**
 * True when a path names a tickwise store rather than a capture. A `.db`
 * that is an SQLite file is a capture: rocprofv3 writes its rocpd database
 * as `<pid>_results.db`.
 */
export function isStorePath(p: string): boolean {
  if (/\.duckdb$/i.test(p)) return true;
  return /\.db$/i.test(p) && !isSqliteFile(p);
}

function isSqliteFile(p: string): boolean {
  try {
    const fd = openSync(p, 'r');
    try {
      const buf = Buffer.alloc(16);
      return readSync(fd, buf, 0, 16, 0) === 16 && buf.toString('latin1') === 'SQLite format 3\u0000';
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/**
 * Imports one input (path or `-`) into the store, detecting its format. The
 * readers load with the first call: a verb given a store never loads one.
 */
export async function importInput(store: Store, input: string, opts: ImportOptions & { format?: string } = {}): Promise<ImportResult> {
  const { importInputNow } = await import('./formats');
  return importInputNow(store, input, opts);
}

/** A file a directory held that is not imported, and why. */
export interface SkippedInput {
  readonly path: string;
  readonly why: string;
}

/** How deep {@link expandInputs} walks below a directory it was given. */
const MAX_DIRECTORY_DEPTH = 16;

/**
 * The captures a verb's inputs name. A file, `-`, a store, and a directory
 * the recorder wrote (a capture of its own) stand for themselves; any other
 * directory stands for the captures in it and in its subdirectories, in
 * name order (numbers by value: run2 before run10). Hidden entries (`.name`)
 * are passed over. A file is a capture when its format is detected, or
 * with `format` given when it is a regular file: the others (a README, a
 * summary, a store, a FIFO) are returned as `skipped` with the reason. A
 * directory with no capture at all is an error (exit 2), as an empty file is.
 * `formats`: the format found for each file the walk detected, for the
 * import to use rather than detect it again.
 */
export async function expandInputs(
  inputs: readonly string[], opts: { format?: string } = {},
): Promise<{ inputs: string[]; skipped: SkippedInput[]; formats: Map<string, string> }> {
  const out: string[] = [];
  const skipped: SkippedInput[] = [];
  const formats = new Map<string, string>();
  for (const input of inputs) {
    const st = input === '-' ? undefined : await stat(input).catch(() => undefined);
    // a missing path, stdin, a file: the reader says what is wrong with it
    if (st === undefined || !st.isDirectory()) {
      out.push(input);
      continue;
    }
    const { sniffRecorderDir } = await import('./recorder-import');
    // the recorder's capture directory is one capture (another --input-format is refused by the import)
    if (sniffRecorderDir(input, true)) {
      out.push(input);
      continue;
    }
    const before = { out: out.length, skipped: skipped.length };
    await walkCaptures(input, opts.format, out, skipped, formats, new Set([await realpath(input)]), 0);
    if (out.length === before.out) {
      const seen = skipped.slice(before.skipped);
      throw new TickwiseError('empty-input',
        seen.length === 0
          ? 'a directory with no capture in it (no files)'
          : `a directory with no capture in it: ${seen.length} file(s), none a capture (${seen.slice(0, 3).map((s) => `${s.path}: ${s.why}`).join('; ')}${seen.length > 3 ? '; ...' : ''})`,
        { file: input });
    }
  }
  return { inputs: out, skipped, formats };
}

async function walkCaptures(
  dir: string, format: string | undefined, out: string[], skipped: SkippedInput[], formats: Map<string, string>, seen: Set<string>, depth: number,
): Promise<void> {
  const { detectFormat, readerFailure } = await import('./formats');
  const { openSource } = await import('./source-file');
  const { sniffRecorderDir } = await import('./recorder-import');
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => !n.startsWith('.')).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  } catch (e) {
    throw new TickwiseError('unreadable-input', `cannot read this directory: ${(e as Error).message}`, { file: dir, cause: e });
  }
  for (const name of names) {
    const path = join(dir, name);
    const st = await stat(path).catch(() => undefined);
    if (st === undefined) {
      skipped.push({ path, why: 'cannot be read (a broken link?)' });
    } else if (st.isDirectory()) {
      if (sniffRecorderDir(path, true)) {
        out.push(path);
        continue;
      }
      // a link back up the tree is walked once
      const real = await realpath(path);
      if (seen.has(real) || depth + 1 > MAX_DIRECTORY_DEPTH) {
        skipped.push({ path, why: seen.has(real) ? 'a link to a directory already walked' : `deeper than ${MAX_DIRECTORY_DEPTH} directories` });
        continue;
      }
      seen.add(real);
      await walkCaptures(path, format, out, skipped, formats, seen, depth + 1);
    } else if (!st.isFile()) {
      skipped.push({ path, why: 'not a regular file' });
    } else if (isStorePath(path)) {
      skipped.push({ path, why: 'a tickwise store, not a capture' });
    } else if (st.size === 0) {
      skipped.push({ path, why: 'empty' });
    } else if (format !== undefined) {
      out.push(path);
    } else {
      const src = await openSource(path);
      try {
        formats.set(path, await detectFormat(src));
        out.push(path);
      } catch (e) {
        // not a capture: passed over; a capture that cannot be read (damaged gzip, no permission): the import's error
        if (!(e instanceof TickwiseError) || !['unknown-format', 'empty-input'].includes(e.code)) throw readerFailure(e, 'detected', path);
        skipped.push({ path, why: e.code === 'unknown-format' ? 'not a capture of a known format' : e.message });
      } finally {
        await src.cleanup();
      }
    }
  }
}

/**
 * Opens what a verb was given: one `.duckdb` store (read-only), or capture
 * files imported into an in-memory store on the fly.
 */
export async function openInputs(
  given: readonly string[], opts: ImportOptions & { format?: string } = {},
): Promise<{ store: Store; imported: ImportResult[]; skipped: SkippedInput[] }> {
  if (given.length === 0) throw new TickwiseError('usage', 'no input given (a .duckdb store or capture files)');
  const stores = given.filter(isStorePath);
  if (stores.length > 0) {
    if (given.length > 1) throw new TickwiseError('usage', 'give either one .duckdb store or capture files, not both');
    try {
      return { store: await Store.open(stores[0]!, { readOnly: true }), imported: [], skipped: [] };
    } catch (e) {
      if (e instanceof TickwiseError) throw e;
      throw new TickwiseError('unreadable-input', `cannot open store: ${(e as Error).message.split('\n')[0]}`, { file: stores[0], cause: e });
    }
  }
  const { inputs, skipped, formats } = await expandInputs(given, opts);
  // as `tickwise import` does, before DuckDB's library loads (a verb given a 174 MB Kineto trace: 374 MB peak RSS without)
  await freeMemoryPromptlyFor(inputs, formats, opts.format);
  const store = await Store.open(':memory:');
  const imported: ImportResult[] = [];
  try {
    for (const input of inputs) {
      const found = formats.get(input); // a file a folder's walk detected keeps that format (not detected twice)
      imported.push(await importInput(store, input, found !== undefined ? { ...opts, format: found } : opts));
    }
    await redactStoredConditions(store);
  } catch (e) {
    await store.close();
    throw e;
  }
  return { store, imported, skipped };
}

/**
 * jemalloc's settings (DuckDB's allocator) for a large Chrome trace or
 * rocprofv3 JSON. Its default keeps freed pages 10 s, in one arena per
 * thread that frees them (DuckDB's threads and the ones node runs its
 * queries on). SHORT_DECAY: one arena, freed pages given back to the system
 * after ~10 ms, so a page freed and soon needed again is reused, not faulted
 * in afresh (~12% faster than PROMPT_FREE for a 174 MB Kineto trace, ~14%
 * for 1 GB), but its peak moves with the timing: 324-375 MB of RSS for the
 * 174 MB trace (7 runs) when every event was staged part by part; 302-337 MB
 * (15 runs) since its host spans come in the native scanner's host lane
 * (281-300 MB under PROMPT_FREE). PROMPT_FREE: back at once, the peak
 * steady: for a Chrome trace whose stage grows to the end (B/E), and one
 * under {@link SHORT_DECAY_BYTES} read without the native scanner (no lane).
 * ONE_ARENA: one arena, jemalloc's decay (freed pages kept ~10 s, reused):
 * for rocprofv3 JSON, which has no peak goal below 1 GB; where a page fault
 * is dear (a VM: ~1.5 of a 150 MB import's 3 s were system time) it is
 * 10-30% faster than SHORT_DECAY (150 MB: medians ~2.7 against ~3.1 s, 420-480
 * against 390-450 MB; 1 GB: 10.9-12.8 against 15.8-16.6 s, 0.93-1.08 GB
 * against 0.91-0.92 GB).
 */
const SHORT_DECAY = 'narenas:1,dirty_decay_ms:10,muzzy_decay_ms:0';
const PROMPT_FREE = 'dirty_decay_ms:0,muzzy_decay_ms:0';
const ONE_ARENA = 'narenas:1';

/** An input this size (uncompressed; a compressed file counted at ten times its size) or more is large. */
const LARGE_TRACE_BYTES = 64e6;

/**
 * A Chrome trace this size or more (counted as for LARGE_TRACE_BYTES) gets
 * SHORT_DECAY even without the native scanner: ~150 MB of process, ~150-180
 * MB of DuckDB and the allocator's slack stay well under twice it.
 */
const SHORT_DECAY_BYTES = 200e6;

/**
 * Sets DuckDB's allocator (`DUCKDB_JE_MALLOC_CONF`, unless the user set it)
 * when `inputs` hold a large Chrome trace or rocprofv3 JSON: their imports
 * load a part, write its rows and free it, again and again, and under
 * jemalloc's default the freed parts stayed in the process (a 174 MB Kineto
 * trace peaked at ~400 MB under a 150 MB memory_limit; 1 GB of rocprofv3 JSON
 * at 1.26 GB). ONE_ARENA for rocprofv3 JSON alone; SHORT_DECAY for a
 * Chrome trace (1 GB of Kineto: 12.7-15.5 s, ~850 MB, against 14.6-18.9 s,
 * ~885 MB; 174 MB: 2.4-2.7 s against 2.8-3.0 s); PROMPT_FREE for a Chrome
 * trace that looks mostly B/E from its first bytes (`beginEndHeavy`), or one
 * under {@link SHORT_DECAY_BYTES} when the native scanner is not there; the
 * strictest one any input wants for all (docs/performance.md). Only before DuckDB's
 * library is loaded (jemalloc reads it once): a verb calls it before it opens
 * a store. Returns whether it did.
 */
export async function freeMemoryPromptlyFor(inputs: readonly string[], formats: ReadonlyMap<string, string>, format?: string, env = process.env): Promise<boolean> {
  if (env['DUCKDB_JE_MALLOC_CONF'] !== undefined) return false;
  const { detectFormat } = await import('./formats');
  const { beginEndHeavy } = await import('./readers/chrome-scan');
  const { openSource, readHead } = await import('./source-file');
  const { nativeScannerFor } = await import('./json-records-native');
  let conf: string | undefined;
  for (const input of inputs) {
    if (input === '-') continue;
    const st = await stat(input).catch(() => undefined);
    if (st === undefined || !st.isFile() || st.size * 10 < LARGE_TRACE_BYTES) continue;
    const src = await openSource(input).catch(() => undefined);
    if (src === undefined) continue;
    try {
      // the compression as its bytes say (a gzip need not be named .gz)
      const bytes = src.sizeBytes * (src.compression === 'none' ? 1 : 10);
      if (bytes < LARGE_TRACE_BYTES) continue;
      const found = format ?? formats.get(input) ?? (await detectFormat(src).catch(() => undefined));
      if (found !== 'chrome-trace' && found !== 'rocprofv3-json') continue;
      const prompt = found === 'chrome-trace'
        && ((bytes < SHORT_DECAY_BYTES && nativeScannerFor(src.sizeBytes, src.compression, env) === null) || beginEndHeavy(await readHead(src).catch(() => '')));
      const wanted = prompt ? PROMPT_FREE : found === 'chrome-trace' ? SHORT_DECAY : ONE_ARENA;
      conf = [PROMPT_FREE, SHORT_DECAY, ONE_ARENA].find((c) => c === wanted || c === conf);
    } finally {
      await src.cleanup().catch(() => undefined);
    }
  }
  if (conf === undefined) return false;
  env['DUCKDB_JE_MALLOC_CONF'] = conf;
  return true;
}

/**
 * Starts the first input's scan before the store opens, where its reader can
 * take it over (a Chrome trace of several parts or a rocprofv3 JSON, read by
 * the native scanner: see `startChromeScanEarly`, `startRocprofScanEarly`):
 * the CLI calls it once the store's lock is held, so the scan runs while
 * DuckDB's library loads and the store is opened (when its entry has not
 * started the scan already: `startScanFromEntry`). Only the first input (the others would wait anyway). Call
 * {@link discardEarlyScans} when the import ends, whatever its outcome: it
 * stops a scan no reader took and removes its files.
 */
export async function startImportEarly(inputs: readonly string[], formats: ReadonlyMap<string, string>, opts: ImportOptions & { format?: string } = {}): Promise<void> {
  const input = inputs[0];
  if (input === undefined || input === '-' || input === '/dev/stdin') return;
  const st = await stat(input).catch(() => undefined);
  if (st === undefined || !st.isFile()) return;
  const { openSource } = await import('./source-file');
  const src = await openSource(input).catch(() => undefined);
  if (src === undefined) return;
  try {
    const { detectFormat } = await import('./formats');
    const found = opts.format ?? formats.get(input) ?? (await detectFormat(src).catch(() => undefined));
    if (found !== undefined) await (await import('./early')).startScanOf(src, found, opts);
  } finally {
    await src.cleanup().catch(() => undefined);
  }
}

export { discardEarlyScans } from './json-records-native';
