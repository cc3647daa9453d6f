import { copyFile, rename, rm, stat } from 'node:fs/promises';
import { Store } from './connection';

async function exists(p: string): Promise<boolean> {
  return stat(p).then(() => true, () => false);
}

/**
 * Runs `work` against a store file so that the file changes all at once or
 * not at all: the work happens on a copy beside it, which replaces the
 * original only when `work` succeeds. On any error the original is exactly
 * as it was and the copy is removed.
 */
export async function withAtomicStore<T>(dbPath: string, work: (store: Store) => Promise<T>): Promise<T> {
  const tmp = `${dbPath}.tickwise-tmp-${process.pid}`;
  await rm(tmp, { force: true });
  await rm(`${tmp}.wal`, { force: true });
  if (await exists(dbPath)) {
    if (await exists(`${dbPath}.wal`)) {
      // fold a leftover write-ahead log into the file before copying it
      const s = await Store.open(dbPath);
      await s.close();
    }
    await copyFile(dbPath, tmp);
  }
  let store: Store | undefined;
  try {
    store = await Store.open(tmp);
    const result = await work(store);
    await store.close();
    store = undefined;
    await rename(tmp, dbPath);
    await rm(`${tmp}.wal`, { force: true });
    return result;
  } catch (e) {
    if (store) {
      try { await store.close(); } catch { /* closing a broken store: the copy is removed next */ }
    }
    await rm(tmp, { force: true });
    await rm(`${tmp}.wal`, { force: true });
    throw e;
  }
}
