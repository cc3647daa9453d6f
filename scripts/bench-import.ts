/**
 * Import benchmark: tickwise's import end to end versus DuckDB's raw
 * read_json of the same file into a table, measured in one run.
 *
 *   scripts/bench-import [--mb 600] [--file existing.jsonl] [--reps 3]
 *
 * Generates a seeded ireeperf-jsonl file (scripts/gen-sample --big), then
 * alternates, in fresh child processes: (a) raw: `CREATE TABLE AS SELECT *
 * FROM read_json(file, <the same explicit columns>)` into a file-backed
 * DuckDB, and (b) `tickwise import file --db x.duckdb` (atomic write, clock
 * fit, all tables). Prints median wall time, MB/s, rows/s, peak RSS of each
 * and the ratio of throughputs. Target: ratio >= 0.9, peak RSS < 1.5 GB at 2 GB.
 * Then the same two as whole processes, start-up included (`--no-cli`: not):
 * the raw read by a plain node process that loads DuckDB's node API and
 * nothing else, and `tickwise import` by the built CLI as a user runs it
 * (scripts/build-cli.mjs, built first when stale). Then `check:` compares
 * the last import with the raw read (a mismatch exits 1).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { option as opt } from './bench-child';

const root = resolve(import.meta.dirname, '..');
const mb = Number(opt('mb', '600'));
const reps = Number(opt('reps', '3'));
let file = opt('file', '');
const work = join(tmpdir(), 'tickwise-bench-import');
spawnSync('mkdir', ['-p', work]);
if (!file) {
  // seeded, so a file of the same size from an earlier run is the same file
  file = join(work, `big-${mb}mb.ireeperf.jsonl`);
}
if (!existsSync(file)) {
  console.error(`generating ${mb} MB (seeded) -> ${file}`);
  const g = spawnSync(join(root, 'scripts/gen-sample'), ['--big', file, '--mb', String(mb)], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (g.status !== 0) process.exit(g.status ?? 1);
}
const bytes = statSync(file).size;

const loader = join(root, 'node_modules/tsx/dist/loader.mjs');
function child(kind: 'raw' | 'import'): { s: number; rows: number; rss_mb: number } {
  const db = join(work, `${kind}.duckdb`);
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  const code = `
    import { Store } from '@tickwise/store';
    import { importInput, ireeperfColumnsSql } from '@tickwise/capture';
    import { withAtomicStore } from '@tickwise/store';
    // DuckDB's native library loads when the first store opens: module loading, not counted
    await (await import('@tickwise/store')).loadDuckdb();
    const t0 = performance.now();
    let rows = 0;
    if (${JSON.stringify(kind)} === 'raw') {
      const s = await Store.open(${JSON.stringify(db)});
      await s.run("CREATE TABLE raw AS SELECT * FROM read_json(" + ${JSON.stringify(`'${file}'`)} + ", format = 'newline_delimited', columns = " + ireeperfColumnsSql() + ")");
      rows = Number(await s.scalar('SELECT count(*) FROM raw'));
      await s.close();
    } else {
      const r = await withAtomicStore(${JSON.stringify(db)}, (s) => importInput(s, ${JSON.stringify(file)}));
      rows = r.records;
    }
    const s = (performance.now() - t0) / 1000;
    console.log(JSON.stringify({ s, rows, rss_mb: process.resourceUsage().maxRSS / 1024 }));
  `;
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', loader, '--input-type=module', '-e', code], {
    cwd: join(root, 'packages/cli'),
    encoding: 'utf8',
  });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

/**
 * One run as a whole process, timed from spawn to exit: `raw`, DuckDB's raw
 * read in a plain node process (its node API, no tickwise code, no tsx:
 * what a user's own script would cost, start-up and checkpoint included);
 * `cli`, the built CLI's `tickwise import` into a fresh store.
 */
function wholeProcess(kind: 'raw' | 'cli', columnsSql: string): number {
  const db = join(work, kind === 'raw' ? 'raw-process.duckdb' : 'cli.duckdb');
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  const code = `
    import { DuckDBInstance } from '@duckdb/node-api';
    const db = await DuckDBInstance.create(${JSON.stringify(db)});
    const c = await db.connect();
    await c.run(${JSON.stringify(`CREATE TABLE raw AS SELECT * FROM read_json('${file}', format = 'newline_delimited', columns = ${columnsSql})`)});
    await c.run('CHECKPOINT');
    c.closeSync();
    db.closeSync();
  `;
  const argv = kind === 'raw' ? ['--input-type=module', '-e', code] : [join(root, 'packages/cli/dist/tickwise.mjs'), 'import', file, '--db', db];
  const t0 = performance.now();
  const r = spawnSync(process.execPath, argv, { cwd: join(root, 'packages/store'), encoding: 'utf8' });
  const s = (performance.now() - t0) / 1000;
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  return s;
}

