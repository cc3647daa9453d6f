import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { orderByLineSeq } from '../src/capture-rows';

/** orderByLineSeq: the copy of a staging table sorts only when its stored rows are out of (line, seq) order. */
describe('orderByLineSeq', () => {
  async function staged(rows: [number | null, number | null][]): Promise<Store> {
    const store = await Store.open(':memory:');
    await store.run('CREATE TEMP TABLE t (line BIGINT, seq BIGINT)');
    await store.appendTemp('t', rows);
    return store;
  }

  it('no sort for rows stored in order, ties on line ordered by seq (a minified file: every record on line 1)', async () => {
    const inOrder = Array.from({ length: 5000 }, (_, i): [number, number] => [1 + Math.floor(i / 1000), i]);
    const store = await staged(inOrder);
    expect(await orderByLineSeq(store, 't')).toBe('');
    await store.close();
  });

  it('sorts when one row is late (what a hash join does), when seq goes back on one line, or when a key is NULL', async () => {
    const late = Array.from({ length: 5000 }, (_, i): [number, number] => [i + 1, i]);
    [late[2500], late[2501]] = [late[2501]!, late[2500]!];
    const sameLine = Array.from({ length: 5000 }, (_, i): [number, number] => [1, i === 4000 ? 3999 : i === 3999 ? 4000 : i]);
    for (const rows of [late, sameLine, [[1, 0], [null, 1]] as [number | null, number | null][], [[1, null], [2, 1]] as [number | null, number | null][]]) {
      const store = await staged(rows);
      expect(await orderByLineSeq(store, 't')).toBe('ORDER BY line, seq');
      await store.close();
    }
  });
});
