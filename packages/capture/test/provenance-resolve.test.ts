/**
 * The resolver against the real loader. Oracles: `ldd` (the loader itself in
 * trace mode) and the built programs, which print where the loader really
 * mapped `foo_build` from (dladdr) and which build they got.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildElf } from './provenance-elf-builder';
import { checkWithRealLoader, comparePin, loaderModel, makePin, parseLdCache, parseLoaderList, provenanceOf, readElf, resolveLibraries, searchSubdirs, type LibraryResolution } from '../src/provenance/index';
import { readFileSync } from 'node:fs';

/**
 * ldd's answer: needed name -> path (null for "not found"). Objects named by a path
 * (LD_PRELOAD entries, DT_NEEDED with a slash) print without "=>": path -> path.
 * The vdso and the interpreter are left out.
 */
function ldd(exe: string, env: Record<string, string> = {}): Map<string, string | null> {
  const r = spawnSync('ldd', [exe], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LC_ALL: 'C', ...env } });
  const interp = readElf(exe).interpreter;
  const out = new Map<string, string | null>();
  for (const line of r.stdout.split('\n')) {
    const m = /^\s*(\S+) => (?:(not found)|(\S+) \(0x[0-9a-f]+\))/.exec(line);
    if (m) out.set(m[1]!, m[2] ? null : m[3]!);
    const p = /^\s*(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (p && p[1] !== interp) out.set(p[1]!, p[1]!);
  }
  return out;
}

/** The resolver's answer in ldd's shape. */
function asLdd(r: LibraryResolution): Map<string, string | null> {
  return new Map(r.libraries.filter((l) => l.how !== 'interpreter').map((l) => [l.name, l.path]));
}

/** Runs a built program; it prints "<dladdr path of foo_build> <build tag>". */
function run(exe: string, env: Record<string, string> = {}): { path: string; build: string } | { error: string } {
  const r = spawnSync(exe, [], { encoding: 'utf8', env: { PATH: '/usr/bin:/bin', ...env } });
  if (r.status !== 0) return { error: r.stderr.trim() };
  const [path, build] = r.stdout.trim().split(' ');
  return { path: path!, build: build! };
}

/** What this machine's ld.so substitutes for $PLATFORM, from its own LD_DEBUG trace of /bin/true. */
function glibcPlatform(): string {
  const r = spawnSync('/bin/true', [], { encoding: 'utf8', env: { LD_DEBUG: 'libs', LD_LIBRARY_PATH: '/nonexistent/$PLATFORM' } });
  return /\/nonexistent\/([^/:\s]+)/.exec(r.stderr)?.[1] ?? 'unknown';
}

/** This machine's ld.so searches legacy hwcap subdirectories (glibc < 2.37); ldd and the real run check the consequence. */
const LEGACY_HWCAPS = loaderModel(readElf('/bin/true')).legacy_hwcaps.length > 0;

