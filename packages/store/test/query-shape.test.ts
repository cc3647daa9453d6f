/**
 * Store.query reads a result column by column and converts it by the
 * declared shape; Store.rows builds plain row objects the same way. Both
 * against a real DuckDB: the values, the refusals, and a large result.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRows, QueryError, Store } from '@tickwise/store';

const work = mkdtempSync(join(tmpdir(), 'tickwise-query-shape-'));
let store: Store;
beforeAll(async () => {
  store = await Store.open(join(work, 's.duckdb'));
});
afterAll(async () => {
  await store.close();
  rmSync(work, { recursive: true, force: true });
});

const SHAPE = { i: 'number', b: 'bigint', s: 'string', f: 'boolean', j: 'json?', d: 'number?', n: 'string?' } as const;
const SQL = `SELECT range::INTEGER AS i, (range * 3000000000)::BIGINT AS b, 'k' || range AS s, range % 2 = 0 AS f,
    '{"a":' || range || '}' AS j, CASE WHEN range = 1 THEN NULL ELSE range / 4 END AS d, NULL AS n
  FROM range(3)`;

describe('Store.query: columns to typed rows', () => {
  it('converts every kind as the row path does, NULLs where the shape allows them', async () => {
    const got = await store.query(SHAPE, SQL);
    expect(got).toEqual([
      { i: 0, b: 0n, s: 'k0', f: true, j: { a: 0 }, d: 0, n: null },
      { i: 1, b: 3_000_000_000n, s: 'k1', f: false, j: { a: 1 }, d: null, n: null },
      { i: 2, b: 6_000_000_000n, s: 'k2', f: true, j: { a: 2 }, d: 0.5, n: null },
    ]);
    // the same values through the row objects and checkRows
    expect(checkRows(SHAPE, await store.rows(SQL), SQL)).toEqual(got);
  });

  it('keeps only the declared columns; a later column of the same name wins, as in a row object', async () => {
    const got = await store.query({ x: 'number' }, 'SELECT 1 AS x, 2 AS y, 3 AS x');
    expect(got).toEqual([{ x: 3 }]);
    expect(await store.rows('SELECT 1 AS x, 2 AS y, 3 AS x')).toEqual([{ x: 3, y: 2 }]);
  });

  it('refuses a NULL or a missing column where the shape needs a value, and a bigint beyond 2^53 as a number', async () => {
    await expect(store.query({ v: 'number' }, 'SELECT NULL::INTEGER AS v')).rejects.toThrow(/column v: NULL where the shape needs number/);
    await expect(store.query({ w: 'string' }, 'SELECT 1 AS v')).rejects.toThrow(/column w: NULL where the shape needs string/);
    await expect(store.query({ v: 'number' }, 'SELECT 9007199254740993::BIGINT AS v')).rejects.toThrow(QueryError);
    await expect(store.query({ v: 'number' }, 'SELECT 9007199254740993::BIGINT AS v')).rejects.toThrow(/declare it bigint/);
    expect(await store.query({ v: 'bigint' }, 'SELECT 9007199254740993::BIGINT AS v')).toEqual([{ v: 9007199254740993n }]);
    await expect(store.query({ v: 'bigint' }, 'SELECT 0.5::DOUBLE AS v')).rejects.toThrow(/0.5 is not an integer/);
  });

  it('an empty result is an empty list; a result of several chunks keeps every row in order', async () => {
    expect(await store.query({ v: 'number' }, 'SELECT 1 AS v WHERE false')).toEqual([]);
    const n = 300_000; // ~150 DuckDB chunks
    const got = await store.query({ pos: 'number', h: 'bigint' }, `SELECT range AS pos, (hash(range) >> 1)::BIGINT AS h FROM range(${n}) ORDER BY range`);
    expect(got.length).toBe(n);
    let sum = 0;
    let ordered = true;
    for (let i = 0; i < n; i++) {
      sum += got[i]!.pos;
      if (got[i]!.pos !== i) ordered = false;
    }
    expect(ordered).toBe(true);
    expect(sum).toBe((n * (n - 1)) / 2);
    const [check] = await store.query({ h: 'bigint' }, `SELECT (hash(${n - 1}::BIGINT) >> 1)::BIGINT AS h`);
    expect(got[n - 1]!.h).toBe(check!.h);
  });
});
