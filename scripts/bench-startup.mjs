/**
 * Start-up benchmark: whole processes, median of N (default 5), each figure
 * with a baseline measured in the same run and the ratio.
 *   node -e 0                      vs  tickwise --help / --version / ceiling from numbers
 *   a minimal @duckdb/node-api script running the verb's SQL on the store
 *                                  vs  tickwise kernels / gaps on the same store
 * Each step runs alternately with its baseline (a load change moves both).
 * Usage: scripts/bench-startup [--runs N]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const runsAt = process.argv.indexOf('--runs');
const runs = runsAt > 0 ? Number(process.argv[runsAt + 1]) : 5;
const tickwise = join(root, 'scripts/tickwise');
const work = mkdtempSync(join(tmpdir(), 'tickwise-bench-startup-'));
const db = join(work, 'sample.duckdb');
execFileSync(tickwise, ['--version']); // build once, outside the timings
execFileSync(tickwise, ['import', join(root, 'captures/sample/igpu-prefill.ireeperf.jsonl'), '--db', db], { stdio: 'ignore' });

const duckdbApi = createRequire(join(root, 'packages/store/package.json')).resolve('@duckdb/node-api');
const minimal = join(work, 'minimal.mjs');
writeFileSync(minimal, `import { DuckDBInstance } from ${JSON.stringify(duckdbApi)};
const db = await DuckDBInstance.create(process.argv[2], { access_mode: 'READ_ONLY' });
const c = await db.connect();
const r = await c.runAndReadAll("select kernel, count(*), sum(dur_ns), avg(dur_ns) from dispatches group by 1 order by 3 desc");
console.log(r.getRows().length);
`);

function once(cmd, args, env = {}) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { stdio: 'ignore', env: { ...process.env, ...env } });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}`);
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/**
 * The step and its baseline run alternately, `runs` times each, so that a
 * change in the machine's load moves both: the medians of each.
 */
function paired(cmd, args, base, env = {}) {
  const mine = [];
  const theirs = [];
  for (let i = 0; i < runs; i++) {
    theirs.push(once(...base));
    mine.push(once(cmd, args, env));
  }
  return [median(mine), median(theirs)];
}

const NODE = ['node', ['-e', '0']];
const MINIMAL = ['node', [minimal, db]];
const row = (name, args, baseName, base, goal, env = {}) => {
  const [ms, baseMs] = paired(tickwise, args, base, env);
  return [name, ms, baseName, baseMs, goal];
};
const rows = [
  row('tickwise --help', ['--help'], 'node -e 0', NODE, 2),
  row('tickwise --version', ['--version'], 'node -e 0', NODE, 2),
  // issue 16 asks these two not to load DuckDB (cli/test/startup.test.ts checks it), not for a ratio
  row('tickwise ceiling (numbers)', ['ceiling', '--gpu-group-ms', '0.40', '--npu-tile-ms', '6.0', '--rows', '8192'], 'node -e 0', NODE, null),
  row('tickwise kernels store', ['kernels', db], 'minimal DuckDB script', MINIMAL, 1.5),
  row('tickwise gaps store', ['gaps', db, '--min-gap', '200us'], 'minimal DuckDB script', MINIMAL, 1.5),
  // a verb's own help: rendered at build time like the verb list (TICKWISE_NO_STATIC_HELP=1: laid out by the CLI, which loads the verb)
  row('tickwise import --help', ['import', '--help'], 'node -e 0', NODE, 2),
  row('tickwise import --help (laid out)', ['import', '--help'], 'node -e 0', NODE, null, { TICKWISE_NO_STATIC_HELP: '1' }),
  row('tickwise --help (from source, tsx)', ['--help'], 'node -e 0', NODE, null, { TICKWISE_FROM_SOURCE: '1' }),
];
console.log(`start-up, whole processes, median of ${runs} (wall ms)`);
console.log('step'.padEnd(36) + 'ms'.padStart(8) + '  baseline'.padEnd(26) + 'ms'.padStart(8) + 'ratio'.padStart(8) + '  goal');
for (const [name, ms, base, baseMs, goal] of rows) {
  const ratio = ms / baseMs;
  console.log(name.padEnd(36) + ms.toFixed(0).padStart(8) + ('  ' + base).padEnd(26) + baseMs.toFixed(0).padStart(8) + ratio.toFixed(2).padStart(8) + (goal ? `  <= ${goal}x ${ratio <= goal ? 'ok' : 'MISSED'}` : ''));
}
rmSync(work, { recursive: true, force: true });
