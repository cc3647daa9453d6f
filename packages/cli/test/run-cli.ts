/**
 * Test helper: runs the real CLI (`scripts/tickwise`, the built bundle) from
 * the repository root, in the time zone the goldens were made in.
 */
import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';

/** The repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..');

/** Runs `tickwise ARGS...`; returns the exit code and both streams. */
export function tickwise(...args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles' }, maxBuffer: 64 * 1024 * 1024 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs `tickwise ARGS... --json`, expecting exit 0 and nothing on stderr; returns the parsed output. */
export function json(...args: string[]) {
  const r = tickwise(...args, '--json');
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}
