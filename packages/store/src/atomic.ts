import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { copyFile, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { TickwiseError } from '@tickwise/time';
import { Store } from './connection';
import { redactStoredConditions } from './redact';

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

/** Whether a process with this pid exists on this host (EPERM: it exists, not ours). */
function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Options of {@link withAtomicStore}. */
export interface AtomicStoreOptions {
  /**
   * How long to wait for another tickwise process that holds the store's
   * lock, in ms (default 0: fail at once with a message naming the holder).
   */
  lock_wait_ms?: number;
  /** Poll interval while waiting for the lock, in ms (default 100). */
  lock_poll_ms?: number;
  /** Called once when the lock is held by another live process and this one starts waiting. */
  on_lock_wait?: (holder_pid: number | null) => void;
  /**
   * Called once the lock is held, before the store is copied and opened
   * (DuckDB's library loads then): work to start meanwhile, such as the
   * import's first scan. Not awaited past its own promise.
   */
  on_locked?: () => Promise<void>;
}

/** The lock file of a store: `<store>.tickwise-lock`, holding the holder's pid. */
export function storeLockPath(dbPath: string): string {
  return `${dbPath}.tickwise-lock`;
}

function tryTakeLock(lockPath: string): boolean {
  let fd: number;
  try {
    fd = openSync(lockPath, 'wx');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

function lockHolder(lockPath: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(lockPath, 'utf8').trim(), 10);
    return Number.isFinite(pid) ? pid : null;
  } catch {
    return null; // vanished between the failed create and this read: try again
  }
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

/**
 * Takes the store's write lock (an O_EXCL lock file). A lock left by a
 * process that no longer exists (kill -9) is taken over; a live holder makes
 * this wait up to `lock_wait_ms`, then fail with a message naming it.
 */
async function acquireLock(dbPath: string, opts: AtomicStoreOptions): Promise<() => Promise<void>> {
  const lockPath = storeLockPath(dbPath);
  const deadline = Date.now() + (opts.lock_wait_ms ?? 0);
  let told = false;
  for (;;) {
    if (tryTakeLock(lockPath)) return async () => { await rm(lockPath, { force: true }); };
    const holder = lockHolder(lockPath);
    if (holder !== null && !processAlive(holder)) {
      // stale: its writer died; its temporary copy is cleaned below
      await rm(lockPath, { force: true });
      continue;
    }
    if (Date.now() >= deadline) {
      throw new TickwiseError('store-locked',
        `store is being written by another tickwise process${holder !== null ? ` (pid ${holder})` : ''}: ` +
        `wait for it to finish and run this again (lock file ${lockPath}; remove it only if that process is gone)`,
        { file: dbPath });
    }
    if (!told) opts.on_lock_wait?.(holder);
    told = true;
    await sleep(opts.lock_poll_ms ?? 100);
  }
}

/** Removes `<store>.tickwise-tmp-<pid>[.wal]` files whose process is gone (left by kill -9). */
async function removeStaleCopies(dbPath: string): Promise<void> {
  const dir = dirname(dbPath);
  const prefix = `${basename(dbPath)}.tickwise-tmp-`;
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number.parseInt(name.slice(prefix.length), 10);
    if (pid !== process.pid && !processAlive(pid)) await rm(join(dir, name), { force: true });
  }
}

/**
 * Refuses an existing file that is not a DuckDB database before it is
 * copied (DuckDB's magic `DUCK` at byte 8); an empty file is a new store.
 */
async function refuseNonStore(dbPath: string): Promise<void> {
  const fh = await open(dbPath, 'r');
  try {
    const buf = Buffer.alloc(12);
    const { bytesRead } = await fh.read(buf, 0, 12, 0);
    if (bytesRead === 0) return;
    if (bytesRead < 12 || buf.toString('latin1', 8, 12) !== 'DUCK') {
      throw new TickwiseError('usage', 'not a DuckDB store (a tickwise store is a DuckDB database file): give a new or existing .duckdb store with --db', { file: dbPath });
    }
  } finally {
    await fh.close();
  }
}

function fsyncPath(p: string): void {
  const fd = openSync(p, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes the copy durable before it may replace the original: an explicit
 * CHECKPOINT (it throws when the disk is full, where a close would only
 * leave the data in the write-ahead log), then close, then no log may be
 * left, then fsync of the file.
 */
async function finishDurably(store: Store, tmp: string, dbPath: string): Promise<void> {
  try {
    await store.run('CHECKPOINT');
  } catch (e) {
    try { await store.close(); } catch { /* a failed checkpoint may leave the database unusable */ }
    throw new TickwiseError('store-write',
      `could not write the store (${(e as Error).message.split('\n')[0]}); is the disk full? the store is unchanged`,
      { file: dbPath });
  }
  await store.close();
  const wal = `${tmp}.wal`;
  const walSize = await stat(wal).then((s) => s.size, () => 0);
  if (walSize > 0) {
    throw new TickwiseError('store-write',
      `could not fold the write-ahead log into the store (is the disk full?); the store is unchanged`, { file: dbPath });
  }
  fsyncPath(tmp);
}

/** A failure to write beside the store (disk full, read-only, permissions) as one clear error. */
function storeWriteError(e: unknown, dbPath: string): unknown {
  if (e instanceof TickwiseError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  const text = e instanceof Error ? e.message : String(e);
  if (code === 'ENOSPC' || /no space left on device|disk is full/i.test(text)) {
    return new TickwiseError('store-write', 'no room on the disk to write the store; the store is unchanged', { file: dbPath, cause: e });
  }
  if (code === 'EROFS' || /read-only file system/i.test(text)) {
    return new TickwiseError('store-write', 'cannot write beside the store: read-only file system; the store is unchanged', { file: dbPath, cause: e });
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new TickwiseError('store-write', 'cannot write beside the store: permission denied; the store is unchanged', { file: dbPath, cause: e });
  }
  // the working copy beside the store (or its lock) removed while it was written: by another program, not a bug here
  const path = (e as NodeJS.ErrnoException).path;
  if (code === 'ENOENT' && typeof path === 'string' && path.startsWith(`${dbPath}.tickwise-`)) {
    return new TickwiseError('store-write', `the store's working copy ${basename(path)} was removed while tickwise wrote it (by another program?); the store is unchanged`, { file: dbPath, cause: e });
  }
  return e;
}

/**
 * Runs `work` against a store file so that the file changes all at once or
 * not at all: the work happens on a copy beside it, which replaces the
 * original only when `work` succeeds and the copy is durable on disk
 * (checkpointed, no write-ahead log left, fsynced; then rename and an fsync
 * of the directory). On any error the original is exactly as it was and the
 * copy is removed. One writer at a time: a lock file beside the store keeps
 * a second writer from replacing the first one's work.
 */
export async function withAtomicStore<T>(
  dbPath: string,
  work: (store: Store) => Promise<T>,
  opts: AtomicStoreOptions = {},
): Promise<T> {
  const dir = dirname(dbPath);
  const dirStat = await stat(dir).catch(() => null);
  if (!dirStat?.isDirectory()) throw new TickwiseError('usage', `the folder of the store does not exist: ${dir}`, { file: dbPath });
  const notAFile = await stat(dbPath).then((st) => !st.isFile(), () => false);
  if (notAFile) throw new TickwiseError('usage', 'a store is a file; this is not one', { file: dbPath });
  const release = await acquireLock(dbPath, opts).catch((e: unknown) => { throw storeWriteError(e, dbPath); });
  const tmp = `${dbPath}.tickwise-tmp-${process.pid}`;
  let store: Store | undefined;
  try {
    await opts.on_locked?.();
    await removeStaleCopies(dbPath);
    await rm(tmp, { force: true });
    await rm(`${tmp}.wal`, { force: true });
    // looked at only under the lock: a writer that held it may have just made the store
    if (await exists(dbPath)) {
      if (await exists(`${dbPath}.wal`)) {
        // fold a leftover write-ahead log into the file before copying it
        const s = await Store.open(dbPath);
        await s.close();
      }
      await refuseNonStore(dbPath);
      await copyFile(dbPath, tmp);
    }
    try {
      store = await Store.open(tmp);
    } catch (e) {
      // the copy's failure is the store's: name the file the user gave
      if (e instanceof TickwiseError && e.file === tmp) throw new TickwiseError(e.code, e.message, { file: dbPath, cause: e });
      throw e;
    }
    const result = await work(store);
    await redactStoredConditions(store);
    const s = store;
    store = undefined;
    await finishDurably(s, tmp, dbPath);
    await rename(tmp, dbPath);
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
    return result;
  } catch (e) {
    if (store) {
      try { await store.close(); } catch { /* closing a broken store: the copy is removed next */ }
    }
    await rm(tmp, { force: true });
    await rm(`${tmp}.wal`, { force: true });
    throw storeWriteError(e, dbPath);
  } finally {
    await release();
  }
}

/**
 * Writes a whole file so that `path` holds either its old content or all of
 * `data`, never a part (a full disk, a kill): the bytes go to a temporary
 * file beside it, fsynced, then renamed over it; on failure the temporary
 * file is removed and the error (ENOSPC, EROFS, EACCES) is thrown as one
 * `TickwiseError` naming `path`.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tickwise-tmp-${process.pid}`;
  try {
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(data);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true });
    const err = storeWriteError(e, path);
    if (err instanceof TickwiseError) {
      throw new TickwiseError('cannot-write', err.message.replace('write the store', 'write the file').replace('beside the store', 'there').replace('; the store is unchanged', `; ${path} is unchanged`), { file: path, cause: e });
    }
    const code = (e as NodeJS.ErrnoException).code;
    const why = code === 'EISDIR' ? 'it is a folder; give the output a file name' : code ?? (e as Error).message;
    throw new TickwiseError('cannot-write', `cannot write: ${why}`, { file: path, cause: e });
  }
}
