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
 *   scripts/bench-rocpd-import [--dispatches 1000000] [--reps 3] [--name-chars 394]
 *
 * `--name-chars N`: each kernel symbol's names N characters long, as a
 * templated HIP kernel's are (the fixture's are 11 and 17).
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
const work = join(tmpdir(), 'tickwise-bench-rocpd');
mkdirSync(work, { recursive: true });
const file = join(work, nameChars > 0 ? `rocpd-${n}-names${nameChars}.db` : `rocpd-${n}.db`);
const SUFFIX = '_0000a1b2_c3d4_7e5f_8a9b_0c1d2e3f4a5b';
const truthDurNs = (() => {
  let s = 0n;
  for (let i = 0; i < n; i++) s += BigInt(1000 + (i % 7));
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
  db.close();
  rmSync(file, { force: true });
  spawnSync('mv', [`${file}.tmp`, file]);
}
const bytes = statSync(file).size;

type Kind = 'baseline' | 'import';
interface Run { s: number; cpu_s: number; dispatches: number; dur_ns: string; rss_mb: number }
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
      db.close();
    } else {
      const s = await Store.open(${JSON.stringify(db)});
      dispatches = (await importInput(s, ${JSON.stringify(file)})).dispatches;
      dur = await s.scalar('SELECT sum(dur_ns)::HUGEINT FROM dispatches');
      await s.close();
    }
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    console.log(JSON.stringify({ s, cpu_s: (c.user + c.system) / 1e6, dispatches, dur_ns: String(dur), rss_mb: process.resourceUsage().maxRSS / 1024 }));
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
console.log(`database: ${file} (${(bytes / 1e6).toFixed(1)} MB, ${n} dispatches), ${reps} reps, median, in child processes (module loading not counted)`);
const names: Record<Kind, string> = { baseline: 'baseline: better-sqlite3 reads the rows', import: 'import into a fresh store' };
for (const k of kinds) {
  const s = median(runs[k].map((r) => r.s));
  const cpu = median(runs[k].map((r) => r.cpu_s));
  const rss = Math.max(...runs[k].map((r) => r.rss_mb));
  console.log(`${names[k].padEnd(40)} ${s.toFixed(3).padStart(7)} s wall ${cpu.toFixed(3).padStart(7)} s CPU ${(n / s / 1e3).toFixed(0).padStart(6)}k dispatches/s ${(s / base).toFixed(2).padStart(6)}x baseline  peak RSS ${rss.toFixed(0)} MB`);
}
const bad = kinds.flatMap((k) => runs[k].filter((r) => r.dispatches !== n || r.dur_ns !== String(truthDurNs)).map((r) => `${k}: ${r.dispatches} dispatches, ${r.dur_ns} ns`));
console.log(bad.length === 0 ? `check: ${n} dispatches, summed durations ${truthDurNs} ns, as generated` : `CHECK FAILED: ${bad.join('; ')} (want ${n}, ${truthDurNs})`);
if (bad.length > 0) process.exitCode = 1;
