import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TickwiseError } from '@tickwise/time';
import { SCHEMA_VERSION, Store, TABLES, TABLE_NAMES, TABLE_DECLS, tableColumns, toJsonText, sqlString } from '../src/index';
import { SCHEMA_V1_DDL } from './schema-v1-ddl';

const open: Store[] = [];
async function mem(): Promise<Store> {
  const s = await Store.open(':memory:');
  open.push(s);
  return s;
}
afterEach(async () => {
  while (open.length) await open.pop()!.close();
});

const CATALOG = `SELECT table_name, column_index, column_name, data_type, is_nullable, column_default
  FROM duckdb_columns() WHERE schema_name = 'main' AND NOT internal ORDER BY table_name, column_index`;
const CONSTRAINTS = `SELECT table_name, constraint_type, constraint_column_names::VARCHAR AS cols
  FROM duckdb_constraints() WHERE schema_name = 'main' ORDER BY ALL`;

describe('the table declaration', () => {
  it('derives DDL that creates exactly the schema-1 tables (no drift)', async () => {
    const derived = await mem();
    const frozen = await Store.open(':memory:', { readOnly: false });
    open.push(frozen);
    // a store made from the frozen schema-1 DDL alone
    for (const t of TABLE_NAMES) await frozen.run(`DROP TABLE ${t}`);
    for (const ddl of Object.values(SCHEMA_V1_DDL)) await frozen.run(ddl);
    expect(Object.keys(SCHEMA_V1_DDL)).toEqual(TABLE_NAMES);
    const a = await derived.rows(CATALOG);
    const b = await frozen.rows(CATALOG);
    expect(a.length).toBeGreaterThan(150);
    expect(a).toEqual(b);
    expect(await derived.rows(CONSTRAINTS)).toEqual(await frozen.rows(CONSTRAINTS));
    // the declaration's types are the catalog's, JSON included
    for (const t of TABLE_NAMES) {
      const cat = a.filter((r) => r['table_name'] === t);
      expect(cat.map((r) => r['column_name'])).toEqual(Object.keys(TABLE_DECLS[t].columns));
      expect(cat.map((r) => r['data_type'])).toEqual(tableColumns(t).map((c) => c.type));
      expect(cat.map((r) => r['is_nullable'])).toEqual(tableColumns(t).map((c) => c.nullable && !c.primaryKey));
    }
    expect(TABLES.dispatches).toContain('start_ns BIGINT,');
  });
});

