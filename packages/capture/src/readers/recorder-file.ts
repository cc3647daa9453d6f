import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 as zlibCrc32 } from 'node:zlib';
import { RECORD_LAYOUT, RecorderKind, TWR, TWR_STRUCTS } from './recorder-layout';
import type { RecorderFileHeader, RecorderMeta, RecorderProcess } from './recorder-dir';

/**
 * One process's records.twr, read in bulk: the chunks are checked (magic,
 * CRC-32 of header and payload, sequence) and the records are not decoded
 * here, only indexed: `kinds[i]` and `offsets[i]` (byte offset in `buf`) of
 * record i, so the backend mappers decode each record once, by its kind's
 * field table, straight from the file's bytes.
 */

/** CRC-32 (IEEE), as zlib computes it. */
export function crc32(buf: Uint8Array, start = 0, end = buf.length): number {
  return zlibCrc32(buf.subarray(start, end));
}

const FH = TWR_STRUCTS.FileHeader;
const CH = TWR_STRUCTS.ChunkHeader;
const SE = TWR_STRUCTS.StringEntry;
const CN = RECORD_LAYOUT.cuda_name.fields;

/** A records.twr shorter than its file header: a process that created its file and wrote nothing. */
export class EmptyRecordsFile extends Error {}

/** Reads one process's records.twr and meta.json. */
export async function readRecorderProcess(dir: string): Promise<RecorderProcess> {
  const file = join(dir, 'records.twr');
  const b = await readFile(file);
  let meta: RecorderMeta | null = null;
  try {
    meta = JSON.parse(await readFile(join(dir, 'meta.json'), 'utf8')) as RecorderMeta;
  } catch {
    meta = null;
  }
  if (b.length < TWR.file_header_bytes) {
    if (b.length === 0 || b.toString('latin1', 0, Math.min(8, b.length)) === TWR.file_magic.slice(0, Math.min(8, b.length)))
      throw new EmptyRecordsFile(`${file}: ${b.length} bytes, no file header (the process wrote nothing)`);
    throw new Error(`${file}: not a tickwise recorder file (bad magic)`);
  }
  if (b.toString('latin1', 0, 8) !== TWR.file_magic) throw new Error(`${file}: not a tickwise recorder file (bad magic)`);
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (crc32(b, 0, FH.header_crc32[0]) !== dv.getUint32(FH.header_crc32[0], true)) throw new Error(`${file}: file header CRC mismatch`);
  const header: RecorderFileHeader = {
    format_version: dv.getUint32(FH.format_version[0], true),
    pid: dv.getUint32(FH.pid[0], true),
    host_start_ns: dv.getBigUint64(FH.host_start_ns[0], true),
    boottime_minus_monotonic_ns: dv.getBigInt64(FH.boottime_minus_monotonic_ns[0], true),
    parent_pid: dv.getUint32(FH.parent_pid[0], true),
    fork_child: (dv.getUint32(FH.flags[0], true) & 1) === 1,
  };
  if (header.format_version !== TWR.format_version || dv.getUint32(FH.record_size[0], true) !== TWR.record_bytes) {
    throw new Error(`${file}: unsupported format version ${header.format_version}`);
  }
  // at most one record per 64 bytes of file
  let offsets = new Uint32Array(Math.max(0, Math.floor((b.length - TWR.file_header_bytes) / TWR.record_bytes)));
  let kinds = new Uint16Array(offsets.length);
  let n = 0;
  const names = new Map<string, string>();
  // CudaName fragments: cudaNameKey -> total_len and offset -> bytes
  const fragments = new Map<string, { total: number; parts: Map<number, Buffer> }>();
  // replays: a chunk whose seq was seen already, or whose payload equals an earlier one's
  const payloadBySeq = new Map<bigint, number>();
  const payloads = new Map<string, number[]>(); // `${crc}:${bytes}` -> payload starts
  let duplicate_chunks = 0;
  let duplicate_records = 0;
  let off = TWR.file_header_bytes;
  let chunks = 0;
  let stopped: string | null = null;
  let seq = 0n;
  while (off < b.length) {
    if (b.length - off < TWR.chunk_header_bytes) { stopped = `partial chunk header at byte ${off}`; break; }
    if (dv.getUint32(off + CH.magic[0], true) !== TWR.chunk_magic || crc32(b, off, off + CH.header_crc32[0]) !== dv.getUint32(off + CH.header_crc32[0], true)) {
      stopped = `bad chunk header at byte ${off}`;
      break;
    }
    const type = dv.getUint16(off + CH.type[0], true);
    const bytes = dv.getUint32(off + CH.payload_bytes[0], true);
    const count = dv.getUint32(off + CH.item_count[0], true);
    const p = off + TWR.chunk_header_bytes;
    if (b.length - p < bytes) { stopped = `partial chunk payload at byte ${off}`; break; }
    const crc = dv.getUint32(off + CH.payload_crc32[0], true);
    if (crc32(b, p, p + bytes) !== crc) { stopped = `chunk payload CRC mismatch at byte ${off}`; break; }
    const chunkSeq = dv.getBigUint64(off + CH.seq[0], true);
    const key = `${crc}:${bytes}`;
    const same = (payloads.get(key) ?? []).some((q) => b.compare(b, q, q + bytes, p, p + bytes) === 0);
    const replayedSeq = chunkSeq < seq && payloadBySeq.get(chunkSeq) === crc;
    if (replayedSeq || (chunkSeq === seq && same && bytes > 0)) {
      // the same chunk again (a writer's retry, a copy): its records are in the file once already
      duplicate_chunks++;
      if (type === TWR.chunk_records) duplicate_records += count;
      if (chunkSeq === seq) seq++;
      off = p + bytes;
      continue;
    }
    if (chunkSeq !== seq) { stopped = `chunk sequence gap at byte ${off}`; break; }
    payloadBySeq.set(seq, crc);
    payloads.set(key, [...(payloads.get(key) ?? []), p]);
    seq++;
    if (type === TWR.chunk_records) {
      if (bytes !== count * TWR.record_bytes) { stopped = `record chunk size mismatch at byte ${off}`; break; }
      for (let i = 0; i < count; i++) {
        const at = p + i * TWR.record_bytes;
        if (n === offsets.length) {
          offsets = grow(offsets);
          kinds = grow(kinds);
        }
        const kind = dv.getUint16(at, true);
        offsets[n] = at;
        kinds[n++] = kind;
        if (kind === RecorderKind.cuda_name) addFragment(b, dv, at, fragments);
      }
    } else if (type === TWR.chunk_strings) {
      let q = p;
      for (let i = 0; i < count && q + TWR.string_entry_bytes <= p + bytes; i++) {
        const len = dv.getUint32(q + SE.byte_len[0], true);
        names.set(`${dv.getUint32(q + SE.key_kind[0], true)}:${dv.getBigUint64(q + SE.key[0], true)}`, b.toString('utf8', q + 16, q + 16 + len));
        q += TWR.string_entry_bytes + Math.ceil(len / 8) * 8;
      }
    }
    off = p + bytes;
    chunks++;
  }
  // a CUDA name is its fragments by offset; kept only when they cover all total_len bytes
  for (const [k, { total, parts }] of fragments) {
    const sorted = [...parts].sort((x, y) => x[0] - y[0]);
    let covered = 0;
    for (const [at, text] of sorted) if (at <= covered) covered = Math.max(covered, at + text.length);
    if (covered < total) continue;
    const whole = Buffer.alloc(total);
    for (const [at, text] of sorted) text.copy(whole, at);
    names.set(k, whole.toString('utf8'));
  }
  return {
    dir, header, buf: b, view: dv, offsets: offsets.subarray(0, n), kinds: kinds.subarray(0, n), record_count: n, names, meta, chunks,
    file_bytes: b.length, valid_bytes: off, stopped, duplicate_chunks, duplicate_records,
  };
}

