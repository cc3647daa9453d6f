import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, type ImportOptions } from '../src/index';
import { tmp } from './helpers';
import { KERNEL_TOTALS_SQL, expectGolden, fixture } from './trace-helpers';

async function load(file: string, opts: ImportOptions & { format?: string } = {}) {
  const store = await Store.open(':memory:');
  const result = await importInput(store, file, opts);
  return { store, result };
}

const MMQ = 'void mul_mat_q<(ggml_type)12, 64>(char const*, int const*, float*, int, int, int)';

describe('rocprofv3 kernel trace CSV', () => {
  it('kernel totals (diff test): count and sum(dur_ns) per kernel', async () => {
    const { store, result } = await load(fixture('rocprofv3', 'kernel_trace.csv'));
    expect(result).toMatchObject({ format: 'rocprofv3-csv', records: 7, dispatches: 7 });
    await expectGolden(store, fixture('rocprofv3', 'kernel_trace.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    // the numbers, by hand: three mul_mat_q of 1.2 ms, 1.2 ms and 1.2004 ms
    const r = await store.query({ n: 'number', total_ns: 'bigint' }, `SELECT count(*)::INTEGER AS n, sum(dur_ns) AS total_ns FROM dispatches WHERE kernel = $1 AND valid`, [MMQ]);
    expect(r).toEqual([{ n: 3, total_ns: 3_600_400n }]);
  });

  it('keeps CLOCK_BOOTTIME on its own timeline and says how to align it', async () => {
    const { store, result } = await load(fixture('rocprofv3', 'kernel_trace.csv'));
    expect(await store.rows(`SELECT timeline, format, producer FROM captures`)).toEqual([{ timeline: 'boottime', format: 'rocprofv3-csv', producer: 'rocprofv3 (kernel trace CSV)' }]);
    const d = await store.rows(`SELECT DISTINCT time_source FROM dispatches`);
    expect(d).toEqual([{ time_source: 'host_boottime' }]);
    const first = await store.rows(`SELECT start_ns, end_ns, line FROM dispatches WHERE capture_id = ${result.capture_id} ORDER BY line LIMIT 1`);
    expect(first).toEqual([{ start_ns: 1_005_000_000_000n, end_ns: 1_005_001_200_000n, line: 2n }]);
    const diag = await store.rows(`SELECT code FROM diagnostics WHERE code = 'boottime-unaligned'`);
    expect(diag).toHaveLength(1);
    expect(await store.rows(`SELECT device, kind, name, time_base FROM devices`)).toEqual([{ device: 1, kind: 'gpu', name: 'Agent 1', time_base: 'host_boottime' }]);
  });

  it('shifts onto host_monotonic with a boottime offset and records the relation', async () => {
    const { store } = await load(fixture('rocprofv3', 'kernel_trace.csv'), { boottimeOffsetNs: 5_000_000_000n });
    expect(await store.scalar(`SELECT timeline FROM captures`)).toBe('host_monotonic');
    const first = await store.rows(`SELECT start_ns, end_ns, dur_ns, time_source FROM dispatches ORDER BY line LIMIT 1`);
    expect(first).toEqual([{ start_ns: 1_000_000_000_000n, end_ns: 1_000_001_200_000n, dur_ns: 1_200_000n, time_source: 'host_monotonic' }]);
    expect(await store.rows(`SELECT what, value FROM assumptions`)).toEqual([{ what: 'clock_relation', value: 'host_monotonic_ns = host_boottime_ns - 5000000000' }]);
    expect(await store.count('diagnostics', `WHERE code = 'boottime-unaligned'`)).toBe(0);
  });

  it('a zero duration and a missing end are kept invalid, each with a diagnostic at its line', async () => {
    const { store } = await load(fixture('rocprofv3', 'kernel_trace.csv'));
    const bad = await store.rows(`SELECT line, valid, dur_ns FROM dispatches WHERE NOT valid ORDER BY line`);
    expect(bad).toEqual([{ line: 6n, valid: false, dur_ns: 0n }, { line: 7n, valid: false, dur_ns: null }]);
    const diags = await store.rows(`SELECT code, line FROM diagnostics WHERE severity = 'warning' ORDER BY line`);
    expect(diags).toEqual([{ code: 'non-positive-duration', line: 6n }, { code: 'missing-timestamp', line: 7n }]);
  });

  it('reads the ROCm 6.2 header (pointer queue handles numbered 1, 2, ... per device, each handle kept in conditions)', async () => {
    const { store, result } = await load(fixture('rocprofv3', 'kernel_trace_rocm62.csv'));
    await expectGolden(store, fixture('rocprofv3', 'kernel_trace_rocm62.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    expect(await store.rows(`SELECT queue, workgroup_count_x, workgroup_count_y FROM dispatches ORDER BY line`)).toEqual([
      { queue: 1, workgroup_count_x: 256, workgroup_count_y: 256 },
      { queue: 1, workgroup_count_x: 256, workgroup_count_y: 256 },
      { queue: 2, workgroup_count_x: 1, workgroup_count_y: 1 },
    ]);
    const handles = await store.rows(`SELECT key, value FROM conditions WHERE key LIKE 'queue_handle.%' ORDER BY key`);
    expect(handles.map((h) => h['key'])).toEqual(['queue_handle.1.1', 'queue_handle.1.2']);
    expect(handles.every((h) => BigInt(String(h['value'])) > 2147483647n)).toBe(true);
    expect(await store.count('diagnostics', `WHERE code = 'queue-handles' AND severity = 'info'`)).toBe(1);
  });

  it('reads a gzip-compressed CSV as it is', async () => {
    const dir = tmp();
    const gz = join(dir, 'kernel_trace.csv.gz');
    writeFileSync(gz, gzipSync(readFileSync(fixture('rocprofv3', 'kernel_trace.csv'))));
    const { store, result } = await load(gz);
    expect(result.format).toBe('rocprofv3-csv');
    await expectGolden(store, fixture('rocprofv3', 'kernel_trace.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
  });

  it('a CSV without Kernel_Name/End_Timestamp is refused with file and line 1', async () => {
    const err = await load(fixture('rocprofv3', 'no_name_column.csv'), { format: 'rocprofv3-csv' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).where()).toMatch(/no_name_column\.csv:1: not a rocprofv3 kernel trace: missing column\(s\) kernel_name, end_timestamp/);
    expect((err as TickwiseError).exitCode).toBe(2);
  });

  it('a record with too few fields is named at its own line (DuckDB\'s sniffer says line 1), plain and gzip', async () => {
    const lines = readFileSync(fixture('rocprofv3', 'kernel_trace.csv'), 'utf8').split('\n');
    lines[2] = lines[2]!.replace(/,[^,]*$/, '');
    const dir = tmp();
    const plain = join(dir, 'short_row.csv');
    writeFileSync(plain, lines.join('\n'));
    writeFileSync(plain + '.gz', gzipSync(lines.join('\n')));
    const header = lines[0]!.split(',').length;
    for (const f of [plain, plain + '.gz']) {
      const err = await load(f, { format: 'rocprofv3-csv' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TickwiseError);
      expect((err as TickwiseError).where()).toMatch(new RegExp(`short_row\\.csv(\\.gz)?:3: bad record: ${header - 1} field\\(s\\) where the header has ${header}`));
    }
  });
});

describe('rocprofv3 JSON output (results.json)', () => {
  it('kernel totals (diff test) and names from kernel_symbols, devices from agents', async () => {
    const { store, result } = await load(fixture('rocprofv3', 'results.json'));
    expect(result).toMatchObject({ format: 'rocprofv3-json', dispatches: 4 });
    await expectGolden(store, fixture('rocprofv3', 'results.kernels.csv'), KERNEL_TOTALS_SQL, [result.capture_id]);
    expect(await store.rows(`SELECT device, kind, name FROM devices`)).toEqual([{ device: 1, kind: 'gpu', name: 'AMD Radeon 8060S' }]);
    expect(await store.rows(`SELECT key, value FROM conditions ORDER BY key`)).toEqual([
      { key: 'command.line', value: './llama-bench -m model.gguf -p 512 -n 0' },
      { key: 'command.pid', value: '4242' },
    ]);
  });

  it('an agent node id beyond INTEGER (2^63, found by the import fuzz) numbers the agent by node_id, with a diagnostic at its line', async () => {
    const dir = tmp();
    const file = join(dir, 'results.json');
    const text = readFileSync(fixture('rocprofv3', 'results.json'), 'utf8');
    const edited = text.replace('"logical_node_id": 1,', '"logical_node_id": 9223372036854775808,');
    expect(edited).not.toBe(text);
    writeFileSync(file, edited);
    const { store, result } = await load(file);
    expect(result.dispatches).toBe(4);
    const line = edited.split('\n').findIndex((l) => l.includes('9223372036854775808')) + 1;
    const d = await store.rows(`SELECT line FROM diagnostics WHERE code = 'value-out-of-range'`);
    expect(d).toHaveLength(1);
    // the agent record's line: the line its object starts on, before the edited key
    expect(Number(d[0]!['line'])).toBeLessThan(line);
    expect(await store.rows(`SELECT DISTINCT device FROM dispatches`)).toEqual([{ device: 1 }]);
  });

  it('agrees with the CSV of the same dispatches', async () => {
    const csv = await load(fixture('rocprofv3', 'kernel_trace.csv'));
    const json = await load(fixture('rocprofv3', 'results.json'));
    const q = `SELECT event_id, kernel, start_ns, end_ns, workgroup_count_x, workgroup_count_y FROM dispatches WHERE event_id IN (1, 2, 3) ORDER BY event_id`;
    expect(await json.store.rows(q)).toEqual(await csv.store.rows(q));
  });

  it('a u64 timestamp beyond int64 ns is read exactly and kept invalid with a diagnostic', async () => {
    const { store } = await load(fixture('rocprofv3', 'results.json'));
    expect(await store.rows(`SELECT start_ns, valid, source_dur_ns, line FROM dispatches WHERE event_id = 4`)).toEqual([
      { start_ns: null, valid: false, source_dur_ns: 615n, line: 99n },
    ]);
    expect(await store.rows(`SELECT code, line FROM diagnostics WHERE code = 'time-out-of-range'`)).toEqual([{ code: 'time-out-of-range', line: 99n }]);
  });

  it('HIP API calls and memory copies land in host_events, named through strings.buffer_records', async () => {
    const { store } = await load(fixture('rocprofv3', 'results.json'), { boottimeOffsetNs: 5_000_000_000n });
    expect(await store.rows(`SELECT kind, op, name, device, event_id, start_ns, dur_ns, time_source FROM host_events ORDER BY start_ns`)).toEqual([
      { kind: 'hip_api', op: 'HIP_RUNTIME_API', name: 'hipMemcpyAsync', device: null, event_id: 10n, start_ns: 999_999_900_000n, dur_ns: 50_000n, time_source: 'host_monotonic' },
      { kind: 'memory_copy', op: 'MEMORY_COPY', name: 'MEMORY_COPY_HOST_TO_DEVICE', device: 1, event_id: 10n, start_ns: 999_999_960_000n, dur_ns: 20_000n, time_source: 'host_monotonic' },
      { kind: 'hip_api', op: 'HIP_RUNTIME_API', name: 'hipLaunchKernel', device: null, event_id: 11n, start_ns: 999_999_990_000n, dur_ns: 8_500n, time_source: 'host_monotonic' },
    ]);
  });
});
