import { existsSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store, TABLE_NAMES } from '@tickwise/store';
import { exportParquet } from '../src/index';
import { sampleStore, tmp } from './sample-store';

describe('parquet export', () => {
  let store: Store;
  let reader: Store;
  beforeAll(async () => {
    store = await Store.open(sampleStore(), { readOnly: true });
    reader = await Store.open(':memory:');
  });
  afterAll(async () => {
    await store.close();
    await reader.close();
  });

  it('writes one file per table with every row, values exact (HUGEINT as DECIMAL(38,0), UBIGINT as UINT64)', async () => {
    const dir = join(tmp(), 'pq');
    const files = await exportParquet(store, dir);
    expect(files.map((f) => f.table)).toEqual([...TABLE_NAMES]);
    for (const f of files) {
      expect(Number(await reader.scalar(`SELECT count(*) FROM read_parquet('${f.path}')`))).toBe(await store.count(f.table));
    }
    const want = await store.rows(`SELECT capture_id, fit_ns_per_tick_num::VARCHAR AS v FROM devices ORDER BY 1`);
    const got = await reader.rows(`SELECT capture_id, fit_ns_per_tick_num::VARCHAR AS v FROM read_parquet('${dir}/devices.parquet') ORDER BY 1`);
    expect(got).toEqual(want);
    const sums = `SELECT sum(start_tick)::VARCHAR AS t, sum(dur_ns)::VARCHAR AS d, count(*) AS n`;
    expect(await reader.rows(`${sums} FROM read_parquet('${dir}/dispatches.parquet')`)).toEqual(await store.rows(`${sums} FROM dispatches`));
    const manifest = JSON.parse(readFileSync(join(dir, 'tickwise-export.json'), 'utf8')) as { tables: { table: string; rows: number }[] };
    expect(manifest.tables.find((t) => t.table === 'dispatches')!.rows).toBe(2292);
  });

  it('hive-partitions by capture_id with --partition', async () => {
    const dir = join(tmp(), 'pq');
    const files = await exportParquet(store, dir, { partition: true });
    const d = files.find((f) => f.table === 'dispatches')!;
    expect(d.partitioned).toBe(true);
    expect(existsSync(join(dir, 'dispatches', 'capture_id=1'))).toBe(true);
    expect(existsSync(join(dir, 'dispatches', 'capture_id=2'))).toBe(true);
    const rows = await reader.rows(`SELECT capture_id, count(*) AS n FROM read_parquet('${dir}/dispatches/*/*.parquet', hive_partitioning = true) GROUP BY 1 ORDER BY 1`);
    expect(rows.map((r) => [Number(r['capture_id']), Number(r['n'])])).toEqual([[1, 2252], [2, 40]]);
  });

  it('refuses a non-empty folder unless forced', async () => {
    const dir = join(tmp(), 'pq');
    mkdirSync(dir);
    writeFileSync(join(dir, 'keep.txt'), 'x');
    await expect(exportParquet(store, dir)).rejects.toThrow(/exists and is not empty \(give --force/);
    await exportParquet(store, dir, { force: true });
    expect(existsSync(join(dir, 'keep.txt'))).toBe(false);
  });
});
