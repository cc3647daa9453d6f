/**
 * Readers of the dynamic loader's configuration: the binary
 * `/etc/ld.so.cache` (the "glibc-ld.so.cache1.1" format, optionally behind
 * the old "ld.so-1.7.0" one) and `/etc/ld.so.conf` with its `include`s.
 *
 * Layouts mirror glibc's `sysdeps/generic/dl-cache.h`:
 *   struct cache_file_new { char magic[17]; char version[3]; uint32_t nlibs;
 *     uint32_t len_strings; uint8_t flags; uint8_t pad[3];
 *     uint32_t extension_offset; uint32_t unused[3]; struct file_entry_new libs[]; }   // 48 bytes
 *   struct file_entry_new { int32_t flags; uint32_t key, value; uint32_t osversion_unused; uint64_t hwcap; }  // 24 bytes
 *   struct cache_file { char magic[11]; uint32_t nlibs; struct file_entry { int32_t flags; uint32_t key, value; } libs[]; }
 *   struct cache_extension { uint32_t magic; uint32_t count; struct { uint32_t tag, flags, offset, size; } sections[]; }
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { ProvenanceError } from './errors';
import { provenanceMessages as msg } from './messages';

/** One library entry of the cache. */
export interface LdCacheEntry {
  /** The soname it is looked up by (`libc.so.6`). */
  name: string;
  /** The file it points at. */
  path: string;
  /** Entry flags: type (low byte, 3 = ELF libc6) and required ABI (high byte, 0x0300 = x86-64). */
  flags: number;
  /** The glibc-hwcaps subdirectory (`x86-64-v3`) of an hwcaps entry; null for a plain one. */
  hwcaps: string | null;
  /** Legacy hwcap bits of a plain entry (0 for almost all). */
  legacy_hwcap: bigint;
}

/** A parsed ld.so.cache. */
export interface LdCache {
  /** Entries in file order (glibc sorts them so that the preferred one of a name comes first). */
  entries: LdCacheEntry[];
  /** Which format the entries came from. */
  format: 'glibc-ld.so.cache1.1' | 'ld.so-1.7.0';
}

const NEW_MAGIC = 'glibc-ld.so.cache1.1';
const OLD_MAGIC = 'ld.so-1.7.0';
const EXTENSION_MAGIC = 0xeaa42174;
const EXTENSION_TAG_GLIBC_HWCAPS = 1;
const HWCAP_EXTENSION = 1n << 62n;

/** Reads and parses the cache at `path`; null when there is no such file. */
export function readLdCache(path = '/etc/ld.so.cache'): LdCache | null {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  }
  return parseLdCache(bytes, path);
}

/** Parses the bytes of an ld.so.cache. */
export function parseLdCache(bytes: Buffer, path = '<buffer>'): LdCache {
  const fail = (detail: string): never => {
    throw new ProvenanceError('bad-ld-cache', path, msg.badCache(detail));
  };
  let newAt = -1;
  if (bytes.toString('latin1', 0, NEW_MAGIC.length) === NEW_MAGIC) newAt = 0;
  else if (bytes.toString('latin1', 0, OLD_MAGIC.length) === OLD_MAGIC) {
    // struct cache_file is 16 bytes (magic[11] padded to 12, nlibs), entries 12 bytes.
    if (bytes.length < 16) fail('truncated old-format header');
    const nlibs = bytes.readUInt32LE(12);
    const oldEnd = 16 + nlibs * 12;
    const aligned = (oldEnd + 7) & ~7; // ALIGN_CACHE: __alignof__ (struct cache_file_new)
    if (bytes.toString('latin1', aligned, aligned + NEW_MAGIC.length) === NEW_MAGIC) newAt = aligned;
    else return { entries: parseOld(bytes, nlibs, oldEnd, fail), format: OLD_MAGIC };
  } else {
    fail(`unknown format (magic "${bytes.toString('latin1', 0, 20).replace(/[^\x20-\x7e]/g, '.')}")`);
  }
  if (bytes.length < newAt + 48) fail('truncated header');
  // flags byte: 2 = little-endian, 3 = big-endian, 0 = unknown (assume host order).
  const endianFlag = bytes[newAt + 28];
  const le = endianFlag !== 3;
  const u32 = (at: number) => (le ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const u64 = (at: number) => (le ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at));
  const nlibs = u32(newAt + 20);
  const extOffset = u32(newAt + 32);
  if (bytes.length < newAt + 48 + nlibs * 24) fail(`truncated: ${nlibs} entries do not fit in ${bytes.length} bytes`);
  const str = (off: number) => {
    const at = newAt + off; // string offsets are relative to the new-format header
    if (at >= bytes.length) fail(`string offset ${off} past the end`);
    const end = bytes.indexOf(0, at);
    return bytes.toString('utf8', at, end < 0 ? bytes.length : end);
  };

  const hwcapNames: string[] = [];
  if (extOffset !== 0 && newAt + extOffset + 8 <= bytes.length && u32(newAt + extOffset) === EXTENSION_MAGIC) {
    const count = u32(newAt + extOffset + 4);
    for (let i = 0; i < count; i++) {
      const s = newAt + extOffset + 8 + i * 16;
      if (s + 16 > bytes.length) break;
      if (u32(s) !== EXTENSION_TAG_GLIBC_HWCAPS) continue;
      const off = u32(s + 8);
      const size = u32(s + 12);
      for (let j = 0; j + 4 <= size; j += 4) hwcapNames.push(str(u32(newAt + off + j)));
    }
  }

  const entries: LdCacheEntry[] = [];
  for (let i = 0; i < nlibs; i++) {
    const e = newAt + 48 + i * 24;
    const flags = le ? bytes.readInt32LE(e) : bytes.readInt32BE(e);
    const hwcap = u64(e + 16);
    const isExt = hwcap >> 32n === HWCAP_EXTENSION >> 32n;
    entries.push({
      name: str(u32(e + 4)),
      path: str(u32(e + 8)),
      flags,
      hwcaps: isExt ? (hwcapNames[Number(hwcap & 0xffffffffn)] ?? null) : null,
      legacy_hwcap: isExt ? 0n : hwcap,
    });
  }
  return { entries, format: NEW_MAGIC };
}

