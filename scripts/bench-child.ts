/**
 * What the import benchmarks share: a step run as ES module code in a fresh
 * child process (the tsx loader, from packages/cli so every workspace
 * package resolves), whose last stdout line is its JSON result, the
 * median of a list, and the `--name value` options.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');

/** Runs `code` in a child process and returns its last stdout line parsed; exits the benchmark when the child fails. */
export function runChild<T>(code: string): T {
  const loader = join(root, 'node_modules/tsx/dist/loader.mjs');
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', loader, '--input-type=module', '-e', code], { cwd: join(root, 'packages/cli'), encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as T;
}

/** The median (the upper one of an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** The value after `--name` on the command line, else `dflt`. */
export function option(name: string, dflt: string): string {
  const args = process.argv.slice(2);
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
}