function grow<T extends Uint32Array | Uint16Array>(a: T): T {
  const bigger = new (a.constructor as new (n: number) => T)(Math.max(1024, a.length * 2));
  bigger.set(a);
  return bigger;
}

/** Key of a CUDA name in {@link RecorderProcess.names}: `cuda-kernel:<name_key>` or `cuda-api:<domain << 32 | cbid>`. */
export function cudaNameKey(nameKind: number, key: bigint): string {
  return `${nameKind === 2 ? 'cuda-api' : nameKind === 1 ? 'cuda-kernel' : `cuda-${nameKind}`}:${key}`;
}

function addFragment(b: Buffer, dv: DataView, at: number, fragments: Map<string, { total: number; parts: Map<number, Buffer> }>): void {
  const total = dv.getUint32(at + CN.total_len[0], true);
  const from = dv.getUint32(at + CN.offset[0], true);
  const k = cudaNameKey(dv.getUint16(at + CN.name_kind[0], true), dv.getBigUint64(at + CN.key[0], true));
  const e = fragments.get(k) ?? { total, parts: new Map<number, Buffer>() };
  const text = at + CN.text[0];
  e.parts.set(from, b.subarray(text, text + Math.max(0, Math.min(40, total - from))));
  fragments.set(k, e);
}

/** The process directories of a capture: the root and every proc-<pid>[.n] below it. */
export async function recorderProcessDirs(dir: string): Promise<string[]> {
  const out = [dir];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    if (e.isDirectory() && /^proc-\d+(\.\d+)?$/.test(e.name)) out.push(join(dir, e.name));
  }
  const exists = await Promise.all(out.map((d) => stat(join(d, 'records.twr')).then(() => true, () => false)));
  return out.filter((_, i) => exists[i]);
}

/** True when `path` is a recorder capture directory. */
export async function isRecorderDir(path: string): Promise<boolean> {
  try {
    const head = await readFile(join(path, 'records.twr'));
    return head.toString('latin1', 0, 8) === TWR.file_magic;
  } catch {
    return false;
  }
}
