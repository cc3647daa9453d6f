import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { assertCompatibleTimelines, compatibleTimelines, importInput, timelineOf, type ImportOptions } from '../src/index';
import { fixture } from './trace-helpers';

const GPU = fixture('rocprofv3', 'kernel_trace.csv');
const NPU = fixture('chrome-trace', 'npu_same_run.json');

/** The recorder's boottime_minus_monotonic_ns for the run both fixtures come from. */
const OFFSET = 5_000_000_000n;

async function storeWith(files: string[], opts: ImportOptions = {}): Promise<Store> {
  const store = await Store.open(':memory:');
  for (const f of files) await importInput(store, f, opts);
  return store;
}

/** Time both devices are busy: the intersection of the two devices' unions of valid dispatch intervals. */
const CROSS_OVERLAP_SQL = `
  WITH d AS (SELECT capture_id, start_ns, end_ns FROM dispatches WHERE valid),
  pairs AS (
    SELECT greatest(g.start_ns, n.start_ns) AS s, least(g.end_ns, n.end_ns) AS e
    FROM d g JOIN d n ON g.capture_id = 1 AND n.capture_id = 2 AND g.start_ns < n.end_ns AND n.start_ns < g.end_ns)
  SELECT count(*) AS pairs, sum(e - s) AS overlap_ns FROM pairs`;

describe('several sources in one store: one timeline when the clocks are related', () => {
  it('an iGPU rocprofv3 capture and an NPU trace of the same run share host_monotonic and overlap', async () => {
    const store = await storeWith([GPU, NPU], { boottimeOffsetNs: OFFSET, traceClock: 'monotonic' });
    const check = await compatibleTimelines(store);
    expect(check).toMatchObject({ ok: true, timeline: 'host_monotonic', reason: null });
    expect(check.captures.map((c) => [c.format, c.timeline])).toEqual([['rocprofv3-csv', 'host_monotonic'], ['chrome-trace', 'host_monotonic']]);
    expect(await store.rows(`SELECT capture_id, kind, time_base FROM devices ORDER BY capture_id`)).toEqual([
      { capture_id: 1, kind: 'gpu', time_base: 'host_monotonic' },
      { capture_id: 2, kind: 'npu', time_base: 'host_monotonic' },
    ]);
    // NPU tile 1 [200, 1800200] ns after 1e12 overlaps GPU dispatches at [0, 1200000], [1250000, 1300000], [1400000, 2600000];
    // tile 2 [2000000, 3800000] overlaps [1400000, 2600000] and [2700000, 3900400]
    expect(await store.rows(CROSS_OVERLAP_SQL)).toEqual([{ pairs: 5n, overlap_ns: 1_199_800n + 50_000n + 400_200n + 600_000n + 1_100_000n }]);
    // the relations that made this possible are recorded
    expect(await store.rows(`SELECT capture_id, what, value FROM assumptions ORDER BY capture_id`)).toEqual([
      { capture_id: 1, what: 'clock_relation', value: 'host_monotonic_ns = host_boottime_ns - 5000000000' },
      { capture_id: 2, what: 'trace_clock', value: 'monotonic' },
    ]);
    expect(await assertCompatibleTimelines(store, [1, 2], 'cross-device overlap')).toBe('host_monotonic');
  });

  it('without the boottime offset the two are on different timelines, and analyses across them are refused', async () => {
    const store = await storeWith([GPU, NPU], { traceClock: 'monotonic' });
    const check = await compatibleTimelines(store, [1, 2]);
    expect(check.ok).toBe(false);
    expect(check.reason).toBe('captures are on different timelines (capture 1 boottime, capture 2 host_monotonic); times cannot be compared across them');
    const err = await assertCompatibleTimelines(store, [1, 2], 'cross-device overlap').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).exitCode).toBe(2);
    expect((err as TickwiseError).message).toMatch(/^cross-device overlap needs all captures on one timeline: captures are on different timelines/);
  });

  it('a trace whose clock is not named, or ticks on a relative timeline, can share with nothing', async () => {
    const unnamed = await storeWith([GPU, NPU], { boottimeOffsetNs: OFFSET });
    expect((await timelineOf(unnamed, 2)).timeline).toBe('unknown');
    expect((await compatibleTimelines(unnamed)).reason).toMatch(/capture 2 \(npu_same_run\.json\) is on the unknown timeline, which no other capture can share \(pass --trace-clock/);
    const ticks = await storeWith([GPU, fixture('hrx', 'npu_profile.json')], { boottimeOffsetNs: OFFSET });
    expect((await compatibleTimelines(ticks)).reason).toMatch(/capture 2 \(npu_profile\.json\) is on the relative timeline, .*there is no clock correlation\)$/);
    // on its own, every capture is compatible with itself
    expect((await compatibleTimelines(ticks, [2])).ok).toBe(true);
  });

  it('same clock, different hosts: refused', async () => {
    const store = await storeWith([GPU, NPU], { boottimeOffsetNs: OFFSET, traceClock: 'monotonic' });
    await store.run(`INSERT INTO conditions VALUES (1, 'host.hostname', 'strix-halo-01', NULL, NULL), (2, 'host.hostname', 'strix-halo-02', NULL, NULL)`);
    expect((await compatibleTimelines(store)).reason).toBe('captures come from different hosts (capture 1 strix-halo-01, capture 2 strix-halo-02); their clocks cannot be compared');
  });

  it('HeteroMosaic (steady clock) and rocprofv3 with its offset land on one timeline', async () => {
    const store = await storeWith([GPU, fixture('heteromosaic', 'prefill_split.jsonl')], { boottimeOffsetNs: OFFSET });
    expect((await compatibleTimelines(store)).timeline).toBe('host_monotonic');
  });

  it('unknown capture ids are an error', async () => {
    const store = await storeWith([GPU]);
    await expect(compatibleTimelines(store, [7])).rejects.toThrow('no capture 7 in the store');
  });
});
