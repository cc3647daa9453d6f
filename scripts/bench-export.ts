/**
 * Perfetto export benchmark (issue 16.6: >= 500k slices/s for a 1 M-slice export).
 *
 *   scripts/bench-export [--slices 1000000] [--reps 3] [--db path.duckdb]
 *   scripts/bench-export --store run.duckdb --out trace.json     (export one store, print the summary)
 *
 * Generates (once; seeded, so the same store every time) a store with
 * --slices slices: 3/4 dispatches on a GPU (every 20th overlapping the one
 * before it, so lanes are exercised) and an NPU, 1/4 host launch calls
 * (Kineto-style `cuda_runtime` slices on 4 host threads, each linked by its
 * correlation id to a GPU dispatch: one flow each). Then exports it --reps
 * times with exportPerfettoJson and prints wall time, slices/s, and, in the
 * same run, the baseline: V8's JSON.stringify of the same events (parsed
 * from the file written, untimed), with the ratio export / stringify.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Store } from '../packages/store/src/index';
import { exportPerfettoJson } from '../packages/report/src/perfetto-json';

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const SEED = 20261203;

async function generate(path: string, n: number): Promise<void> {
  const tmp = `${path}.tmp`;
  rmSync(tmp, { force: true });
  const store = await Store.open(tmp);
  const nd = Math.floor((n * 3) / 4);
  const half = Math.floor(nd / 2);
  const nh = n - 2 * half;
  await store.run(`INSERT INTO captures (capture_id, path, format, schema_version, sha256, producer, label, timeline, record_count)
    VALUES (1, 'bench:generated', 'generated', 1, NULL, 'scripts/bench-export (seed ${SEED})', 'bench-${n}', 'realtime', ${n})`);
  await store.run(`INSERT INTO devices (capture_id, device, kind, name, time_base) VALUES (1, 0, 'gpu', 'bench GPU', 'host_other'), (1, 1, 'npu', 'bench NPU', 'host_other')`);
  await store.run(`CREATE TEMP TABLE g AS
    SELECT (r // ${half})::INTEGER AS device, r % ${half} AS i,
      CASE WHEN r // ${half} = 0 THEN 2000 + (hash(r, ${SEED}) % 30000)::BIGINT ELSE 300000 + (hash(r, ${SEED}) % 200000)::BIGINT END AS dur,
      CASE WHEN (r % ${half}) % 20 = 7 THEN -1500 ELSE 1000 + (hash(r, ${SEED + 1}) % 5000)::BIGINT END AS gap
    FROM range(${2 * half}) t(r)`);
  await store.run(`INSERT INTO dispatches (capture_id, device, queue, submission_id, event_id, kernel, start_ns, end_ns, dur_ns, time_source, valid,
      workgroup_count_x, workgroup_count_y, workgroup_count_z, line)
    SELECT 1, device, CASE WHEN device = 0 THEN 7 ELSE 0 END, i // 40 + 1, CASE WHEN device = 0 THEN i + 1 END,
      CASE WHEN device = 0 THEN 'void gemm_kernel<' || (i % 10) || ', 128, 64>(float const*, float*, int)' ELSE 'npu_tile_matmul_256x8192x3072_bf16' END,
      s, s + dur, dur, 'host_other', true, 128, 4, 1, i + 1
    FROM (SELECT *, 1700000000000000000 + sum(gap + dur) OVER (PARTITION BY device ORDER BY i ROWS UNBOUNDED PRECEDING) - dur AS s FROM g)
    ORDER BY device, s`);
  // launch calls: the host thread launches GPU dispatch k (k < nh) 5-25 us before it starts
  await store.run(`INSERT INTO host_events (capture_id, device, queue, kind, op, name, event_id, thread_id, start_ns, end_ns, dur_ns, time_source, valid, args, line)
    SELECT 1, NULL, NULL, 'slice', 'cuda_runtime', 'cudaLaunchKernel', d.event_id, 1000 + d.event_id % 4,
      d.start_ns - 25000 + (hash(d.event_id, ${SEED + 2}) % 20000)::BIGINT AS s, s + 3000, 3000, 'host_other', true,
      json_object('pid', 1000, 'tid', 1000 + d.event_id % 4, 'args', json_object('correlation', d.event_id)), ${2 * half} + d.event_id
    FROM dispatches d WHERE d.device = 0 AND d.event_id <= ${nh}`);
  await store.close();
  renameSync(tmp, path);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  if (args.includes('--store')) {
    const store = await Store.open(resolve(opt('store', '')), { readOnly: true });
    const t0 = performance.now();
    const s = await exportPerfettoJson(store, resolve(opt('out', 'trace.json')));
    console.log(JSON.stringify({ ...s, ms: Math.round(performance.now() - t0) }));
    await store.close();
    return;
  }
  const n = Number(opt('slices', '1000000'));
  const reps = Number(opt('reps', '3'));
  const dir = join(tmpdir(), 'tickwise-bench-export');
  mkdirSync(dir, { recursive: true });
  const db = resolve(opt('db', join(dir, `bench-${n}-${SEED}.duckdb`)));
  if (!existsSync(db)) {
    const t0 = performance.now();
    await generate(db, n);
    console.log(`generated ${db} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  }
  const out = join(dir, 'trace.json');
  const store = await Store.open(db, { readOnly: true });
  const times: number[] = [];
  let summary: Awaited<ReturnType<typeof exportPerfettoJson>> | null = null;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    summary = await exportPerfettoJson(store, out);
    times.push(performance.now() - t0);
  }
  await store.close();
  const s = summary!;
  const slices = s.dispatch_slices + s.submission_slices + s.host_slices;
  const events = (JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: unknown[] }).traceEvents;
  const base: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    const text = JSON.stringify(events);
    base.push(performance.now() - t0);
    if (text.length === 0) throw new Error('empty');
  }
  const ms = median(times);
  const baseMs = median(base);
  console.log(JSON.stringify({
    cpus: cpus().length, loadavg_1m: Number(loadavg()[0]!.toFixed(2)), slices, flows: s.flows, threads: s.threads, bytes: statSync(out).size,
  }));
  console.log(`export        : median ${ms.toFixed(0)} ms (best ${Math.min(...times).toFixed(0)} ms) = ${Math.round(slices / (ms / 1000)).toLocaleString('en')} slices/s (goal >= 500,000)`);
  console.log(`JSON.stringify: median ${baseMs.toFixed(0)} ms of the same ${events.length.toLocaleString('en')} events (baseline, same run)`);
  console.log(`ratio export / JSON.stringify: ${(ms / baseMs).toFixed(2)}x`);
}

await main();
