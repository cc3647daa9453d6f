import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERBS } from '../src/commands/index';

const root = resolve(import.meta.dirname, '../../..');
const tickwise = join(root, 'scripts/tickwise');
const bundle = join(root, 'packages/cli/dist/tickwise.mjs');
const logLoads = join(import.meta.dirname, 'fixtures/log-loads.mjs');
const sample = join(root, 'captures/sample/igpu-prefill.ireeperf.jsonl');

/** Runs the built CLI with the load logger; returns the URLs it loaded and its exit code. */
function loads(args: string[]): { urls: string[]; rc: number | null; stdout: string } {
  const r = spawnSync('node', ['--import', logLoads, bundle, ...args], { encoding: 'utf8', cwd: root });
  const urls = r.stderr.split('\n').filter((l) => l.startsWith('load: ')).map((l) => l.slice(6));
  return { urls, rc: r.status, stdout: r.stdout };
}

beforeAll(() => {
  // the wrapper builds when the build is missing or older than a source
  execFileSync(tickwise, ['--version']);
});

describe('the verb list', () => {
  it('each verb\'s registry entry (used by --help) says what its module says', async () => {
    for (const v of VERBS) {
      const m = await v.load();
      expect(String(m.command).split(' ')[0], v.name).toBe(v.name);
      expect(m.describe, v.name).toBe(v.describe);
    }
  });

  it('--help lists every verb; --version prints the version', () => {
    const help = execFileSync(tickwise, ['--help'], { encoding: 'utf8' });
    for (const v of VERBS) expect(help).toContain(`tickwise ${v.name}`);
    expect(execFileSync(tickwise, ['--version'], { encoding: 'utf8' })).toMatch(/^tickwise \d+\.\d+\.\d+\n$/);
  });

  // runs the built CLI at a terminal width; whether it loaded the CLI (main.mjs) or printed a text rendered by the build
  const at = (columns: number, args: string[], env: NodeJS.ProcessEnv = {}) => {
    const r = spawnSync('node', ['--import', `data:text/javascript,Object.defineProperty(process.stdout,"columns",{value:${columns}})`, '--import', logLoads, bundle, ...args],
      { encoding: 'utf8', cwd: root, env: { ...process.env, ...env } });
    return { out: r.stdout, rc: r.status, loadedMain: r.stderr.split('\n').some((l) => l.startsWith('load: ') && l.includes('/main.mjs')) };
  };

  it('tickwise --help, rendered at build time at 80, 100 and 110 columns, is what the CLI itself lays out (and any other width falls back to it)', () => {
    for (const columns of [80, 100, 110, 95]) {
      const laidOut = at(columns, ['--help'], { TICKWISE_NO_STATIC_HELP: '1' });
      expect(laidOut.loadedMain).toBe(true);
      const fast = at(columns, ['--help']);
      expect(fast.rc).toBe(0);
      expect(fast.out, `${columns} columns`).toBe(laidOut.out);
      expect(fast.loadedMain, `${columns} columns`).toBe(columns === 95);
      for (const v of VERBS) expect(fast.out).toContain(`tickwise ${v.name}`);
    }
  });

  it('tickwise <verb> --help, rendered at build time, is what the CLI lays out for every verb (a mistyped verb and other widths go to the CLI)', () => {
    for (const v of VERBS) {
      const fast = at(100, [v.name, '--help']);
      const laidOut = at(100, [v.name, '--help'], { TICKWISE_NO_STATIC_HELP: '1' });
      expect(laidOut.loadedMain, v.name).toBe(true);
      expect(fast.loadedMain, v.name).toBe(false);
      expect(fast.rc, v.name).toBe(0);
      expect(fast.out, v.name).toBe(laidOut.out);
      expect(fast.out, v.name).toMatch(new RegExp(`^tickwise ${v.name}\\b`));
    }
    for (const columns of [80, 110, 95]) {
      for (const name of ['import', 'gaps', 'report']) {
        const fast = at(columns, [name, '--help']);
        expect(fast.out, `${name} at ${columns}`).toBe(at(columns, [name, '--help'], { TICKWISE_NO_STATIC_HELP: '1' }).out);
        expect(fast.loadedMain, `${name} at ${columns}`).toBe(columns === 95);
      }
    }
    const typo = at(100, ['gap', '--help']);
    expect(typo.rc).toBe(2);
    expect(typo.loadedMain).toBe(true);
  });

  it('a mistyped verb gets a suggestion and exit 2', () => {
    const r = spawnSync(tickwise, ['gap', 'run.duckdb'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('did you mean `gaps`?');
  });
});

describe('start-up loads only what the verb needs', () => {
  // (a verb's own --help loads that verb's module; DuckDB and SQLite load only when a store or a rocpd file is opened)
  it('--help, --version and a mistyped verb load neither DuckDB nor the chart libraries', () => {
    for (const args of [['--help'], ['--version'], ['gap']]) {
      const r = loads(args);
      expect(r.rc, args.join(' ')).toBe(args[0] === 'gap' ? 2 : 0);
      expect(r.urls.length, args.join(' ')).toBeGreaterThan(0);
      expect(r.urls.filter((u) => /duckdb|better-sqlite3|vega/.test(u)), args.join(' ')).toEqual([]);
    }
  });

  it('ceiling from numbers and a verb\'s own --help load neither DuckDB nor SQLite (the store loads them when it opens)', () => {
    const ceiling = loads(['ceiling', '--rows', '8192', '--gpu-group-ms', '0.40', '--npu-tile-ms', '6.0']);
    expect(ceiling.rc).toBe(0);
    expect(ceiling.stdout).toContain('8192');
    for (const r of [ceiling, loads(['provenance', '--help']), loads(['kernels', '--help'])]) {
      expect(r.urls.length).toBeGreaterThan(0);
      expect(r.urls.filter((u) => /duckdb|better-sqlite3|vega/.test(u))).toEqual([]);
    }
  });

  it('an analysis verb loads DuckDB (the logger sees real loads)', () => {
    const r = loads(['gaps', sample, '--min-gap', '200us']);
    expect(r.rc).toBe(0);
    expect(r.urls.some((u) => u.includes('duckdb'))).toBe(true);
    expect(r.urls.filter((u) => /vega/.test(u))).toEqual([]);
  });

  it('only the notebook runner loads the chart libraries: every other verb\'s module, a Perfetto export and a report run leave them out', () => {
    const work = mkdtempSync(join(tmpdir(), 'tickwise-loads-'));
    try {
      // the build bundles vega: a loaded chunk holds it when esbuild's module comments name it (or node_modules does)
      const charts = (r: { urls: string[] }) => r.urls.some((u) => /vega/.test(u) || (u.startsWith('file:') && u.endsWith('.mjs')
        && /^\/\/ node_modules\/\S*vega/m.test(readFileSync(new URL(u), 'utf8'))));
      for (const v of VERBS) {
        if (v.name === 'notebook') continue;
        const r = loads([v.name, '--help']);
        expect(r.rc, v.name).toBe(0);
        expect(charts(r), v.name).toBe(false);
      }
      // (the export and the report share their package with the notebook runner: both once loaded vega-lite's
      // compiler, ~0.2 s of start-up; the report inlines the chart libraries' files as text, it does not run them)
      const out = join(work, 'trace.json');
      const r = loads(['export', sample, '--format', 'perfetto-json', '--out', out]);
      expect(r.rc).toBe(0);
      expect(r.urls.some((u) => u.includes('duckdb'))).toBe(true);
      expect(charts(r)).toBe(false);
      expect((JSON.parse(readFileSync(out, 'utf8')) as { traceEvents: unknown[] }).traceEvents.length).toBeGreaterThan(100);
      const html = join(work, 'report.html');
      const report = loads(['report', sample, '--out', html]);
      expect(report.rc).toBe(0);
      expect(charts(report)).toBe(false);
      expect(readFileSync(html, 'utf8')).toContain('vega-lite');
      // the check sees vega where it is loaded
      const db = join(work, 'sample.duckdb');
      expect(loads(['import', sample, '--db', db]).rc).toBe(0);
      const nb = loads(['notebook', 'run', join(root, 'notebooks', 'idle-anatomy.md'), '--db', db, '--out', join(work, 'nb.html')]);
      expect(nb.rc).toBe(0);
      expect(charts(nb)).toBe(true);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  });
});

describe('npm pack gives an installable tickwise command', () => {
  const work = mkdtempSync(join(tmpdir(), 'tickwise-pack-test-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('installs from the tarball and runs from any folder', () => {
    const tgz = execFileSync('node', [join(root, 'scripts/pack-cli.mjs'), '--out', work], { encoding: 'utf8' }).trim();
    expect(tgz).toMatch(/tickwise-\d+\.\d+\.\d+\.tgz$/);
    const prefix = join(work, 'prefix');
    // --ignore-scripts: better-sqlite3's native build (rocpd only) is not needed to run the verbs here
    execFileSync('npm', ['install', '-g', '--ignore-scripts', '--no-audit', '--no-fund', '--prefix', prefix, tgz], { stdio: 'ignore', env: { ...process.env, npm_config_nodedir: '/usr' } });
    const bin = join(prefix, 'bin/tickwise');
    expect(execFileSync(bin, ['--version'], { encoding: 'utf8', cwd: '/' })).toMatch(/^tickwise \d+\.\d+\.\d+\n$/);
    const out = execFileSync(bin, ['kernels', sample, '--json'], { encoding: 'utf8', cwd: work });
    expect(JSON.parse(out)).toBeTruthy();
    // the native JSON scanner came with it (scripts/setup built it): on a trace cut off in its last event it runs
    // first (TICKWISE_JSONSCAN=always: a file this small is otherwise scanned in-process), stops, and says so
    // (TICKWISE_TRACE_SCAN), then the TypeScript scanner imports the events before the cut
    const cut = join(work, 'cut.json');
    writeFileSync(cut, '{"traceEvents":[\n{"ph":"X","cat":"kernel","name":"k","pid":1,"tid":2,"ts":1,"dur":2},\n{"ph":"s","name":"f","id":1,"pid":1,"tid":2,"ts":1},\n{"ph":"X","cat":"ke');
    const run = spawnSync(bin, ['import', cut, '--db', join(work, 'cut.duckdb')], { encoding: 'utf8', cwd: '/', env: { ...process.env, TICKWISE_TRACE_SCAN: '1', TICKWISE_JSONSCAN: 'always' } });
    expect(run.status, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/tw-jsonscan: the input ends inside a record or value; the TypeScript scanner reads/);
  }, 600_000);
});
