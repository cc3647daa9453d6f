/**
 * A reader of ELF headers in TypeScript: ELF32 and ELF64, either byte order.
 * It reads only what provenance needs (the file header, program headers,
 * PT_INTERP, the dynamic section's DT_NEEDED / DT_RPATH / DT_RUNPATH /
 * DT_SONAME / DT_FLAGS_1, and the GNU build-id note) with positional reads,
 * so a library of gigabytes costs a few kilobytes of I/O.
 *
 * Layouts follow the System V gABI and glibc's `<elf.h>`.
 */
import { closeSync, openSync, readSync, fstatSync } from 'node:fs';
import { ProvenanceError } from './errors';
import { provenanceMessages as msg } from './messages';

/** Random access to the bytes of one file (or a buffer standing in for one). */
export interface ElfByteSource {
  /** Total size in bytes. */
  readonly size: number;
  /** `length` bytes at `offset`; the caller has checked the range. */
  read(offset: number, length: number): Uint8Array;
}

/** e_type values (`ET_*`). */
export const ElfType = { 0: 'NONE', 1: 'REL', 2: 'EXEC', 3: 'DYN', 4: 'CORE' } as const;
/** Name of an `ET_*` value, or `OTHER`. */
export type ElfTypeName = (typeof ElfType)[keyof typeof ElfType] | 'OTHER';

/** e_machine values (`EM_*`) this reader names; others print as `EM_<n>`. */
export const ElfMachine = {
  2: 'SPARC',
  3: 'i386',
  4: 'm68k',
  8: 'MIPS',
  20: 'PowerPC',
  21: 'PowerPC64',
  22: 'S390',
  40: 'ARM',
  42: 'SuperH',
  43: 'SPARCv9',
  50: 'IA-64',
  62: 'x86-64',
  183: 'AArch64',
  243: 'RISC-V',
  258: 'LoongArch',
} as const satisfies Record<number, string>;

/** Program header types (`PT_*`) this reader uses. */
export const PT = { LOAD: 1, DYNAMIC: 2, INTERP: 3, NOTE: 4 } as const;
/** Dynamic tags (`DT_*`) this reader uses. */
export const DT = {
  NULL: 0,
  NEEDED: 1,
  STRTAB: 5,
  STRSZ: 10,
  SONAME: 14,
  RPATH: 15,
  RUNPATH: 29,
  FLAGS_1: 0x6ffffffb,
} as const;
/** `DF_1_NODEFLIB`: the object's dependencies skip ld.so.cache and the default dirs. */
export const DF_1_NODEFLIB = 0x800;
const SHT_NOTE = 7;
const NT_GNU_BUILD_ID = 3;

/** One program header (`Elf{32,64}_Phdr`). Addresses are bigint, file offsets numbers. */
export interface ElfProgramHeader {
  type: number;
  flags: number;
  offset: number;
  vaddr: bigint;
  filesz: number;
  memsz: bigint;
  align: bigint;
}

/** What the dynamic section says about loading. */
export interface ElfDynamic {
  /** DT_NEEDED entries, in order. */
  needed: string[];
  /** DT_SONAME, when present. */
  soname: string | null;
  /** DT_RPATH as written (colon separated, DSTs unexpanded), when present. */
  rpath: string | null;
  /** DT_RUNPATH as written, when present. */
  runpath: string | null;
  /** DT_FLAGS_1 (0 when absent). */
  flags_1: number;
}

/** The parts of an ELF file provenance needs. */
export interface ElfInfo {
  /** 32 or 64 (EI_CLASS). */
  class_bits: 32 | 64;
  /** Byte order (EI_DATA). */
  endian: 'little' | 'big';
  /** EI_OSABI. */
  osabi: number;
  /** e_type as a name. */
  type: ElfTypeName;
  /** e_machine, raw. */
  machine: number;
  /** e_machine as a name (`x86-64`, `AArch64`, or `EM_<n>`). */
  machine_name: string;
  /** e_flags (machine specific; ARM's float ABI lives here). */
  flags: number;
  /** e_entry. */
  entry: bigint;
  /** Program headers, in file order. */
  program_headers: ElfProgramHeader[];
  /** PT_INTERP path (the dynamic loader), when present. */
  interpreter: string | null;
  /** The dynamic section, when present (null for static executables and `.o`). */
  dynamic: ElfDynamic | null;
  /** GNU build-id as lowercase hex, from a PT_NOTE or `.note.gnu.build-id`; null when none. */
  build_id: string | null;
}