const R = realpathSync(mkdtempSync(join(tmpdir(), 'tickwise-resolve-')));
const dir = (d: string) => join(R, d);
const gxx = (args: string[]) => execFileSync('g++', args, { stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  for (const d of ['A', 'B', 'C', 'W', 'X', 'bin', 'src']) mkdirSync(dir(d));
  // Two builds of libfoo: B is "four days older" and still holds the slow kernel variant.
  writeFileSync(
    dir('src/foo_a.cc'),
    'extern "C" const char* kernel_name() { return "KERNEL_GEN_2 gemm_fast"; }\nextern "C" const char* foo_build() { return "FOO_BUILD_A"; }\n',
  );
  writeFileSync(
    dir('src/foo_b.cc'),
    'extern "C" const char* kernel_name() { return "KERNEL_GEN_1 gemm_slow"; }\nextern "C" const char* slow_kernel_2() { return "KERNEL_GEN_1 gemm_slow_tail"; }\nextern "C" const char* foo_build() { return "FOO_BUILD_B"; }\n',
  );
  writeFileSync(
    dir('src/bar.cc'),
    'extern "C" const char* foo_build();\nextern "C" void* bar_foo() { return (void*)&foo_build; }\nextern "C" const char* bar_build() { return foo_build(); }\n',
  );
  const main = (fooAddr: string) => `#include <dlfcn.h>
#include <stdio.h>
${fooAddr === 'bar' ? 'extern "C" void* bar_foo();\nextern "C" const char* bar_build();' : 'extern "C" const char* foo_build();'}
int main() {
  void* p = ${fooAddr === 'bar' ? 'bar_foo()' : '(void*)&foo_build'};
  Dl_info info;
  if (!dladdr(p, &info)) return 3;
  printf("%s %s\\n", info.dli_fname, ${fooAddr === 'bar' ? 'bar_build()' : 'foo_build()'});
  return 0;
}
`;
  writeFileSync(dir('src/main.cc'), main('foo'));
  writeFileSync(dir('src/main_bar.cc'), main('bar'));
  gxx(['-shared', '-fPIC', '-o', dir('A/libfoo.so'), dir('src/foo_a.cc'), '-Wl,-soname,libfoo.so']);
  gxx(['-shared', '-fPIC', '-o', dir('B/libfoo.so'), dir('src/foo_b.cc'), '-Wl,-soname,libfoo.so']);
  gxx(['-shared', '-fPIC', '-o', dir('C/libbar.so'), dir('src/bar.cc'), '-Wl,-soname,libbar.so', `-L${dir('A')}`, '-lfoo']);
  const exe = (out: string, src: string, flags: string[]) => gxx(['-o', dir(`bin/${out}`), dir(`src/${src}`), ...flags, '-ldl']);
  exe('app_runpath', 'main.cc', [`-L${dir('A')}`, '-lfoo', '-Wl,--enable-new-dtags', '-Wl,-rpath,$ORIGIN/../B']);
  exe('app_rpath', 'main.cc', [`-L${dir('A')}`, '-lfoo', '-Wl,--disable-new-dtags', '-Wl,-rpath,$ORIGIN/../B']);
  exe('app_plain', 'main.cc', [`-L${dir('A')}`, '-lfoo']);
  // Indirect: the program needs libbar (in C), libbar needs libfoo and has no search path of its own.
  const bar = [`-L${dir('C')}`, '-lbar', `-Wl,-rpath-link,${dir('A')}`];
  exe('app_bar_rpath', 'main_bar.cc', [...bar, '-Wl,--disable-new-dtags', '-Wl,-rpath,$ORIGIN/../C:$ORIGIN/../B']);
  exe('app_bar_runpath', 'main_bar.cc', [...bar, '-Wl,--enable-new-dtags', '-Wl,-rpath,$ORIGIN/../C:$ORIGIN/../B']);
  // Dynamic string tokens: $PLATFORM and ${LIB} pick a directory by name; the A build sits in every candidate.
  for (const d of ['P/haswell', 'P/x86_64', 'P/xeon_phi', 'L/lib/x86_64-linux-gnu', 'L/lib64', 'L/lib']) {
    mkdirSync(dir(d), { recursive: true });
    copyFileSync(dir('A/libfoo.so'), dir(`${d}/libfoo.so`));
  }
  exe('app_platform', 'main.cc', [`-L${dir('A')}`, '-lfoo', '-Wl,--enable-new-dtags', '-Wl,-rpath,$ORIGIN/../P/$PLATFORM']);
  exe('app_lib', 'main.cc', [`-L${dir('A')}`, '-lfoo', '-Wl,--enable-new-dtags', '-Wl,-rpath,${ORIGIN}/../L/$LIB']);
  // glibc-hwcaps: H/glibc-hwcaps/x86-64-v2 (the A build) is tried before H itself (the B build).
  mkdirSync(dir('H/glibc-hwcaps/x86-64-v2'), { recursive: true });
  copyFileSync(dir('B/libfoo.so'), dir('H/libfoo.so'));
  copyFileSync(dir('A/libfoo.so'), dir('H/glibc-hwcaps/x86-64-v2/libfoo.so'));
  // Legacy hwcaps (glibc < 2.37): T/x86_64 (the A build) is tried before T (the B build).
  mkdirSync(dir('T/x86_64'), { recursive: true });
  copyFileSync(dir('B/libfoo.so'), dir('T/libfoo.so'));
  copyFileSync(dir('A/libfoo.so'), dir('T/x86_64/libfoo.so'));
  // A DT_NEEDED with a slash: a library without DT_SONAME linked by its path.
  gxx(['-shared', '-fPIC', '-o', dir('A/libnos.so'), dir('src/foo_a.cc')]);
  exe('app_slash', 'main.cc', [dir('A/libnos.so')]);
  // A symlink to a program: $ORIGIN is the directory of the real file.
  symlinkSync(dir('bin/app_runpath'), dir('W/app_link'));
  // W holds a 32-bit i386 "libfoo.so": the loader must pass over it (wrong class), not fail.
  writeFileSync(dir('W/libfoo.so'), buildElf({ class_bits: 32, endian: 'little', machine: 3, soname: 'libfoo.so' }));
  // X holds a 64-bit AArch64 "libfoo.so": wrong machine, also passed over.
  writeFileSync(dir('X/libfoo.so'), buildElf({ class_bits: 64, endian: 'little', machine: 183, soname: 'libfoo.so' }));
});

