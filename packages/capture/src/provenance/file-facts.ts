/**
 * Facts that identify one file on disk: where it is (path and realpath),
 * size, mtime, ELF build-id, sha256, and how often each marker string occurs
 * in it. The file is read once as a stream, so a library of gigabytes is
 * never held in memory whole.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { readElf, type ElfInfo } from './elf';
import { ProvenanceError } from './errors';
import { provenanceMessages as msg } from './messages';

/** The identity of one file. */
export interface FileFacts {
  /** The path as given (or as the loader would open it). */
  path: string;
  /** The path with every symlink resolved. */
  realpath: string;
  /** Size in bytes. */
  size_bytes: number;
  /** Modification time, ISO 8601 in UTC (millisecond precision). */
  mtime_iso: string;
  /** Modification time, ns since the Unix epoch. */
  mtime_ns: bigint;
  /** GNU build-id as lowercase hex; null when the file is not ELF or has none. */
  build_id: string | null;
  /** True when the file starts with the ELF magic. */
  is_elf: boolean;
  /** SHA-256 of the contents, lowercase hex. */
  sha256: string;
  /** Per marker string, the number of non-overlapping occurrences in the file's bytes (UTF-8 encoded markers). */
  markers: Record<string, number>;
}

/** Options of {@link fileFacts}. */
export interface FileFactsOptions {
  /** Read chunk size in bytes (tests use small ones to exercise chunk boundaries). */
  chunk_bytes?: number;
  /** Already parsed ELF facts of this file, to skip re-reading them. */
  elf?: ElfInfo | null;
}

/**
 * Path, realpath, size, mtime, build-id, sha256 and marker counts of the
 * file at `path`. Throws {@link ProvenanceError} when it cannot be read; a
 * non-ELF file is not an error (its `build_id` is null), a truncated ELF
 * file is.
 */
export async function fileFacts(path: string, markers: readonly string[] = [], opts: FileFactsOptions = {}): Promise<FileFacts> {
  for (const m of markers) if (m.length === 0) throw new ProvenanceError('empty-marker', path, msg.emptyMarker());
  let st;
  let real: string;
  try {
    st = await stat(path, { bigint: true });
    real = await realpath(path);
  } catch (e) {
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  }
  const counter = new MarkerCounter(markers);
  const hash = createHash('sha256');
  let head: Buffer | null = null;
  try {
    const stream = createReadStream(path, { highWaterMark: opts.chunk_bytes ?? 1 << 20 });
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (head === null) head = chunk.subarray(0, 4);
      else if (head.length < 4) head = Buffer.concat([head, chunk.subarray(0, 4 - head.length)]);
      hash.update(chunk);
      counter.push(chunk);
    }
  } catch (e) {
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  }
  const isElf = head !== null && head.length >= 4 && head[0] === 0x7f && head.toString('latin1', 1, 4) === 'ELF';
  let buildId: string | null = null;
  if (isElf) buildId = (opts.elf !== undefined && opts.elf !== null ? opts.elf : readElf(path)).build_id;
  const mtimeNs = st.mtimeNs;
  return {
    path,
    realpath: real,
    size_bytes: Number(st.size),
    mtime_iso: new Date(Number(mtimeNs / 1_000_000n)).toISOString(),
    mtime_ns: mtimeNs,
    build_id: buildId,
    is_elf: isElf,
    sha256: hash.digest('hex'),
    markers: counter.counts(),
  };
}

/**
 * Counts non-overlapping occurrences of byte strings in a stream fed chunk
 * by chunk, the way `bytes.count` would on the whole file: the last
 * (longest marker - 1) bytes of each chunk are kept so an occurrence that
 * spans a boundary is found once.
 */
export class MarkerCounter {
  private readonly needles: Array<{ text: string; bytes: Buffer; count: number; next: number }>;
  private readonly keep: number;
  private tail: Buffer = Buffer.alloc(0);
  /** Absolute offset of the end of the data seen so far. */
  private seen = 0;

  constructor(markers: readonly string[]) {
    const uniq = [...new Set(markers)];
    this.needles = uniq.map((text) => ({ text, bytes: Buffer.from(text, 'utf8'), count: 0, next: 0 }));
    this.keep = Math.max(0, ...this.needles.map((n) => n.bytes.length - 1));
  }

  /** Feeds the next chunk. */
  push(chunk: Buffer): void {
    if (this.needles.length === 0 || chunk.length === 0) return;
    const buf = this.tail.length ? Buffer.concat([this.tail, chunk]) : chunk;
    const base = this.seen - this.tail.length; // absolute offset of buf[0]
    for (const n of this.needles) {
      const len = n.bytes.length;
      // Starts before this bound lie wholly in data already searched.
      let from = Math.max(0, this.tail.length - len + 1, n.next - base);
      for (;;) {
        const at = buf.indexOf(n.bytes, from);
        if (at < 0) break;
        n.count++;
        from = at + len;
        n.next = base + from;
      }
    }
    this.seen += chunk.length;
    this.tail = Buffer.from(buf.subarray(Math.max(0, buf.length - this.keep)));
  }

  /** Counts so far, keyed by marker. */
  counts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const n of this.needles) out[n.text] = n.count;
    return out;
  }
}