describe('Store.open writes the schema', () => {
  it('into a new file (one transaction), an existing store, and never into a foreign database with a table of ours in another shape', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tickwise-schema-'));
    try {
      const db = join(dir, 'new.duckdb');
      const s = await Store.open(db);
      expect((await s.rows(`SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' ORDER BY 1`)).map((r) => r['table_name']))
        .toEqual([...TABLE_NAMES].sort());
      expect(await s.scalar(`SELECT value FROM tickwise_meta WHERE key = 'schema_version'`)).toBe(String(SCHEMA_VERSION));
      await s.run(`INSERT INTO captures (capture_id, path, format, sha256, size_bytes, imported_at, label, timeline, record_count)
        VALUES (1, 'a', 'b', 'c', 1, now(), 'l', 't', 0)`);
      await s.close();
      const again = await Store.open(db); // an existing store: checked, kept
      expect(await again.scalar('SELECT count(*) FROM captures')).toBe(1n);
      await again.close();
      // a DuckDB file of something else, with a table named like one of ours (no tickwise_meta): refused, not marked
      const foreign = join(dir, 'foreign.duckdb');
      const f = await Store.open(':memory:');
      await f.run(`ATTACH ${sqlString(foreign)} AS f`);
      await f.run('CREATE TABLE f.dispatches (x INTEGER)');
      await f.run('DETACH f');
      await f.close();
      const e = await Store.open(foreign).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(TickwiseError);
      expect((e as Error).message).toMatch(/table dispatches has other columns/);
      const ro = await Store.open(foreign, { readOnly: true });
      expect(await ro.scalar(`SELECT count(*) FROM duckdb_tables() WHERE table_name = 'tickwise_meta'`)).toBe(0n);
      await ro.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Store.append', () => {
  it('appends rows and reads them back exactly: bigint beyond 2^53, NULLs, quotes, JSON, defaults', async () => {
    const s = await mem();
    const big = 2n ** 63n - 1n;
    const n = await s.append('dispatches', [
      { capture_id: 1, device: 0, kernel: `it's "quoted"\n`, start_ns: big, end_ns: -big, dur_ns: 9007199254740993n, start_tick: 2n ** 64n - 1n,
        command_index: 4294967295, time_source: 'host_monotonic', valid: true, line: 7 },
      { capture_id: 1, device: 1, time_source: 'device_tick_none', valid: false, kernel: null },
    ]);
    expect(n).toBe(2);
    const rows = await s.rows(`SELECT kernel, start_ns, end_ns, dur_ns, start_tick, command_index, queue, valid, line FROM dispatches ORDER BY device`);
    expect(rows).toEqual([
      { kernel: `it's "quoted"\n`, start_ns: big, end_ns: -big, dur_ns: 9007199254740993n, start_tick: 2n ** 64n - 1n, command_index: 4294967295, queue: null, valid: true, line: 7n },
      { kernel: null, start_ns: null, end_ns: null, dur_ns: null, start_tick: null, command_index: null, queue: null, valid: false, line: null },
    ]);
    await s.append('devices', [{ capture_id: 1, device: 0, kind: 'gpu', time_base: 'host_monotonic', fit_base_tick: 2n ** 100n }]);
    expect(await s.rows(`SELECT fit_base_tick, clock_samples FROM devices`)).toEqual([{ fit_base_tick: 2n ** 100n, clock_samples: 0 }]);
    await s.append('host_events', [{ capture_id: 1, kind: 'x', time_source: 'host_other', args: { n: 2n ** 63n - 1n, s: "a'b" } }, { capture_id: 1, kind: 'y', time_source: 'host_other', args: '[1,2]' }]);
    expect(await s.rows(`SELECT (args->>'$.n')::UBIGINT AS n, args->>'$.s' AS s, json_array_length(args) AS l FROM host_events ORDER BY kind`))
      .toEqual([{ n: 2n ** 63n - 1n, s: "a'b", l: 0n }, { n: null, s: null, l: 2n }]);
  });

  it('refuses values that do not fit, without writing half a row', async () => {
    const s = await mem();
    await expect(s.append('dispatches', [{ capture_id: 1, device: 0, time_source: 't', valid: true, start_ns: 2 ** 60 }])).rejects.toThrow(/dispatches.start_ns.*pass a bigint/);
    await expect(s.append('dispatches', [{ capture_id: 1, device: 0, time_source: 't', valid: true, start_tick: -1n }])).rejects.toThrow(/out of range/);
    await expect(s.append('dispatches', [{ capture_id: 1, device: 0, time_source: null as never, valid: true }])).rejects.toThrow(/NOT NULL/);
    expect(await s.count('dispatches')).toBe(0);
    // text for a JSON column must be JSON: DuckDB's appender takes any, and every query of the column failed after
    for (const bad of ['{"a": 1', 'hello', "{'a': 1}", '']) {
      await expect(s.append('host_events', [{ capture_id: 1, kind: 'x', time_source: 'host_other', args: bad }]), bad).rejects.toThrow(/host_events\.args: .* is not JSON text/);
    }
    await expect(s.append('raw_records', [{ capture_id: 1, json: '{"ok": true}' }, { capture_id: 1, json: '[1, 2' }])).rejects.toThrow(/raw_records\.json: "\[1, 2" is not JSON text/);
    expect(await s.count('host_events')).toBe(0);
    expect(await s.count('raw_records')).toBe(0);
    await s.append('raw_records', [{ capture_id: 1, json: ' {"ok": [1, 2.5e300, null]} ' }, { capture_id: 1, json: '"a string"' }]);
    expect(await s.rows(`SELECT json_type(json) AS t FROM raw_records ORDER BY t`)).toEqual([{ t: 'OBJECT' }, { t: 'VARCHAR' }]);
  });

  it('keeps the deprecated insertRows working on top of it', async () => {
    const s = await mem();
    await s.insertRows('captures', ['capture_id', 'path', 'format', 'timeline'], [[1, "o'x.jsonl", 'test', 'host_monotonic']]);
    expect(await s.rows(`SELECT capture_id, path FROM captures`)).toEqual([{ capture_id: 1, path: "o'x.jsonl" }]);
    await s.run(`CREATE TEMP TABLE tw_t (a UBIGINT, b VARCHAR)`);
    await s.appendTemp('tw_t', [[18446744073709551615n, 'x'], [null, null]]);
    expect(await s.rows(`SELECT * FROM tw_t ORDER BY a NULLS LAST`)).toEqual([{ a: 18446744073709551615n, b: 'x' }, { a: null, b: null }]);
  });

  it('appendTempColumns: integer columns copied whole across data chunks, NULLs only where flagged (a chunk with none after one with some), texts per value', async () => {
    const s = await mem();
    await s.run('CREATE TEMP TABLE tw_cols (a BIGINT, b UBIGINT, c INTEGER, d VARCHAR, e VARCHAR)');
    const n = 5000;
    const a = new BigInt64Array(n), b = new BigUint64Array(n), c = new Int32Array(n), bNull = new Uint8Array(n);
    const d: (string | null)[] = [];
    for (let i = 0; i < n; i++) {
      a[i] = i % 2 === 0 ? -(2n ** 63n) + BigInt(i) : 2n ** 63n - 1n - BigInt(i);
      b[i] = 2n ** 64n - 1n - BigInt(i);
      c[i] = i % 3 === 0 ? -(2 ** 31) : 2 ** 31 - 1 - i;
      if (i < 2048 && i % 5 === 0) bNull[i] = 1; // NULLs in the first chunk only
      d.push(i % 7 === 0 ? null : `t${i}`);
    }
    expect(await s.appendTempColumns('tw_cols', [{ ints: a }, { ints: b, nulls: bNull }, { ints: c }, { values: d }, { same: 'k' }], n)).toBe(n);
    const rows = await s.rows(`SELECT a, b, c, d, e FROM tw_cols ORDER BY rowid`);
    expect(rows.length).toBe(n);
    for (let i = 0; i < n; i++) {
      expect(rows[i], `row ${i}`).toEqual({ a: a[i], b: bNull[i] === 1 ? null : b[i], c: c[i], d: d[i], e: 'k' });
    }
    // a typed array of another width than the column's, or too short, is refused by name
    await expect(s.appendTempColumns('tw_cols', [{ ints: b }, { ints: b }, { ints: c }, { same: null }, { same: null }], 10)).rejects.toThrow(/tw_cols column 1: a BigUint64Array for a BIGINT column/);
    await expect(s.appendTempColumns('tw_cols', [{ ints: a.subarray(0, 5) }, { ints: b }, { ints: c }, { same: null }, { same: null }], 10)).rejects.toThrow(/column 1: fewer than 10 values/);
    expect(await s.count('tw_cols' as never)).toBe(n);
    // a JSON column's texts are JSON
    await s.run('CREATE TEMP TABLE tw_json (j JSON)');
    await expect(s.appendTempColumns('tw_json', [{ values: ['{"a":1}', '{"a":'] }], 2)).rejects.toThrow(/tw_json column 1: "\{\\"a\\":" is not JSON text/);
    expect(await s.appendTempColumns('tw_json', [{ values: ['{"a":1}', null] }], 2)).toBe(2);
    expect(await s.rows(`SELECT j->>'a' AS a FROM tw_json`)).toEqual([{ a: '1' }, { a: null }]);
  });

  it('appendTemp across data chunks: every value exact, NULLs where they were, a bad value named with its row', async () => {
    // 2048 rows a chunk: 5000 rows are two full chunks and a part; NULLs fall on different rows in each column
    const s = await mem();
    await s.run(`CREATE TEMP TABLE tw_c (i INTEGER, u UINTEGER, b BIGINT, ub UBIGINT, h HUGEINT, f BOOLEAN, d DOUBLE, v VARCHAR, j JSON)`);
    const row = (k: number): unknown[] => [
      k % 7 === 0 ? null : k - 2500, k % 11 === 0 ? null : 4294967295 - k, k % 13 === 0 ? null : -(2n ** 63n) + BigInt(k),
      k % 17 === 0 ? null : 2n ** 64n - 1n - BigInt(k), k % 19 === 0 ? null : 2n ** 100n + BigInt(k), k % 23 === 0 ? null : k % 2 === 0,
      k % 29 === 0 ? null : k / 8, k % 31 === 0 ? null : `k${k} "q" \u00e9`, k % 37 === 0 ? null : { k, big: 2n ** 63n + BigInt(k) },
    ];
    const rows = Array.from({ length: 5000 }, (_, k) => row(k));
    expect(await s.appendTemp('tw_c', rows)).toBe(5000);
    const back = await s.rows(`SELECT i, u, b, ub, h, f, d, v, j::VARCHAR AS j FROM tw_c`);
    expect(back).toHaveLength(5000);
    const json = (x: unknown) => (x === null ? null : `{"k":${(x as { k: number }).k},"big":${(x as { big: bigint }).big}}`);
    const toBig = (x: unknown) => (x === null ? null : BigInt(x as number));
    for (const k of [0, 1, 7, 2047, 2048, 2049, 4095, 4096, 4999, 3333]) {
      const r = rows[k]!;
      expect(back[k]).toEqual({ i: r[0], u: r[1], b: r[2], ub: r[3], h: r[4], f: r[5], d: r[6], v: r[7], j: json(r[8]) });
    }
    // every row, one figure per column: the counts of NULLs and the sums
    const sums = (await s.rows(`SELECT count(i) AS i, sum(u)::HUGEINT AS u, sum(b)::HUGEINT AS b, sum(ub)::HUGEINT AS ub, sum(h) AS h, count(*) FILTER (WHERE f) AS f, sum(d) AS d, count(v) AS v, count(j) AS j FROM tw_c`))[0]!;
    const sum = (c: number) => rows.reduce((a, r) => a + (r[c] === null ? 0n : toBig(r[c])!), 0n);
    expect(sums).toEqual({
      i: BigInt(rows.filter((r) => r[0] !== null).length), u: sum(1), b: sum(2), ub: sum(3), h: sum(4), f: BigInt(rows.filter((r) => r[5] === true).length),
      d: rows.reduce((a, r) => a + ((r[6] as number | null) ?? 0), 0), v: BigInt(rows.filter((r) => r[7] !== null).length), j: BigInt(rows.filter((r) => r[8] !== null).length),
    });
    const bad = rows.map((r, k) => (k === 4500 ? [r[0], -1, ...r.slice(2)] : r));
    await expect(s.appendTemp('tw_c', bad)).rejects.toThrow(/tw_c column 2: -1 is out of range/);
    await expect(s.appendTemp('tw_c', [[1, 2, 3n, 4n, 5n, true, 1.5, 7, null]])).resolves.toBe(1); // a number for a VARCHAR column is its text
    expect(await s.scalar(`SELECT v FROM tw_c WHERE i = 1 AND u = 2`)).toBe('7');
  });
});

describe('Store.stream', () => {
  it('yields every row in chunks, integers exact', async () => {
    const s = await mem();
    let total = 0;
    let chunks = 0;
    let last: unknown = null;
    for await (const chunk of s.stream(`SELECT i, i * 4611686018427387904::HUGEINT AS big FROM range(5000) t(i) WHERE i >= $1`, [10])) {
      chunks++;
      total += chunk.length;
      last = chunk[chunk.length - 1];
    }
    expect(total).toBe(4990);
    expect(chunks).toBeGreaterThan(1);
    expect(last).toEqual({ i: 4999n, big: 4999n * 4611686018427387904n });
    await expect((async () => { for await (const _ of s.stream(`SELECT nope`)) void _; })()).rejects.toThrow(/query failed/);
  });
});

describe('JSON output', () => {
  it('writes every integer as a number with all its digits, whatever its size', () => {
    const max = 2n ** 63n - 1n;
    const text = toJsonText({ small: 5n, large: max, int: 3, dbl: 0.1, neg: -max, nan: Number.NaN, list: [1n, null], empty: {}, none: [] }, 0);
    expect(text).toBe('{"small":5,"large":9223372036854775807,"int":3,"dbl":0.1,"neg":-9223372036854775807,"nan":null,"list":[1,null],"empty":{},"none":[]}');
    const parsed = JSON.parse(text, (_k, v, ctx?: { source?: string }) => (typeof v === 'number' && ctx?.source && Number.isInteger(v) ? BigInt(ctx.source) : v));
    expect(typeof JSON.parse(text).small).toBe(typeof JSON.parse(text).large);
    if (typeof parsed.large === 'bigint') expect(parsed.large).toBe(max);
    expect(text.match(/"large":(\d+)/)![1]).toBe(max.toString());
  });

  it('lays out like JSON.stringify when there is no bigint', () => {
    const v = { a: [1, { b: 'x"y', c: [] }, true], d: { e: null, u: undefined }, f: -0.5e-7, g: 'ü\u2028' };
    for (const indent of [0, 2, 4]) expect(toJsonText(v, indent)).toBe(JSON.stringify(v, null, indent));
  });

  it('one SQL string quoting', () => {
    expect(sqlString("it's")).toBe("'it''s'");
  });
});
