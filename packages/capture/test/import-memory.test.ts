import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput } from '../src/index';
import { spillFolder, sweepSpillFolders } from '../src/capture-rows';
import { FIXTURES, ROOT, tmp } from './helpers';

/**
 * An import bounds DuckDB's memory while it runs (setImportMemory), for the
 * import, not for what the caller's store already holds, and gives the
 * store its own bound back when it ends. Real DuckDB stores, in memory,
 * holding the caller's data: before, an in-memory store of ~300 MB failed a
 * 10 MB trace's import (DuckDB spilled the caller's table to its default
 * folder to fit the import's bound, then refused the import's spill folder),
 * and every store kept the import's bound afterwards.
 */

const EXTERNAL = join(ROOT, '../shared/fixtures/external');
const INPUTS = [
  { name: 'Chrome trace (Kineto, gz), host spans streamed', path: join(EXTERNAL, 'chrome-trace/hta_nccl_data.json.gz'), env: { TICKWISE_CHROME_STREAM: '1' } },
  { name: 'Chrome trace (gz), staged whole', path: join(EXTERNAL, 'chrome-trace/tracelens_mi300_owlv2.json.gz'), env: { TICKWISE_CHROME_STREAM: '0' } },
  { name: 'ireeperf-jsonl', path: join(FIXTURES, 'local_task_matmul.ireeperf.jsonl'), env: {} },
  { name: 'rocprofv3 JSON (gz)', path: join(EXTERNAL, 'rocprofv3-json/tracelens_908_results.json.gz'), env: {} },
];

/** The caller's own table: `rows` rows of ~70 bytes (4 M: ~310 MB in memory), and its checksum. */
async function callerTable(store: Store, rows: number): Promise<string> {
  await store.run(`CREATE TABLE mine AS SELECT range AS i, md5(range::VARCHAR) || md5((range + 1)::VARCHAR) AS s FROM range(${rows})`);
  return checksum(store);
}
async function checksum(store: Store): Promise<string> {
  return String(await store.scalar(`SELECT count(*) || ':' || sum(hash(i, s)) FROM mine`));
}
const limitOf = async (store: Store) => String(await store.scalar(`SELECT current_setting('memory_limit')`));
const dispatchesOf = async (store: Store, id: number) => Number(await store.scalar(`SELECT count(*) FROM dispatches WHERE capture_id = ${id}`));

afterEach(() => vi.unstubAllEnvs());

describe("an import's memory bound is its own", () => {
  for (const input of INPUTS) {
    it.skipIf(!existsSync(input.path))(`${input.name}: into an in-memory store holding ~310 MB`, { timeout: 120_000 }, async () => {
      for (const [k, v] of Object.entries(input.env)) vi.stubEnv(k, v);
      const ref = await Store.open(':memory:');
      await importInput(ref, input.path);
      const expected = await dispatchesOf(ref, 1);
      await ref.close();
      expect(expected).toBeGreaterThan(0);

      const store = await Store.open(':memory:');
      try {
        const sum = await callerTable(store, 4_000_000);
        const limit = await limitOf(store);
        // twice: the second import starts from the first's store, its bound given back
        for (const id of [1, 2]) {
          await importInput(store, input.path);
          expect(await dispatchesOf(store, id)).toBe(expected);
          expect(await limitOf(store)).toBe(limit);
        }
        expect(await checksum(store)).toBe(sum);
      } finally {
        await store.close();
      }
    });
  }

  it.skipIf(!existsSync(INPUTS[0]!.path))('a store that has spilled to its own folder keeps it, and its bound', { timeout: 120_000 }, async () => {
    const store = await Store.open(':memory:');
    try {
      const spill = tmp('tickwise-spill-');
      await store.run(`SET temp_directory = '${spill}'`);
      await store.run(`SET memory_limit = '200MB'`);
      const sum = await callerTable(store, 4_000_000); // beyond 200 MB: part of it spilled
      expect(Number(await store.scalar(`SELECT sum(temporary_storage_bytes) FROM duckdb_memory()`))).toBeGreaterThan(0);
      const limit = await limitOf(store);
      await importInput(store, INPUTS[0]!.path);
      expect(await dispatchesOf(store, 1)).toBeGreaterThan(0);
      expect(await limitOf(store)).toBe(limit);
      expect(String(await store.scalar(`SELECT current_setting('temp_directory')`))).toBe(spill);
      expect(await checksum(store)).toBe(sum);
    } finally {
      await store.close();
    }
  });

  it.skipIf(!existsSync(INPUTS[2]!.path))('a limit DuckDB shows rounded is given back as the caller set it, import after import', async () => {
    const store = await Store.open(':memory:');
    try {
      await store.run(`SET memory_limit = '3.3GiB'`);
      const limit = await limitOf(store);
      for (let i = 0; i < 5; i++) await importInput(store, INPUTS[2]!.path);
      expect(await limitOf(store)).toBe(limit);
    } finally {
      await store.close();
    }
  });
});

