/**
 * Diff tests of the analysis verbs (Perfetto-style): each folder under
 * `cases/` holds a tiny hand-made capture, a `cmd` file (one tickwise
 * command per line, run in that folder) and `expected.json` (per command:
 * exit code and the JSON it printed, or the first line of its error).
 * `scripts/regen-goldens` rewrites every expected.json; review the diff.
 * Floats are rounded to 9 significant digits, so the goldens do not depend
 * on the last bits of a floating sum; the `producer` text of each capture
 * (the importer's wording, tested in the capture package) is left out.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..');
/** The case folders' parent. */
export const CASES_DIR = resolve(import.meta.dirname, 'cases');

/** Every case folder name, sorted. */
export function listCases(): string[] {
  return readdirSync(CASES_DIR).filter((n) => statSync(join(CASES_DIR, n)).isDirectory() && existsSync(join(CASES_DIR, n, 'cmd'))).sort();
}

/** Rounds every float to 9 significant digits (integers untouched); drops capture `producer` text. */
export function normalize(value: unknown, key = ''): unknown {
  if (typeof value === 'number') return Number.isInteger(value) ? value : Number(value.toPrecision(9));
  if (Array.isArray(value)) {
    return value.map((v) => {
      const n = normalize(v) as Record<string, unknown>;
      if (key === 'captures' && n && typeof n === 'object') delete n['producer'];
      return n;
    });
  }
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, k)]));
  return value;
}

/** The outcome of one command line. */
export interface Outcome {
  readonly exit: number | null;
  readonly json?: unknown;
  readonly error?: string;
}

/** Runs tickwise with these arguments in `cwd`. */
export function tickwise(args: readonly string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { cwd, encoding: 'utf8', env: { ...process.env, TZ: 'America/Los_Angeles' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Runs every command of a case; returns command line to outcome. */
export function runCase(name: string): Record<string, Outcome> {
  const dir = join(CASES_DIR, name);
  const lines = readFileSync(join(dir, 'cmd'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const out: Record<string, Outcome> = {};
  for (const line of lines) {
    const r = tickwise(line.split(/\s+/), dir);
    out[line] = r.status === 0 ? { exit: 0, json: normalize(JSON.parse(r.stdout)) } : { exit: r.status, error: r.stderr.trim().split('\n')[0] ?? '' };
  }
  return out;
}

/** The committed expected outcomes of a case. */
export function expectedOf(name: string): Record<string, Outcome> {
  return JSON.parse(readFileSync(join(CASES_DIR, name, 'expected.json'), 'utf8')) as Record<string, Outcome>;
}