const withCli = !process.argv.includes('--no-cli');
if (withCli) spawnSync(process.execPath, [join(root, 'scripts/build-cli.mjs'), '--if-stale'], { stdio: 'inherit' });
// the reader's explicit columns, as the raw child reads them (asked of @tickwise/capture where it resolves)
const columnsSql = withCli ? spawnSync(process.execPath, ['--conditions=source', '--import', loader, '--input-type=module', '-e',
  "import { ireeperfColumnsSql } from '@tickwise/capture'; process.stdout.write(ireeperfColumnsSql());"], { cwd: join(root, 'packages/cli'), encoding: 'utf8' }).stdout : '';
const raw: ReturnType<typeof child>[] = [];
const imp: ReturnType<typeof child>[] = [];
const rawProc: number[] = [];
const cliProc: number[] = [];
for (let i = 0; i < reps; i++) {
  raw.push(child('raw'));
  imp.push(child('import'));
  if (withCli) {
    rawProc.push(wholeProcess('raw', columnsSql));
    cliProc.push(wholeProcess('cli', columnsSql));
  }
  console.error(`rep ${i + 1}: raw ${raw.at(-1)!.s.toFixed(2)} s, import ${imp.at(-1)!.s.toFixed(2)} s${withCli ? `; whole processes: raw ${rawProc.at(-1)!.toFixed(2)} s, CLI import ${cliProc.at(-1)!.toFixed(2)} s` : ''}`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const row = (name: string, runs: ReturnType<typeof child>[]) => {
  const s = median(runs.map((r) => r.s));
  return { name, median_s: s, mb_per_s: bytes / 1e6 / s, rows_per_s: runs[0]!.rows / s, peak_rss_mb: Math.max(...runs.map((r) => r.rss_mb)) };
};
const a = row('duckdb read_json -> table (raw scan)', raw);
const b = row('tickwise import (end to end)', imp);
console.log(`file: ${file} (${(bytes / 1e6).toFixed(0)} MB, ${raw[0]!.rows} records), ${reps} reps, median`);
for (const r of [a, b]) {
  console.log(`${r.name.padEnd(40)} ${r.median_s.toFixed(2).padStart(7)} s ${r.mb_per_s.toFixed(0).padStart(6)} MB/s ${(r.rows_per_s / 1e6).toFixed(2).padStart(6)} Mrows/s  peak RSS ${r.peak_rss_mb.toFixed(0)} MB`);
}
console.log(`ratio import/raw throughput: ${(b.mb_per_s / a.mb_per_s).toFixed(2)}x (target >= 0.9x)`);
if (withCli) {
  const [rp, cp] = [median(rawProc), median(cliProc)];
  console.log(`whole processes, start-up included: raw read (node + DuckDB's node API) ${rp.toFixed(2)} s, tickwise import (the built CLI) ${cp.toFixed(2)} s: ${(rp / cp).toFixed(2)}x`);
}

// The last import's store against the raw read of the same file (both stores are left by the last rep): every
// dispatch_event's (event, ticks) is a dispatch, nothing more or less, and every record of a type without a table
// of its own is a raw record. A mismatch exits 1.
{
  const code = `
    import { Store } from '@tickwise/store';
    import { IREEPERF_TABLED_TYPES } from '@tickwise/capture';
    const s = await Store.open(':memory:');
    await s.run("ATTACH '${join(work, 'raw.duckdb')}' AS r (READ_ONLY)");
    await s.run("ATTACH '${join(work, 'import.duckdb')}' AS i (READ_ONLY)");
    const q = async (sql) => Number(await s.scalar(sql));
    const d = "SELECT event_id, start_tick, end_tick FROM r.raw WHERE record_type = 'dispatch_event'";
    const missing = await q('SELECT count(*) FROM (' + d + ' EXCEPT ALL SELECT event_id, start_tick, end_tick FROM i.dispatches WHERE start_tick IS NOT NULL)');
    const extra = await q('SELECT count(*) FROM (SELECT event_id, start_tick, end_tick FROM i.dispatches WHERE start_tick IS NOT NULL EXCEPT ALL ' + d + ')');
    const n = await q("SELECT count(*) FROM r.raw WHERE record_type = 'dispatch_event'");
    const tabled = await q('SELECT count(*) FROM i.raw_records');
    const rawWant = await q('SELECT count(*) FROM r.raw WHERE record_type NOT IN (' + IREEPERF_TABLED_TYPES.map((t) => "'" + t + "'").join(', ') + ')');
    const ok = missing === 0 && extra === 0 && tabled === rawWant;
    console.log(ok ? 'every dispatch_event is a dispatch with its ticks (' + n + '), every untabled record a raw record (' + tabled + ')'
      : 'MISMATCH: ' + missing + ' dispatch_event(s) missing, ' + extra + ' extra dispatch(es), raw records ' + tabled + ' of ' + rawWant);
    process.exit(ok ? 0 : 1);
  `;
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', loader, '--input-type=module', '-e', code], { cwd: join(root, 'packages/cli'), encoding: 'utf8' });
  console.log(`check: ${r.stdout.trim() || r.stderr.trim().split('\n').slice(-5).join('\n')}`);
  if (r.status !== 0) process.exitCode = 1;
}
