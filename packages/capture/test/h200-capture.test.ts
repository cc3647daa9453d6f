import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { FORMATS, importInput } from '../src/index';
import { ROOT } from './helpers';

// A real capture made by the recorder's cuda backend on an NVIDIA H200 (see
// captures/h200/README.md for how), and torch.profiler's kernel totals of the
// same prefill run in a second process. The recorder's kernels must import as
// dispatches whose count and names equal the profiler's and whose summed time
// agrees within 1 %.
const BASE = join(ROOT, 'captures/h200/prefill-bf16-l4-d1024-s512');
const DIR = BASE;
const WINDOWS = `${BASE}.windows.json`;
const PROFILER = `${BASE}.torch-profiler.json`;

interface Window { label: string; start_ns: number; end_ns: number; compare: boolean }
interface Profiler { kernels: number; kernel_sum_ns: number; by_name: Record<string, { count: number; sum_ns: number }> }

const REGISTERED = 'tickwise-recorder' in FORMATS;
if (!REGISTERED) console.warn("h200-capture tests skipped: format 'tickwise-recorder' is not registered in packages/capture/src/formats.ts yet");

describe.skipIf(!REGISTERED)('H200 capture: recorder cuda backend vs torch.profiler', () => {
  const truth = () => {
    const windows = (JSON.parse(readFileSync(WINDOWS, 'utf8')) as { windows: Window[] }).windows;
    // CLOCK_MONOTONIC ns from Python's time.monotonic_ns(): exact as doubles (below 2^53)
    const inCompared = windows
      .filter((w) => w.compare)
      .map((w) => `(l.start_ns BETWEEN ${BigInt(w.start_ns)} AND ${BigInt(w.end_ns)})`)
      .join(' OR ');
    return { prof: JSON.parse(readFileSync(PROFILER, 'utf8')) as Profiler, inCompared };
  };

  async function load() {
    expect(existsSync(join(DIR, 'records.twr'))).toBe(true);
    const store = await Store.open(':memory:');
    const result = await importInput(store, DIR);
    return { store, result };
  }

  it('imports as a complete tickwise-recorder capture with one H200 GPU', async () => {
    const { store, result } = await load();
    expect(result.format).toBe('tickwise-recorder');
    const gpus = await store.rows(`SELECT device, kind, name FROM devices WHERE capture_id = ? AND kind = 'gpu'`, [result.capture_id]);
    expect(gpus).toHaveLength(1);
    expect(String(gpus[0]!['name'])).toMatch(/H200|cuda:0/);
    const bad = await store.rows(`SELECT severity, code, message FROM diagnostics WHERE capture_id = ? AND severity IN ('error', 'warning')`, [result.capture_id]);
    expect(bad).toEqual([]);
  });

  it('every kernel is a named dispatch on the host timeline that starts after its launch call began', async () => {
    const { store, result } = await load();
    const { prof } = truth();
    const rows = await store.rows(
      `SELECT count(*) AS n,
              count(*) FILTER (WHERE d.kernel IS NULL) AS unnamed,
              count(*) FILTER (WHERE l.start_ns IS NULL) AS without_launch,
              count(*) FILTER (WHERE d.start_ns < l.start_ns OR d.end_ns < d.start_ns) AS out_of_order
       FROM dispatches d
       LEFT JOIN (SELECT submission_id, min(start_ns) AS start_ns FROM host_events
                  WHERE capture_id = ? AND kind = 'cuda_api' GROUP BY submission_id) l USING (submission_id)
       WHERE d.capture_id = ?`,
      [result.capture_id, result.capture_id],
    );
    expect(rows[0]).toEqual({ n: BigInt(result.dispatches), unnamed: 0n, without_launch: 0n, out_of_order: 0n });
    expect(result.dispatches).toBeGreaterThan(prof.kernels); // the warm-up repetition is in the capture too
    const sources = await store.rows(`SELECT DISTINCT time_source FROM dispatches WHERE capture_id = ?`, [result.capture_id]);
    expect(sources).toEqual([{ time_source: 'host_monotonic' }]);
  });

  it("the compared repetitions' kernels equal torch.profiler's in count and names; summed time within 1 %", async () => {
    const { store, result } = await load();
    const { prof, inCompared } = truth();
    const rows = await store.rows(
      `SELECT d.kernel, count(*) AS n, sum(d.dur_ns) AS sum_ns
       FROM dispatches d
       JOIN (SELECT submission_id, min(start_ns) AS start_ns FROM host_events
             WHERE capture_id = ? AND kind = 'cuda_api' GROUP BY submission_id) l USING (submission_id)
       WHERE d.capture_id = ? AND (${inCompared})
       GROUP BY d.kernel ORDER BY d.kernel`,
      [result.capture_id, result.capture_id],
    );
    const counts = Object.fromEntries(rows.map((r) => [String(r['kernel']), Number(r['n'])]));
    const expected = Object.fromEntries(Object.entries(prof.by_name).map(([k, v]) => [k, v.count]));
    expect(counts).toEqual(expected);
    const total = rows.reduce((s, r) => s + Number(r['sum_ns']), 0);
    expect(Math.abs(total - prof.kernel_sum_ns) / prof.kernel_sum_ns).toBeLessThan(0.01);
  });
});
