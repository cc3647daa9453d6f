import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { nativeScanner } from '../src/json-records-native';
import { dropSplit, stageSplit } from '../src/ireeperf-split';
import { ireeperfColumnsSql } from '../src/readers/ireeperf-jsonl';
import { FIXTURES, HAVE_FIXTURES, ROOT, baseRecords, tmp, toJsonl } from './helpers';

/**
 * The split ireeperf stage (ireeperf-split.ts) reads a dispatch's columns
 * from every record and the other records' columns from the copies the
 * native scanner makes. Its store must equal the whole-file read's, table by
 * table, on captures that use every record type the reader tables, and on
 * the inputs where the split must notice it went wrong (or not apply) and
 * fall back.
 */

const TABLES = ['devices', 'clock_samples', 'dispatches', 'submissions', 'queue_events', 'host_events', 'memory_events', 'metric_samples',
  'kernels_meta', 'raw_records', 'assumptions', 'conditions', 'diagnostics'];

/** A capture of every tabled record type, mostly dispatches, seeded. */
function capture(seed: number, n = 1500): Record<string, unknown>[] {
  let s = seed;
  const rnd = () => ((s = (s * 1103515245 + 12345) % 2147483648) / 2147483648);
  const base = baseRecords();
  const head = base.filter((r) => r['record_type'] !== 'dispatch_event').slice(0, -1);
  const end = base.at(-1)!;
  const d0 = base.find((r) => r['record_type'] === 'dispatch_event')!;
  const out: Record<string, unknown>[] = [...head];
  for (let i = 0; i < n; i++) {
    const t = 2000 + i * 40;
    out.push({ ...d0, event_id: i + 1, key: i % 7 === 0 ? null : `k${i % 5}`, executable_id: i % 11 === 0 ? 2 : 1, start_tick: t, end_tick: t + 1 + Math.floor(rnd() * 30),
      workgroup_size: [64, 1, 1], stream_id: 1, flags: 1 });
    const r = rnd();
    if (r < 0.08) {
      out.push({ schema_version: 15, record_type: 'queue_event', event_id: i + 1, op: 'execute', dependency_strategy: 'inline', submission_id: i + 1, command_buffer_id: 3,
        physical_device_ordinal: 0, queue_ordinal: 0, host_time_ns: 1_000_000 + i * 400, ready_host_time_ns: 1_000_050 + i * 400, wait_count: 0, signal_count: 1, barrier_count: 0, operation_count: 2 });
      out.push({ schema_version: 15, record_type: 'queue_device_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: i + 1, submission_id: i + 1, command_buffer_id: 3,
        op: 'execute', operation_count: 2, start_tick: t, end_tick: t + 35, valid: true, duration_ns: 350 });
    } else if (r < 0.10) {
      out.push({ schema_version: 15, record_type: 'host_execution_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: i + 1, op: 'dispatch', key: 'host_k',
        start_host_time_ns: 1_000_000 + i * 400, end_host_time_ns: 1_000_100 + i * 400, tile_count: 4, tile_duration_sum_ns: 300, duration_ns: 100 });
    } else if (r < 0.11) {
      out.push({ schema_version: 15, record_type: 'memory_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: i + 1, event_type: 'alloc',
        host_time_ns: 1_000_000 + i * 400, allocation_id: i + 1, pool_id: 1, length: 4096 });
    } else if (r < 0.12) {
      out.push({ schema_version: 15, record_type: 'command_operation', command_buffer_id: 3, command_index: i });
    } else if (r < 0.125) {
      // record_type far into the record: the native split cannot see it and copies the record (to the rare file)
      out.push({ schema_version: 15, physical_device_ordinal: 0, queue_ordinal: 0, event_id: 900000 + i, submission_id: 7, command_buffer_id: 3, command_index: 9,
        executable_id: 1, function_ordinal: 0, key: 'late_type_kernel_with_a_long_name', workgroup_count: [2, 2, 1], start_tick: t + 3, end_tick: t + 9, valid: true,
        record_type: 'dispatch_event' });
    }
  }
  out.push({ schema_version: 15, record_type: 'device_metric_sample', physical_device_ordinal: 0, source_id: 1, host_time_begin_ns: 1_500_000, host_time_end_ns: 1_500_100,
    values: [{ metric_id: 1, name: 'gpu_busy', unit: 'percent', semantic: 'utilization', value: 42.5 }] });
  out.push({ schema_version: 15, record_type: 'diagnostic', severity: 'warning', message: 'a producer note' });
  out.push(end);
  return out;
}

