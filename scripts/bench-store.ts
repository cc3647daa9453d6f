/**
 * The benchmarks' generated store: N dispatches on 2 devices written directly
 * in DuckDB (see scripts/bench-analyze.ts for the shape). Seeded, so the same
 * store every time.
 */
import { renameSync, rmSync } from 'node:fs';
import { Store } from '../packages/store/src/index';

/** The seed of every generated benchmark store. */
export const BENCH_SEED = 20260114;
const SEED = BENCH_SEED;

/** Writes a store of `n` dispatches at `path` (through a temporary file, renamed when complete). */
export async function generateBenchStore(path: string, n: number): Promise<void> {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const store = await Store.open(tmp);
  const h = (salt: number, mod: number) => `(hash(i, ${SEED + salt}) % ${mod})::BIGINT`;
  await store.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
    VALUES (1, 'bench:generated', 'generated', 1, NULL, 'scripts/bench-analyze (seed ${SEED})', 'bench-${n}', 'host_monotonic', ${n})`);
  await store.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES (1, 0, 'gpu', 'bench iGPU', 'device_tick_fit'), (1, 1, 'npu', 'bench NPU', 'device_tick_fit')`);
  const half = Math.floor(n / 2);
  await store.run(`CREATE TEMP TABLE g AS
    SELECT device, i, p, sub, dur,
      CASE
        WHEN device = 0 AND p = 0 THEN 20000 + ${h(1, 80000)}
        WHEN device = 0 AND p % 20 = 7 THEN -3000
        WHEN device = 0 THEN 1200 + ${h(2, 3300)}
        WHEN ${h(3, 100)} = 0 THEN -2000
        ELSE 10000 + ${h(4, 120000)}
      END AS gap
    FROM (
      SELECT (r // ${half})::INTEGER AS device, r % ${half} AS i,
        CASE WHEN r // ${half} = 0 THEN (r % ${half}) % 40 ELSE 0 END AS p,
        CASE WHEN r // ${half} = 0 THEN (r % ${half}) // 40 ELSE r % ${half} END + 1 AS sub,
        CASE WHEN r // ${half} = 0 THEN 5000 + (hash(r, ${SEED}) % 20000)::BIGINT ELSE 400000 + (hash(r, ${SEED}) % 200000)::BIGINT END AS dur
      FROM range(${2 * half}) t(r)
    )`);
  await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, command_buffer_id, command_index, event_id, kernel,
      start_ns, end_ns, dur_ns, time_source, valid, line)
    SELECT 1, device, 0, sub, sub, p, i + 1,
      CASE WHEN device = 0 THEN 'prefill_dispatch_' || (p % 10) || '_matmul_512x' || (1024 * (1 + p % 4)) || 'x4096_f16' ELSE 'npu_tile_matmul_256x8192x3072_bf16' END,
      s, s + dur, dur, 'device_tick_fit', hash(i, device, ${SEED + 9}) % 10000 <> 0, i + 1
    FROM (SELECT *, 1000000000000 + sum(gap + dur) OVER (PARTITION BY device ORDER BY i ROWS UNBOUNDED PRECEDING) - dur AS s FROM g)
    ORDER BY device, s`);
  await store.close();
  renameSync(tmp, path);
}