/** Wraps a buffer as an {@link ElfByteSource}. */
export function bufferSource(bytes: Uint8Array): ElfByteSource {
  return { size: bytes.length, read: (offset, length) => bytes.subarray(offset, offset + length) };
}

/** Reads the ELF facts of the file at `path`. Throws {@link ProvenanceError} for non-ELF or truncated files. */
export function readElf(path: string): ElfInfo {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  }
  try {
    const size = fstatSync(fd).size;
    const source: ElfByteSource = {
      size,
      read(offset, length) {
        const buf = Buffer.alloc(length);
        let done = 0;
        while (done < length) {
          const n = readSync(fd, buf, done, length - done, offset + done);
          if (n === 0) break;
          done += n;
        }
        return buf.subarray(0, done);
      },
    };
    return parseElf(source, path);
  } finally {
    closeSync(fd);
  }
}

/** True when the first bytes of `head` are the ELF magic. */
export function hasElfMagic(head: Uint8Array): boolean {
  return head.length >= 4 && head[0] === 0x7f && head[1] === 0x45 && head[2] === 0x4c && head[3] === 0x46;
}

/** Parses ELF from a byte source; `path` names it in errors. */
export function parseElf(source: ElfByteSource, path = '<buffer>'): ElfInfo {
  return new ElfParser(source, path).parse();
}

/** Cursor-free field reader for one class and byte order. */
class ElfParser {
  private le = true;
  private is64 = true;

  constructor(
    private readonly src: ElfByteSource,
    private readonly path: string,
  ) {}

  private fail(code: string, message: string): never {
    throw new ProvenanceError(code, this.path, message);
  }

  private bytes(what: string, offset: number, length: number): DataView {
    if (offset < 0 || length < 0 || offset + length > this.src.size) {
      this.fail('elf-truncated', msg.truncated(what, offset, length, this.src.size));
    }
    const b = this.src.read(offset, length);
    if (b.length < length) this.fail('elf-truncated', msg.truncated(what, offset, length, this.src.size));
    return new DataView(b.buffer, b.byteOffset, b.byteLength);
  }

  private u16(v: DataView, at: number): number {
    return v.getUint16(at, this.le);
  }
  private u32(v: DataView, at: number): number {
    return v.getUint32(at, this.le);
  }
  /** An address-sized field (Elf32_Addr / Elf64_Addr, Off, Xword). */
  private word(v: DataView, at: number): bigint {
    return this.is64 ? v.getBigUint64(at, this.le) : BigInt(v.getUint32(at, this.le));
  }
  private signedWord(v: DataView, at: number): bigint {
    return this.is64 ? v.getBigInt64(at, this.le) : BigInt(v.getInt32(at, this.le));
  }
  private safe(what: string, value: bigint): number {
    if (value > BigInt(Number.MAX_SAFE_INTEGER)) this.fail('elf-too-large', msg.tooLarge(what, value));
    return Number(value);
  }

