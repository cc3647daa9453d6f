import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { FORMATS, importInput } from '../src/index';
import { ROOT } from './helpers';

// Real captures made on an NVIDIA H200 by the recorder's cuda backend (default
// settings) of three workloads the recorder was not tuned on, and
// torch.profiler's kernels of the same workloads run in a second process
// (native/cuda/bench-workloads.sh, phase "captures"; captures/h200/README.md):
//   graph        one CUDA graph of 24 kernels replayed 40 times per repetition
//   multistream  two streams with an event dependency (they overlap)
//   multithread  four host threads, each launching on its own stream
// Imported with the project's own reader, the kernels launched inside the
// measured repetitions must equal the profiler's per kernel name in count, and
// in summed duration within 1 % for kernels whose mean is over 5 us.
const H200 = join(ROOT, 'captures/h200');

interface Window { label: string; start_ns: number; end_ns: number; compare: boolean }
interface ProfilerTable {
  kernels: number;
  kernel_sum_ns: number;
  streams: string[];
  reps: number;
  by_name: Record<string, { count: number; sum_ns: number }>;
}

const REGISTERED = 'tickwise-recorder' in FORMATS;
if (!REGISTERED) console.warn("h200-workloads tests skipped: format 'tickwise-recorder' is not registered");

const WORKLOADS = [
  { name: 'graph', streams: 1 },
  { name: 'multistream', streams: 2 },
  { name: 'multithread', streams: 4 },
] as const;

describe.skipIf(!REGISTERED).each(WORKLOADS)('H200 $name: recorder vs torch.profiler per kernel name', ({ name, streams }) => {
  const dir = join(H200, name);
  const windows = (JSON.parse(readFileSync(join(H200, `${name}.windows.json`), 'utf8')) as { windows: Window[] }).windows;
  const prof = JSON.parse(readFileSync(join(H200, `${name}.torch-profiler.json`), 'utf8')) as ProfilerTable;
  // CLOCK_MONOTONIC ns from Python's time.monotonic_ns(): exact as doubles (below 2^53)
  const compared = windows.filter((w) => w.compare);
  const inCompared = compared.map((w) => `(l.start_ns BETWEEN ${BigInt(w.start_ns)} AND ${BigInt(w.end_ns)})`).join(' OR ');
  /** Each kernel's launch call: the earliest cuda_api row of its correlation id (a graph's kernels share the graph launch's). */
  const LAUNCH = `(SELECT submission_id, min(start_ns) AS start_ns FROM host_events
                   WHERE capture_id = ? AND kind = 'cuda_api' GROUP BY submission_id)`;

  async function load() {
    expect(existsSync(join(dir, 'records.twr'))).toBe(true);
    const store = await Store.open(':memory:');
    const result = await importInput(store, dir);
    return { store, result };
  }

  it('imports cleanly: every kernel named, after its launch call began, on the host timeline', async () => {
    const { store, result } = await load();
    expect(result.format).toBe('tickwise-recorder');
    const bad = await store.rows(`SELECT severity, code, message FROM diagnostics WHERE capture_id = ? AND severity IN ('error', 'warning')`, [result.capture_id]);
    expect(bad).toEqual([]);
    const rows = await store.rows(
      `SELECT count(*) AS n,
              count(*) FILTER (WHERE d.kernel IS NULL) AS unnamed,
              count(*) FILTER (WHERE l.start_ns IS NULL) AS without_launch,
              count(*) FILTER (WHERE d.start_ns < l.start_ns OR d.end_ns < d.start_ns) AS out_of_order,
              count(DISTINCT d.time_source) AS sources
       FROM dispatches d LEFT JOIN ${LAUNCH} l USING (submission_id) WHERE d.capture_id = ?`,
      [result.capture_id, result.capture_id],
    );
    expect(rows[0]).toEqual({ n: BigInt(result.dispatches), unnamed: 0n, without_launch: 0n, out_of_order: 0n, sources: 1n });
    // the warm-up repetition and the clock spin before it are in the capture too
    expect(result.dispatches).toBeGreaterThan(prof.kernels);
    expect(compared).toHaveLength(prof.reps);
  });

  it("the measured repetitions' kernels equal torch.profiler's per name: counts exactly, sums within 1 % over 5 us", async () => {
    const { store, result } = await load();
    const rows = await store.rows(
      `SELECT d.kernel, count(*) AS n, sum(d.dur_ns) AS sum_ns, count(DISTINCT d.queue) AS queues
       FROM dispatches d JOIN ${LAUNCH} l USING (submission_id)
       WHERE d.capture_id = ? AND (${inCompared})
       GROUP BY d.kernel ORDER BY d.kernel`,
      [result.capture_id, result.capture_id],
    );
    const mine = new Map(rows.map((r) => [String(r['kernel']), { count: Number(r['n']), sum_ns: Number(r['sum_ns']) }]));
    expect([...mine.keys()].sort()).toEqual(Object.keys(prof.by_name).sort());
    let checked = 0;
    for (const [kernel, p] of Object.entries(prof.by_name)) {
      const m = mine.get(kernel)!;
      expect({ kernel, count: m.count }).toEqual({ kernel, count: p.count });
      if (p.sum_ns / p.count > 5000) {
        checked += 1;
        const rel = Math.abs(m.sum_ns - p.sum_ns) / p.sum_ns;
        expect({ kernel, rel_within_1pct: rel <= 0.01 }).toEqual({ kernel, rel_within_1pct: true });
      }
    }
    expect(checked).toBeGreaterThan(0);
    expect([...mine.values()].reduce((s, v) => s + v.count, 0)).toBe(prof.kernels);
  });

  it(`runs on ${streams} stream(s), as torch.profiler saw it${streams > 1 ? ', with kernels of different streams overlapping' : ''}`, async () => {
    const { store, result } = await load();
    const q = await store.rows(
      `SELECT count(DISTINCT d.queue) AS queues FROM dispatches d JOIN ${LAUNCH} l USING (submission_id)
       WHERE d.capture_id = ? AND (${inCompared})`,
      [result.capture_id, result.capture_id],
    );
    expect(Number(q[0]!['queues'])).toBe(streams);
    expect(prof.streams).toHaveLength(streams);
    if (streams > 1) {
      const o = await store.rows(
        `WITH k AS (SELECT d.queue, d.start_ns, d.end_ns FROM dispatches d JOIN ${LAUNCH} l USING (submission_id)
                    WHERE d.capture_id = ? AND (${inCompared}))
         SELECT count(*) AS pairs FROM k a JOIN k b ON a.queue < b.queue AND a.start_ns < b.end_ns AND b.start_ns < a.end_ns`,
        [result.capture_id, result.capture_id],
      );
      expect(Number(o[0]!['pairs'])).toBeGreaterThan(0);
    }
  });
});
