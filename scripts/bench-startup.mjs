/**
 * Start-up benchmark: whole processes, median of N (default 5), each figure
 * with a baseline measured in the same run and the ratio.
 *   node -e 0                      vs  tickwise --help / --version / ceiling from numbers
 *   a minimal @duckdb/node-api script running the verb's SQL on the store
 *                                  vs  tickwise kernels / gaps on the same store
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

function median(cmd, args, env = {}) {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { stdio: 'ignore', env: { ...process.env, ...env } });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: exit ${r.status}`);
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
}

const nodeMs = median('node', ['-e', '0']);
const minimalMs = median('node', [minimal, db]);
const rows = [
  ['tickwise --help', median(tickwise, ['--help']), 'node -e 0', nodeMs, 2],
  ['tickwise --version', median(tickwise, ['--version']), 'node -e 0', nodeMs, 2],
  ['tickwise ceiling (numbers)', median(tickwise, ['ceiling', '--gpu-group-ms', '0.40', '--npu-tile-ms', '6.0', '--rows', '8192']), 'node -e 0', nodeMs, 2],
  ['tickwise kernels store', median(tickwise, ['kernels', db]), 'minimal DuckDB script', minimalMs, 1.5],
  ['tickwise gaps store', median(tickwise, ['gaps', db, '--min-gap', '200us']), 'minimal DuckDB script', minimalMs, 1.5],
  ['tickwise provenance --help', median(tickwise, ['provenance', '--help']), 'node -e 0', nodeMs, 2],
  ['tickwise --help (from source, tsx)', median(tickwise, ['--help'], { TICKWISE_FROM_SOURCE: '1' }), 'node -e 0', nodeMs, null],
];
console.log(`start-up, whole processes, median of ${runs} (wall ms)`);
console.log('step'.padEnd(36) + 'ms'.padStart(8) + '  baseline'.padEnd(26) + 'ms'.padStart(8) + 'ratio'.padStart(8) + '  goal');
for (const [name, ms, base, baseMs, goal] of rows) {
  const ratio = ms / baseMs;
  console.log(name.padEnd(36) + ms.toFixed(0).padStart(8) + ('  ' + base).padEnd(26) + baseMs.toFixed(0).padStart(8) + ratio.toFixed(2).padStart(8) + (goal ? `  <= ${goal}x ${ratio <= goal ? 'ok' : 'MISSED'}` : ''));
}
rmSync(work, { recursive: true, force: true });