  parse(): ElfInfo {
    const head = this.raw('ELF identification', 0, Math.min(16, this.src.size));
    if (!hasElfMagic(head)) this.fail('not-elf', msg.notElf(hex(head.subarray(0, 4))));
    const identBytes = this.raw('ELF identification', 0, 16);
    const cls = identBytes[4]!;
    const data = identBytes[5]!;
    if (cls !== 1 && cls !== 2) this.fail('elf-bad-header', msg.badClass(cls));
    if (data !== 1 && data !== 2) this.fail('elf-bad-header', msg.badData(data));
    this.is64 = cls === 2;
    this.le = data === 1;
    const ehsize = this.is64 ? 64 : 52;
    const h = this.bytes('ELF file header', 0, ehsize);
    const a = this.is64 ? 8 : 4;
    const typeCode = this.u16(h, 16);
    const machine = this.u16(h, 18);
    const entry = this.word(h, 24);
    const phoff = this.safe('e_phoff', this.word(h, 24 + a));
    const shoff = this.safe('e_shoff', this.word(h, 24 + 2 * a));
    const o = 24 + 3 * a;
    const flags = this.u32(h, o);
    const phentsize = this.u16(h, o + 6);
    let phnum = this.u16(h, o + 8);
    const shentsize = this.u16(h, o + 10);
    let shnum = this.u16(h, o + 12);

    // Extended numbering (gABI): counts that do not fit live in section header 0.
    if (shoff !== 0 && (phnum === 0xffff || shnum === 0)) {
      const s0 = this.sectionHeader(shoff, shentsize, 0);
      if (phnum === 0xffff) phnum = s0.info;
      if (shnum === 0) shnum = this.safe('section count', s0.size);
    }

    const phdrs: ElfProgramHeader[] = [];
    if (phoff !== 0 && phnum > 0) {
      const want = this.is64 ? 56 : 32;
      if (phentsize < want) this.fail('elf-bad-header', msg.badEntSize('program header', phentsize, want));
      const table = this.bytes('program header table', phoff, phentsize * phnum);
      for (let i = 0; i < phnum; i++) phdrs.push(this.programHeader(table, i * phentsize));
    }

    let interpreter: string | null = null;
    const interp = phdrs.find((p) => p.type === PT.INTERP);
    if (interp) interpreter = cString(this.raw('PT_INTERP', interp.offset, interp.filesz), 0);

    const dynamic = this.dynamicSection(phdrs, shoff, shentsize, shnum);

    let buildId: string | null = null;
    for (const p of phdrs) {
      if (p.type !== PT.NOTE || buildId !== null) continue;
      buildId = this.buildIdIn(this.raw('PT_NOTE', p.offset, p.filesz), p.align === 8n ? 8 : 4);
    }
    if (buildId === null && shoff !== 0 && shnum > 0) {
      for (let i = 0; i < shnum && buildId === null; i++) {
        const s = this.sectionHeader(shoff, shentsize, i);
        if (s.type !== SHT_NOTE) continue;
        const size = this.safe('note size', s.size);
        buildId = this.buildIdIn(this.raw('note section', this.safe('note offset', s.offset), size), s.addralign === 8n ? 8 : 4);
      }
    }

    return {
      class_bits: this.is64 ? 64 : 32,
      endian: this.le ? 'little' : 'big',
      osabi: identBytes[7]!,
      type: typeCode in ElfType ? ElfType[typeCode as keyof typeof ElfType] : 'OTHER',
      machine,
      machine_name: machineName(machine),
      flags,
      entry,
      program_headers: phdrs,
      interpreter,
      dynamic,
      build_id: buildId,
    };
  }

  private raw(what: string, offset: number, length: number): Uint8Array {
    const v = this.bytes(what, offset, length);
    return new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
  }

  private programHeader(t: DataView, at: number): ElfProgramHeader {
    if (this.is64) {
      return {
        type: this.u32(t, at),
        flags: this.u32(t, at + 4),
        offset: this.safe('p_offset', this.word(t, at + 8)),
        vaddr: this.word(t, at + 16),
        filesz: this.safe('p_filesz', this.word(t, at + 32)),
        memsz: this.word(t, at + 40),
        align: this.word(t, at + 48),
      };
    }
    return {
      type: this.u32(t, at),
      offset: this.u32(t, at + 4),
      vaddr: BigInt(this.u32(t, at + 8)),
      filesz: this.u32(t, at + 16),
      memsz: BigInt(this.u32(t, at + 20)),
      flags: this.u32(t, at + 24),
      align: BigInt(this.u32(t, at + 28)),
    };
  }

  private sectionHeader(shoff: number, shentsize: number, index: number) {
    const want = this.is64 ? 64 : 40;
    if (shentsize < want) this.fail('elf-bad-header', msg.badEntSize('section header', shentsize, want));
    const v = this.bytes(`section header ${index}`, shoff + index * shentsize, want);
    const a = this.is64 ? 8 : 4;
    // sh_name, sh_type (4 each), then sh_flags, sh_addr, sh_offset, sh_size (word), sh_link, sh_info (4), sh_addralign, sh_entsize (word)
    const type = this.u32(v, 4);
    const addr = this.word(v, 8 + a);
    const offset = this.word(v, 8 + 2 * a);
    const size = this.word(v, 8 + 3 * a);
    const link = this.u32(v, 8 + 4 * a);
    const info = this.u32(v, 12 + 4 * a);
    const addralign = this.word(v, 16 + 4 * a);
    return { type, addr, offset, size, link, info, addralign };
  }