/** The split for these small captures too (by default a capture under 4 MiB is read whole). */
const ALWAYS = { ...process.env, TICKWISE_IREEPERF_SPLIT: '1' };

async function importWith(file: string, split: boolean, env: Record<string, string> = {}): Promise<Store> {
  const vars = { TICKWISE_IREEPERF_SPLIT: split ? '1' : '0', ...env };
  const was = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  try {
    const store = await Store.open(':memory:');
    await importInput(store, file);
    return store;
  } finally {
    for (const [k, v] of Object.entries(was)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

/** Rows of `table` in the store's own order (rowid), as JSON texts. */
async function storedRowsOf(store: Store, table: string): Promise<string[]> {
  const cols = table === 'captures' ? '* EXCLUDE (imported_at)' : '*';
  const rows = await store.rows(`SELECT ${cols} FROM ${table} ORDER BY rowid`);
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)));
}

/** Rows of `table` as sorted JSON texts (a store's own order is not compared here: stored-order.test.ts does). */
async function rowsOf(store: Store, table: string): Promise<string[]> {
  const cols = table === 'captures' ? '* EXCLUDE (imported_at)' : '*';
  const rows = await store.rows(`SELECT ${cols} FROM ${table}`);
  return rows.map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).sort();
}

async function expectSameStores(file: string): Promise<void> {
  const [whole, split] = [await importWith(file, false), await importWith(file, true)];
  try {
    for (const t of [...TABLES, 'captures']) expect(await rowsOf(split, t), t).toEqual(await rowsOf(whole, t));
    expect(Number(await split.count('dispatches'))).toBeGreaterThan(0);
  } finally {
    await whole.close();
    await split.close();
  }
}

const STAGE = {
  columns: Object.fromEntries(ireeperfColumnsSql().slice(1, -1).split(/, (?=')/).map((e) => e.split(': ').map((x) => x.replace(/'/g, '')) as [string, string])),
  dispatchColumns: ['record_type', 'schema_version', 'physical_device_ordinal', 'start_tick', 'end_tick'],
  queueTypes: ['queue_event', 'queue_device_event'],
  queueColumns: ['record_type', 'schema_version', 'physical_device_ordinal', 'host_time_ns', 'start_tick', 'end_tick'],
  largeObjectBytes: 64 << 20,
  readJson: (p: string, columns: string, size?: number) =>
    `read_json('${p}', format = 'newline_delimited', columns = ${columns}${size === undefined ? '' : `, maximum_object_size = ${size}`})`,
};

