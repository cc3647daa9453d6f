import { createHash } from 'node:crypto';
import { constants, createWriteStream, fstatSync, type Stats } from 'node:fs';
import { mkdtemp, open, readdir, rm, stat, statfs } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { TickwiseError } from '@tickwise/time';
import { STDIN_ARG } from './stdin';

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
  /** True for a directory (a recorder capture); every other format reads a file. */
  readonly isDirectory?: boolean;
  /**
   * Removes any temporary copy, and fails (`input-changed`) when the file
   * was changed while it was read: its size, modification time or inode
   * differ from when it was opened, so the sha256/size recorded for it would
   * describe neither version.
   */
  cleanup(): Promise<void>;
}

export { STDIN_ARG } from './stdin';

/** How long a FIFO may stay without a writer before it is refused, ms. */
const FIFO_NO_WRITER_MS = 2000;

/** What identifies one version of a file: size, modification time, inode. */
interface FileVersion {
  readonly size: number;
  readonly mtimeNs: bigint;
  readonly ino: bigint;
}

function versionOf(st: Stats | import('node:fs').BigIntStats): FileVersion {
  const b = st as import('node:fs').BigIntStats;
  return { size: Number(b.size), mtimeNs: BigInt(b.mtimeNs), ino: BigInt(b.ino) };
}

/** Open-time versions of the files being imported, by path, so a change while reading is seen. */
const openVersions = new Map<string, { displayPath: string; version: FileVersion }>();

function changedError(displayPath: string, before: FileVersion, after: FileVersion | null): TickwiseError {
  const what = after === null ? 'was removed'
    : after.ino !== before.ino ? 'was replaced'
    : after.size !== before.size ? `${after.size > before.size ? 'grew' : 'shrank'} from ${before.size} to ${after.size} bytes`
    : 'was rewritten';
  return new TickwiseError('input-changed',
    `the file ${what} while it was being imported; nothing was stored for it: import it again once it is complete (copy it first if something still writes it)`,
    { file: displayPath });
}

async function currentVersion(path: string): Promise<FileVersion | null> {
  return stat(path, { bigint: true }).then(versionOf, () => null);
}

function sameVersion(a: FileVersion, b: FileVersion | null): boolean {
  return b !== null && a.size === b.size && a.mtimeNs === b.mtimeNs && a.ino === b.ino;
}

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

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/**
 * Copies a FIFO, socket or `<(...)` pipe to a file, reading it once. It is
 * opened non-blocking, so a FIFO that nobody writes is refused after
 * {@link FIFO_NO_WRITER_MS} instead of blocking forever; once a writer has
 * been seen, its end of file ends the copy.
 */
async function copyStreamOnce(path: string, to: string, displayPath: string): Promise<void> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  const outFh = await open(to, 'w');
  try {
    const buf = Buffer.alloc(1 << 20);
    // the first bytes are looked at before much is copied: binary data that is no capture is refused at once
    const head = Buffer.alloc(GUARD_BYTES);
    let headBytes = 0;
    let checked = false;
    const checkHead = () => {
      if (checked) return;
      checked = true;
      const why = notACapture(head.subarray(0, headBytes));
      if (why !== null) throw new TickwiseError('unreadable-input', why, { file: displayPath, line: 1 });
    };
    const room = roomGuard(dirname(to), displayPath);
    let copied = 0;
    let sawWriter = false;
    const started = Date.now();
    for (;;) {
      let n: number;
      try {
        ({ bytesRead: n } = await fh.read(buf, 0, buf.length, null));
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EAGAIN') throw e;
        sawWriter = true; // open for writing, nothing written yet
        await sleep(5);
        continue;
      }
      if (n > 0) {
        sawWriter = true;
        if (headBytes < GUARD_BYTES) headBytes += buf.copy(head, headBytes, 0, Math.min(n, GUARD_BYTES - headBytes));
        if (headBytes === GUARD_BYTES) checkHead();
        await room(copied);
        await outFh.write(buf, 0, n);
        copied += n;
        continue;
      }
      if (sawWriter) {
        checkHead();
        return;
      }
      if (Date.now() - started > FIFO_NO_WRITER_MS) {
        throw new TickwiseError('unreadable-input',
          `a FIFO with no writer: nothing wrote to it within ${FIFO_NO_WRITER_MS / 1000} s (start the program that writes it first, or give a file)`,
          { file: displayPath });
      }
      await sleep(20);
    }
  } finally {
    await outFh.close();
    await fh.close();
  }
}

