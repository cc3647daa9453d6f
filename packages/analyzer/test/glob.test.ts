import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { globMatch } from '../src/index';
import { seededRng } from '@tickwise/time';

/** xorshift32: the same cases on every run. */
/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

describe('globMatch is DuckDB\'s GLOB', () => {
  let store: Store;
  beforeAll(async () => { store = await Store.open(':memory:'); });
  afterAll(async () => { await store.close(); });

  async function duck(pairs: [string, string][]): Promise<boolean[]> {
    const values = pairs.map(([g, n], i) => `(${i}, '${n.replace(/'/g, "''")}', '${g.replace(/'/g, "''")}')`).join(',');
    const rows = await store.rows(`SELECT i, n GLOB g AS m FROM (VALUES ${values}) t(i, n, g) ORDER BY i`);
    return rows.map((r) => r['m'] === true);
  }

  it('the cases where the old JS copies disagreed with DuckDB', async () => {
    const cases: [string, string][] = [['[]x]', ']'], ['a[!]]b', 'a-b'], ['*dispatch_[67]_matmul*', 'prefill_dispatch_6_matmul_512'], ['ABC*', 'abc'], ['x.y', 'xzy'], ['a[b', 'a[b'], ['a\\*', 'a*'], ['a\\*', 'ab']];
    const want = await duck(cases);
    expect(cases.map(([g, n]) => globMatch(g, n))).toEqual(want);
    expect(want.slice(0, 3)).toEqual([true, true, true]);
  });

  it('agrees with DuckDB on 4000 random patterns and names', async () => {
    const r = rng(20261202);
    const pick = (alphabet: string[], n: number) => Array.from({ length: n }, () => alphabet[Math.floor(r() * alphabet.length)]!).join('');
    const patAlpha = ['a', 'b', 'c', '-', '!', ']', '[', '*', '?', '\\', '_', 'é'];
    const nameAlpha = ['a', 'b', 'c', '-', '!', ']', '[', '*', '?', '\\', '_', 'é'];
    const pairs: [string, string][] = [];
    for (let i = 0; i < 4000; i++) {
      const g = pick(patAlpha, 1 + Math.floor(r() * 7));
      // half the names are made from the pattern (wildcards filled in), so many match
      const n = i % 2 ? pick(nameAlpha, Math.floor(r() * 7)) : [...g].map((c) => (c === '*' ? pick(nameAlpha, Math.floor(r() * 3)) : c === '?' ? pick(nameAlpha, 1) : c)).join('');
      pairs.push([g, n]);
    }
    const want = await duck(pairs);
    const got = pairs.map(([g, n]) => globMatch(g, n));
    const differ = pairs.filter((_, i) => got[i] !== want[i]).slice(0, 10);
    expect(differ).toEqual([]);
    // the sample exercises both answers
    expect(want.filter(Boolean).length).toBeGreaterThan(100);
  });
});