describe.runIf(nativeScanner() !== null)('ireeperf split stage', () => {
  const stores: Store[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  it('is used for a capture of mostly dispatches, and gives every record its own line and type', async () => {
    const records = capture(7);
    const file = join(tmp(), 'c.ireeperf.jsonl');
    writeFileSync(file, toJsonl(records));
    const store = await Store.open(':memory:');
    stores.push(store);
    expect(await stageSplit(store, file, STAGE, ALWAYS)).toBe(true);
    const staged = await store.rows('SELECT line, record_type, start_tick FROM tw_stage ORDER BY line');
    expect(staged.map((r) => [Number(r['line']), r['record_type'], r['start_tick'] === null ? null : Number(r['start_tick'])]))
      .toEqual(records.map((r, i) => [i + 1, r['record_type'], typeof r['start_tick'] === 'number' ? r['start_tick'] : null]));
    // a queue record's column outside the dispatch set comes from its own table, a rare one's from the rare table
    expect(Number(await store.scalar(`SELECT count(*) FROM tw_stage WHERE record_type = 'queue_event' AND host_time_ns IS NOT NULL`)))
      .toBe(records.filter((r) => r['record_type'] === 'queue_event').length);
    expect(Number(await store.scalar(`SELECT count(*) FROM tw_stage WHERE record_type = 'memory_event' AND length = 4096`)))
      .toBe(records.filter((r) => r['record_type'] === 'memory_event').length);
    await dropSplit(store);
  });

  it('imports the same store as the whole-file read (three seeds)', async () => {
    for (const seed of [1, 2, 3]) {
      const file = join(tmp(), `c${seed}.ireeperf.jsonl`);
      writeFileSync(file, toJsonl(capture(seed)));
      await expectSameStores(file);
    }
  }, 60_000);

  it('stores the same rows in the same order whether the dispatches go in on a second connection or not, one DuckDB thread or two', async () => {
    // the device dispatches are inserted on a second connection while the first loads the other tables (and after the
    // stage DuckDB runs at one thread): each table as one connection, one statement after another, with the store's
    // threads, stores it, in the same order; and the store's thread count is its own again after the import
    const file = join(tmp(), 'side.ireeperf.jsonl');
    writeFileSync(file, toJsonl(capture(8, 4000)));
    const one = await importWith(file, true, { TICKWISE_IREEPERF_SIDE: '0', TICKWISE_IREEPERF_HOLD_THREADS: '0' });
    const two = await importWith(file, true);
    stores.push(one, two);
    for (const t of [...TABLES, 'captures']) expect(await storedRowsOf(two, t), t).toEqual(await storedRowsOf(one, t));
    expect(Number(await two.count('dispatches'))).toBeGreaterThan(4000);
    const threads = await one.scalar(`SELECT current_setting('threads')`);
    expect(await two.scalar(`SELECT current_setting('threads')`)).toBe(threads);
  }, 60_000);

  it.skipIf(!HAVE_FIXTURES)('the same stores either way on real IREE captures and the sample (split, or read whole as they are)', async () => {
    // IREE's own captures are not mostly dispatches (read whole, on one connection, under the thread hold); the iGPU
    // sample is (split: its dispatches on the second connection)
    const files = ['local_task_matmul', 'fixture_smoke', 'fixture_smoke_no_dispatch_events'].map((n) => join(FIXTURES, `${n}.ireeperf.jsonl`))
      .concat(join(ROOT, 'captures/sample/igpu-prefill.ireeperf.jsonl'));
    for (const file of files) {
      const one = await importWith(file, true, { TICKWISE_IREEPERF_SIDE: '0', TICKWISE_IREEPERF_HOLD_THREADS: '0' });
      const two = await importWith(file, true);
      stores.push(one, two);
      for (const t of [...TABLES, 'captures']) expect(await storedRowsOf(two, t), `${file}: ${t}`).toEqual(await storedRowsOf(one, t));
      expect(await two.scalar(`SELECT current_setting('threads')`), file).toBe(await one.scalar(`SELECT current_setting('threads')`));
    }
  }, 60_000);

  it('gives the store its thread count back when an import fails after the stage', async () => {
    // a value out of range is refused after the stage (range checks run at one DuckDB thread)
    const records: unknown[] = capture(9);
    const i = records.findIndex((r) => (r as Record<string, unknown>)['record_type'] === 'queue_event');
    records[i] = JSON.stringify({ ...(records[i] as object), wait_count: 0 }).replace('"wait_count":0', `"wait_count":${2n ** 63n}`);
    const file = join(tmp(), 'bad.ireeperf.jsonl');
    writeFileSync(file, toJsonl(records));
    const store = await Store.open(':memory:');
    stores.push(store);
    await store.run('SET threads = 3');
    const was = process.env['TICKWISE_IREEPERF_SPLIT'];
    process.env['TICKWISE_IREEPERF_SPLIT'] = '1';
    try {
      await expect(importInput(store, file)).rejects.toThrow(/wait_count.*out of range/);
    } finally {
      if (was === undefined) delete process.env['TICKWISE_IREEPERF_SPLIT'];
      else process.env['TICKWISE_IREEPERF_SPLIT'] = was;
    }
    expect(Number(await store.scalar(`SELECT current_setting('threads')`))).toBe(3);
  }, 60_000);

  it('falls back to the whole-file read where the split does not apply or went wrong', async () => {
    const dir = tmp();
    const cases: [string, string][] = [];
    // a blank line: DuckDB does not count it, so record numbers would differ (the native split refuses)
    const lines = toJsonl(capture(4)).split('\n');
    lines.splice(20, 0, '');
    cases.push(['blank', lines.join('\n')]);
    // the head's bytes say dispatch (an escaped quote in another key), DuckDB's record_type does not: the check catches it
    const odd = capture(5);
    const i = odd.findIndex((r) => r['record_type'] === 'dispatch_event') + 3;
    odd[i] = { schema_version: 15, 'a"record_type': 'dispatch_event', record_type: 'command_operation', command_buffer_id: 3 };
    expect(JSON.stringify(odd[i])).toContain('"record_type":"dispatch_event"');
    cases.push(['misleading head', toJsonl(odd)]);
    // mostly not dispatches: no split
    cases.push(['few dispatches', toJsonl(capture(6, 3))]);
    for (const [name, text] of cases) {
      const file = join(dir, `${name.replace(/ /g, '-')}.ireeperf.jsonl`);
      writeFileSync(file, text);
      const store = await Store.open(':memory:');
      stores.push(store);
      expect(await stageSplit(store, file, STAGE, ALWAYS), name).toBe(false);
      expect(Number(await store.scalar(`SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'tw_stage%'`)), name).toBe(0);
      await expectSameStores(file);
    }
  }, 60_000);
});