function readError(e: unknown, displayPath: string): TickwiseError {
  if (e instanceof TickwiseError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const why = code === 'ENOENT' ? 'ENOENT (no such file)'
    : code === 'EACCES' || code === 'EPERM' ? 'permission denied'
    : code === 'ENOSPC' ? 'no room on the disk for a temporary copy of it'
    : code ?? (e as Error).message;
  return new TickwiseError('unreadable-input', `cannot read: ${why}`, { file: displayPath, cause: e });
}

/**
 * A temporary directory of this process (`<tmp>/tickwise-<what>-<pid>-XXXXXX`).
 * The first call of a process also removes the ones of processes that are
 * gone (an import killed with SIGKILL cannot clean up after itself).
 */
export async function processTempDir(what: string): Promise<string> {
  if (!swept) {
    swept = true;
    await sweepStaleTempDirs().catch(() => undefined);
  }
  return mkdtemp(join(tmpdir(), `tickwise-${what}-${process.pid}-`));
}
let swept = false;

async function sweepStaleTempDirs(): Promise<void> {
  for (const name of await readdir(tmpdir())) {
    const m = /^tickwise-[a-z]+-(\d+)-[A-Za-z0-9]{6}$/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    await rm(join(tmpdir(), name), { recursive: true, force: true });
  }
}

/** Whether process `pid` runs (one of another user's counts: it cannot be signalled, but it is there). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** How often (bytes copied) the free space left for a temporary copy is looked at, at most. */
const ROOM_CHECK_BYTES = 16 << 20;

/**
 * The free space a temporary copy of a stream leaves its file system: the
 * copy stops, with one error, before the disk is down to it (a stream that
 * never ends, `yes | tickwise import -`, would otherwise fill it).
 * `TICKWISE_TMP_RESERVE_BYTES`, else 10 % of the file system, at most 1 GiB
 * and at most half the space free when the copy began (a small input still
 * comes through on a nearly full disk).
 */
function reserveBytes(totalBytes: number, freeAtStart: number): number {
  return envBytes('TICKWISE_TMP_RESERVE_BYTES', 0) ?? Math.min(1 << 30, Math.floor(totalBytes / 10), Math.floor(freeAtStart / 2));
}

const UNITS: Record<string, number> = { '': 1, b: 1, kb: 1e3, mb: 1e6, gb: 1e9, kib: 1024, mib: 1024 ** 2, gib: 1024 ** 3 };

/**
 * A size in bytes from environment variable `name` (`67108864`, `256MiB`,
 * `1 GiB`, `2.5GB`), or undefined when it is unset or empty; a text that is
 * no size, or one below `min`, is a `bad-option` error naming the variable.
 */
export function envBytes(name: string, min: number, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const text = env[name];
  if (text === undefined || text.trim() === '') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined || !(Number(m[1]) * unit >= min)) {
    throw new TickwiseError('bad-option', `${name}=${JSON.stringify(text)}: expected a size in bytes, e.g. 67108864 or 256MiB`);
  }
  return Math.floor(Number(m[1]) * unit);
}

/**
 * A check of the room left beside a temporary copy in `dir`, called with
 * the bytes copied so far: it looks at the file system at the first call
 * and then every {@link ROOM_CHECK_BYTES} (or half the reserve, if less),
 * and throws once the free space is below the reserve.
 */
