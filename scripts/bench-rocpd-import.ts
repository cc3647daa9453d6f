/**
 * rocpd (rocprofv3's SQLite database, ROCm 7's default output) import
 * benchmark: a generated database of the newer layout (schema 4: times in
 * rocpd_timestamp, agent and queue in rocpd_track; the DDL of
 * packages/capture/test/fixtures/rocpd/schema4-spine.sql), then, in fresh
 * child processes, alternating:
 *   baseline  better-sqlite3 reading what the reader needs: every dispatch
 *             row with its numbers (the same joins and order (row id; by
 *             start time until session 38: 2.9 s for 1 M), rows as
 *             arrays; its agent and kernel symbol by id), and the agents' and
 *             symbols' texts once each: the least any reader through
 *             better-sqlite3 does. (Until 2026-12-06 it read the three texts
 *             with every row, as the reader did: 3.25 s for 1 M.)
 *   import    importInput into a fresh file-backed store
 *
 *   scripts/bench-rocpd-import [--dispatches 1000000] [--reps 3] [--name-chars 394] [--regions 1000000]
 *
 * `--name-chars N`: each kernel symbol's names N characters long, as a
 * templated HIP kernel's are (the fixture's are 11 and 17).
 * `--regions N`: N HIP API regions beside the dispatches (`--sys-trace`,
 * `--hip-trace`): the region and event tables of the schema-3 fixture
 * (schema3-inline.sql: times inline, each region's event naming its
 * category and correlation id), 8 API names, every 20th region a
 * marker's. The baseline reads them too (their numbers, and their names'
 * and categories' string ids), and the check counts them.
 *
 * Prints the median of each, dispatches/s, the ratio to the baseline, and
 * checks the stored dispatches against the generator's (count and summed
 * durations: dispatch i lasts 1000 + i % 7 ns).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median, option as opt, runChild } from './bench-child';

const root = resolve(import.meta.dirname, '..');
const n = Number(opt('dispatches', '1000000'));
const reps = Number(opt('reps', '3'));
const nameChars = Number(opt('name-chars', '0'));
const regions = Number(opt('regions', '0'));
const work = join(tmpdir(), 'tickwise-bench-rocpd');
mkdirSync(work, { recursive: true });
const file = join(work, `rocpd-${n}${nameChars > 0 ? `-names${nameChars}` : ''}${regions > 0 ? `-regions${regions}` : ''}.db`);
const SUFFIX = '_0000a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b';
const truthDurNs = (() => {
  let s = 0n;
  for (let i = 0; i < n; i++) s += BigInt(1000 + (i % 7));
  return s;
})();
/** Region i lasts 300 + i % 11 ns. */
const truthRegionNs = (() => {
  let s = 0n;
  for (let i = 0; i < regions; i++) s += BigInt(300 + (i % 11));
  return s;
})();

