/**
 * Scale benchmark: imports and analyses of captures with many devices, each
 * against the same number of rows on 2 devices, measured in the same run
 * (whole `tickwise` processes, as a user runs them). What it guards: work
 * per device (a statement, a scan, a query per pair of devices) that turns
 * a merged multi-node trace or a many-tile profile into minutes.
 *
 *   scripts/bench-scale [--reps 1] [--dir /tmp/tickwise-bench-scale]
 *
 * Prints, per case, the baseline (2 devices) and the many-device wall time
 * and their ratio; the captures are generated (packages/capture/test/many-devices-gen.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { heteromosaicTrace, hrxProfiles, ireeperfStream, kinetoTrace } from '../packages/capture/test/many-devices-gen';

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const reps = Number(opt('reps', '1'));
const dir = opt('dir', join(tmpdir(), 'tickwise-bench-scale'));
const tickwise = join(resolve(import.meta.dirname, '..'), 'scripts/tickwise');
mkdirSync(dir, { recursive: true });

/** Median wall seconds of `reps` runs of `tickwise ...args` (each run after `before`, untimed). */
function timed(argv: string[], before?: () => void): number {
  const xs: number[] = [];
  for (let r = 0; r < reps; r++) {
    before?.();
    const t0 = process.hrtime.bigint();
    const p = spawnSync(tickwise, argv, { stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    if (p.status !== 0) throw new Error(`tickwise ${argv.join(' ')}: exit ${p.status}\n${p.stderr}`);
    xs.push(s);
  }
  return xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}

function importTime(file: string, db: string): number {
  return timed(['import', file, '--db', db], () => rmSync(db, { force: true }));
}

const rows: [string, string, number, string, number][] = [];
function row(what: string, base: string, baseS: number, many: string, manyS: number): void {
  rows.push([what, base, baseS, many, manyS]);
  console.log(`${what.padEnd(34)} ${base.padEnd(22)} ${baseS.toFixed(2).padStart(6)} s   ${many.padEnd(24)} ${manyS.toFixed(2).padStart(6)} s   ${(manyS / baseS).toFixed(2)}x`);
}

console.log(`bench-scale: node ${process.version}, ${cpus().length} cores, median of ${reps}; load average ${loadavg()[0]!.toFixed(2)}; files in ${dir}`);
const db = (name: string) => join(dir, `${name}.duckdb`);
row('import Chrome trace (Kineto)', '200k kernels, 2 GPUs', importTime(kinetoTrace(dir, 2, 200_000), db('k2')),
  '200k kernels, 2000 GPUs', importTime(kinetoTrace(dir, 2000, 200_000), db('k2000')));
row('import HeteroMosaic', '20k stages, 2 labels', importTime(heteromosaicTrace(dir, 2, 20_000), db('hm2')),
  '20k stages, 2000 labels', importTime(heteromosaicTrace(dir, 2000, 20_000), db('hm2000')));
row('import hrx DeviceProfile', '2 x 10k intervals', importTime(hrxProfiles(dir, 2, 10_000), db('hrx2')),
  '1000 x 20 intervals', importTime(hrxProfiles(dir, 1000, 20), db('hrx1000')));
row('import ireeperf-jsonl', '2 x 10k dispatches', importTime(ireeperfStream(dir, 2, 10_000), db('iree2')),
  '500 x 40 dispatches', importTime(ireeperfStream(dir, 500, 40), db('iree500')));
// segmentation: every device searched (a few statements per device were 20 s for 1000 devices)
for (const verb of ['segments', 'check']) {
  row(`tickwise ${verb}`, '200k kernels, 2 GPUs', timed([verb, db('k2')]), '200k kernels, 2000 GPUs', timed([verb, db('k2000')]));
}
// analyses: every device busy at once (a data-parallel step), 200k kernels
importTime(kinetoTrace(dir, 2, 200_000, true), db('c2'));
importTime(kinetoTrace(dir, 64, 200_000, true), db('c64'));
for (const verb of ['overlap', 'gaps', 'kernels', 'launches', 'report']) {
  const out = verb === 'report' ? ['--out', join(dir, 'report.html')] : [];
  row(`tickwise ${verb} (all busy at once)`, '200k kernels, 2 GPUs', timed([verb, db('c2'), ...out]), '200k kernels, 64 GPUs', timed([verb, db('c64'), ...out]));
}
console.log('\nmarkdown:\n| step | baseline | s | many devices | s | ratio |\n| --- | --- | --- | --- | --- | --- |');
for (const [w, b, bs, m, ms] of rows) console.log(`| ${w} | ${b} | ${bs.toFixed(2)} | ${m} | ${ms.toFixed(2)} | ${(ms / bs).toFixed(2)}x |`);