  /** The GNU build-id in a block of notes, or null. */
  private buildIdIn(notes: Uint8Array, align: 4 | 8): string | null {
    const v = new DataView(notes.buffer, notes.byteOffset, notes.byteLength);
    const pad = (n: number) => (n + align - 1) & ~(align - 1);
    let at = 0;
    while (at + 12 <= notes.length) {
      const namesz = this.u32(v, at);
      const descsz = this.u32(v, at + 4);
      const type = this.u32(v, at + 8);
      const nameAt = at + 12;
      const descAt = nameAt + pad(namesz);
      if (descAt + descsz > notes.length) break;
      const name = cString(notes.subarray(nameAt, nameAt + namesz), 0);
      if (type === NT_GNU_BUILD_ID && name === 'GNU') return hex(notes.subarray(descAt, descAt + descsz), '');
      at = descAt + pad(descsz);
    }
    return null;
  }

  private dynamicSection(phdrs: ElfProgramHeader[], shoff: number, shentsize: number, shnum: number): ElfDynamic | null {
    const dyn = phdrs.find((p) => p.type === PT.DYNAMIC);
    let offset: number;
    let size: number;
    if (dyn) {
      offset = dyn.offset;
      size = dyn.filesz;
    } else {
      return null;
    }
    const entsize = this.is64 ? 16 : 8;
    const v = this.bytes('dynamic section', offset, size - (size % entsize));
    const entries: Array<[bigint, bigint]> = [];
    for (let at = 0; at + entsize <= v.byteLength; at += entsize) {
      const tag = this.signedWord(v, at);
      if (tag === BigInt(DT.NULL)) break;
      entries.push([tag, this.word(v, at + (this.is64 ? 8 : 4))]);
    }
    const first = (tag: number) => entries.find(([t]) => t === BigInt(tag))?.[1];
    const strtabAddr = first(DT.STRTAB);
    const strsz = first(DT.STRSZ);
    let strtab: Uint8Array = new Uint8Array(0);
    if (strtabAddr !== undefined) {
      const strOff = this.fileOffsetOf(phdrs, strtabAddr, shoff, shentsize, shnum);
      const len = strsz !== undefined ? this.safe('DT_STRSZ', strsz) : Math.min(this.src.size - strOff, 1 << 20);
      strtab = this.raw('dynamic string table', strOff, len);
    }
    const str = (off: bigint) => {
      const n = Number(off);
      if (off < 0n || n >= strtab.length) this.fail('elf-bad-string', msg.badString(n));
      return cString(strtab, n);
    };
    const needed: string[] = [];
    let soname: string | null = null;
    let rpath: string | null = null;
    let runpath: string | null = null;
    let flags1 = 0;
    for (const [tag, val] of entries) {
      switch (Number(tag)) {
        case DT.NEEDED:
          needed.push(str(val));
          break;
        case DT.SONAME:
          soname ??= str(val);
          break;
        case DT.RPATH:
          rpath ??= str(val);
          break;
        case DT.RUNPATH:
          runpath ??= str(val);
          break;
        case DT.FLAGS_1:
          flags1 = Number(val & 0xffffffffn);
          break;
        default:
          break;
      }
    }
    return { needed, soname, rpath, runpath, flags_1: flags1 };
  }

  /** File offset of a virtual address, through the PT_LOAD segments (as the loader maps it); section headers as a fallback. */
  private fileOffsetOf(phdrs: ElfProgramHeader[], vaddr: bigint, shoff: number, shentsize: number, shnum: number): number {
    for (const p of phdrs) {
      if (p.type !== PT.LOAD) continue;
      if (vaddr >= p.vaddr && vaddr < p.vaddr + BigInt(p.filesz)) return p.offset + Number(vaddr - p.vaddr);
    }
    for (let i = 0; shoff !== 0 && i < shnum; i++) {
      const s = this.sectionHeader(shoff, shentsize, i);
      if (s.type !== 8 /* SHT_NOBITS */ && s.addr !== 0n && vaddr >= s.addr && vaddr < s.addr + s.size) {
        return this.safe('section offset', s.offset + (vaddr - s.addr));
      }
    }
    return this.fail('elf-bad-address', msg.unmappedAddress('DT_STRTAB', vaddr));
  }
}

/** Name of an e_machine value. */
export function machineName(machine: number): string {
  return (ElfMachine as Record<number, string>)[machine] ?? `EM_${machine}`;
}

function cString(bytes: Uint8Array, at: number): string {
  let end = bytes.indexOf(0, at);
  if (end < 0) end = bytes.length;
  return Buffer.from(bytes.buffer, bytes.byteOffset + at, end - at).toString('utf8');
}

function hex(bytes: Uint8Array, sep = ' '): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(sep);
}