function roomGuard(dir: string, displayPath: string): (copied: number) => Promise<void> {
  let next = 0;
  let reserve: number | undefined;
  return async (copied) => {
    if (copied < next) return;
    const fs = await statfs(dir);
    const free = fs.bavail * fs.bsize;
    reserve ??= reserveBytes(fs.blocks * fs.bsize, free);
    // looked at again before half the reserve can be written: the copy stops inside it, never at a full disk
    next = copied + Math.min(ROOM_CHECK_BYTES, Math.max(64 << 10, Math.floor(reserve / 2)));
    if (free < reserve) {
      const mib = (x: number) => (x >= 2 ** 20 ? `${(x / 2 ** 20).toFixed(0)} MiB` : `${(x / 1024).toFixed(0)} KiB`);
      throw new TickwiseError('unreadable-input',
        `stopped copying it after ${mib(copied)}: the temporary file system (${dir}) is down to ${mib(free)} free, below the ${mib(reserve)} kept free ` +
        '(TICKWISE_TMP_RESERVE_BYTES). A stream that never ends? Give a file, or point TMPDIR at a larger file system',
        { file: displayPath });
    }
  };
}

/** Counts a stream's bytes through, and stops it when {@link roomGuard} says so. */
function roomGuarded(dir: string, displayPath: string): Transform {
  const check = roomGuard(dir, displayPath);
  let copied = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      check(copied).then(() => {
        copied += chunk.length;
        cb(null, chunk);
      }, cb);
    },
  });
}

/** Bytes of a piped input looked at before it is copied on. */
const GUARD_BYTES = 4096;

/**
 * Why `head` (a piped input's first bytes) is no capture, or null: every
 * format tickwise reads is text (JSON, CSV, Markdown, SQL) or gzip, zstd or
 * SQLite, so control bytes other than whitespace in the first 4 KiB of
 * anything else mean binary data (`cat /dev/urandom |`), refused at once
 * rather than copied until the disk is full.
 */
export function notACapture(head: Buffer): string | null {
  const starts = (...bytes: number[]) => bytes.every((b, i) => head[i] === b);
  if (starts(0x1f, 0x8b) || starts(0x28, 0xb5, 0x2f, 0xfd) || head.subarray(0, 16).toString('latin1') === 'SQLite format 3\0') return null;
  const n = Math.min(head.length, GUARD_BYTES);
  for (let i = 0; i < n; i++) {
    const c = head[i]!;
    if (c < 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d && c !== 0x0c) {
      return `binary data (byte 0x${c.toString(16).padStart(2, '0')} at offset ${i}), not a capture: tickwise reads JSON, CSV and other text, gzip, zstd and SQLite`;
    }
  }
  return null;
}

/** A pass-through that refuses a stream whose first bytes are {@link notACapture}. */
function headGuard(displayPath: string): Transform {
  let head: Buffer[] | null = [];
  let bytes = 0;
  const check = (t: Transform, cb: (e?: Error | null) => void) => {
    const all = Buffer.concat(head!);
    head = null;
    const why = notACapture(all);
    if (why !== null) return cb(new TickwiseError('unreadable-input', why, { file: displayPath, line: 1 }));
    t.push(all);
    cb();
  };
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      if (head === null) return cb(null, chunk);
      head.push(chunk);
      bytes += chunk.length;
      if (bytes < GUARD_BYTES) return cb();
      check(this, cb);
    },
    flush(cb) {
      if (head === null) return cb();
      check(this, cb);
    },
  });
}

/**
 * Opens an input: a path, or `-` for stdin. Stdin, FIFOs, sockets and
 * `<(...)` pipes are copied to a temporary file first (read once: they
 * cannot be scanned twice or hashed beside the parse); character devices
 * (`/dev/zero`, as a path or as stdin, or a terminal) are refused, and so is
 * piped binary data that is no capture format ({@link notACapture}).
 */
