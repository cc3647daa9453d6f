#!/usr/bin/env node
/**
 * Builds the CLI once, so a call does not compile TypeScript (what tsx does
 * on every start): ES modules split per verb (a verb's code, DuckDB and the
 * chart libraries load only when that verb runs) in `packages/cli/dist/app-<id>/`,
 * and the entry `packages/cli/dist/tickwise.mjs`, one line importing the
 * newest build. Workspace packages are bundled from their sources, and so is
 * DuckDB's JavaScript API (@duckdb/node-api: ~100 small CommonJS modules,
 * 50-70 ms to resolve and load one by one, ~30 ms as part of the build);
 * packages with native parts (@duckdb/node-bindings, better-sqlite3) stay
 * external and load from node_modules. The chart libraries the HTML report inlines are copied into
 * the build (`vendor/`). Each build goes to a folder of its own and the entry
 * is replaced by rename, so concurrent builds and running processes never
 * see a half-written build; all but the newest three builds are removed.
 *
 *   node scripts/build-cli.mjs            build
 *   node scripts/build-cli.mjs --if-stale build only when a source is newer
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const dist = join(root, 'packages/cli/dist');
const out = join(dist, 'tickwise.mjs');
export const EXTERNAL = ['@duckdb/node-bindings', 'better-sqlite3'];
const VENDOR = [
  ['vega', 'vega.min.js'],
  ['vega-lite', 'vega-lite.min.js'],
  ['vega-embed', 'vega-embed.min.js'],
];

/** Newest mtime (ms) of the inputs of the build: package sources, manifests, this script. */
function newestInput() {
  let newest = statSync(import.meta.filename).mtimeMs;
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  for (const pkg of readdirSync(join(root, 'packages'))) {
    const src = join(root, 'packages', pkg, 'src');
    if (existsSync(src)) walk(src);
    const manifest = join(root, 'packages', pkg, 'package.json');
    if (existsSync(manifest)) newest = Math.max(newest, statSync(manifest).mtimeMs);
  }
  return newest;
}

export function isStale() {
  return !existsSync(out) || statSync(out).mtimeMs < newestInput();
}

/**
 * In the checkout build, the external packages are imported by absolute path
 * (they are dependencies of other workspace packages, not resolvable from
 * packages/cli/dist); the packed build (`portable`) keeps bare names, which
 * the published package.json lists as dependencies.
 */
function externalsByPath() {
  const owners = { '@duckdb/node-bindings': 'store', 'better-sqlite3': 'capture' };
  return {
    name: 'externals-by-path',
    setup(b) {
      b.onResolve({ filter: /^(@duckdb\/node-bindings|better-sqlite3)$/ }, (args) => {
        const req = createRequire(join(root, 'packages', owners[args.path], 'package.json'));
        return { path: req.resolve(args.path), external: true };
      });
    },
  };
}

/**
 * yargs lays out help with string-width, whose per-character Unicode
 * segmentation cost ~17 ms of every start-up (yargs lays out a verb's help
 * even when it runs the verb). Printable ASCII is one column a character, so
 * such strings are measured by their length; anything else still goes to
 * string-width.
 */
function asciiStringWidth() {
  return {
    name: 'ascii-string-width',
    setup(b) {
      b.onResolve({ filter: /^string-width$/ }, async (args) => {
        if (args.pluginData === 'real') return undefined;
        const real = await b.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, pluginData: 'real' });
        if (real.errors.length > 0) return undefined;
        return { path: real.path, namespace: 'tw-string-width' };
      });
      b.onLoad({ filter: /.*/, namespace: 'tw-string-width' }, (args) => ({
        contents: `import width from ${JSON.stringify(args.path)};
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
export default function stringWidth(s, options) {
  return typeof s === 'string' && PRINTABLE_ASCII.test(s) ? s.length : width(s, options);
}`,
        resolveDir: dirname(args.path),
      }));
    },
  };
}

/** The widths main.ts lays help out at: min(110, the terminal's columns), 100 when not a terminal. */
const HELP_WIDTHS = [80, 100, 110];

/**
 * The entry: `tickwise --help` (the verb list) and `tickwise <verb> --help`
 * print the texts rendered at build time (help-<width>.json: the verb's name
 * to its text, "" for the verb list) and `tickwise --version` the version,
 * without loading the CLI (yargs, the verb table and the verb's module are
 * most of its start-up); every other call imports the build's main.mjs,
 * `tickwise import` after early.mjs has started a large Chrome trace's scan.
 * `TICKWISE_NO_STATIC_HELP=1` lays the help out through the CLI (a test
 * compares the two).
 */
