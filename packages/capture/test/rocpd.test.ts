import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, isStorePath, openInputs, type ImportOptions } from '../src/index';
import { tmp } from './helpers';
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