describe('TICKWISE_IMPORT_MEMORY', () => {
  const trace = INPUTS[0]!.path;
  const failure = async (value: string) => {
    vi.stubEnv('TICKWISE_IMPORT_MEMORY', value);
    const store = await Store.open(':memory:');
    try {
      const e = await importInput(store, trace).then(() => undefined, (x: unknown) => x as TickwiseError);
      return { e, rows: Number(await store.scalar('SELECT count(*) FROM host_events')) };
    } finally {
      await store.close();
    }
  };

  it.skipIf(!existsSync(trace))('not a size, or one DuckDB cannot set: a usage error naming it', async () => {
    for (const [value, says] of [['lots', /TICKWISE_IMPORT_MEMORY=lots: not a size/], ['-1GB', /not a size/], ['1KB', /TICKWISE_IMPORT_MEMORY=1KB: DuckDB cannot work under it/]] as const) {
      const { e } = await failure(value);
      expect(e, value).toBeInstanceOf(TickwiseError);
      expect(e!.code).toBe('usage');
      expect(e!.exitCode).toBe(2);
      expect(e!.message).toMatch(says);
    }
  });

  it.skipIf(!existsSync(trace))('too small for the trace: out of memory, said as such (exit code 1), nothing left in the store', async () => {
    const { e, rows } = await failure('20MB');
    expect(e).toBeInstanceOf(TickwiseError);
    expect(e!.code).toBe('out-of-memory');
    expect(e!.exitCode).toBe(1);
    expect(e!.message).toMatch(/^DuckDB ran out of memory under TICKWISE_IMPORT_MEMORY=20MB \(Out of Memory Error: .*\); set TICKWISE_IMPORT_MEMORY higher/);
    expect(e!.file).toMatch(/hta_nccl_data\.json\.gz$/);
    expect(rows).toBe(0);
  });

  it.skipIf(!existsSync(trace))('CLI: the out-of-memory error is one line, exit code 1', () => {
    const dir = tmp();
    const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', trace, '--db', join(dir, 'x.duckdb')], {
      encoding: 'utf8', env: { ...process.env, TICKWISE_IMPORT_MEMORY: '20MB' },
    });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^tickwise: .*hta_nccl_data\.json\.gz: DuckDB ran out of memory under TICKWISE_IMPORT_MEMORY=20MB/);
    expect(existsSync(join(dir, 'x.duckdb'))).toBe(false);
  });
});

