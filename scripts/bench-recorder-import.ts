/**
 * Recorder-directory import benchmark: a capture directory made by the
 * native recorder under its fake HIP runtime and rocprofiler-sdk (the
 * tw_app_launcher test program, as native/tests/recorder_tests.cpp runs it),
 * then, in fresh child processes, alternating:
 *   baseline  read every records.twr and check every chunk's CRC-32 (the
 *             least any reader does: the bytes and their checksums)
 *   read      readRecorderDir: every row in memory
 *   import    importInput into a fresh file-backed store (rows appended)
 *
 *   scripts/bench-recorder-import [--launches 72000] [--threads 2] [--reps 5] [--dir existing-capture]
 *
 * Defaults give 144,000 launches + 144,000 kernels in an 18.5 MB records.twr
 * (issue 16's 18.5 MB / 146k dispatches). Prints the median of each, the
 * dispatches/s and the ratio to the baseline; wall and CPU seconds (CPU
 * includes DuckDB's threads, so it may exceed wall). Goal: import < 2 s.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { median, option as opt, runChild } from './bench-child';

const root = resolve(import.meta.dirname, '..');
const launches = Number(opt('launches', '72000'));
const threads = Number(opt('threads', '2'));
const reps = Number(opt('reps', '5'));
const work = join(tmpdir(), 'tickwise-bench-recorder-import');
mkdirSync(work, { recursive: true });
let dir = opt('dir', '');
if (!dir) {
  dir = join(work, `run-${threads}x${launches}`);
  if (!existsSync(join(dir, 'meta.json'))) {
    const build = join(root, 'native/build');
    const bin = join(build, 'bin/tw_app_launcher');
    if (!existsSync(bin)) {
      console.error('building native/ (native/test.sh --quick)');
      const b = spawnSync(join(root, 'native/test.sh'), ['--quick'], { stdio: 'inherit' });
      if (b.status !== 0) process.exit(1);
    }
    rmSync(dir, { recursive: true, force: true });
    const r = spawnSync(bin, ['--threads', String(threads), '--launches', String(launches), '--graph-every', '0', '--out', `${dir}.summary.json`], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: {
        PATH: process.env['PATH'] ?? '',
        LD_PRELOAD: `${join(build, 'lib/libtickwise_recorder.so')}:${join(build, 'fakes/libtickwise_fake_amdxdna.so')}`,
        TICKWISE_CAPTURE_DIR: dir,
      },
    });
    if (r.status !== 0) process.exit(1);
  }
}
const bytes = statSync(join(dir, 'records.twr')).size;

type Kind = 'baseline' | 'read' | 'import';
interface Run { s: number; cpu_s: number; dispatches: number; rss_mb: number }
function child(kind: Kind): Run {
  const db = join(work, 'bench.duckdb');
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  const code = `
    import { readFileSync } from 'node:fs';
    import { join } from 'node:path';
    import { crc32 } from 'node:zlib';
    import { Store } from '@tickwise/store';
    import { importInput, readRecorderDir, recorderProcessDirs } from '@tickwise/capture';
    // DuckDB's native library loads when the first store opens: module loading, not counted
    await (await import('@tickwise/store')).loadDuckdb();
    const dir = ${JSON.stringify(dir)};
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    let dispatches = 0;
    if (${JSON.stringify(kind)} === 'baseline') {
      for (const d of await recorderProcessDirs(dir)) {
        const b = readFileSync(join(d, 'records.twr'));
        let off = 64;
        while (off + 32 <= b.length) {
          const n = b.readUInt32LE(off + 8);
          if (crc32(b.subarray(off + 32, off + 32 + n)) !== b.readUInt32LE(off + 24)) throw new Error('crc');
          if (b.readUInt16LE(off + 4) === 1) for (let i = 0; i < n; i += 64) if (b.readUInt16LE(off + 32 + i) === 3) dispatches++;
          off += 32 + n;
        }
      }
    } else if (${JSON.stringify(kind)} === 'read') {
      dispatches = (await readRecorderDir(dir)).dispatches.length;
    } else {
      const s = await Store.open(${JSON.stringify(db)});
      dispatches = (await importInput(s, dir)).dispatches;
      await s.close();
    }
    const s = (performance.now() - t0) / 1000;
    const c = process.cpuUsage(c0);
    const cpu_s = (c.user + c.system) / 1e6;
    console.log(JSON.stringify({ s, cpu_s, dispatches, rss_mb: process.resourceUsage().maxRSS / 1024 }));
  `;
  return runChild<Run>(code);
}

const runs: Record<Kind, Run[]> = { baseline: [], read: [], import: [] };
for (let i = 0; i < reps; i++) {
  for (const k of ['baseline', 'read', 'import'] as const) runs[k].push(child(k));
  console.error(`rep ${i + 1}: ${(['baseline', 'read', 'import'] as const).map((k) => `${k} ${runs[k].at(-1)!.s.toFixed(2)} s`).join(', ')}`);
}
const base = median(runs.baseline.map((r) => r.s));
const dispatches = runs.import[0]!.dispatches;
console.log(`directory: ${dir} (records.twr ${(bytes / 1e6).toFixed(1)} MB, ${dispatches} dispatches), ${reps} reps, median, in child processes (module loading not counted)`);
const names: Record<Kind, string> = {
  baseline: 'baseline: read files + CRC-32 of chunks',
  read: 'readRecorderDir (rows in memory)',
  import: 'import into a fresh store',
};
for (const k of ['baseline', 'read', 'import'] as const) {
  const s = median(runs[k].map((r) => r.s));
  const cpu = median(runs[k].map((r) => r.cpu_s));
  const rss = Math.max(...runs[k].map((r) => r.rss_mb));
  console.log(`${names[k].padEnd(42)} ${s.toFixed(3).padStart(7)} s wall ${cpu.toFixed(3).padStart(7)} s CPU ${(runs[k][0]!.dispatches / s / 1e3).toFixed(0).padStart(6)}k dispatches/s ${(s / base).toFixed(0).padStart(5)}x baseline  peak RSS ${rss.toFixed(0)} MB`);
}