describe('resolveLibraries on real binaries of this machine agrees with ldd', () => {
  for (const exe of ['/bin/ls', '/usr/bin/node', '/usr/bin/g++']) {
    it(exe, async () => {
      const r = await resolveLibraries(exe, { env: {}, facts: false });
      expect(asLdd(r)).toEqual(ldd(exe));
      expect(r.libraries[0]).toMatchObject({ how: 'interpreter', path: '/lib64/ld-linux-x86-64.so.2' });
      expect(r.libraries.filter((l) => l.how !== 'interpreter').every((l) => l.how === 'cache')).toBe(true);
    });
  }

  it('facts of every library: build-id equals readelf -n, sha256 equals sha256sum', async () => {
    const r = await resolveLibraries('/bin/ls', { env: {}, markers: ['GLIBC_2.'] });
    for (const l of r.libraries) {
      const notes = execFileSync('readelf', ['-n', l.path!], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
      expect(l.facts?.build_id, l.name).toBe(/Build ID: ([0-9a-f]+)/.exec(notes)?.[1] ?? null);
      expect(l.facts?.sha256, l.name).toBe(execFileSync('sha256sum', [l.path!], { encoding: 'utf8' }).split(' ')[0]);
      expect(l.facts?.markers['GLIBC_2.'], l.name).toBe(readFileSync(l.path!).toString('latin1').split('GLIBC_2.').length - 1);
    }
    expect(r.facts?.build_id).toBe(readElf('/bin/ls').build_id);
  });
});

describe('resolveLibraries on programs the test builds: the file the loader really takes', () => {
  type Case = { exe: string; env: Record<string, string>; foo: string | null; how: string | null; build?: string; extra?: Record<string, [string, string]> };
  const cases: Case[] = [
    // Trap 4: LD_LIBRARY_PATH is searched before RUNPATH, so A wins.
    { exe: 'app_runpath', env: { LD_LIBRARY_PATH: 'A' }, foo: 'A/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_A' },
    { exe: 'app_runpath', env: {}, foo: 'bin/../B/libfoo.so', how: 'runpath', build: 'FOO_BUILD_B' },
    // DT_RPATH is searched before LD_LIBRARY_PATH, so the harness's A is silently ignored.
    { exe: 'app_rpath', env: { LD_LIBRARY_PATH: 'A' }, foo: 'bin/../B/libfoo.so', how: 'rpath', build: 'FOO_BUILD_B' },
    { exe: 'app_plain', env: {}, foo: null, how: null },
    { exe: 'app_plain', env: { LD_LIBRARY_PATH: 'nonexistent::B;A' }, foo: 'B/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_B' },
    // RPATH is inherited: libbar's libfoo comes through the program's RPATH.
    { exe: 'app_bar_rpath', env: { LD_LIBRARY_PATH: 'A' }, foo: 'bin/../B/libfoo.so', how: 'rpath', build: 'FOO_BUILD_B', extra: { 'libbar.so': ['bin/../C/libbar.so', 'rpath'] } },
    // RUNPATH is not inherited: libbar's libfoo is found only through LD_LIBRARY_PATH...
    { exe: 'app_bar_runpath', env: { LD_LIBRARY_PATH: 'A' }, foo: 'A/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_A', extra: { 'libbar.so': ['bin/../C/libbar.so', 'runpath'] } },
    // ...or not at all.
    { exe: 'app_bar_runpath', env: {}, foo: null, how: null, extra: { 'libbar.so': ['bin/../C/libbar.so', 'runpath'] } },
    // Wrong class (W) and wrong machine (X) are passed over.
    { exe: 'app_runpath', env: { LD_LIBRARY_PATH: 'W:X:A' }, foo: 'A/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_A' },
    { exe: 'app_runpath', env: { LD_LIBRARY_PATH: 'W:X' }, foo: 'bin/../B/libfoo.so', how: 'runpath', build: 'FOO_BUILD_B' },
    // LD_PRELOAD: the preloaded file satisfies DT_NEEDED by its soname, whatever RPATH says.
    { exe: 'app_rpath', env: { LD_PRELOAD: 'A/libfoo.so' }, foo: 'A/libfoo.so', how: 'path', build: 'FOO_BUILD_A' },
    { exe: 'app_platform', env: {}, foo: `bin/../P/${glibcPlatform()}/libfoo.so`, how: 'runpath', build: 'FOO_BUILD_A' },
    { exe: 'app_lib', env: {}, foo: 'bin/../L/lib/x86_64-linux-gnu/libfoo.so', how: 'runpath', build: 'FOO_BUILD_A' },
    { exe: 'app_plain', env: { LD_LIBRARY_PATH: 'H' }, foo: 'H/glibc-hwcaps/x86-64-v2/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_A' },
    LEGACY_HWCAPS
      ? { exe: 'app_plain', env: { LD_LIBRARY_PATH: 'T' }, foo: 'T/x86_64/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_A' }
      : { exe: 'app_plain', env: { LD_LIBRARY_PATH: 'T' }, foo: 'T/libfoo.so', how: 'ld_library_path', build: 'FOO_BUILD_B' },
    { exe: 'app_slash', env: { LD_LIBRARY_PATH: 'B' }, foo: 'A/libnos.so', how: 'path', build: 'FOO_BUILD_A' },
  ];
  const abs = (env: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(env).map(([k, v]) => [k, v.replace(/(^|[:;])([A-Za-z])/g, (_m, sep: string, d: string) => `${sep}${R}/${d}`)]),
    );
  for (const c of cases) {
    it(`${c.exe} with ${JSON.stringify(c.env)}: libfoo.so from ${c.foo ?? 'nowhere'} (${c.how ?? 'not found'})`, async () => {
      const env = abs(c.env);
      const exe = dir(`bin/${c.exe}`);
      const r = await resolveLibraries(exe, { env, markers: ['KERNEL_GEN_1', 'KERNEL_GEN_2'] });
      const foo = r.libraries.find((l) => l.names.includes('libfoo.so') || l.name.endsWith('/libnos.so'))!;
      expect(foo.path === null ? null : foo.path).toBe(c.foo === null ? null : `${R}/${c.foo}`);
      expect(foo.how).toBe(c.how);
      for (const [name, [path, how]] of Object.entries(c.extra ?? {})) {
        expect(r.libraries.find((l) => l.name === name)).toMatchObject({ path: `${R}/${path}`, how });
      }
      // Oracle 1: ldd (the loader in trace mode) lists the same file for every library.
      expect(asLdd(r)).toEqual(ldd(exe, env));
      // Oracle 2: run it; dladdr says which file foo_build was really mapped from.
      const ran = run(exe, env);
      if (c.foo === null) {
        expect(ran).toMatchObject({ error: expect.stringContaining('libfoo.so: cannot open shared object file') });
      } else {
        expect(ran).toEqual({ path: `${R}/${c.foo}`, build: c.build });
        // The facts are of that file: its marker counts tell the builds apart.
        expect(foo.facts?.markers).toEqual(c.build === 'FOO_BUILD_A' ? { KERNEL_GEN_1: 0, KERNEL_GEN_2: 1 } : { KERNEL_GEN_1: 2, KERNEL_GEN_2: 0 });
        expect(foo.facts?.build_id).toBe(readElf(`${R}/${c.foo}`).build_id);
        expect(foo.facts?.realpath).toBe(realpathSync(`${R}/${c.foo}`));
      }
    });
  }

  it('a symlinked program: $ORIGIN is the real file\'s directory (the real run agrees)', async () => {
    const r = await resolveLibraries(dir('W/app_link'), { env: {}, facts: false });
    expect(r.libraries.find((l) => l.name === 'libfoo.so')).toMatchObject({ path: `${dir('bin')}/../B/libfoo.so`, how: 'runpath' });
    expect(run(dir('W/app_link'))).toEqual({ path: `${dir('bin')}/../B/libfoo.so`, build: 'FOO_BUILD_B' });
  });

  it('a file that is not ELF where the loader looks first: the real loader stops there, and so does the listing', async () => {
    mkdirSync(dir('Z'), { recursive: true });
    writeFileSync(dir('Z/libfoo.so'), '/* GNU ld script */\nINPUT(libfoo.so.1)\n'.repeat(4));
    mkdirSync(dir('Z2'), { recursive: true });
    writeFileSync(dir('Z2/libfoo.so'), 'short\n');
    for (const [z, reason] of [['Z', 'invalid ELF header'], ['Z2', 'file too short']] as const) {
      const env = { LD_LIBRARY_PATH: `${dir(z)}:${dir('A')}` };
      const r = await resolveLibraries(dir('bin/app_runpath'), { env });
      expect(r.libraries.find((l) => l.name === 'libfoo.so')).toMatchObject({ path: `${dir(z)}/libfoo.so`, loader_error: reason, facts: null });
      expect(run(dir('bin/app_runpath'), env)).toEqual({ error: expect.stringContaining(`${dir(z)}/libfoo.so: ${reason}`) });
    }
  });

  it('records the wrong-class and wrong-machine files it passed over', async () => {
    const r = await resolveLibraries(dir('bin/app_runpath'), { env: { LD_LIBRARY_PATH: `${dir('W')}:${dir('X')}:${dir('A')}` }, facts: false });
    const foo = r.libraries.find((l) => l.name === 'libfoo.so')!;
    expect(foo.rejected).toEqual([
      { path: `${dir('W')}/libfoo.so`, reason: 'wrong ELF class: ELFCLASS32' },
      { path: `${dir('X')}/libfoo.so`, reason: 'wrong machine: AArch64' },
    ]);
    expect(foo.search_dir).toBe(dir('A'));
    expect(foo.needed_by).toEqual([dir('bin/app_runpath')]);
  });

  it('a cache built by ldconfig -C: found there when nothing else names the dir', async () => {
    writeFileSync(dir('ld.conf'), `${dir('B')}\n`);
    execFileSync('ldconfig', ['-X', '-C', dir('ld.cache'), '-f', dir('ld.conf')], { stdio: 'ignore' });
    const r = await resolveLibraries(dir('bin/app_plain'), { env: {}, ld_so_cache: dir('ld.cache'), facts: false });
    expect(r.libraries.find((l) => l.name === 'libfoo.so')).toMatchObject({ path: `${dir('B')}/libfoo.so`, how: 'cache' });
    // And the system libraries still come from that cache (ldconfig adds the trusted dirs).
    expect(r.libraries.find((l) => l.name === 'libc.so.6')).toMatchObject({ how: 'cache' });
  });

  it('no cache at all: the default dirs, and a note saying so', async () => {
    const r = await resolveLibraries('/bin/ls', { env: {}, ld_so_cache: dir('no-such-cache'), facts: false });
    expect(r.libraries.find((l) => l.name === 'libc.so.6')).toMatchObject({ path: '/lib/x86_64-linux-gnu/libc.so.6', how: 'default' });
    expect(r.notes.join('\n')).toMatch(/no .*no-such-cache: ld\.so searches only the default dirs/);
  });
});

describe('the loader model agrees with the loader\'s own trace', () => {
  it('subdirectories tried under each directory (glibc-hwcaps, legacy hwcaps) equal LD_DEBUG=libs\' search path', () => {
    const r = spawnSync('/bin/true', [], { encoding: 'utf8', env: { LD_DEBUG: 'libs', LD_LIBRARY_PATH: '/nonexistent/x' } });
    const traced = /search path=(\S+)\s+\(LD_LIBRARY_PATH\)/.exec(r.stderr)![1]!.split(':');
    const model = loaderModel(readElf('/bin/true'));
    expect(model.platform).toBe(glibcPlatform());
    const ours = searchSubdirs(model.hwcaps_subdirs, model.legacy_hwcaps).map((sub) => `/nonexistent/x/${sub}`.replace(/\/$/, ''));
    expect(ours).toEqual(traced);
  });

  it('the default dirs equal ld.so --help\'s system search path', () => {
    const help = execFileSync('/lib64/ld-linux-x86-64.so.2', ['--help'], { encoding: 'utf8' });
    const dirs = [...help.matchAll(/^\s+(\S+) \(system search path\)$/gm)].map((m) => m[1]);
    expect(loaderModel(readElf('/bin/true')).default_dirs).toEqual(dirs);
  });
});

describe('parseLdCache agrees with ldconfig -p', () => {
  it('/etc/ld.so.cache', () => {
    const cache = parseLdCache(readFileSync('/etc/ld.so.cache'), '/etc/ld.so.cache');
    const printed = execFileSync('ldconfig', ['-p'], { encoding: 'utf8' });
    const pairs = [...printed.matchAll(/^\s+(\S+) \(([^)]*)\) => (\S+)$/gm)].map((m) => [m[1], m[3]]);
    expect(cache.format).toBe('glibc-ld.so.cache1.1');
    expect(cache.entries.map((e) => [e.name, e.path])).toEqual(pairs);
    expect(Number(/^(\d+) libs found/.exec(printed)![1])).toBe(cache.entries.length);
  });
});