function parseOld(bytes: Buffer, nlibs: number, stringsAt: number, fail: (d: string) => never): LdCacheEntry[] {
  if (bytes.length < stringsAt) fail(`truncated: ${nlibs} entries do not fit`);
  const str = (off: number) => {
    const at = stringsAt + off;
    const end = bytes.indexOf(0, at);
    return bytes.toString('utf8', at, end < 0 ? bytes.length : end);
  };
  const out: LdCacheEntry[] = [];
  for (let i = 0; i < nlibs; i++) {
    const e = 16 + i * 12;
    out.push({ name: str(bytes.readUInt32LE(e + 4)), path: str(bytes.readUInt32LE(e + 8)), flags: bytes.readInt32LE(e), hwcaps: null, legacy_hwcap: 0n });
  }
  return out;
}

/**
 * The cache flags (`FLAG_ELF_LIBC6 | FLAG_<ABI>`) glibc's `_dl_cache_check_flags`
 * accepts for an object of this machine and class; null when this module does
 * not know the machine (then any flags are accepted and the ELF check decides).
 */
export function cacheFlagsFor(machine: number, classBits: 32 | 64, elfFlags: number): number[] | null {
  const LIBC6 = 0x0003;
  switch (machine) {
    case 62: // EM_X86_64: x32 objects are ELFCLASS32
      return classBits === 64 ? [LIBC6 | 0x0300] : [LIBC6 | 0x0800];
    case 3: // EM_386
      return [LIBC6, 0x0001];
    case 183: // EM_AARCH64
      return [LIBC6 | 0x0a00];
    case 40: // EM_ARM: EF_ARM_ABI_FLOAT_HARD = 0x400
      return [LIBC6 | ((elfFlags & 0x400) !== 0 ? 0x0900 : 0x0b00), LIBC6];
    case 21: // EM_PPC64
      return [LIBC6 | 0x0500];
    case 22: // EM_S390
      return classBits === 64 ? [LIBC6 | 0x0400] : [LIBC6];
    case 43: // EM_SPARCV9
      return [LIBC6 | 0x0100];
    case 2: // EM_SPARC
      return classBits === 64 ? [LIBC6 | 0x0100] : [LIBC6];
    case 20: // EM_PPC
      return [LIBC6];
    case 243: // EM_RISCV: float ABI in e_flags (EF_RISCV_FLOAT_ABI_DOUBLE = 0x4)
      return [LIBC6 | ((elfFlags & 0x6) === 0x4 ? 0x1000 : 0x0f00)];
    case 258: // EM_LOONGARCH: EF_LARCH_ABI_DOUBLE_FLOAT = 0x3
      return [LIBC6 | ((elfFlags & 0x7) === 0x3 ? 0x1200 : 0x1100)];
    default:
      return null;
  }
}

/**
 * The directories named by an ld.so.conf file, following `include` globs
 * (`*`, `?` in the last path component), in order, without duplicates.
 * `hwcap` lines are ignored as ldconfig does. Missing files give nothing.
 */
export function readLdSoConf(path = '/etc/ld.so.conf', seen: Set<string> = new Set()): string[] {
  if (seen.has(path)) return [];
  seen.add(path);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return [];
  }
  const dirs: string[] = [];
  const add = (d: string) => {
    if (!dirs.includes(d)) dirs.push(d);
  };
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const inc = /^include\s+(.+)$/.exec(line);
    if (inc) {
      for (const pattern of inc[1]!.split(/\s+/)) {
        const full = isAbsolute(pattern) ? pattern : join(dirname(path), pattern);
        for (const f of globFiles(full)) for (const d of readLdSoConf(f, seen)) add(d);
      }
      continue;
    }
    if (/^hwcap\s/.test(line)) continue;
    // ldconfig also accepts "dir=TYPE" and separators of space, tab, comma, colon.
    for (const d of line.split(/[\s,:]+/)) if (d) add(d.replace(/=.*$/, '').replace(/\/+$/, '') || '/');
  }
  return dirs;
}

function globFiles(pattern: string): string[] {
  const dir = dirname(pattern);
  const base = pattern.slice(dir.length + 1);
  if (!/[*?[]/.test(base)) return [pattern];
  const re = new RegExp(`^${base.replace(/[.+^${}()|\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => re.test(n))
    .sort()
    .map((n) => join(dir, n))
    .filter((f) => {
      try {
        return statSync(f).isFile();
      } catch {
        return false;
      }
    });
}
