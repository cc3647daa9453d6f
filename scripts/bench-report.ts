/**
 * Report and Perfetto-export benchmark (issue 16.6): whole `tickwise report`
 * and `tickwise export --format perfetto-json` processes on a generated store
 * of N dispatches, against a baseline measured in the same run: a fresh
 * process that opens the same store and streams every dispatch row into
 * JavaScript once (the least any report or export must do).
 *
 *   scripts/bench-report [--dispatches 1000000] [--reps 3] [--db path.duckdb]
 *
 * Prints, per step, the median wall time of --reps fresh processes, the peak
 * RSS (GNU time), the ratio to the baseline, slices/s for the export, and the
 * issue's goal (report <= 10 s and export >= 500k slices/s for 1 M).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Store } from '../packages/store/src/index';
import { median } from '../packages/time/src/index';
import { BENCH_SEED, generateBenchStore } from './bench-store';

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const ROOT = resolve(import.meta.dirname, '..');

/** The baseline, in a fresh process: every dispatch row streamed into JS once. */
async function baselineChild(db: string): Promise<void> {
  const store = await Store.open(db, { readOnly: true });
  let n = 0;
  for await (const chunk of store.stream('SELECT * FROM dispatches ORDER BY capture_id, device, start_ns')) n += chunk.length;
  await store.close();
  process.stdout.write(`${n}\n`);
}

interface Run {
  s: number;
  rss_mb: number | null;
}

/** One fresh process under GNU time: wall seconds and peak RSS. */
function timed(argv: string[]): Run {
  const hasTime = existsSync('/usr/bin/time');
  const cmd = hasTime ? '/usr/bin/time' : argv[0]!;
  const full = hasTime ? ['-f', 'TICKWISE_BENCH_RSS_KB=%M', ...argv] : argv.slice(1);
  const t0 = performance.now();
  const r = spawnSync(cmd, full, { encoding: 'utf8', cwd: ROOT, maxBuffer: 1 << 26 });
  const s = (performance.now() - t0) / 1000;
  if (r.status !== 0) {
    console.error(`bench-report: ${argv.join(' ')} failed (${r.status}):\n${r.stderr}`);
    process.exit(1);
  }
  const kb = /TICKWISE_BENCH_RSS_KB=(\d+)/.exec(r.stderr)?.[1];
  return { s, rss_mb: kb === undefined ? null : Number(kb) / 1024 };
}

async function main(): Promise<void> {
  if (args[0] === '--child') return baselineChild(args[1]!);
  const n = Number(opt('dispatches', '1000000'));
  const reps = Number(opt('reps', '3'));
  const work = join(tmpdir(), 'tickwise-bench-report');
  mkdirSync(work, { recursive: true });
  const db = resolve(opt('db', join(work, `bench-${n}.duckdb`)));
  if (!existsSync(db)) {
    console.error(`generating ${n} dispatches on 2 devices (seed ${BENCH_SEED}) -> ${db}`);
    await generateBenchStore(db, n);
  }
  const tickwise = join(ROOT, 'scripts/tickwise');
  timed([tickwise, '--version']); // builds the CLI first when a source is newer: not timed below
  const html = join(work, 'report.html');
  const trace = join(work, 'trace.json');
  const steps: { name: string; argv: string[]; slices?: number }[] = [
    { name: 'baseline: stream every dispatch row into JS', argv: [process.execPath, ...process.execArgv, process.argv[1]!, '--child', db] },
    { name: 'tickwise report --out report.html', argv: [tickwise, 'report', db, '--out', html] },
    { name: 'tickwise export --format perfetto-json', argv: [tickwise, 'export', db, '--format', 'perfetto-json', '--out', trace], slices: n },
  ];
  const load0 = loadavg()[0]!;
  const results = steps.map((step) => {
    const runs: Run[] = [];
    for (let r = 0; r < reps; r++) runs.push(timed(step.argv));
    const rss = runs.map((x) => x.rss_mb).filter((x): x is number => x !== null);
    return { step, s: median(runs.map((x) => x.s)), rss_mb: rss.length ? Math.max(...rss) : null };
  });
  const base = results[0]!.s;
  console.log(`bench-report: ${n} dispatches on 2 devices (${db}); node ${process.version}, ${cpus().length} cores, ` +
    `median of ${reps} fresh processes; load average ${load0.toFixed(2)} before, ${loadavg()[0]!.toFixed(2)} after`);
  for (const r of results) {
    const extra = r.step.slices ? `   ${Math.round(r.step.slices / r.s).toLocaleString('en-US')} slices/s (goal >= 500,000)` : r.step.name.includes('report') ? `   (goal <= 10 s for 1 M)` : '';
    console.log(`${r.step.name.padEnd(46)} ${r.s.toFixed(2).padStart(7)} s   ratio ${(r.s / base).toFixed(2).padStart(6)}x   peak RSS ${r.rss_mb === null ? '?' : r.rss_mb.toFixed(0)} MB${extra}`);
  }
  console.log(`outputs: report ${(statSync(html).size / 1e6).toFixed(1)} MB, trace ${(statSync(trace).size / 1e6).toFixed(1)} MB`);
  rmSync(trace, { force: true });
}

await main();
