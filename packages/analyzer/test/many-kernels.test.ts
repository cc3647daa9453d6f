/**
 * A capture whose kernels are all distinct (a templated kernel named per
 * instantiation: 150k names): `launches` makes one group per kernel and
 * returns all of them (it spread them into an array, which overflowed the
 * call stack), and `kernelStats` one row per kernel; each checked against
 * the rows the store was built from.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { kernelStats, launches } from '@tickwise/analyzer';

const N = 150_000;

describe('150k distinct kernels', () => {
  it('launches and kernels return one row per kernel', async () => {
    const store = await Store.open(':memory:');
    try {
      await store.run(`INSERT INTO captures (capture_id, path, format, timeline, producer, sha256) VALUES (1, 'many', 'test', 'host_monotonic', 'test', 'ab')`);
      await store.run(`INSERT INTO devices (capture_id, device, kind, time_base) VALUES (1, 0, 'gpu', 'host_monotonic')`);
      // kernel i runs once, 1000 + i % 7 ns long, every 2 us
      await store.run(`INSERT INTO dispatches (capture_id, device, queue, kernel, start_ns, end_ns, dur_ns, time_source, valid, line)
        SELECT 1, 0, 0, 'gemm<' || i || '>', 2000 * i, 2000 * i + 1000 + i % 7, 1000 + i % 7, 'host_monotonic', true, i + 1 FROM range(${N}) t(i)`);
      const l = await launches(store);
      expect(l.groups).toHaveLength(N);
      const g = l.groups.find((x) => x.kernel === 'gemm<12345>')!;
      expect([g.launches, Number(g.total_ns)]).toEqual([1, 1000 + (12345 % 7)]);
      const k = await kernelStats(store);
      expect(k.kernels).toHaveLength(N);
      expect(k.kernels.reduce((a, x) => a + Number(x.total_ns), 0)).toBe(N * 1000 + Array.from({ length: N }, (_, i) => i % 7).reduce((a, b) => a + b, 0));
    } finally {
      await store.close();
    }
  }, 120_000);
});