describe('pins', () => {
  it('a pin made with LD_LIBRARY_PATH=A; a run without it loads B: stale-library with both values', async () => {
    const exe = dir('bin/app_runpath');
    const markers = ['KERNEL_GEN_1', 'KERNEL_GEN_2'];
    const good = await resolveLibraries(exe, { env: { LD_LIBRARY_PATH: dir('A') }, markers });
    const pin = makePin(good);
    expect(pin.schema).toBe('tickwise-pin/1');
    const pinnedFoo = pin.files.find((f) => f.name === 'libfoo.so')!;
    expect(pinnedFoo).toMatchObject({ path: `${dir('A')}/libfoo.so`, markers: { KERNEL_GEN_1: 0, KERNEL_GEN_2: 1 } });
    expect(pin.files[0]!.name).toBe('app_runpath');
    expect(comparePin(pin, good)).toEqual([]);
    // JSON round trip keeps it comparable.
    expect(comparePin(JSON.parse(JSON.stringify(pin)), good)).toEqual([]);

    const drifted = await resolveLibraries(exe, { env: {}, markers });
    const diffs = comparePin(pin, drifted);
    const foo = drifted.libraries.find((l) => l.name === 'libfoo.so')!;
    expect(diffs.every((d) => d.code === 'stale-library' && d.name === 'libfoo.so')).toBe(true);
    expect(diffs.find((d) => d.field === 'build_id')).toMatchObject({ expected: pinnedFoo.build_id, observed: foo.facts!.build_id, expected_path: `${dir('A')}/libfoo.so`, observed_path: `${R}/bin/../B/libfoo.so` });
    expect(diffs.find((d) => d.field === 'sha256')).toMatchObject({ expected: pinnedFoo.sha256, observed: foo.facts!.sha256 });
    expect(diffs.filter((d) => d.field === 'marker').map((d) => [d.marker, d.expected, d.observed])).toEqual([
      ['KERNEL_GEN_1', 0, 2],
      ['KERNEL_GEN_2', 1, 0],
    ]);
    expect(diffs.find((d) => d.field === 'marker')!.message).toBe(`libfoo.so: marker "KERNEL_GEN_1" occurs 2 times in ${R}/bin/../B/libfoo.so, pinned 0 (${dir('A')}/libfoo.so)`);
  });

  it('missing: pinned, not found now; unpinned: found now, not in the pin', async () => {
    const exe = dir('bin/app_bar_runpath');
    const pin = makePin(await resolveLibraries(exe, { env: { LD_LIBRARY_PATH: dir('A') } }));
    const now = await resolveLibraries(exe, { env: {} });
    expect(comparePin(pin, now)).toEqual([
      expect.objectContaining({ code: 'missing', name: 'libfoo.so', expected: `${dir('A')}/libfoo.so`, observed: null }),
    ]);
    // Preloading the pinned libbar by its path is still libbar (matched by soname); preloading libz is new.
    const withPreload = await resolveLibraries(exe, { env: { LD_LIBRARY_PATH: dir('A'), LD_PRELOAD: `${dir('C/libbar.so')} libz.so.1` } });
    expect(withPreload.libraries.find((l) => l.name === dir('C/libbar.so'))?.names).toEqual([dir('C/libbar.so'), 'libbar.so']);
    expect(comparePin(pin, withPreload).map((d) => [d.code, d.name, d.observed_path])).toEqual([['unpinned', 'libz.so.1', '/lib/x86_64-linux-gnu/libz.so.1']]);
  });
});