export async function openSource(displayPathIn: string): Promise<SourceFile> {
  let displayPath = displayPathIn;
  let path = displayPath;
  let tmp: string | undefined;
  const removeTmp = async () => {
    if (tmp) await rm(tmp, { recursive: true, force: true });
  };
  try {
    if (displayPath === '-' || displayPath === STDIN_ARG) {
      displayPath = '<stdin>';
      const st0 = fstatSync(0);
      if (st0.isCharacterDevice() || st0.isBlockDevice()) {
        throw new TickwiseError('unreadable-input', process.stdin.isTTY
          ? 'stdin is a terminal: pipe a capture in (tickwise import - < capture.json), or give its path'
          : `stdin is a ${st0.isCharacterDevice() ? 'character' : 'block'} device (such as /dev/zero), not a capture: give a capture file, or pipe one in`,
        { file: displayPath });
      }
      tmp = await processTempDir('stdin');
      path = join(tmp, 'stdin');
      await pipeline(process.stdin, headGuard(displayPath), roomGuarded(tmp, displayPath), createWriteStream(path));
    } else {
      const st0 = await stat(path);
      if (st0.isFIFO() || st0.isSocket()) {
        tmp = await processTempDir('pipe');
        const copy = join(tmp, 'input');
        await copyStreamOnce(path, copy, displayPath);
        path = copy;
      } else if (st0.isCharacterDevice() || st0.isBlockDevice()) {
        throw new TickwiseError('unreadable-input', `not a regular file (a ${st0.isCharacterDevice() ? 'character' : 'block'} device): give a capture file, or pipe it in as -`, { file: displayPath });
      }
    }
  } catch (e) {
    await removeTmp();
    throw readError(e, displayPath);
  }
  let st;
  try {
    st = await stat(path, { bigint: true });
  } catch (e) {
    await removeTmp();
    throw readError(e, displayPath);
  }
  if (st.isDirectory()) {
    return { displayPath, path, sizeBytes: 0, compression: 'none', isDirectory: true, cleanup: async () => undefined };
  }
  const version = versionOf(st);
  let compression: Compression;
  try {
    compression = await detectCompression(path);
  } catch (e) {
    await removeTmp();
    throw readError(e, displayPath);
  }
  openVersions.set(path, { displayPath, version });
  return {
    displayPath,
    path,
    sizeBytes: version.size,
    compression,
    isDirectory: false,
    cleanup: async () => {
      openVersions.delete(path);
      stopHashes(path);
      const after = await currentVersion(path);
      await removeTmp();
      if (!sameVersion(version, after)) throw changedError(displayPath, version, after);
    },
  };
}

/**
 * The hashing thread's code: reads the file in 4 MiB blocks, hashes them,
 * and posts `{ hex, bytes }` (or `{ error }`). A worker, not the main
 * thread: an import's main thread is busy (the JSON scanner, or awaiting
 * DuckDB's small queries), and a 4 MiB block hashed there delays each of them.
 */
