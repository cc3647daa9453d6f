/**
 * The `provenance` and `pin` verbs, driven through yargs as main.ts drives
 * them (the lead registers them in commands/index.ts). Oracles: ldd and the
 * library's own resolver.
 */
import { copyFileSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import yargs from 'yargs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TickwiseError } from '@tickwise/time';
import { PIN_SCHEMA, comparePin, parsePin } from '@tickwise/capture';
import { pinCommand } from '../src/commands/pin';
import { loaderEnv, provenanceCommand } from '../src/commands/provenance';

const tmp = () => realpathSync(mkdtempSync(join(tmpdir(), 'tickwise-prov-cli-')));

/** Runs one verb with these arguments; returns what it wrote to stdout and stderr. */
async function runVerb(argv: string[]): Promise<{ stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const o = vi.spyOn(process.stdout, 'write').mockImplementation((s: string | Uint8Array) => ((stdout += String(s)), true));
  const e = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => ((stderr += String(s)), true));
  try {
    await yargs(argv)
      .command(provenanceCommand as never)
      .command(pinCommand as never)
      .strict()
      .fail((msg, err) => {
        throw err ?? new Error(msg);
      })
      .parseAsync();
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  return { stdout, stderr };
}

function ldd(exe: string, env: Record<string, string> = {}): Record<string, string | null> {
  const r = spawnSync('ldd', [exe], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', LC_ALL: 'C', ...env } });
  const out: Record<string, string | null> = {};
  for (const m of r.stdout.matchAll(/^\s*(\S+) => (?:(not found)|(\S+) \(0x[0-9a-f]+\))/gm)) out[m[1]!] = m[2] ? null : m[3]!;
  return out;
}

afterEach(() => vi.restoreAllMocks());

describe('tickwise provenance', () => {
  it('--json on /bin/ls: the libraries ldd lists, each with build-id, sha256 and marker counts', async () => {
    const { stdout } = await runVerb(['provenance', '--marker', 'GLIBC_2.3', '--env', 'LD_LIBRARY_PATH=', '/bin/ls', '--json']);
    const res = JSON.parse(stdout);
    expect(res.kind).toBe('executable');
    expect(stdout).toMatch(/"mtime_ns": \d{19},/);
    expect(stdout).not.toMatch(/"mtime_ns": "/);
    const libs = res.libraries.filter((l: { how: string }) => l.how !== 'interpreter');
    expect(Object.fromEntries(libs.map((l: { name: string; path: string }) => [l.name, l.path]))).toEqual(ldd('/bin/ls'));
    for (const l of res.libraries) {
      expect(l.facts.build_id).toMatch(/^[0-9a-f]{40}$/);
      expect(l.facts.sha256).toMatch(/^[0-9a-f]{64}$/);
      expect(typeof l.facts.markers['GLIBC_2.3']).toBe('number');
      // an integer column is a JSON number with every digit, also beyond 2^53 (README: machine output)
      expect(typeof l.facts.mtime_ns).toBe('number');
    }
  });

  it('the human table: one row per file with how it was found; LD_LIBRARY_PATH wins over the cache', async () => {
    const d = tmp();
    copyFileSync('/lib/x86_64-linux-gnu/libpcre2-8.so.0', join(d, 'libpcre2-8.so.0'));
    const { stdout } = await runVerb(['provenance', '/bin/ls', '--env', `LD_LIBRARY_PATH=${d}`, '--marker', 'pcre2']);
    expect(ldd('/bin/ls', { LD_LIBRARY_PATH: d })['libpcre2-8.so.0']).toBe(`${d}/libpcre2-8.so.0`);
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('/bin/ls: executable (ELF64 x86-64, interpreter /lib64/ld-linux-x86-64.so.2)');
    expect(lines).toContain(`  LD_LIBRARY_PATH=${d}`);
    const header = lines.find((l) => l.startsWith('name'))!;
    expect(header.split(/\s+/)).toEqual(['name', 'how', 'path', 'mtime', 'size_bytes', 'build_id', 'sha256', '"pcre2"']);
    const pcre = lines.find((l) => l.startsWith('libpcre2-8.so.0'))!.split(/\s+/);
    expect(pcre.slice(0, 3)).toEqual(['libpcre2-8.so.0', 'ld_library_path', `${d}/libpcre2-8.so.0`]);
    expect(lines.find((l) => l.startsWith('libc.so.6'))!.split(/\s+/).slice(0, 3)).toEqual(['libc.so.6', 'cache', '/lib/x86_64-linux-gnu/libc.so.6']);
  });

  it('a file that is not ELF: its facts only', async () => {
    const { stdout } = await runVerb(['provenance', '/etc/hostname', '--json']);
    expect(JSON.parse(stdout)).toMatchObject({ kind: 'file', elf: null, libraries: [], facts: { build_id: null, is_elf: false } });
  });

  it('errors: a bad --env, a missing file', async () => {
    await expect(runVerb(['provenance', '/bin/ls', '--env', 'LD_LIBRARY_PATH'])).rejects.toThrow(TickwiseError);
    await expect(runVerb(['provenance', '/bin/ls', '--env', 'LD_LIBRARY_PATH'])).rejects.toThrow('--env LD_LIBRARY_PATH: expected K=V');
    await expect(runVerb(['provenance', '/nonexistent/x'])).rejects.toThrow(/cannot read the file: ENOENT/);
  });

  it('loaderEnv: this shell\'s loader variables, --env on top, K= clears, others ignored', () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const base = { LD_LIBRARY_PATH: '/a', LD_PRELOAD: '/p.so', HOME: '/root' };
    expect(loaderEnv(undefined, base)).toEqual({ LD_LIBRARY_PATH: '/a', LD_PRELOAD: '/p.so' });
    expect(loaderEnv(['LD_LIBRARY_PATH=/b', 'LD_PRELOAD=', 'FOO=1'], base)).toEqual({ LD_LIBRARY_PATH: '/b', LD_PRELOAD: undefined });
  });
});

describe('tickwise pin', () => {
  it('--out writes a tickwise-pin/1 that matches the same setup and flags a different one', async () => {
    const d = tmp();
    copyFileSync('/lib/x86_64-linux-gnu/libpcre2-8.so.0', join(d, 'libpcre2-8.so.0'));
    const out = join(d, 'pin.json');
    const { stderr } = await runVerb(['pin', '/bin/ls', '--out', out, '--marker', 'pcre2', '--env', 'LD_LIBRARY_PATH=']);
    expect(stderr).toContain(`tickwise: pinned 5 file(s) to ${out}`);
    const pin = parsePin(JSON.parse(readFileSync(out, 'utf8')), out);
    expect(pin.schema).toBe(PIN_SCHEMA);
    expect(pin.files.map((f) => f.name)).toEqual(['ls', 'ld-linux-x86-64.so.2', 'libselinux.so.1', 'libc.so.6', 'libpcre2-8.so.0']);
    expect(Object.keys(pin.files[0]!).sort()).toEqual(['build_id', 'markers', 'name', 'path', 'sha256', 'size']);

    // The same files now: no difference. A copy in LD_LIBRARY_PATH is the same bytes at another path: still none.
    const same = JSON.parse((await runVerb(['provenance', '/bin/ls', '--json', '--marker', 'pcre2', '--env', `LD_LIBRARY_PATH=${d}`])).stdout);
    expect(same.libraries.find((l: { name: string }) => l.name === 'libpcre2-8.so.0').path).toBe(`${d}/libpcre2-8.so.0`);
    expect(comparePin(pin, same)).toEqual([]);
  });
});
