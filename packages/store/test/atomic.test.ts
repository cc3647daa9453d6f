import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { TickwiseError } from '@tickwise/time';
import { Store, storeLockPath, withAtomicStore, writeFileAtomic } from '@tickwise/store';

const root = resolve(import.meta.dirname, '../../..');
const work = mkdtempSync(join(tmpdir(), 'tickwise-atomic-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function rowCount(db: string, table: string): Promise<bigint> {
  const s = await Store.open(db, { readOnly: true });
  try {
    const r = await s.rows(`select count(*)::BIGINT as n from ${table}`);
    return BigInt(r[0]!['n'] as bigint);
  } finally {
    await s.close();
  }
}

async function addTable(db: string, name: string, n: number, opts = {}): Promise<void> {
  await withAtomicStore(db, async (s) => {
    await s.run(`create table ${name} as select range as i, repeat('x', 200) || range::VARCHAR as pad from range(${n})`);
  }, opts);
}

/** A pid that is certainly not running: a child that has exited. */
function deadPid(): number {
  const r = spawnSync('true');
  return r.pid!;
}

describe('withAtomicStore: one writer at a time', () => {
  it('a live holder of the lock makes a second writer fail with a clear message, the store unchanged', async () => {
    const db = join(work, 'locked.duckdb');
    await addTable(db, 'a', 10);
    const before = readFileSync(db);
    const holder = spawn('sleep', ['60']);
    try {
      writeFileSync(storeLockPath(db), `${holder.pid}\n`);
      const err = await addTable(db, 'b', 10).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TickwiseError);
      expect((err as TickwiseError).code).toBe('store-locked');
      expect((err as TickwiseError).message).toContain(`pid ${holder.pid}`);
      expect(readFileSync(db).equals(before)).toBe(true);
      expect(existsSync(storeLockPath(db))).toBe(true); // not ours to remove
    } finally {
      holder.kill();
      rmSync(storeLockPath(db), { force: true });
    }
  });

  it('a waiting writer proceeds once the holder lets go, and both writes are kept', async () => {
    const db = join(work, 'wait.duckdb');
    await addTable(db, 'a', 10);
    const holder = spawn('sleep', ['60']);
    let waited = 0;
    try {
      writeFileSync(storeLockPath(db), `${holder.pid}\n`);
      // the holder "finishes" exactly when the waiter starts waiting: no timing involved
      await addTable(db, 'b', 7, { lock_wait_ms: 60_000, lock_poll_ms: 10, on_lock_wait: () => { waited++; rmSync(storeLockPath(db)); } });
    } finally {
      holder.kill();
    }
    expect(waited).toBe(1);
    expect(await rowCount(db, 'a')).toBe(10n);
    expect(await rowCount(db, 'b')).toBe(7n);
    expect(existsSync(storeLockPath(db))).toBe(false);
  });

  it('a lock and a temporary copy left by a killed writer are cleaned up', async () => {
    const db = join(work, 'stale.duckdb');
    await addTable(db, 'a', 3);
    const pid = deadPid();
    writeFileSync(storeLockPath(db), `${pid}\n`);
    writeFileSync(`${db}.tickwise-tmp-${pid}`, 'half a store');
    writeFileSync(`${db}.tickwise-tmp-${pid}.wal`, 'half a log');
    await addTable(db, 'b', 4);
    expect(await rowCount(db, 'b')).toBe(4n);
    expect(readdirSync(work).filter((n) => n.startsWith('stale.duckdb.'))).toEqual([]);
  });

  it('two imports started together into one store both land (the CLI, real processes)', async () => {
    const db = join(work, 'two.duckdb');
    const sample = join(root, 'captures/sample/igpu-prefill.ireeperf.jsonl');
    const run = () => new Promise<{ rc: number | null; out: string }>((done) => {
      const p = spawn(join(root, 'scripts/tickwise'), ['import', sample, '--db', db], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      p.stdout.on('data', (b: Buffer) => { out += b.toString(); });
      p.stderr.on('data', (b: Buffer) => { out += b.toString(); });
      p.on('close', (rc) => done({ rc, out }));
    });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a.rc, a.out).toBe(0);
    expect(b.rc, b.out).toBe(0);
    const ids = [a.out, b.out].map((o) => /as capture (\d+)/.exec(o)?.[1]).sort();
    expect(ids).toEqual(['1', '2']);
    expect(await rowCount(db, 'captures')).toBe(2n);
  });

  it('refuses a store folder that does not exist and a store path that is a folder', async () => {
    const e1 = await addTable(join(work, 'no/such/folder/x.duckdb'), 'a', 1).then(() => null, (e: unknown) => e);
    expect((e1 as TickwiseError).message).toContain('folder of the store does not exist');
    const dirDb = join(work, 'adir.duckdb');
    mkdirSync(dirDb);
    const e2 = await addTable(dirDb, 'a', 1).then(() => null, (e: unknown) => e);
    expect((e2 as TickwiseError).message).toContain('not one');
  });

  it('a working copy removed by another program while it is written: one clear error, the store as it was', async () => {
    const db = join(work, 'vanish.duckdb');
    await addTable(db, 'a', 10);
    const e = await withAtomicStore(db, async (s) => {
      await s.run('create table b as select range as i from range(5)');
      // (`rm -f store*` in another shell: the open copy and its log unlinked)
      for (const f of readdirSync(work).filter((n) => n.startsWith('vanish.duckdb.tickwise-tmp-'))) rmSync(join(work, f));
    }).then(() => null, (x: unknown) => x);
    expect(e).toBeInstanceOf(TickwiseError);
    expect((e as TickwiseError).code).toBe('store-write');
    expect((e as TickwiseError).message).toMatch(/^the store's working copy vanish\.duckdb\.tickwise-tmp-\d+ was removed while tickwise wrote it .*; the store is unchanged$/);
    expect((e as TickwiseError).file).toBe(db);
    expect(await rowCount(db, 'a')).toBe(10n);
    expect(readdirSync(work).filter((n) => n.startsWith('vanish.duckdb.'))).toEqual([]);
  });
});

/** A small tmpfs (root only); null where it cannot be made here. */
function smallTmpfs(sizeBytes: number): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'tickwise-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeBytes}`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}
function unmount(dir: string): void {
  spawnSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
}
const probe = smallTmpfs(1 << 20);
if (probe) unmount(probe);
else console.warn('disk-full tests skipped: cannot mount a tmpfs here (needs root)');

describe.skipIf(!probe)('withAtomicStore on a nearly full disk', () => {
  it('succeeds only when the data is in the file; otherwise a clear error and the store exactly as it was', async () => {
    // free space after the first store varies from "copy does not fit" through "the
    // checkpoint does not fit" to "fits": every outcome must be honest
    const outcomes = new Set<string>();
    // (before the fix, 400 KiB beyond the copy printed success and lost the table: the
    // log was written, the checkpoint at close failed, the copy was renamed without it)
    for (const freeKiB of [0, 128, 256, 400, 600, 1024, 8192]) {
      const mnt = smallTmpfs(24 << 20);
      if (!mnt) throw new Error('tmpfs vanished');
      try {
        const db = join(mnt, 'full.duckdb');
        await addTable(db, 'a', 1000);
        const before = readFileSync(db);
        const st = execFileSync('df', ['-B1', '--output=avail', mnt]).toString().trim().split('\n')[1]!;
        const fill = Number(st) - before.length - freeKiB * 1024;
        if (fill > 0) writeFileSync(join(mnt, 'filler'), Buffer.alloc(fill));
        const err = await addTable(db, 'b', 50).then(() => null, (e: unknown) => e);
        rmSync(join(mnt, 'filler'), { force: true });
        if (err === null) {
          outcomes.add('ok');
          expect(await rowCount(db, 'b')).toBe(50n);
          expect(await rowCount(db, 'a')).toBe(1000n);
        } else {
          outcomes.add('refused');
          expect(err).toBeInstanceOf(TickwiseError);
          expect((err as TickwiseError).message).toMatch(/disk|room|store is unchanged/);
          expect(readFileSync(db).equals(before)).toBe(true);
        }
        expect(readdirSync(mnt).filter((n) => n !== 'full.duckdb')).toEqual([]);
      } finally {
        unmount(mnt);
      }
    }
    expect([...outcomes].sort()).toEqual(['ok', 'refused']);
  });

  it('a store on a read-only file system: a clear error, nothing changed', async () => {
    const mnt = smallTmpfs(8 << 20)!;
    try {
      const db = join(mnt, 'ro.duckdb');
      await addTable(db, 'a', 5);
      execFileSync('mount', ['-o', 'remount,ro', mnt]);
      const err = await addTable(db, 'b', 5).then(() => null, (e: unknown) => e);
      expect(err).toBeInstanceOf(TickwiseError);
      expect((err as TickwiseError).message).toMatch(/read-only|cannot write/);
      expect(await rowCount(db, 'a')).toBe(5n);
    } finally {
      unmount(mnt);
    }
  });
});

describe('writeFileAtomic', () => {
  it('replaces a file whole; onto a folder: one clear error naming it, the folder and nothing else left', async () => {
    const d = mkdtempSync(join(work, 'wfa-'));
    const file = join(d, 'out.html');
    writeFileSync(file, 'old');
    await writeFileAtomic(file, 'new text');
    expect(readFileSync(file, 'utf8')).toBe('new text');
    const folder = join(d, 'folder');
    mkdirSync(folder);
    const err = await writeFileAtomic(folder, 'x').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).code).toBe('cannot-write');
    expect((err as TickwiseError).where()).toBe(`${folder}: cannot write: it is a folder; give the output a file name`);
    expect(readdirSync(d).sort()).toEqual(['folder', 'out.html']);
    expect(readdirSync(folder)).toEqual([]);
  });
});