describe('the real loader\'s second opinion (ld.so in trace mode) beside the model', () => {
  it('agrees with the model on a built program, plain and with LD_LIBRARY_PATH into glibc-hwcaps', async () => {
    for (const env of [{}, { LD_LIBRARY_PATH: dir('H') }]) {
      const r = await provenanceOf(dir('bin/app_plain'), { env, facts: false });
      expect(r.loader_check, JSON.stringify(r.notes)).not.toBeNull();
      expect(r.loader_check!.listed).toBeGreaterThanOrEqual(2);
      expect(r.loader_check!.differences).toEqual([]);
      expect(r.notes.join('\n')).not.toMatch(/disagrees/);
    }
  });

  it('names the library when the model places it elsewhere than the loader (the stale-library trap)', async () => {
    const r = await provenanceOf(dir('bin/app_runpath'), { facts: false, ask_loader: false });
    const foo = r.libraries.find((l) => l.name === 'libfoo.so')!;
    const realPath = foo.path;
    foo.path = dir('A/libfoo.so') === realpathSync(realPath!) ? dir('H/libfoo.so') : dir('A/libfoo.so');
    const check = checkWithRealLoader(r);
    expect(check!.differences).toEqual([{ name: 'libfoo.so', model_path: realpathSync(foo.path), loader_path: realpathSync(realPath!) }]);
    expect(r.notes.join('\n')).toMatch(/real loader .* disagrees with the model on 1 library: libfoo\.so/);
  });

  it('a program for another machine: the loader is not asked, and a note says why', async () => {
    const r = await provenanceOf(dir('bin/app_plain'), { facts: false, ask_loader: false });
    r.elf = { ...r.elf!, machine_name: 'AArch64' };
    expect(checkWithRealLoader(r)).toBeNull();
    expect(r.notes.join('\n')).toMatch(/not asked: the program is for AArch64/);
  });

  it('parses the loader trace output: arrows, not found, bare paths, the vdso left out', () => {
    const m = parseLoaderList('\tlinux-vdso.so.1 (0x00007ffd)\n\tlibfoo.so => /x/libfoo.so (0x00007f00)\n\tlibgone.so => not found\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f11)\n');
    expect([...m]).toEqual([['libfoo.so', '/x/libfoo.so'], ['libgone.so', null], ['/lib64/ld-linux-x86-64.so.2', '/lib64/ld-linux-x86-64.so.2']]);
  });
});
