import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { FIXTURES, HAVE_FIXTURES, ROOT, baseRecords, tickwise, tmp, toJsonl } from './helpers';

async function importText(text: string | Buffer, name = 'c.ireeperf.jsonl') {
  const dir = tmp();
  const file = join(dir, name);
  writeFileSync(file, text);
  const store = await Store.open(':memory:');
  const result = await importInput(store, file);
  return { store, result, file };
}

describe('ireeperf-jsonl: IREE fixtures (numbers iree-profile printed)', () => {
  it.skipIf(!HAVE_FIXTURES)('local_task_matmul: 32 dispatches, 26.750 ms total, avg 835.942 us (statistics.txt)', () => {
    const r = tickwise(['sql', join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'),
      "select kernel, count(*) as n, sum(dur_ns) as total_ns, min(time_source) as src from dispatches group by 1", '--format', 'json']);
    expect(r.status).toBe(0);
    const rows = JSON.parse(r.stdout);
    expect(rows).toEqual([{ kernel: 'sa_matmul_dispatch_1_matmul_f32', n: 32, total_ns: 26_750_160, src: 'host_monotonic' }]);
    // statistics.txt: "count=32 total=26.750 ms avg=835.942 us"
    expect(Math.floor(26_750_160 / 32) / 1000).toBeCloseTo(835.942, 3);
  });

  it.skipIf(!HAVE_FIXTURES)('local_task_matmul: host execution totals equal summary.txt', () => {
    const r = tickwise(['sql', join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'),
      "select kind, count(*) as n, sum(dur_ns) as total_ns from host_events group by 1 order by 1", '--format', 'json']);
    expect(JSON.parse(r.stdout)).toEqual([
      { kind: 'command_region', n: 32, total_ns: 27_192_290 }, // command_region_duration_ns=27192290
      { kind: 'host_execution', n: 48, total_ns: 53_973_623 }, // host_execution_duration_ns=53973623
    ]);
    const q = tickwise(['sql', join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'), 'select count(*) as n from queue_events', '--format', 'json']);
    expect(JSON.parse(q.stdout)).toEqual([{ n: 16 }]);
  });

  it.skipIf(!HAVE_FIXTURES)('fixture_smoke: the dispatch at ticks 120..160 lands at 1105..1505 ns on the host timeline, 400 ns long', () => {
    const r = tickwise(['sql', join(FIXTURES, 'fixture_smoke.ireeperf.jsonl'),
      "select kernel, start_tick, end_tick, start_ns, end_ns, dur_ns, source_dur_ns, time_source from dispatches where time_source = 'device_tick_fit'", '--format', 'json']);
    expect(r.status).toBe(0);
    // summary.txt: dispatch_tick_range start=120 end=160; dispatch_time_ns total=400;
    // clock_fit tick_frequency_hz=100000000.000. Host brackets 900..910 @ tick 100, 1900..1910 @ tick 200.
    expect(JSON.parse(r.stdout)).toEqual([
      { kernel: 'smoke_function', start_tick: 120, end_tick: 160, start_ns: 1105, end_ns: 1505, dur_ns: 400, source_dur_ns: 400, time_source: 'device_tick_fit' },
    ]);
    const d = tickwise(['sql', join(FIXTURES, 'fixture_smoke.ireeperf.jsonl'), 'select tick_hz_fitted, clock_samples from devices', '--format', 'json']);
    expect(JSON.parse(d.stdout)).toEqual([{ tick_hz_fitted: 100_000_000, clock_samples: 2 }]);
  });

  it.skipIf(!HAVE_FIXTURES)('fixture_smoke: every record type kept; u64 beyond 2^63 exact; no diagnostics', async () => {
    const store = await Store.open(':memory:');
    await importInput(store, join(FIXTURES, 'fixture_smoke.ireeperf.jsonl'));
    const raw = await store.rows(`select record_type, count(*) as n from raw_records group by 1 order by 1`);
    expect(raw.map((r) => r['record_type'])).toEqual([
      'command_buffer', 'command_operation', 'device_metric_descriptor', 'device_metric_source', 'event_relationship', 'executable', 'queue',
    ]);
    const metric = await store.rows(`select metric_id::VARCHAR as id, value from metric_samples order by metric_id`);
    expect(metric).toEqual([{ id: '8', value: 87500 }, { id: '9223372036854775809', value: 12345 }]);
    expect(await store.count('diagnostics')).toBe(0);
    expect(await store.count('memory_events')).toBe(2);
    expect(await store.count('submissions')).toBe(1);
    await store.close();
  });

  it.skipIf(!HAVE_FIXTURES)('no_dispatch_events variant imports with zero device dispatches', async () => {
    const store = await Store.open(':memory:');
    await importInput(store, join(FIXTURES, 'fixture_smoke_no_dispatch_events.ireeperf.jsonl'));
    expect(await store.count('dispatches', "where time_source = 'device_tick_fit'")).toBe(0);
    expect(await store.count('submissions')).toBe(1);
    await store.close();
  });
});

describe('ireeperf-jsonl: the base capture', () => {
  it('a record beyond read_json\'s default buffer (40 MB: a producer diagnostic) is read, and so are the others', async () => {
    // the stage reads with DuckDB's default buffers (records up to ~32 MB), and again with larger ones when one does not fit
    const records = baseRecords();
    const huge = 'x'.repeat(40 << 20);
    records.splice(-1, 0, { schema_version: 15, record_type: 'diagnostic', severity: 'warning', message: huge });
    const { store, result } = await importText(toJsonl(records));
    expect(result.dispatches).toBe(2);
    expect(await store.rows(`SELECT code, length(message) > ${40 << 20} AS whole, line FROM diagnostics WHERE code = 'producer-diagnostic'`))
      .toEqual([{ code: 'producer-diagnostic', whole: true, line: BigInt(records.length - 1) }]);
    await store.close();
  });

  it('maps ticks through the fit exactly and resolves kernel names', async () => {
    const { store } = await importText(toJsonl(baseRecords()));
    const rows = await store.rows(`select kernel, start_ns, end_ns, dur_ns, submission_id, command_index, valid from dispatches order by start_ns`);
    expect(rows).toEqual([
      { kernel: 'gemm_a', start_ns: 1_010_000n, end_ns: 1_015_000n, dur_ns: 5000n, submission_id: 7n, command_index: 0, valid: true },
      { kernel: 'gemm_b', start_ns: 1_020_000n, end_ns: 1_021_000n, dur_ns: 1000n, submission_id: 7n, command_index: 1, valid: true },
    ]);
    const dev = await store.rows(`select kind, tick_hz_fitted, time_base, clock_samples from devices`);
    expect(dev).toEqual([{ kind: 'gpu', tick_hz_fitted: 100e6, time_base: 'device_tick_fit', clock_samples: 2 }]);
    await store.close();
  });

  it('turns the u32-max sentinel and zero ids into NULL, keeps u64 exact', async () => {
    const recs = baseRecords();
    Object.assign(recs[7]!, { command_index: 4294967295, submission_id: 0, event_id: '18446744073709551615' });
    const text = toJsonl(recs).replace('"event_id":"18446744073709551615"', '"event_id":18446744073709551615');
    const { store } = await importText(text);
    const rows = await store.rows(`select command_index, submission_id, event_id::VARCHAR as e from dispatches order by start_ns limit 1`);
    expect(rows).toEqual([{ command_index: null, submission_id: null, e: '18446744073709551615' }]);
    await store.close();
  });

  it('uses a declared timestamp_frequency_hz on a relative timeline when there are no clock samples', async () => {
    const recs = baseRecords().filter((r) => r['record_type'] !== 'clock_correlation');
    Object.assign(recs[2]!, { timestamp_frequency_hz: 100_000_000 });
    const { store } = await importText(toJsonl(recs));
    expect(await store.rows(`select start_ns, dur_ns, time_source from dispatches order by start_ns`)).toEqual([
      { start_ns: 0n, dur_ns: 5000n, time_source: 'device_tick_declared' },
      { start_ns: 10_000n, dur_ns: 1000n, time_source: 'device_tick_declared' },
    ]);
    expect(await store.scalar(`select timeline from captures`)).toBe('relative');
    expect(await store.scalar(`select code from diagnostics`)).toBe('declared-frequency-only');
    await store.close();
  });

  it('keeps ticks only (ns NULL) and says so when there is no time base', async () => {
    const recs = baseRecords().filter((r) => r['record_type'] !== 'clock_correlation');
    const { store } = await importText(toJsonl(recs));
    expect(await store.rows(`select start_ns, start_tick, time_source from dispatches order by start_tick`)).toEqual([
      { start_ns: null, start_tick: 2000n, time_source: 'device_tick_none' },
      { start_ns: null, start_tick: 3000n, time_source: 'device_tick_none' },
    ]);
    expect(await store.rows(`select severity, code from diagnostics`)).toEqual([{ severity: 'error', code: 'no-time-base' }]);
    await store.close();
  });

  it('reads gzip input and stdin', async () => {
    const text = toJsonl(baseRecords());
    const { store } = await importText(gzipSync(Buffer.from(text)), 'c.ireeperf.jsonl.gz');
    expect(await store.count('dispatches')).toBe(2);
    await store.close();
    const r = tickwise(['sql', '-', 'select count(*) as n from dispatches', '--format', 'csv'], text);
    expect(r.stdout.trim()).toBe('n\n2');
  });

  it('accepts the older executable_export / export_ordinal spelling', async () => {
    const recs = baseRecords();
    recs[4] = { schema_version: 15, record_type: 'executable_export', executable_id: 1, export_ordinal: 0, name: 'gemm_old' };
    const { store } = await importText(toJsonl(recs));
    expect(await store.scalar(`select kernel from dispatches order by start_ns limit 1`)).toBe('gemm_old');
    await store.close();
  });
});

describe('ireeperf-jsonl: the stored order', () => {
  it('dispatches of more than one row group are stored in line order (136k, generated)', { timeout: 120_000 }, async () => {
    const dir = tmp('tickwise-iree-order-');
    const file = join(dir, 'big.ireeperf.jsonl');
    const g = spawnSync(join(ROOT, 'scripts/gen-sample'), ['--big', file, '--mb', '130'], { encoding: 'utf8' });
    expect(g.status, g.stderr).toBe(0);
    const store = await Store.open(join(dir, 'x.duckdb'));
    try {
      const r = await importInput(store, file);
      expect(r.dispatches).toBe(136_246);
      // (each dispatch's device fit came through a join, which stored a row group of them after the last: 3 of 3 imports)
      expect(Number(await store.scalar(`SELECT count(*) FROM (SELECT line, lag(line) OVER (ORDER BY rowid) AS pl FROM dispatches) WHERE pl > line`))).toBe(0);
    } finally {
      await store.close();
      rmSync(file, { force: true });
    }
  });
});

describe('ireeperf-jsonl: import into a store file is atomic', () => {
  it('a bad input leaves an existing store byte-for-byte as it was', () => {
    const dir = tmp();
    const good = join(dir, 'good.ireeperf.jsonl');
    const bad = join(dir, 'bad.ireeperf.jsonl');
    const db = join(dir, 'run.duckdb');
    writeFileSync(good, toJsonl(baseRecords()));
    const lines = toJsonl(baseRecords()).split('\n');
    lines[6] = '{"schema_version":15,"record_type":"clock_correlation", oops';
    writeFileSync(bad, lines.join('\n'));
    expect(tickwise(['import', good, '--db', db]).status).toBe(0);
    const before = createHash('sha256').update(readFileSync(db)).digest('hex');
    const r = tickwise(['import', good, bad, '--db', db]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('bad.ireeperf.jsonl:7:');
    expect(createHash('sha256').update(readFileSync(db)).digest('hex')).toBe(before);
    const n = tickwise(['sql', db, 'select count(*) as n from captures', '--format', 'csv']);
    expect(n.stdout.trim()).toBe('n\n1');
  });
});
