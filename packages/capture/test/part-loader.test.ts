import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { NdjsonPart } from '../src/json-records';
import { PartLoader } from '../src/part-loader';
import { tmp } from './helpers';

/**
 * The part loader stages a scan's NDJSON parts in DuckDB: the parts of an
 * `into` waiting when a load starts go in one statement, and the table's
 * rows keep the parts' order; a record DuckDB refuses in such a batch is
 * still named by its own source line, and a restarted scan's parts never mix
 * with the ones before.
 */

const COLUMNS = `_line: 'UBIGINT', v: 'BIGINT'`;
let store: Store | undefined;
afterEach(async () => {
  await store?.close();
  store = undefined;
});

/** Writes parts of `sizes` records (values counted on from `first`) in `dir`; record k's source line is 1000 + k. */
function parts(dir: string, sizes: readonly number[], first = 0, name = 'p'): NdjsonPart[] {
  const out: NdjsonPart[] = [];
  let k = first;
  sizes.forEach((n, i) => {
    const path = join(dir, `${name}${i}.ndjson`);
    writeFileSync(path, Array.from({ length: n }, (_, j) => `{"_line":${1000 + k + j},"v":${k + j}}\n`).join(''));
    out.push({ path, startByte: 0, firstRecord: k - first, records: n });
    k += n;
  });
  return out;
}

/** The statements the store runs from now on. */
function statements(s: Store): string[] {
  const seen: string[] = [];
  const run = s.run.bind(s);
  s.run = async (sql, params) => {
    seen.push(sql);
    return run(sql, params);
  };
  return seen;
}

describe('PartLoader', () => {
  it('loads the parts waiting in one statement, rows in the parts\' order; a part written during a load waits for the next', async () => {
    store = await Store.open(':memory:');
    const dir = tmp();
    const ps = parts(dir, [300, 200, 250, 100, 150]);
    const loader = await PartLoader.start(store, 1 << 20, { sizeBytes: 0, compression: 'none' });
    const seen = statements(store);
    const onPart = loader.into(0, 'tw_test_t', COLUMNS);
    for (const p of ps.slice(0, 3)) onPart(p); // waiting together
    await Promise.resolve();
    for (const p of ps.slice(3)) onPart(p); // written while the first load runs
    await loader.finish([new Uint32Array(1000)], 'in.json');
    const loads = seen.filter((q) => q.includes('read_json'));
    expect(loads).toHaveLength(2);
    expect(loads[0]).toMatch(/^CREATE TEMP TABLE tw_test_t AS /);
    expect(ps.slice(0, 3).every((p) => loads[0]!.includes(p.path))).toBe(true);
    expect(loads[1]).toMatch(/^INSERT INTO tw_test_t /);
    expect(ps.slice(3).every((p) => loads[1]!.includes(p.path))).toBe(true);
    const rows = await store.rows('SELECT v FROM tw_test_t ORDER BY rowid');
    expect(rows.map((r) => Number(r['v']))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('a record refused in a batch is named by its own part and source line', async () => {
    store = await Store.open(':memory:');
    const dir = tmp();
    const ps = parts(dir, [40, 50, 60]);
    const lines = new Uint32Array(150).map((_, k) => 5000 + 2 * k);
    // the third part's 7th record malformed (its record 96 of the output)
    const bad = ps[2]!.path;
    const text = (await import('node:fs')).readFileSync(bad, 'utf8').split('\n');
    text[6] = text[6]!.replace('"v":', '"v":,');
    writeFileSync(bad, text.join('\n'));
    const loader = await PartLoader.start(store, 1 << 20, { sizeBytes: 0, compression: 'none' });
    const onPart = loader.into(0, 'tw_test_t', COLUMNS);
    for (const p of ps) onPart(p);
    const err = await loader.finish([lines], 'in.json').then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).line).toBe(lines[96]);
    // the parts before the bad one were loaded again one at a time
    expect(Number(await store.scalar('SELECT count(*) FROM tw_test_t'))).toBe(90);
  });

  it('after a restart, the parts written before it are not loaded with the new ones', async () => {
    store = await Store.open(':memory:');
    const dir = tmp();
    const before = parts(dir, [100, 100], 0, 'old');
    const after = parts(dir, [70], 500, 'new');
    const loader = await PartLoader.start(store, 1 << 20, { sizeBytes: 0, compression: 'none' });
    const onPart = loader.into(0, 'tw_test_t', COLUMNS);
    for (const p of before) onPart(p);
    loader.restart();
    for (const p of after) onPart(p);
    await loader.finish([new Uint32Array(1000)], 'in.json');
    const rows = await store.rows('SELECT v FROM tw_test_t ORDER BY rowid');
    expect(rows.map((r) => Number(r['v']))).toEqual(Array.from({ length: 70 }, (_, i) => 500 + i));
  });
});
