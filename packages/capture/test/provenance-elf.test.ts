import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProvenanceError, bufferSource, parseElf, readElf } from '../src/provenance/index';
import { buildElf } from './provenance-elf-builder';

const tmp = () => mkdtempSync(join(tmpdir(), 'tickwise-elf-'));
const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], env: { ...process.env, LC_ALL: 'C' } });

describe('readElf on real binaries of this machine (readelf and file as oracles)', () => {
  for (const exe of ['/bin/ls', '/usr/bin/node', '/lib/x86_64-linux-gnu/libc.so.6']) {
    it(exe, () => {
      const elf = readElf(exe);
      const notes = sh('readelf', ['-n', exe]);
      const buildId = /Build ID: ([0-9a-f]+)/.exec(notes)?.[1] ?? null;
      expect(elf.build_id).toBe(buildId);
      expect(sh('file', ['-L', exe])).toContain(`BuildID[sha1]=${buildId}`);

      const dyn = sh('readelf', ['-dW', exe]);
      const needed = [...dyn.matchAll(/\(NEEDED\)\s+Shared library: \[(.+)\]/g)].map((m) => m[1]);
      expect(elf.dynamic?.needed).toEqual(needed);
      expect(elf.dynamic?.soname ?? null).toBe(/\(SONAME\)\s+Library soname: \[(.+)\]/.exec(dyn)?.[1] ?? null);

      const hdr = sh('readelf', ['-hlW', exe]);
      expect(elf.interpreter).toBe(/Requesting program interpreter: (.+)\]/.exec(hdr)?.[1] ?? null);
      expect(elf.class_bits).toBe(/Class:\s+ELF64/.test(hdr) ? 64 : 32);
      expect(elf.machine_name).toBe('x86-64');
      expect(elf.program_headers.length).toBe(Number(/Number of program headers:\s+(\d+)/.exec(hdr)![1]));
    });
  }

  it('a library g++ builds with RUNPATH, SONAME and a chosen build-id', () => {
    const dir = tmp();
    writeFileSync(join(dir, 'x.cc'), 'extern "C" int x() { return 42; }\n');
    const so = join(dir, 'libx.so.1');
    sh('g++', ['-shared', '-fPIC', '-o', so, join(dir, 'x.cc'), '-Wl,-soname,libx.so.1', '-Wl,--enable-new-dtags,-rpath,$ORIGIN/../lib:/opt/x', '-Wl,--build-id=0x0123456789abcdef']);
    const elf = readElf(so);
    expect(elf.build_id).toBe('0123456789abcdef');
    expect(elf.dynamic?.soname).toBe('libx.so.1');
    expect(elf.dynamic?.runpath).toBe('$ORIGIN/../lib:/opt/x');
    expect(elf.dynamic?.rpath).toBeNull();
    expect(elf.type).toBe('DYN');
    expect(elf.interpreter).toBeNull();
  });
});

describe('readElf on synthetic files of every class and byte order (ground truth)', () => {
  const machines = { 'x86-64': 62, AArch64: 183, PowerPC: 20, S390: 22 } as const;
  for (const class_bits of [32, 64] as const) {
    for (const endian of ['little', 'big'] as const) {
      for (const where of ['phdr', 'section'] as const) {
        it(`ELF${class_bits} ${endian}-endian, build-id in a ${where === 'phdr' ? 'PT_NOTE' : 'SHT_NOTE section only'}`, () => {
          const machine = class_bits === 64 ? (endian === 'big' ? machines.S390 : machines.AArch64) : endian === 'big' ? machines.PowerPC : machines['x86-64'];
          const bytes = buildElf({
            class_bits,
            endian,
            machine,
            interpreter: '/lib/ld-test.so.1',
            needed: ['liba.so.1', 'libb.so.2'],
            soname: 'libself.so.3',
            rpath: '$ORIGIN/r',
            runpath: '/run/path',
            build_id: 'deadbeef00112233445566778899aabbccddeeff',
            build_id_in: where,
          });
          const elf = parseElf(bufferSource(bytes), 'synthetic');
          expect(elf.class_bits).toBe(class_bits);
          expect(elf.endian).toBe(endian);
          expect(elf.machine).toBe(machine);
          expect(elf.interpreter).toBe('/lib/ld-test.so.1');
          expect(elf.dynamic).toEqual({ needed: ['liba.so.1', 'libb.so.2'], soname: 'libself.so.3', rpath: '$ORIGIN/r', runpath: '/run/path', flags_1: 0 });
          expect(elf.build_id).toBe('deadbeef00112233445566778899aabbccddeeff');
          if (class_bits === 64 && endian === 'little') {
            // readelf agrees with the builder (cross-check of the test's own writer).
            const f = join(tmp(), 'syn.so');
            writeFileSync(f, bytes);
            expect(sh('readelf', ['-dW', f])).toContain('Library runpath: [/run/path]');
          }
        });
      }
    }
  }
});

describe('readElf errors name the file and say what is wrong', () => {
  it('a text file is not ELF', () => {
    const f = join(tmp(), 'notes.txt');
    writeFileSync(f, 'hello world\n');
    let err: unknown;
    try {
      readElf(f);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProvenanceError);
    expect((err as ProvenanceError).code).toBe('not-elf');
    expect((err as ProvenanceError).path).toBe(f);
    expect((err as ProvenanceError).where()).toBe(`${f}: not an ELF file (first bytes 68 65 6c 6c, expected 7f 45 4c 46)`);
  });

  it('an empty file and a 3-byte file are not ELF', () => {
    const d = tmp();
    writeFileSync(join(d, 'e'), '');
    writeFileSync(join(d, 'three'), Buffer.from([0x7f, 0x45, 0x4c]));
    expect(() => readElf(join(d, 'e'))).toThrow(/not an ELF file/);
    expect(() => readElf(join(d, 'three'))).toThrow(/not an ELF file/);
  });

  it('a truncated copy of /bin/ls: cut in the file header, and cut before the dynamic section', () => {
    const d = tmp();
    const whole = readFileSync('/bin/ls');
    writeFileSync(join(d, 'head'), whole.subarray(0, 40));
    writeFileSync(join(d, 'half'), whole.subarray(0, 4096));
    expect(() => readElf(join(d, 'head'))).toThrow(/truncated ELF file: ELF file header at bytes 0\.\.64 lies past the end of the file \(40 bytes\)/);
    let err: ProvenanceError | undefined;
    try {
      readElf(join(d, 'half'));
    } catch (e) {
      err = e as ProvenanceError;
    }
    expect(err?.code).toBe('elf-truncated');
    expect(err?.file).toBe(join(d, 'half'));
    expect(err?.message).toMatch(/truncated ELF file: .* lies past the end of the file \(4096 bytes\)/);
  });

  it('an unknown class byte', () => {
    const b = buildElf({ class_bits: 64, endian: 'little', machine: 62 });
    b[4] = 7;
    expect(() => parseElf(bufferSource(b), 'x')).toThrow('ELF header: unknown class 7 (expected 1 = ELF32 or 2 = ELF64)');
  });

  it('a missing file', () => {
    expect(() => readElf('/nonexistent/tickwise')).toThrow(/cannot read the file: ENOENT/);
  });
});
