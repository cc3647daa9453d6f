import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

// The program after `--` gets its words exactly as typed: numbers stay
// strings ("-p 2048", the README's own example, crashed redactArgv), and a
// bare "-" stays "-". The capture verb builds the recorder on first use.
const ROOT = resolve(import.meta.dirname, '../../..');
const HAVE_CMAKE = spawnSync('cmake', ['--version']).status === 0;
if (!HAVE_CMAKE) console.warn('capture argv tests skipped: cmake not found (the native recorder cannot be built)');
const tw = (args: string[]) => spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT });

describe.skipIf(!HAVE_CMAKE)('tickwise capture -- program args', () => {
  it('passes numeric words and "-" through unchanged, and records the command line', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tickwise-capture-argv-'));
    const seen = join(dir, 'argv.txt');
    const db = join(dir, 'run.duckdb');
    const r = tw(['capture', '--backend', 'hip', '--out', join(dir, 'run'), '--db', db, '--',
      'sh', '-c', `printf '%s|' "$@" > ${seen}`, 'prog', '-p', '2048', '-', '0', '1e3']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/internal error|TypeError/);
    expect(readFileSync(seen, 'utf8')).toBe('-p|2048|-|0|1e3|');
    const q = tw(['sql', db, "select value from conditions where key = 'command_line'", '--format', 'json']);
    expect(q.status, q.stderr).toBe(0);
    expect(q.stdout).toContain('2048');
    expect(q.stdout).toContain('1e3');
  });

  it('sleep 0 (a numeric argument alone) is captured, exit 0', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tickwise-capture-argv-'));
    const r = tw(['capture', '--backend', 'hip', '--out', join(dir, 'run'), '--', 'sleep', '0']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('captured sleep 0');
  });
});
