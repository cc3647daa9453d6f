import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, isStorePath, openInputs, type ImportOptions } from '../src/index';
import { tmp } from './helpers';
import { dispatchBatchesOnWorker } from '../src/readers/rocpd-worker';
import { KERNEL_TOTALS_SQL, expectGolden, fixture } from './trace-helpers';

/** Builds a rocpd database from a hand-written SQL fixture, named as rocprofv3 names it. */
function buildDb(sqlFixture: string): string {
  const file = join(tmp('tickwise-rocpd-'), '4242_results.db');
  const db = new Database(file);
  db.exec(readFileSync(fixture('rocpd', sqlFixture), 'utf8'));
  db.close();
  return file;
}

async function load(file: string, opts: ImportOptions = {}) {
  const store = await Store.open(':memory:');
  const result = await importInput(store, file, opts);
  return { store, result };
}

describe('rocpd SQLite databases', () => {
  it('schema 3 (start/end inline, views): kernel totals (diff test), names and agents joined', async () => {
    const { store, result } = await load(buildDb('schema3-inline.sql'));
    expect(result).toMatchObject({ format: 'rocpd', dispatches: 4 });
    await expectGolden(store, fixture('rocpd', 'schema3-inline.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    expect(await store.rows(`SELECT device, kind, name, time_base FROM devices`)).toEqual([{ device: 1, kind: 'gpu', name: 'AMD Radeon 8060S', time_base: 'host_boottime' }]);
    expect(await store.rows(`SELECT schema_version, timeline FROM captures`)).toEqual([{ schema_version: 3, timeline: 'boottime' }]);
    expect(await store.rows(`SELECT key, value FROM conditions`)).toEqual([{ key: 'host.hostname', value: 'strix-halo-01' }]);
  });

  it('schema 3: a dispatch that ends before it starts is kept invalid, with the row id as its line', async () => {
    const { store } = await load(buildDb('schema3-inline.sql'));
    expect(await store.rows(`SELECT line, dur_ns, valid FROM dispatches WHERE NOT valid`)).toEqual([{ line: 3n, dur_ns: -1_200_000n, valid: false }]);
    expect(await store.rows(`SELECT code, line FROM diagnostics WHERE severity = 'warning'`)).toEqual([{ code: 'non-positive-duration', line: 3n }]);
  });

  it('schema 3: HIP API regions and memory copies become host events; correlation ids kept', async () => {
    const { store } = await load(buildDb('schema3-inline.sql'), { boottimeOffsetNs: 5_000_000_000n });
    expect(await store.rows(`SELECT kind, op, name, device, event_id, start_ns, dur_ns, args FROM host_events ORDER BY start_ns`)).toEqual([
      { kind: 'memory_copy', op: 'MEMORY_COPY', name: 'MEMORY_COPY_HOST_TO_DEVICE', device: 1, event_id: null, start_ns: 999_999_960_000n, dur_ns: 20_000n, args: '{"bytes":1048576,"src_device":0,"dst_device":1}' },
      { kind: 'region', op: 'HIP_RUNTIME_API', name: 'hipLaunchKernel', device: null, event_id: 11n, start_ns: 999_999_990_000n, dur_ns: 8_500n, args: null },
    ]);
    expect(await store.rows(`SELECT event_id FROM dispatches ORDER BY line`)).toEqual([{ event_id: 1n }, { event_id: 2n }, { event_id: 3n }, { event_id: 4n }]);
  });

  it('newer layout (rocpd_timestamp spine, suffixed tables, no views): times beyond 2^53 exact', async () => {
    const { store, result } = await load(buildDb('schema4-spine.sql'));
    await expectGolden(store, fixture('rocpd', 'schema4-spine.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    expect(await store.rows(`SELECT dispatch_id, start_ns, end_ns, dur_ns, queue FROM (SELECT event_id AS dispatch_id, * FROM dispatches) ORDER BY start_ns`)).toEqual([
      { dispatch_id: 1n, start_ns: 9_007_199_254_000_001n, end_ns: 9_007_199_254_600_003n, dur_ns: 600_002n, queue: 3 },
      { dispatch_id: 2n, start_ns: 9_007_199_254_800_001n, end_ns: 9_007_199_255_400_001n, dur_ns: 600_000n, queue: 3 },
      { dispatch_id: 3n, start_ns: 9_007_199_255_500_000n, end_ns: 9_007_199_255_510_000n, dur_ns: 10_000n, queue: 3 },
    ]);
    expect(await store.scalar(`SELECT schema_version FROM captures`)).toBe(4);
  });

  it('a merged database (two processes, ids repeating across them) joins each row to its own process by guid', async () => {
    const file = join(tmp('tickwise-rocpd-'), 'merged.db');
    const db = new Database(file);
    const sql = readFileSync(fixture('rocpd', 'schema4-spine.sql'), 'utf8');
    db.exec(sql);
    db.exec(sql.replaceAll('_0000a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b', '_0000ffff_c3d4_7e5f_8a9b_0c1d2e3f4a5b').replaceAll(`DEFAULT 'g'`, `DEFAULT 'h'`)
      .replace(`'gemm_tile_256x256'`, `'other_gemm'`).replace(`'softmax_f32'`, `'other_softmax'`));
    db.close();
    const { store } = await load(file);
    expect(await store.rows(`SELECT kernel, count(*) AS n FROM dispatches GROUP BY kernel ORDER BY kernel`)).toEqual([
      { kernel: 'gemm_tile_256x256', n: 2n }, { kernel: 'other_gemm', n: 2n }, { kernel: 'other_softmax', n: 1n }, { kernel: 'softmax_f32', n: 1n },
    ]);
  });

  it('a schema_version tag beyond INTEGER (2^64, found by the import fuzz) is kept as text in conditions, the capture imported', async () => {
    const file = buildDb('schema4-spine.sql');
    const db = new Database(file);
    const meta = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_metadata%'`).get() as { name: string }).name;
    expect(db.prepare(`UPDATE ${meta} SET value = '18446744073709551616' WHERE tag = 'schema_version'`).run().changes).toBe(1);
    db.close();
    const { store, result } = await load(file);
    expect(result.dispatches).toBeGreaterThan(0);
    expect(await store.rows(`SELECT schema_version FROM captures`)).toEqual([{ schema_version: null }]);
    expect(await store.rows(`SELECT value FROM conditions WHERE key = 'rocpd.schema_version'`)).toEqual([{ value: '18446744073709551616' }]);
  });

  it('a .db that is SQLite is a capture, not a store: verbs open it as rocpd', async () => {
    const file = buildDb('schema3-inline.sql');
    expect(isStorePath(file)).toBe(false);
    expect(isStorePath(join(tmp(), 'run.db'))).toBe(true);
    expect(isStorePath('run.duckdb')).toBe(true);
    const { store, imported } = await openInputs([file]);
    expect(imported.map((i) => i.format)).toEqual(['rocpd']);
    await store.close();
  });

  it('an SQLite file without rocpd tables is refused with a clear message', async () => {
    const file = join(tmp(), 'other.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE t (a INTEGER)`);
    db.close();
    const err = await load(file).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).message).toMatch(/not rocpd: it has no rocpd_kernel_dispatch table/);
  });
});

/** Every table of a store as sorted text (rows as a set; imported_at left out). */
async function contents(store: Store): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of ['dispatches', 'devices', 'host_events', 'kernels_meta', 'diagnostics', 'conditions', 'captures']) {
    const rows = await store.rows(`SELECT * EXCLUDE (capture_id${t === 'captures' ? ', imported_at' : ''}) FROM ${t}`);
    out[t] = rows.map((r) => JSON.stringify(r, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).sort();
  }
  return out;
}

