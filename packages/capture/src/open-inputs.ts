import { closeSync, openSync, readSync } from 'node:fs';
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

/**
 * Opens what a verb was given: one `.duckdb` store (read-only), or capture
 * files imported into an in-memory store on the fly.
 */
export async function openInputs(inputs: readonly string[], opts: ImportOptions & { format?: string } = {}): Promise<{ store: Store; imported: ImportResult[] }> {
  if (inputs.length === 0) throw new TickwiseError('usage', 'no input given (a .duckdb store or capture files)');
  const stores = inputs.filter(isStorePath);
  if (stores.length > 0) {
    if (inputs.length > 1) throw new TickwiseError('usage', 'give either one .duckdb store or capture files, not both');
    try {
      return { store: await Store.open(stores[0]!, { readOnly: true }), imported: [] };
    } catch (e) {
      if (e instanceof TickwiseError) throw e;
      throw new TickwiseError('unreadable-input', `cannot open store: ${(e as Error).message.split('\n')[0]}`, { file: stores[0], cause: e });
    }
  }
  const store = await Store.open(':memory:');
  const imported: ImportResult[] = [];
  try {
    for (const input of inputs) imported.push(await importInput(store, input, opts));
    await redactStoredConditions(store);
  } catch (e) {
    await store.close();
    throw e;
  }
  return { store, imported };
}