const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { createHash } = require('node:crypto');
try {
  const fd = openSync(workerData.path, 'r');
  const h = createHash('sha256');
  const buf = Buffer.allocUnsafe(4 << 20);
  let bytes = 0;
  try {
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
      bytes += n;
    }
  } finally {
    closeSync(fd);
  }
  parentPort.postMessage({ hex: h.digest('hex'), bytes });
} catch (e) {
  parentPort.postMessage({ error: String(e && e.message || e) });
}
`;

/** Hashing threads of files opened by {@link openSource}: stopped by the source's cleanup. */
const hashWorkers = new Map<string, Set<{ terminate(): Promise<number> }>>();

/** SHA-256 of a file's bytes on a worker thread: the hex digest and the number of bytes hashed. */
async function hashOnWorker(path: string, displayPath: string): Promise<{ hex: string; bytes: number }> {
  const { Worker } = await import('node:worker_threads');
  // execArgv [] : the code is CommonJS, whatever the parent's flags (--input-type=module, loaders)
  const w = new Worker(HASH_WORKER, { eval: true, execArgv: [], workerData: { path } });
  let set = hashWorkers.get(path);
  if (set === undefined) hashWorkers.set(path, set = new Set());
  set.add(w);
  try {
    return await new Promise((resolve, reject) => {
      w.once('message', (m: { hex?: string; bytes?: number; error?: string }) => {
        if (m.hex !== undefined) resolve({ hex: m.hex, bytes: m.bytes ?? 0 });
        else reject(new TickwiseError('unreadable-input', `cannot hash: ${m.error ?? 'unknown error'}`, { file: displayPath }));
      });
      w.once('error', (e) => reject(new TickwiseError('unreadable-input', `cannot hash: ${e.message}`, { file: displayPath, cause: e })));
      // terminated by the import's cleanup (it ended before the hash)
      w.once('exit', () => reject(new TickwiseError('hash-abandoned', 'the import ended before its hash', { file: displayPath })));
    });
  } finally {
    set.delete(w);
    if (set.size === 0) hashWorkers.delete(path);
    void w.terminate();
  }
}

/** Files at least this large are hashed on a worker thread. */
const HASH_ON_WORKER_BYTES = 32 << 20;

/** SHA-256 of a (small) file on this thread, read in 4 MiB blocks; stops when the import that wanted it ended. */
async function hashHere(path: string, opened: { displayPath: string } | undefined): Promise<{ hex: string; bytes: number }> {
  const fh = await open(path, 'r');
  const h = createHash('sha256');
  let bytes = 0;
  try {
    const buf = Buffer.allocUnsafe(4 << 20);
    for (;;) {
      if (opened && openVersions.get(path) !== opened) throw new TickwiseError('hash-abandoned', 'the import ended before its hash', { file: opened.displayPath });
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(buf.subarray(0, bytesRead));
      bytes += bytesRead;
    }
  } finally {
    await fh.close();
  }
  return { hex: h.digest('hex'), bytes };
}

/** Stops any hash of `path` still running (the import that wanted it has ended). */
function stopHashes(path: string): void {
  for (const w of hashWorkers.get(path) ?? []) void w.terminate();
  hashWorkers.delete(path);
}

/**
 * SHA-256 of a file as hex, streamed: on a worker thread for a file of 32 MiB
 * or more, else on this one. For a file opened by {@link openSource}, the
 * bytes hashed must be the bytes it had when it was opened (same size,
 * unchanged during the hash), or it fails with `input-changed`.
 */
export async function sha256File(path: string): Promise<string> {
  const opened = openVersions.get(path);
  const before = await currentVersion(path);
  // a thread costs ~30 ms to start: a small file is hashed here (32 MiB: ~25 ms with SHA-NI)
  const { hex, bytes } = before !== null && before.size < HASH_ON_WORKER_BYTES
    ? await hashHere(path, opened)
    : await hashOnWorker(path, opened?.displayPath ?? path);
  if (opened) {
    const after = await currentVersion(path);
    const reference = opened.version;
    if (!sameVersion(reference, before) || !sameVersion(reference, after) || bytes !== reference.size) {
      throw changedError(opened.displayPath, reference, after ?? null);
    }
  }
  return hex;
}

/**
 * The 1-based line of the first line of a plain file that is not valid
 * UTF-8, or undefined (DuckDB's own line for such an error is one too far).
 */
export async function firstInvalidUtf8Line(path: string): Promise<number | undefined> {
  const fh = await open(path, 'r');
  try {
    // each line's bytes go through one streaming decoder, piece by piece (a long line is never put together: that
    // was a copy per 1 MiB read, quadratic in the line's length)
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const buf = Buffer.alloc(1 << 20);
    let line = 1;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) {
        try { decoder.decode(); } catch { return line; }
        return undefined;
      }
      let start = 0;
      for (;;) {
        const nl = buf.indexOf(0x0a, start);
        if (nl < 0 || nl >= bytesRead) break;
        try { decoder.decode(buf.subarray(start, nl)); } catch { return line; }
        line++;
        start = nl + 1;
      }
      try { decoder.decode(buf.subarray(start, bytesRead), { stream: true }); } catch { return line; }
    }
  } finally {
    await fh.close();
  }
}

/** The text of line `line` (1-based) of a plain file, without its newline; undefined past its end (for error paths). */
export async function lineText(path: string, line: number): Promise<string | undefined> {
  const { createReadStream } = await import('node:fs');
  const { createInterface } = await import('node:readline');
  const rl = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  try {
    let n = 0;
    for await (const text of rl) if (++n === line) return text;
    return undefined;
  } finally {
    rl.close();
  }
}

/**
 * The 1-based line of the `nth` (1-based) match of a global regex in a
 * source (gzip decompressed), or undefined; for errors about values the
 * JSON scanner captured without their lines. Matches do not cross a 1 MiB
 * chunk boundary plus 4 KiB of overlap.
 */
export async function lineOfNthMatch(src: SourceFile, re: RegExp, nth: number): Promise<number | undefined> {
  const { createReadStream } = await import('node:fs');
  const zlib = await import('node:zlib');
  let stream: NodeJS.ReadableStream = createReadStream(src.path, { highWaterMark: 1 << 20 });
  if (src.compression === 'gzip') stream = stream.pipe(zlib.createGunzip());
  else if (src.compression !== 'none') return undefined;
  let seen = 0;
  let line = 1;
  let carry = '';
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const text = carry + chunk.toString('latin1');
      const keep = Math.max(0, text.length - 4096);
      re.lastIndex = 0;
      let m: RegExpExecArray | null;
      while ((m = re.exec(text)) !== null) {
        if (m.index >= keep) break;
        seen++;
        if (seen === nth) {
          for (let i = 0; i < m.index; i++) if (text.charCodeAt(i) === 10) line++;
          return line;
        }
      }
      for (let i = 0; i < keep; i++) if (text.charCodeAt(i) === 10) line++;
      carry = text.slice(keep);
    }
    re.lastIndex = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(carry)) !== null) {
      seen++;
      if (seen === nth) {
        for (let i = 0; i < m.index; i++) if (carry.charCodeAt(i) === 10) line++;
        return line;
      }
    }
    return undefined;
  } catch {
    return undefined;
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
}

/**
 * How many matches of a global regex each line of a source (gzip
 * decompressed) holds: line (1-based) to count. Matches do not cross a
 * 1 MiB chunk boundary plus 4 KiB of overlap.
 */
export async function matchesByLine(src: SourceFile, re: RegExp): Promise<Map<number, number>> {
  const { createReadStream } = await import('node:fs');
  const zlib = await import('node:zlib');
  const out = new Map<number, number>();
  let stream: NodeJS.ReadableStream = createReadStream(src.path, { highWaterMark: 1 << 20 });
  if (src.compression === 'gzip') stream = stream.pipe(zlib.createGunzip());
  else if (src.compression !== 'none') return out;
  let line = 1;
  let carry = '';
  const scan = (text: string, upTo: number) => {
    re.lastIndex = 0;
    let at = 0;
    let m: RegExpExecArray | null;
    while ((m = re.exec(text)) !== null && m.index < upTo) {
      for (; at < m.index; at++) if (text.charCodeAt(at) === 10) line++;
      out.set(line, (out.get(line) ?? 0) + 1);
    }
    for (; at < upTo; at++) if (text.charCodeAt(at) === 10) line++;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const text = carry + chunk.toString('latin1');
      const keep = Math.max(0, text.length - 4096);
      scan(text, keep);
      carry = text.slice(keep);
    }
    scan(carry, carry.length);
  } finally {
    (stream as unknown as { destroy?: () => void }).destroy?.();
  }
  return out;
}

/** An input's first 64 KiB as text (a gzip's decompressed; '' for another compression): what the formats' sniffs read. */
export async function readHead(src: SourceFile): Promise<string> {
  if (src.compression !== 'none') {
    const { createReadStream } = await import('node:fs');
    const zlib = await import('node:zlib');
    if (src.compression === 'gzip') {
      const chunks: Buffer[] = [];
      let n = 0;
      const stream = createReadStream(src.path).pipe(zlib.createGunzip());
      for await (const c of stream as AsyncIterable<Buffer>) {
        chunks.push(c);
        n += c.length;
        if (n > 65536) break;
      }
      stream.destroy();
      return Buffer.concat(chunks).subarray(0, 65536).toString('utf8');
    }
    return '';
  }
  const { open } = await import('node:fs/promises');
  const fh = await open(src.path, 'r');
  try {
    const buf = Buffer.alloc(65536);
    const { bytesRead } = await fh.read(buf, 0, buf.length, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}