if (!existsSync(file)) {
  console.error(`generating ${n} dispatches -> ${file}`);
  const Database = createRequire(join(root, 'packages/capture/package.json'))('better-sqlite3') as new (f: string) => {
    exec(sql: string): void;
    close(): void;
  };
  const db = new Database(`${file}.tmp`);
  // the fixture's DDL and its agent, symbols and track; its six hand-written dispatches are left out
  const ddl = readFileSync(join(root, 'packages/capture/test/fixtures/rocpd/schema4-spine.sql'), 'utf8').split('\n')
    .filter((l) => !/^INSERT INTO "rocpd_(timestamp|kernel_dispatch)/.test(l) && !/^\s+\(/.test(l)).join('\n');
  db.exec('PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF;');
  db.exec(ddl);
  const upto = `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ${n - 1})`;
  // start and end of dispatch i, interleaved in the spine as rocprofiler-sdk writes them
  db.exec(`${upto} INSERT INTO "rocpd_timestamp${SUFFIX}" (id, value, phase, track_id)
    SELECT 2 * i + 1, 9007199254000000 + i * 2000, 1, 1 FROM c UNION ALL SELECT 2 * i + 2, 9007199254000000 + i * 2000 + 1000 + i % 7, 2, 1 FROM c`);
  db.exec(`${upto} INSERT INTO "rocpd_kernel_dispatch${SUFFIX}" (id, track_id, kernel_id, dispatch_id, start_id, end_id,
      workgroup_size_x, workgroup_size_y, workgroup_size_z, grid_size_x, grid_size_y, grid_size_z)
    SELECT i + 1, 1, 1 + i % 2, i + 1, 2 * i + 1, 2 * i + 2, 256, 1, 1, 65536, 1, 1 FROM c`);
  if (nameChars > 0) {
    // a templated kernel's name, the symbol's id at its end, cut or padded to nameChars
    const stem = 'void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<c10::Half, c10::Half, c10::Half, at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&)::{lambda(int)#1}>(int, ';
    const body = stem.repeat(Math.ceil(nameChars / stem.length));
    db.exec(`UPDATE "rocpd_info_kernel_symbol${SUFFIX}" SET display_name = substr('${body}', 1, ${nameChars} - length(id)) || id,
      kernel_name = substr('${body}', 1, ${nameChars} - length(id)) || id`);
  }
  if (regions > 0) {
    // the schema-3 fixture's region and event tables under this database's suffix and guid
    const r3 = readFileSync(join(root, 'packages/capture/test/fixtures/rocpd/schema3-inline.sql'), 'utf8').split('\n')
      .filter((l) => /^CREATE TABLE "rocpd_(region|event)_/.test(l))
      .map((l) => l.replaceAll('_00000450_565d_765d_bc41_19a2073d19ee', SUFFIX).replace(/DEFAULT '00000450-[^']*'/, "DEFAULT 'g'"));
    db.exec(r3.join('\n'));
    const api = ['hipLaunchKernel', 'hipMemcpyAsync', 'hipStreamSynchronize', 'hipEventRecord', 'hipMalloc', 'hipFree', 'hipModuleLaunchKernel', 'hipGetDevice'];
    db.exec(`INSERT OR IGNORE INTO "rocpd_string${SUFFIX}" (string) VALUES ${[...api, 'HIP_RUNTIME_API', 'MARKER_CORE_API', 'step'].map((x) => `('${x}')`).join(', ')}`);
    const sid = (x: string) => `(SELECT id FROM "rocpd_string${SUFFIX}" WHERE string = '${x}')`;
    const upR = `WITH RECURSIVE c(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM c WHERE i < ${regions - 1})`;
    db.exec(`${upR} INSERT INTO "rocpd_event${SUFFIX}" (id, category_id, correlation_id)
      SELECT i + 1, CASE WHEN i % 20 = 19 THEN ${sid('MARKER_CORE_API')} ELSE ${sid('HIP_RUNTIME_API')} END, i + 1 FROM c`);
    const name = `CASE WHEN i % 20 = 19 THEN ${sid('step')} ELSE (SELECT id FROM "rocpd_string${SUFFIX}" WHERE string = CASE i % 8 ${api.map((x, k) => `WHEN ${k} THEN '${x}'`).join(' ')} END) END`;
    db.exec(`${upR} INSERT INTO "rocpd_region${SUFFIX}" (id, nid, pid, tid, start, "end", name_id, event_id)
      SELECT i + 1, 1, 1, 4242 + i % 4, 9007199254000000 + i * 2000 - 500, 9007199254000000 + i * 2000 - 500 + 300 + i % 11, ${name}, i + 1 FROM c`);
  }
  db.close();
  rmSync(file, { force: true });
  spawnSync('mv', [`${file}.tmp`, file]);
}
const bytes = statSync(file).size;

type Kind = 'baseline' | 'import';
interface Run { s: number; cpu_s: number; dispatches: number; dur_ns: string; regions: number; region_ns: string; rss_mb: number }
function child(kind: Kind): Run {
  const db = join(work, 'bench.duckdb');
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  const code = `
    import { createRequire } from 'node:module';
    import { Store } from '@tickwise/store';
    import { importInput } from '@tickwise/capture';
    // DuckDB's and SQLite's native libraries: module loading, not counted
    await (await import('@tickwise/store')).loadDuckdb();
    const Database = createRequire(${JSON.stringify(join(root, 'packages/capture/package.json'))})('better-sqlite3');
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let dispatches = 0;
    let dur = 0n;
    let regions = 0;
    let regionNs = 0n;
    if (${JSON.stringify(kind)} === 'baseline') {
      const db = new Database(${JSON.stringify(file)}, { readonly: true });
      db.defaultSafeIntegers(true);
      const t = (x) => '"rocpd_' + x + '${SUFFIX}"';
      const q = 'SELECT K.id, coalesce(A.logical_index, T.agent_id), T.agent_id, T.queue_id, T.stream_id, T.tid, K.dispatch_id, NULL, K.kernel_id,'
        + ' TS.value, TE.value, K.workgroup_size_x, K.workgroup_size_y, K.workgroup_size_z, K.grid_size_x, K.grid_size_y, K.grid_size_z'
        + ' FROM ' + t('kernel_dispatch') + ' K LEFT JOIN ' + t('track') + ' T ON T.id = K.track_id AND T.guid = K.guid'
        + ' LEFT JOIN ' + t('timestamp') + ' TS ON TS.id = K.start_id AND TS.guid = K.guid LEFT JOIN ' + t('timestamp') + ' TE ON TE.id = K.end_id AND TE.guid = K.guid'
        + ' LEFT JOIN ' + t('info_agent') + ' A ON A.id = T.agent_id AND A.guid = K.guid ORDER BY K.id, TS.value';
      const texts = [];
      for (const r of db.prepare('SELECT id, guid, type, coalesce(nullif(product_name, \\'\\'), nullif(name, \\'\\')) FROM ' + t('info_agent')).raw(true).iterate()) texts.push(r);
      for (const r of db.prepare('SELECT id, guid, coalesce(nullif(display_name, \\'\\'), nullif(kernel_name, \\'\\')) FROM ' + t('info_kernel_symbol')).raw(true).iterate()) texts.push(r);
      for (const r of db.prepare(q).raw(true).iterate()) {
        dispatches++;
        dur += r[10] - r[9];
      }
      if (${regions} > 0) {
        // the regions: their numbers and their names' and categories' string ids, in row id order; the strings once
        for (const r of db.prepare('SELECT id, guid, string FROM ' + t('string')).raw(true).iterate()) texts.push(r);
        const rq = 'SELECT R.id, R.name_id, E.category_id, R.tid, R."start", R."end", E.correlation_id FROM ' + t('region')
          + ' R LEFT JOIN ' + t('event') + ' E ON E.id = R.event_id AND E.guid = R.guid ORDER BY R.id, R."start"';
        for (const r of db.prepare(rq).raw(true).iterate()) {
          regions++;
          regionNs += r[5] - r[4];
        }
      }
      db.close();
    } else {
      const s = await Store.open(${JSON.stringify(db)});
      dispatches = (await importInput(s, ${JSON.stringify(file)})).dispatches;
      dur = await s.scalar('SELECT sum(dur_ns)::HUGEINT FROM dispatches');
      regions = Number(await s.scalar("SELECT count(*) FROM host_events WHERE kind = 'region'"));
      regionNs = (await s.scalar("SELECT coalesce(sum(dur_ns), 0)::HUGEINT FROM host_events WHERE kind = 'region'")) ?? 0n;
      await s.close();
    }
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    console.log(JSON.stringify({ s, cpu_s: (c.user + c.system) / 1e6, dispatches, dur_ns: String(dur), regions, region_ns: String(regionNs), rss_mb: process.resourceUsage().maxRSS / 1024 }));
  `;
  return runChild<Run>(code);
}

const kinds = ['baseline', 'import'] as const;
const runs: Record<Kind, Run[]> = { baseline: [], import: [] };
for (let i = 0; i < reps; i++) {
  for (const k of kinds) runs[k].push(child(k));
  console.error(`rep ${i + 1}: ${kinds.map((k) => `${k} ${runs[k].at(-1)!.s.toFixed(2)} s`).join(', ')}`);
}
const base = median(runs.baseline.map((r) => r.s));
console.log(`database: ${file} (${(bytes / 1e6).toFixed(1)} MB, ${n} dispatches${regions > 0 ? `, ${regions} regions` : ''}), ${reps} reps, median, in child processes (module loading not counted)`);
const names: Record<Kind, string> = { baseline: 'baseline: better-sqlite3 reads the rows', import: 'import into a fresh store' };
for (const k of kinds) {
  const s = median(runs[k].map((r) => r.s));
  const cpu = median(runs[k].map((r) => r.cpu_s));
  const rss = Math.max(...runs[k].map((r) => r.rss_mb));
  console.log(`${names[k].padEnd(40)} ${s.toFixed(3).padStart(7)} s wall ${cpu.toFixed(3).padStart(7)} s CPU ${(n / s / 1e3).toFixed(0).padStart(6)}k dispatches/s ${(s / base).toFixed(2).padStart(6)}x baseline  peak RSS ${rss.toFixed(0)} MB`);
}
const bad = kinds.flatMap((k) => runs[k].filter((r) => r.dispatches !== n || r.dur_ns !== String(truthDurNs) || r.regions !== regions || r.region_ns !== String(truthRegionNs))
  .map((r) => `${k}: ${r.dispatches} dispatches, ${r.dur_ns} ns; ${r.regions} regions, ${r.region_ns} ns`));
console.log(bad.length === 0
  ? `check: ${n} dispatches, summed durations ${truthDurNs} ns${regions > 0 ? `; ${regions} regions, ${truthRegionNs} ns` : ''}, as generated`
  : `CHECK FAILED: ${bad.join('; ')} (want ${n}, ${truthDurNs}; ${regions}, ${truthRegionNs})`);
if (bad.length > 0) process.exitCode = 1;
