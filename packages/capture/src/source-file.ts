import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { TickwiseError } from '@tickwise/time';

/** Compression of an input file, detected from its first bytes. */
export type Compression = 'none' | 'gzip' | 'zstd';

/** An input file made ready for reading: path on disk, size, compression. */
export interface SourceFile {
  /** The name the user gave (`-` for stdin). */
  readonly displayPath: string;
  /** A path DuckDB and Node can read. */
  readonly path: string;
  readonly sizeBytes: number;
  readonly compression: Compression;
  /** Removes any temporary copy. */
  cleanup(): Promise<void>;
}

/** How the CLI passes `-` (stdin) through its argument parser. */
export const STDIN_ARG = '/dev/stdin';

/** Reads the first bytes of a file to tell its compression. */
export async function detectCompression(path: string): Promise<Compression> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(4);
    const { bytesRead } = await fh.read(buf, 0, 4, 0);
    if (bytesRead >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) return 'gzip';
    if (bytesRead >= 4 && buf.readUInt32LE(0) === 0xfd2fb528) return 'zstd';
    return 'none';
  } finally {
    await fh.close();
  }
}

/**
 * Opens an input: a path, or `-` for stdin (copied to a temporary file so it
 * can be scanned more than once).
 */
export async function openSource(displayPathIn: string): Promise<SourceFile> {
  let displayPath = displayPathIn;
  let path = displayPath;
  let tmp: string | undefined;
  if (displayPath === '-' || displayPath === STDIN_ARG) {
    displayPath = '<stdin>';
    tmp = await mkdtemp(join(tmpdir(), 'tickwise-stdin-'));
    path = join(tmp, 'stdin');
    await pipeline(process.stdin, createWriteStream(path));
  }
  let st;
  try {
    st = await stat(path);
  } catch (e) {
    throw new TickwiseError('unreadable-input', `cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file: displayPath });
  }
  if (st.isDirectory()) {
    return { displayPath, path, sizeBytes: 0, compression: 'none', cleanup: async () => undefined };
  }
  const compression = await detectCompression(path);
  return {
    displayPath,
    path,
    sizeBytes: st.size,
    compression,
    cleanup: async () => {
      if (tmp) await rm(tmp, { recursive: true, force: true });
    },
  };
}

/** SHA-256 of a file as hex, streamed. */
export async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  await pipeline(createReadStream(path, { highWaterMark: 4 << 20 }), h);
  return h.digest('hex');
}
