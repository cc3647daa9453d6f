import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { FIXTURES, ROOT } from './helpers';

/**
 * An import that fails leaves none of its rows in the store it was given
 * (a library caller's: the CLI discards its copy of the store), whatever the
 * reader had written by then, so the next import, which takes the same
 * capture id, is not mixed with them. The failure is injected into a real
 * DuckDB store: its `INSERT INTO captures`, each reader's last statement,
 * when every other row of the capture is written (a Chrome trace's host
 * spans committed during its scan among them).
 */

const EXTERNAL = join(ROOT, '../shared/fixtures/external');
const INPUTS = [
  { name: 'Chrome trace (Kineto, gz), host spans streamed', path: join(EXTERNAL, 'chrome-trace/hta_nccl_data.json.gz'), env: { TICKWISE_CHROME_STREAM: '1' } },
  { name: 'ireeperf-jsonl', path: join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'), env: {} },
  { name: 'rocprofv3 JSON (gz)', path: join(EXTERNAL, 'rocprofv3-json/tracelens_908_results.json.gz'), env: {} },
];

/** Rows per table with a capture_id column, per capture id. */
async function counts(store: Store): Promise<Record<string, string>> {
  const tables = await store.query({ t: 'string' }, `SELECT c.table_name AS t FROM duckdb_columns() c
    JOIN duckdb_tables() b ON b.table_name = c.table_name AND b.schema_name = c.schema_name AND b.database_name = c.database_name
    WHERE c.schema_name = 'main' AND c.column_name = 'capture_id' ORDER BY 1`);
  const out: Record<string, string> = {};
  for (const { t } of tables) {
    const rows = await store.rows(`SELECT capture_id, count(*) AS n FROM ${t} GROUP BY ALL ORDER BY ALL`);
    out[t] = rows.map((r) => `${String(r['capture_id'])}:${String(r['n'])}`).join(' ');
  }
  return out;
}

/** `store` with its `INSERT INTO captures` failing (the store itself is real; its other statements run as they are). */
function failingAtCaptures(store: Store): Store {
  const faulty = Object.create(store) as Store;
  faulty.run = async (sql, params) => {
    if (/^\s*INSERT INTO captures\b/.test(sql)) throw new Error('injected: the disk is full');
    return store.run(sql, params);
  };
  return faulty;
}

afterEach(() => vi.unstubAllEnvs());

describe('a failed import leaves none of its rows', () => {
  for (const input of INPUTS) {
    it.skipIf(!existsSync(input.path))(input.name, { timeout: 60_000 }, async () => {
      for (const [k, v] of Object.entries(input.env)) vi.stubEnv(k, v);
      // the reference: the input imported once, alone
      const ref = await Store.open(':memory:');
      await importInput(ref, input.path);
      const one = await counts(ref);
      await ref.close();

      const store = await Store.open(':memory:');
      try {
        await importInput(store, input.path);
        expect(await counts(store)).toEqual(one);
        await expect(importInput(failingAtCaptures(store), input.path)).rejects.toThrow(/injected: the disk is full/);
        // capture 1 as it was, nothing of capture 2
        expect(await counts(store)).toEqual(one);
        // the next import takes id 2 and holds what the first did, no more
        await importInput(store, input.path);
        const two = await counts(store);
        for (const [t, c] of Object.entries(one)) {
          const again = c.split(' ').filter(Boolean).map((x) => x.replace(/^1:/, '2:')).join(' ');
          expect(two[t], t).toBe([c, again].filter(Boolean).join(' '));
        }
      } finally {
        await store.close();
      }
    });
  }
});
