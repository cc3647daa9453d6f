import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, type ImportOptions } from '../src/index';
import { tickwise, tmp } from './helpers';
import { KERNEL_TOTALS_SQL, expectGolden, fixture } from './trace-helpers';

async function load(file: string, opts: ImportOptions = {}) {
  const store = await Store.open(':memory:');
  const result = await importInput(store, file, opts);
  return { store, result };
}

const TRACE = fixture('heteromosaic', 'prefill_split.jsonl');

describe('HeteroMosaic-style trace JSONL', () => {
  it('kernel totals (diff test): GPU and NPU stages are dispatches on their own devices', async () => {
    const { store, result } = await load(TRACE);
    expect(result).toMatchObject({ format: 'heteromosaic-jsonl', records: 8, dispatches: 7 });
    await expectGolden(store, fixture('heteromosaic', 'prefill_split.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    expect(await store.rows(`SELECT device, kind, name FROM devices ORDER BY device`)).toEqual([
      { device: 0, kind: 'gpu', name: 'igpu' },
      { device: 1, kind: 'npu', name: 'npu' },
    ]);
    expect(await store.rows(`SELECT sum(rows) AS rows FROM dispatches WHERE device = 1 AND valid`)).toEqual([{ rows: 256n }]);
  });

  it('microseconds from their decimal text; steady_clock placed on host_monotonic as a recorded assumption', async () => {
    const { store } = await load(TRACE);
    expect(await store.rows(`SELECT start_ns, end_ns, dur_ns, time_source FROM dispatches ORDER BY line LIMIT 1`)).toEqual([
      // 1700000000123.0004 us -> ...123000 ns (a double says ...123001); 1700000000723.0014 us -> ...723001 ns
      { start_ns: 1_700_000_000_123_000n, end_ns: 1_700_000_000_723_001n, dur_ns: 600_001n, time_source: 'host_monotonic' },
    ]);
    expect(await store.scalar(`SELECT end_ns FROM dispatches WHERE line = 9`)).toBe(1_700_000_002_730_000n);
    expect(await store.rows(`SELECT timeline FROM captures`)).toEqual([{ timeline: 'host_monotonic' }]);
    expect(await store.rows(`SELECT what, value FROM assumptions`)).toEqual([{ what: 'trace_clock', value: 'monotonic' }]);
  });

  it('CPU stages are host events with their run/chunk/layer; every line kept verbatim in raw_records', async () => {
    const { store } = await load(TRACE);
    expect(await store.rows(`SELECT kind, op, name, dur_ns, args, line FROM host_events`)).toEqual([
      { kind: 'stage', op: 'cpu_join', name: 'cpu_join', dur_ns: 1_500n, args: '{"run_id":"pp512-r1","chunk_id":"0","layer_id":"0"}', line: 3n },
    ]);
    const raw = await store.rows(`SELECT line, json FROM raw_records ORDER BY line`);
    expect(raw.map((r) => r['line'])).toEqual([1n, 2n, 3n, 4n, 5n, 7n, 8n, 9n]);
    expect(raw[0]!['json']).toBe(readFileSync(TRACE, 'utf8').split('\n')[0]);
  });

  it('a zero-length stage is kept invalid with a diagnostic at its line', async () => {
    const { store } = await load(TRACE);
    expect(await store.rows(`SELECT code, line FROM diagnostics`)).toEqual([{ code: 'non-positive-duration', line: 8n }]);
    expect(await store.rows(`SELECT line, valid FROM dispatches WHERE NOT valid`)).toEqual([{ line: 8n, valid: false }]);
  });

  it('a line without end_ts_us stops the import with file:line (exit 2)', async () => {
    const err = await load(fixture('heteromosaic', 'missing_end.jsonl')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).where()).toMatch(/missing_end\.jsonl:3: this trace line has no "end_ts_us" field$/);
    const dir = tmp();
    const r = tickwise(['import', fixture('heteromosaic', 'missing_end.jsonl'), '--db', join(dir, 'x.duckdb')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/missing_end\.jsonl:3: this trace line has no "end_ts_us" field/);
  });

  it('reads gzip as it is', async () => {
    const gz = join(tmp(), 'trace.jsonl.gz');
    writeFileSync(gz, gzipSync(readFileSync(TRACE)));
    const { store, result } = await load(gz);
    await expectGolden(store, fixture('heteromosaic', 'prefill_split.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
  });
});