describe('rocpd: the stored order', () => {
  it('is the rows\' id order, the same each import: 300k dispatches on one worker, then in two halves on two, 300k regions by number', { timeout: 120_000 }, async () => {
    const file = buildDb('schema3-inline.sql');
    const db = new Database(file);
    const table = (like: string) => (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?`).get(like) as { name: string }).name;
    const [kd, rg] = [table('rocpd_kernel_dispatch%'), table('rocpd_region%')];
    // copies of the first dispatch and region, 1 us apart
    const upto = 'WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300000)';
    db.exec(`${upto} INSERT INTO ${kd} (nid, pid, tid, agent_id, kernel_id, dispatch_id, queue_id, stream_id, start, "end", workgroup_size_x,
        workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id)
      SELECT nid, pid, tid, agent_id, kernel_id, dispatch_id + i, queue_id, stream_id, start + i * 1000, "end" + i * 1000, workgroup_size_x,
        workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z, event_id FROM ${kd}, c WHERE ${kd}.id = 1`);
    db.exec(`${upto} INSERT INTO ${rg} (nid, pid, tid, start, "end", name_id, event_id)
      SELECT nid, pid, tid, start + i * 1000, "end" + i * 1000, name_id, event_id FROM ${rg}, c WHERE ${rg}.id = 1`);
    db.close();
    const backSteps = (t: string) => `SELECT count(*) FROM (SELECT line, lag(line) OVER (ORDER BY rowid) AS pl FROM ${t}) WHERE pl > line`;
    const orders: string[] = [];
    for (const split of ['0', '1']) {
      vi.stubEnv('TICKWISE_ROCPD_SPLIT', split);
      const store = await Store.open(join(tmp('tickwise-rocpd-order-'), 'x.duckdb'));
      try {
        const r = await importInput(store, file);
        expect(r.dispatches).toBe(300_004);
        // (through a view whose name list was a scalar subquery, the inserted rows came out of order at a row that
        // changed each import: one back-step in 2 of 3 imports of this database)
        expect(Number(await store.scalar(backSteps('dispatches')))).toBe(0);
        expect(Number(await store.scalar(backSteps('host_events')))).toBe(0);
        orders.push(String(await store.scalar(`SELECT md5(string_agg(line::VARCHAR || ':' || start_ns::VARCHAR, ',' ORDER BY rowid)) FROM dispatches`)));
        expect(await store.rows(`SELECT op, name, count(*)::INTEGER AS n FROM host_events WHERE kind = 'region' GROUP BY ALL`))
          .toEqual([{ op: 'HIP_RUNTIME_API', name: 'hipLaunchKernel', n: 300_001 }]);
      } finally {
        await store.close();
      }
    }
    expect(orders[1]).toBe(orders[0]);
    vi.unstubAllEnvs();
  });
});

describe('rocpd: dispatch rows read on a worker thread', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('the same store as read on the main thread: both layouts, a merged database, odd values (negative, text digits, real, beyond uint64)', async () => {
    const odd = buildDb('schema3-inline.sql');
    const db = new Database(odd);
    const kd = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rocpd_kernel_dispatch%'`).get() as { name: string }).name;
    db.exec(`UPDATE ${kd} SET queue_id = -5 WHERE id = 1; UPDATE ${kd} SET grid_size_x = '12' WHERE id = 2;
      UPDATE ${kd} SET workgroup_size_y = 2.5 WHERE id = 3; UPDATE ${kd} SET grid_size_z = '18446744073709551616' WHERE id = 4;
      UPDATE ${kd} SET dispatch_id = '9223372036854775808' WHERE id = 1`);
    // and the host rows': a region's thread id as text digits, a copy's size beyond uint64 and its end negative
    const table = (like: string) => (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE ?`).get(like) as { name: string }).name;
    db.exec(`UPDATE ${table('rocpd_region%')} SET tid = '4243'; UPDATE ${table('rocpd_memory_copy%')} SET size = '18446744073709551616', "end" = -3`);
    db.close();
    const merged = join(tmp('tickwise-rocpd-'), 'merged.db');
    const m = new Database(merged);
    const sql = readFileSync(fixture('rocpd', 'schema4-spine.sql'), 'utf8');
    m.exec(sql);
    m.exec(sql.replaceAll('_0000a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b', '_0000ffff_c3d4_7e5f_8a9b_0c1d2e3f4a5b').replaceAll(`DEFAULT 'g'`, `DEFAULT 'h'`));
    m.close();
    for (const file of [buildDb('schema3-inline.sql'), buildDb('schema4-spine.sql'), merged, odd]) {
      const seen: string[] = [];
      const order: string[] = [];
      // the main thread; one worker; the dispatches split between two workers at the ids' midpoint (TICKWISE_ROCPD_SPLIT=1:
      // whatever the size, and beside the host rows' worker too)
      for (const [worker, split] of [['0', '0'], ['1', '0'], ['1', '1']]) {
        vi.stubEnv('TICKWISE_ROCPD_WORKER', worker!);
        vi.stubEnv('TICKWISE_ROCPD_SPLIT', split!);
        const { store, result } = await load(file);
        try {
          expect(result.dispatches).toBeGreaterThan(0);
          seen.push(JSON.stringify(await contents(store)));
          // the rows as stored (line order, a merged database's processes by start within a line)
          order.push(JSON.stringify(await store.rows('SELECT line, start_ns, kernel FROM dispatches'), (_k, v) => (typeof v === 'bigint' ? String(v) : v)));
        } finally {
          await store.close();
        }
      }
      expect(seen[1], file).toBe(seen[0]);
      expect(seen[2], file).toBe(seen[0]);
      expect(order[1], file).toBe(order[0]);
      expect(order[2], file).toBe(order[0]);
    }
    // the odd values: a negative queue and a real workgroup size are no value, a text of digits is its number, one beyond uint64 is counted
    const { store } = await load(odd);
    expect(await store.rows(`SELECT code FROM diagnostics WHERE code = 'value-out-of-range'`)).toEqual([{ code: 'value-out-of-range' }]);
    await store.close();
  });

  it('the worker sends columns in batches, stops on a value the reader refuses itself, and names a database error as SQLite does', async () => {
    const file = buildDb('schema4-spine.sql');
    const cols = (agent: string) => `SELECT id, 1, ${agent}, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17`;
    const plan = (sql: string) => ({ path: file, setup: [], sql, batchRows: 2 });
    const batches = [];
    const gen = dispatchBatchesOnWorker(plan(`${cols('NULL')} FROM (SELECT 1 AS id UNION ALL SELECT 2 UNION ALL SELECT 3) ORDER BY id`));
    let next = await gen.next();
    while (next.done !== true) {
      batches.push(next.value);
      next = await gen.next();
    }
    expect(next.value).toEqual({ records: 3, outOfRange: 0 });
    expect(batches.map((b) => b.n)).toEqual([2, 1]);
    expect([...batches[0]!.rowId]).toEqual([1n, 2n]);
    expect([...batches[0]!.noAgent]).toEqual([1, 1]);
    expect([...batches[0]!.u[13]!]).toEqual([17n, 17n]);
    // a text agent number: the reader's appender refuses it, so the worker leaves the rows to the reader
    const text = dispatchBatchesOnWorker(plan(`${cols("'x'")} FROM (SELECT 1 AS id)`));
    expect(await text.next()).toEqual({ done: true, value: { fallback: 'a number that is no integer' } });
    const missing = dispatchBatchesOnWorker(plan(`SELECT * FROM no_such_table`));
    const err = await missing.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('SqliteError');
    expect((err as Error).message).toMatch(/no such table/);
  });
});
