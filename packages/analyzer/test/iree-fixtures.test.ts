/**
 * Real input: IREE's own ireeperf-jsonl exports (../shared/fixtures/iree/).
 * The kernel totals tickwise computes must equal what `iree-profile
 * statistics` printed for the same bundle.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatNs } from '@tickwise/time';
import { ROOT, tickwise } from './goldens';

const FIXTURES = resolve(ROOT, '../shared/fixtures/iree');
const HAVE = existsSync(join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'));
if (!HAVE) console.warn(`IREE fixture tests skipped: ${FIXTURES} is absent (a clone outside the dev setup)`);

describe.skipIf(!HAVE)('IREE fixtures', () => {
  it('local_task_matmul: sa_matmul_dispatch_1_matmul_f32 count=32 total=26.750 ms avg=835.942 us (statistics.txt)', () => {
    const r = tickwise(['kernels', join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'), '--json'], ROOT);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { kernels: { kernel: string; count: number; total_ns: number; mean_ns: number }[]; devices: { busy_ns: number }[] };
    expect(out.kernels).toHaveLength(1);
    const k = out.kernels[0]!;
    expect(k.kernel).toBe('sa_matmul_dispatch_1_matmul_f32');
    expect(k.count).toBe(32);
    expect(formatNs(BigInt(k.total_ns))).toBe('26.750 ms');
    expect((k.mean_ns / 1000).toFixed(3)).toBe('835.942');
    // host-timed rows on one queue that never overlap: busy (union) = summed time
    expect(out.devices[0]!.busy_ns).toBe(k.total_ns);
  });

  it('fixture_smoke: a device with both device-timed and host-timed dispatch rows is read from its device-timed rows', () => {
    const r = tickwise(['kernels', join(FIXTURES, 'fixture_smoke.ireeperf.jsonl'), '--json'], ROOT);
    expect(r.status, r.stderr).toBe(0);
    const sql = tickwise(['sql', join(FIXTURES, 'fixture_smoke.ireeperf.jsonl'), '--format', 'json',
      "select count(*) filter (where time_source like 'device_tick%' and valid) as dev, count(*) filter (where time_source like 'host%') as host from dispatches"], ROOT);
    const counts = (JSON.parse(sql.stdout) as { dev: number; host: number }[])[0]!;
    expect(counts.host).toBeGreaterThan(0);
    const out = JSON.parse(r.stdout) as { kernels: { count: number }[] };
    expect(out.kernels.reduce((a, k) => a + k.count, 0)).toBe(counts.dev);
  });
});
