/**
 * Issue 17 (smaller): a program image that ends in exec(2) is not "did not
 * finish (crash or SIGKILL)". `tickwise capture -- sh -c 'exec app'`: the
 * recorder in sh never reaches its exit path (exec replaces it), the one in
 * app writes proc-<pid>/; the capture says the first image ended in exec
 * and is complete, whether read by `capture --db` or by `tickwise import` of
 * the directory. Needs the native build (native/test.sh); skipped with a
 * message without it.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const BUILD = join(ROOT, 'native/build');
const HAVE = existsSync(join(BUILD, 'bin/tw_app_npu')) && existsSync(join(BUILD, 'lib/libtickwise_recorder.so')) && existsSync(join(BUILD, 'fakes/libtickwise_fake_amdxdna.so'));
if (!HAVE) console.warn('capture-exec test skipped: no native build in native/build (run native/test.sh)');
const tw = (args: string[]) => spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT });

describe.skipIf(!HAVE)('tickwise capture of a program that execs', () => {
  it('the image replaced by exec is an info recorder-exec and the capture is complete', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-capture-exec-'));
    const out = join(dir, 'cap');
    const db = join(dir, 'cap.duckdb');
    const r = tw(['capture', '--backend', 'hip,amdxdna', '--out', out, '--db', db, '--preload-after', join(BUILD, 'fakes/libtickwise_fake_amdxdna.so'),
      '--', 'sh', '-c', `exec ${BUILD}/bin/tw_app_npu --cmds 5 --out ${join(dir, 'npu.json')}`]);
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(out, 'meta.json')) && existsSync(join(out, 'proc-' + /pid (\d+)/.exec(tw(['sql', db, "SELECT message FROM diagnostics WHERE code = 'recorder-exec'", '--format', 'csv']).stdout)?.[1], 'meta.json'))).toBe(true);
    const d = tw(['sql', db, "SELECT severity, code FROM diagnostics WHERE code IN ('recorder-incomplete', 'recorder-exec')", '--format', 'csv']);
    expect(d.stdout.trim().split('\n').slice(1)).toEqual(['info,recorder-exec']);
    expect(tw(['sql', db, 'SELECT session_status FROM captures', '--format', 'csv']).stdout).toContain('complete');
    expect(tw(['sql', db, 'SELECT session_status FROM captures', '--format', 'csv']).stdout).not.toContain('incomplete');
    // the reader says so too: `tickwise import` of the same directory (not only capture --db)
    const db2 = join(dir, 'imported.duckdb');
    const imp = tw(['import', out, '--db', db2]);
    expect(imp.status, imp.stderr).toBe(0);
    expect(tw(['sql', db2, "SELECT severity, code FROM diagnostics WHERE code IN ('recorder-incomplete', 'recorder-exec')", '--format', 'csv']).stdout.trim().split('\n').slice(1)).toEqual(['info,recorder-exec']);
    expect(tw(['sql', db2, 'SELECT session_status FROM captures', '--format', 'csv']).stdout).not.toContain('incomplete');
  }, 120_000);
});
