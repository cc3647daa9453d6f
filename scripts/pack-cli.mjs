#!/usr/bin/env node
/**
 * Packs the CLI as one installable npm package, `tickwise-<version>.tgz`:
 * the built modules (scripts/build-cli.mjs, with the native packages left as
 * bare imports), the vendored chart libraries, the native JSON scanner
 * (native/jsonscan, when built), the README, and a
 * package.json whose only dependencies are those native packages.
 *
 *   node scripts/pack-cli.mjs [--out DIR]      (default: the current folder)
 *   npm install -g ./tickwise-<version>.tgz   then: tickwise --version
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EXTERNAL, build } from './build-cli.mjs';

const root = resolve(import.meta.dirname, '..');
const outAt = process.argv.indexOf('--out');
const outDir = resolve(outAt > 0 ? process.argv[outAt + 1] : '.');
const version = JSON.parse(readFileSync(join(root, 'packages/cli/package.json'), 'utf8')).version;

/** The pinned version of an external package, from the workspace package that depends on it. */
function pinned(name) {
  for (const pkg of ['store', 'capture']) {
    const deps = JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')).dependencies ?? {};
    if (deps[name]) return deps[name];
  }
  throw new Error(`pack-cli: no workspace package pins ${name}`);
}

const stage = mkdtempSync(join(tmpdir(), 'tickwise-pack-'));
try {
  await build({ outFile: join(stage, 'tickwise.mjs'), portable: true });
  copyFileSync(join(root, 'README.md'), join(stage, 'README.md'));
  // the native JSON scanner, where scripts/setup built it (Chrome traces and rocprofv3 JSON ~4x faster,
  // the ireeperf split): found next to the modules (json-records-native.ts); a machine that cannot run it
  // (another architecture, an older glibc) gets the TypeScript scanner, as one without it does
  const scanner = join(root, 'native/jsonscan/build/tw-jsonscan');
  if (existsSync(scanner)) {
    mkdirSync(join(stage, 'native/jsonscan/build'), { recursive: true });
    copyFileSync(scanner, join(stage, 'native/jsonscan/build/tw-jsonscan'));
    chmodSync(join(stage, 'native/jsonscan/build/tw-jsonscan'), 0o755);
  } else {
    console.error('pack-cli: native/jsonscan is not built (scripts/setup builds it): the package scans JSON traces in TypeScript only');
  }
  const manifest = {
    name: 'tickwise',
    version,
    description: 'Dispatch-timeline analysis for heterogeneous edge chips (iGPU + NPU): import, SQL, gaps, overlap, split ceiling, reports.',
    type: 'module',
    bin: { tickwise: 'tickwise.mjs' },
    engines: { node: '>=20.19' },
    dependencies: Object.fromEntries(EXTERNAL.map((n) => [n, pinned(n)])),
    license: 'UNLICENSED',
  };
  writeFileSync(join(stage, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
  const name = execFileSync('npm', ['pack', '--silent', '--pack-destination', outDir], { cwd: stage, encoding: 'utf8' }).trim().split('\n').pop();
  console.log(join(outDir, name));
} finally {
  rmSync(stage, { recursive: true, force: true });
}
