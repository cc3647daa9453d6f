/**
 * A tiny writer of synthetic ELF files for the provenance tests: any class
 * and byte order, with PT_INTERP, PT_DYNAMIC (DT_NEEDED, DT_SONAME,
 * DT_RPATH, DT_RUNPATH) and a GNU build-id note either in a PT_NOTE or only
 * in a SHT_NOTE section. It knows the truth the reader must recover.
 */

/** What to put in the synthetic file. */
export interface SyntheticElf {
  class_bits: 32 | 64;
  endian: 'little' | 'big';
  machine: number;
  /** e_type; default 3 (ET_DYN). */
  type?: number;
  interpreter?: string;
  needed?: string[];
  soname?: string;
  rpath?: string;
  runpath?: string;
  /** Build-id bytes as hex. */
  build_id?: string;
  /** Where the build-id note lives; default 'phdr'. */
  build_id_in?: 'phdr' | 'section';
}

const BASE = 0x10000n;

/** Writes the synthetic ELF file's bytes. */
export function buildElf(spec: SyntheticElf): Buffer {
  const is64 = spec.class_bits === 64;
  const le = spec.endian === 'little';
  const ehsize = is64 ? 64 : 52;
  const phentsize = is64 ? 56 : 32;
  const shentsize = is64 ? 64 : 40;

  // String table.
  const strs: string[] = [''];
  const strOff = new Map<string, number>();
  let strLen = 1;
  const addStr = (s: string) => {
    if (strOff.has(s)) return strOff.get(s)!;
    strOff.set(s, strLen);
    strs.push(s);
    strLen += Buffer.byteLength(s) + 1;
    return strOff.get(s)!;
  };
  const dyn: Array<[number, bigint]> = [];
  for (const n of spec.needed ?? []) dyn.push([1, BigInt(addStr(n))]);
  if (spec.soname !== undefined) dyn.push([14, BigInt(addStr(spec.soname))]);
  if (spec.rpath !== undefined) dyn.push([15, BigInt(addStr(spec.rpath))]);
  if (spec.runpath !== undefined) dyn.push([29, BigInt(addStr(spec.runpath))]);
  const dynstr = Buffer.concat(strs.map((s) => Buffer.from(s + '\0')));

  const notePhdr = spec.build_id !== undefined && (spec.build_id_in ?? 'phdr') === 'phdr';
  const phdrs = (spec.interpreter !== undefined ? 1 : 0) + 1 /* LOAD */ + 1 /* DYNAMIC */ + (notePhdr ? 1 : 0);
  let at = ehsize + phdrs * phentsize;
  const align = (n: number, a: number) => (n + a - 1) & ~(a - 1);
  const interpAt = at;
  const interp = spec.interpreter !== undefined ? Buffer.from(spec.interpreter + '\0') : Buffer.alloc(0);
  at += interp.length;
  const dynstrAt = at;
  at = align(at + dynstr.length, 8);
  const dynEnt = is64 ? 16 : 8;
  const dynAt = at;
  const dynEntries: Array<[number, bigint]> = [...dyn, [5, BASE + BigInt(dynstrAt)], [10, BigInt(dynstr.length)], [0, 0n]];
  at += dynEntries.length * dynEnt;
  at = align(at, 4);
  const noteAt = at;
  let note = Buffer.alloc(0);
  if (spec.build_id !== undefined) {
    const desc = Buffer.from(spec.build_id, 'hex');
    const name = Buffer.from('GNU\0');
    note = Buffer.alloc(12 + 4 + align(desc.length, 4));
    w32(note, 0, name.length);
    w32(note, 4, desc.length);
    w32(note, 8, 3);
    name.copy(note, 12);
    desc.copy(note, 16);
  }
  at += note.length;
  at = align(at, 8);
  const useSections = spec.build_id !== undefined && !notePhdr;
  const shAt = useSections ? at : 0;
  const total = at + (useSections ? 2 * shentsize : 0);

  const b = Buffer.alloc(total);
  function w16(buf: Buffer, o: number, v: number) {
    if (le) buf.writeUInt16LE(v, o);
    else buf.writeUInt16BE(v, o);
  }
  function w32(buf: Buffer, o: number, v: number) {
    if (le) buf.writeUInt32LE(v, o);
    else buf.writeUInt32BE(v, o);
  }
  const wWord = (o: number, v: bigint) => {
    if (is64) {
      if (le) b.writeBigUInt64LE(v, o);
      else b.writeBigUInt64BE(v, o);
    } else w32(b, o, Number(v));
  };
  const wSWord = (o: number, v: bigint) => {
    if (is64) {
      if (le) b.writeBigInt64LE(v, o);
      else b.writeBigInt64BE(v, o);
    } else if (le) b.writeInt32LE(Number(v), o);
    else b.writeInt32BE(Number(v), o);
  };

  b.write('\x7fELF', 0, 'latin1');
  b[4] = is64 ? 2 : 1;
  b[5] = le ? 1 : 2;
  b[6] = 1;
  w16(b, 16, spec.type ?? 3);
  w16(b, 18, spec.machine);
  w32(b, 20, 1);
  const a = is64 ? 8 : 4;
  wWord(24, BASE); // e_entry
  wWord(24 + a, BigInt(ehsize)); // e_phoff
  wWord(24 + 2 * a, BigInt(shAt)); // e_shoff
  const o = 24 + 3 * a;
  w16(b, o + 4, ehsize);
  w16(b, o + 6, phentsize);
  w16(b, o + 8, phdrs);
  w16(b, o + 10, shentsize);
  w16(b, o + 12, useSections ? 2 : 0);

  let ph = ehsize;
  const phdr = (type: number, offset: number, size: number, flags: number, palign: number) => {
    if (is64) {
      w32(b, ph, type);
      w32(b, ph + 4, flags);
      wWord(ph + 8, BigInt(offset));
      wWord(ph + 16, BASE + BigInt(offset));
      wWord(ph + 24, BASE + BigInt(offset));
      wWord(ph + 32, BigInt(size));
      wWord(ph + 40, BigInt(size));
      wWord(ph + 48, BigInt(palign));
    } else {
      w32(b, ph, type);
      w32(b, ph + 4, offset);
      w32(b, ph + 8, Number(BASE) + offset);
      w32(b, ph + 12, Number(BASE) + offset);
      w32(b, ph + 16, size);
      w32(b, ph + 20, size);
      w32(b, ph + 24, flags);
      w32(b, ph + 28, palign);
    }
    ph += phentsize;
  };
  if (spec.interpreter !== undefined) phdr(3, interpAt, interp.length, 4, 1);
  phdr(1, 0, total, 5, 0x1000);
  phdr(2, dynAt, dynEntries.length * dynEnt, 6, 8);
  if (notePhdr) phdr(4, noteAt, note.length, 4, 4);

  interp.copy(b, interpAt);
  dynstr.copy(b, dynstrAt);
  dynEntries.forEach(([tag, val], i) => {
    wSWord(dynAt + i * dynEnt, BigInt(tag));
    wWord(dynAt + i * dynEnt + a, val);
  });
  note.copy(b, noteAt);
  if (useSections) {
    // Section 0 is all zeros; section 1 is the SHT_NOTE holding the build-id.
    const s = shAt + shentsize;
    w32(b, s + 4, 7);
    wWord(s + 8 + a, BASE + BigInt(noteAt)); // sh_addr
    wWord(s + 8 + 2 * a, BigInt(noteAt)); // sh_offset
    wWord(s + 8 + 3 * a, BigInt(note.length)); // sh_size
    wWord(s + 16 + 4 * a, 4n); // sh_addralign
  }
  return b;
}