describe('the spill folder', () => {
  it.skipIf(!existsSync(INPUTS[0]!.path))("is each store's own, made by DuckDB as it spills and removed when the store closes", { timeout: 120_000 }, async () => {
    // two stores, each made to spill (a 4 M-row table over the import's bound): DuckDB names the files the same in
    // every database, so one folder shared let two spilling databases write over each other's (see spillFolder)
    const stores = [await Store.open(':memory:'), await Store.open(':memory:')];
    const folders: string[] = [];
    try {
      for (const store of stores) {
        vi.stubEnv('TICKWISE_IMPORT_MEMORY', '150MB');
        await importInput(store, INPUTS[0]!.path, { keepImportMemory: true });
        vi.unstubAllEnvs();
        folders.push(String(await store.scalar(`SELECT current_setting('temp_directory')`)));
        const sum = await callerTable(store, 4_000_000);
        expect(Number(await store.scalar(`SELECT sum(temporary_storage_bytes) FROM duckdb_memory()`))).toBeGreaterThan(0);
        expect(await checksum(store)).toBe(sum);
        expect(readdirSync(folders.at(-1)!).some((f) => f.endsWith('.tmp'))).toBe(true);
      }
      expect(folders[0]).not.toBe(folders[1]);
      for (const f of folders) expect(f).toMatch(new RegExp(`tickwise-duckdb-spill[^/]*/${process.pid}-\\d+$`));
    } finally {
      for (const store of stores) await store.close();
    }
    for (const f of folders) expect(existsSync(f)).toBe(false);
  });

  it("a gone process's folder, untouched for an hour, is removed; a live one's, or a recent one, is kept", () => {
    const root = dirname(spillFolder());
    // pids that are not running: past the largest pid Linux gives (2^22)
    const dead = join(root, '4194399-1');
    const recent = join(root, '4194398-1');
    const live = join(root, `${process.ppid}-1`);
    for (const d of [dead, recent, live]) mkdirSync(d, { recursive: true });
    writeFileSync(join(dead, 'duckdb_temp_storage_DEFAULT-0.tmp'), 'x');
    const old = new Date(Date.now() - 2 * 3_600_000);
    for (const d of [dead, live]) utimesSync(d, old, old);
    try {
      sweepSpillFolders(root);
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(recent)).toBe(true);
      expect(existsSync(live)).toBe(true);
    } finally {
      for (const d of [dead, recent, live]) rmSync(d, { recursive: true, force: true });
    }
  });
});

describe('TMPDIR', () => {
  it.skipIf(!existsSync(INPUTS[0]!.path) || !existsSync(INPUTS[2]!.path))('missing or not a folder: one clear error naming it (exit code 2), and nothing made there', () => {
    const dir = tmp();
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    for (const [tmpDir, code] of [[join(dir, 'no', 'such'), 'ENOENT'], [file, 'ENOTDIR']] as const) {
      for (const input of [INPUTS[0]!.path, INPUTS[2]!.path]) {
        const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', input, '--db', join(dir, 'x.duckdb')], { encoding: 'utf8', env: { ...process.env, TMPDIR: tmpDir } });
        expect(r.status, `${tmpDir} ${input}`).toBe(2);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        expect(r.stderr).toContain(`cannot make the import's temporary files in ${tmpDir} (${code}): set TMPDIR to a folder tickwise can write`);
      }
    }
    expect(existsSync(join(dir, 'no'))).toBe(false);
  });

  it.skipIf(!existsSync(INPUTS[0]!.path) || !canMount())('full: one clear error naming it (exit code 2), not "cannot read the file"', () => {
    const dir = tmp();
    const full = join(dir, 'tmp');
    mkdirSync(full);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', full]);
    try {
      const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', INPUTS[0]!.path, '--db', join(dir, 'x.duckdb')], { encoding: 'utf8', env: { ...process.env, TMPDIR: full } });
      expect(r.status).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`hta_nccl_data.json.gz: no room in ${full} for the import's temporary files (ENOSPC;`);
      expect(existsSync(join(dir, 'x.duckdb'))).toBe(false);
    } finally {
      spawnSync('umount', [full]);
    }
  });
});

/** Whether a tmpfs can be mounted here (root only). */
function canMount(): boolean {
  const dir = tmp();
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    spawnSync('umount', [dir]);
    return true;
  } catch {
    return false;
  }
}