function entry(id, version) {
  return `#!/usr/bin/env node
// the newest build of the tickwise CLI (scripts/build-cli.mjs)
import { readFileSync } from 'node:fs';
let help;
const args = process.argv.slice(2);
if (args[0] === '--version' || args[0] === '-V') help = ${JSON.stringify(`tickwise ${version}
`)};
else if (args.at(-1) === '--help' && args.length <= 2 && !process.env.TICKWISE_NO_STATIC_HELP) {
  try {
    const texts = JSON.parse(readFileSync(new URL(\`./${id}/help-\${Math.min(110, process.stdout.columns || 100)}.json\`, import.meta.url), 'utf8'));
    const verb = args.length === 2 ? args[0] : '';
    if (Object.hasOwn(texts, verb)) help = texts[verb];
  } catch {
    // not rendered at this width: the CLI lays it out
  }
}
if (help !== undefined) process.stdout.write(help);
else {
  // a large Chrome trace's scan starts before the CLI loads (packages/cli/src/early.ts)
  if (args[0] === 'import') await import('./${id}/early.mjs').then((m) => m.importEarly(args)).catch(() => false);
  await import('./${id}/main.mjs');
}
`;
}

export async function build({ outFile = out, portable = false } = {}) {
  const { build: esbuild } = await import('esbuild');
  const version = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')).version;
  const id = `app-${Date.now().toString(36)}-${process.pid}`;
  const outDir = join(dirname(outFile), id);
  mkdirSync(join(outDir, 'vendor'), { recursive: true });
  await esbuild({
    entryPoints: [join(root, 'packages/cli/src/main.ts'), join(root, 'packages/cli/src/early.ts')],
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    conditions: ['source'],
    external: portable ? EXTERNAL : [],
    plugins: portable ? [asciiStringWidth()] : [externalsByPath(), asciiStringWidth()],
    define: { TICKWISE_VERSION: JSON.stringify(version), TICKWISE_BUNDLED: 'true' },
    // bundled CommonJS dependencies call require(): give the module one
    banner: { js: "import { createRequire as __twCreateRequire } from 'node:module'; const require = __twCreateRequire(import.meta.url);" },
    legalComments: 'none',
    logLevel: 'warning',
  });
  const req = createRequire(join(root, 'packages/report/package.json'));
  for (const [name, file] of VENDOR) {
    const entryDir = dirname(req.resolve(name));
    const pkgVersion = JSON.parse(readFileSync(join(entryDir, '..', 'package.json'), 'utf8')).version;
    const dest = join(outDir, 'vendor', file);
    copyFileSync(join(entryDir, file), `${dest}.tmp-${process.pid}`);
    renameSync(`${dest}.tmp-${process.pid}`, dest);
    writeFileSync(join(outDir, 'vendor', `${name}.version`), pkgVersion + '\n');
  }
  // every help text (`tickwise --help`, `tickwise <verb> --help`) rendered once here, by the CLI itself, at the
  // widths it lays help out at (one process, each verb loaded once)
  const r = spawnSync(process.execPath, [join(outDir, 'main.mjs')], { encoding: 'utf8', env: { ...process.env, TICKWISE_BUILD_HELP_WIDTHS: HELP_WIDTHS.join(',') } });
  let rendered = {};
  try {
    if (r.status === 0) rendered = JSON.parse(r.stdout);
  } catch {
    // not rendered: every help goes through the CLI
  }
  for (const width of HELP_WIDTHS) {
    if (rendered[width]?.[''] !== undefined) writeFileSync(join(outDir, `help-${width}.json`), JSON.stringify(rendered[width]));
  }
  const tmp = `${outFile}.tmp-${process.pid}`;
  writeFileSync(tmp, entry(id, version), { mode: 0o755 });
  renameSync(tmp, outFile);
  // older builds: keep the newest three, and any made in the last hour (a process may still be loading from it)
  const here = dirname(outFile);
  const builds = readdirSync(here).filter((n) => /^app-/.test(n)).map((n) => ({ n, t: statSync(join(here, n)).mtimeMs })).sort((a, b) => b.t - a.t);
  for (const old of builds.slice(3)) if (old.n !== id && Date.now() - old.t > 3_600_000) rmSync(join(here, old.n), { recursive: true, force: true });
  return outFile;
}

if (import.meta.filename === resolve(process.argv[1] ?? '')) {
  if (process.argv.includes('--if-stale') && !isStale()) process.exit(0);
  await build();
}
