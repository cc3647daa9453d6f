/**
 * Issue 17: input and environment faults are one clear error (exit 2,
 * `file[:line]: message`), never exit 70, a stack trace, a hang, or a
 * truncated output. The real CLI (scripts/tickwise) on real files; disk-full
 * and read-only cases on a small tmpfs (root only; skipped with a message
 * where it cannot be mounted).
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { appendFileSync, closeSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput, readConditionsFile } from '@tickwise/capture';
import { TickwiseError, seededRng } from '@tickwise/time';

const ROOT = resolve(import.meta.dirname, '../../..');
const HRX = join(ROOT, 'packages/capture/test/fixtures/hrx/npu_profile.json');
const LLAMA = resolve(ROOT, '../shared/fixtures/external/llama-bench/strixhalo_llama32-1b.default-hip.jsonl');

function tickwise(args: string[], opts: { input?: string } = {}) {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, input: opts.input, timeout: 120_000 });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

/** Exit 2 with one `tickwise: FILE[:LINE]: ...` line and no stack trace. */
function expectRefused(r: ReturnType<typeof tickwise>, where: RegExp, what: RegExp) {
  expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
  expect(r.code, r.stderr).toBe(2);
  const line = r.stderr.split('\n').find((l) => l.startsWith('tickwise: '));
  expect(line, r.stderr).toMatch(where);
  expect(line).toMatch(what);
}

function work(): string {
  return mkdtempSync(join(tmpdir(), 'tw-faults-'));
}

describe('input faults are one clear error (issue 17.4, 17.8)', () => {
  it('--db that is not DuckDB, a directory, an empty file, or in a missing folder', () => {
    const d = work();
    writeFileSync(join(d, 'text.duckdb'), 'hello, not a database\n');
    expectRefused(tickwise(['import', HRX, '--db', join(d, 'text.duckdb')]), /text\.duckdb: /, /not a DuckDB store/);
    expect(readFileSync(join(d, 'text.duckdb'), 'utf8')).toBe('hello, not a database\n');
    mkdirSync(join(d, 'dir.duckdb'));
    expectRefused(tickwise(['import', HRX, '--db', join(d, 'dir.duckdb')]), /dir\.duckdb: /, /not one|directory/);
    expectRefused(tickwise(['info', join(d, 'dir.duckdb')]), /dir\.duckdb: /, /directory/);
    expectRefused(tickwise(['info', join(d, 'text.duckdb')]), /text\.duckdb: /, /not a DuckDB store/);
    expectRefused(tickwise(['import', HRX, '--db', join(d, 'nope', 'x.duckdb')]), /x\.duckdb: /, /folder of the store does not exist/);
    expect(readdirSync(d).sort()).toEqual(['dir.duckdb', 'text.duckdb']); // no temporary copy or lock left
  });

  it('a store written by a newer schema is refused, never imported into or re-marked', async () => {
    const d = work();
    const db = join(d, 'newer.duckdb');
    const s = await Store.open(db);
    await s.run(`UPDATE tickwise_meta SET value = '2' WHERE key = 'schema_version'`);
    await s.run('ALTER TABLE dispatches ADD COLUMN from_the_future INTEGER');
    await s.close();
    const before = readFileSync(db);
    expectRefused(tickwise(['import', HRX, '--db', db]), /newer\.duckdb: /, /newer tickwise \(schema 2/);
    expectRefused(tickwise(['info', db]), /newer\.duckdb: /, /newer tickwise/);
    expect(readFileSync(db).equals(before)).toBe(true);
    // same version number, other columns (a store from another build): refused too
    const s2 = await Store.open(db).catch((e: unknown) => e);
    expect(s2).toBeInstanceOf(TickwiseError);
  });

  it('a directory given to a file format, /dev/zero, a FIFO with no writer, a pipe', async () => {
    const d = work();
    mkdirSync(join(d, 'sub'));
    expectRefused(tickwise(['import', join(d, 'sub'), '--input-format', 'ireeperf-jsonl', '--db', join(d, 'a.duckdb')]), /sub: /, /a directory/);
    expectRefused(tickwise(['info', '/dev/zero', '--input-format', 'chrome-trace']), /\/dev\/zero: /, /character device/);
    const fifo = join(d, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // no writer: refused after a bounded wait, never blocked forever (spawnSync's timeout would kill a hang: signal set)
    const r = tickwise(['info', fifo]);
    expect(r.signal).toBeNull();
    expectRefused(r, /fifo: /, /FIFO with no writer/);
    // a writer: read once through the FIFO (a stream that cannot be hashed beside the parse)
    const writer = spawn('sh', ['-c', `cat ${HRX} > ${fifo}`]);
    const writerDone = new Promise((res) => writer.on('close', res));
    const ok = tickwise(['import', fifo, '--db', join(d, 'f.duckdb')]);
    await writerDone;
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/5 dispatches/);
    // bash process substitution <(...): a pipe (ESPIPE when read with an offset) read once the same way
    const ps = spawnSync('bash', ['-c', `"${join(ROOT, 'scripts/tickwise')}" import <(cat "${HRX}") --db "${join(d, 'p.duckdb')}"`], { encoding: 'utf8', cwd: ROOT });
    expect(ps.stderr).not.toMatch(/internal error|ESPIPE/);
    expect(ps.status, ps.stderr).toBe(0);
    expect(ps.stdout).toMatch(/5 dispatches/);
    const sha = tickwise(['sql', join(d, 'f.duckdb'), 'SELECT sha256, size_bytes FROM captures', '--format', 'csv']);
    const want = execFileSync('sha256sum', [HRX], { encoding: 'utf8' }).split(' ')[0]!;
    expect(sha.stdout).toContain(`${want},${readFileSync(HRX).length}`);
  });

  it('stdin that is /dev/zero, or piped binary data (zeros, seeded random bytes, through a pipe or <(...)): refused at once, never copied', () => {
    const d = work();
    const db = join(d, 'z.duckdb');
    const zero = openSync('/dev/zero', 'r');
    try {
      const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', '-', '--db', db], { encoding: 'utf8', cwd: ROOT, stdio: [zero, 'pipe', 'pipe'], timeout: 60_000 });
      expect(r.signal).toBeNull();
      expectRefused({ code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }, /<stdin>: /, /stdin is a character device \(such as \/dev\/zero\), not a capture/);
    } finally {
      closeSync(zero);
    }
    // 8 MiB of zeros through a pipe: refused at its first byte (a copy would take all 8 MiB, and /dev/zero's endless stream the disk)
    const zeros = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', '-', '--db', db], { cwd: ROOT, input: Buffer.alloc(8 << 20), timeout: 60_000 });
    expectRefused({ code: zeros.status, signal: zeros.signal, stdout: String(zeros.stdout), stderr: String(zeros.stderr) }, /<stdin>:1: /, /binary data \(byte 0x00 at offset 0\), not a capture/);
    const rng = seededRng(7);
    const noise = Buffer.from(Array.from({ length: 1 << 16 }, () => rng.int(256)));
    const first = noise.findIndex((c) => c < 0x20 && ![0x09, 0x0a, 0x0c, 0x0d].includes(c));
    const random = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', '-', '--db', db], { cwd: ROOT, input: noise, timeout: 60_000 });
    expectRefused({ code: random.status, signal: random.signal, stdout: String(random.stdout), stderr: String(random.stderr) }, /<stdin>:1: /, new RegExp(`binary data \\(byte 0x${noise[first]!.toString(16).padStart(2, '0')} at offset ${first}\\)`));
    writeFileSync(join(d, 'noise'), noise);
    const ps = spawnSync('bash', ['-c', `"${join(ROOT, 'scripts/tickwise')}" import <(cat "${join(d, 'noise')}") --db "${db}"`], { encoding: 'utf8', cwd: ROOT, timeout: 60_000 });
    expectRefused({ code: ps.status, signal: ps.signal, stdout: ps.stdout, stderr: ps.stderr }, /\/dev\/fd\/\d+:1: /, /binary data/);
    expect(existsSync(db)).toBe(false);
    // text and gzip still come through a pipe
    const gz = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', '-', '--db', db], { encoding: 'utf8', cwd: ROOT, input: gzipSync(readFileSync(HRX)) as unknown as string, timeout: 60_000 });
    expect(gz.status, gz.stderr).toBe(0);
    expect(gz.stdout).toMatch(/^imported <stdin> as capture 1 \(hrx-device-profile\): .*5 dispatches/);
  });

  it('hrx: a declared tick rate of -1, 0 or 1e400 Hz is refused at its line; one 0xFF byte in a key names its record', () => {
    const d = work();
    const text = readFileSync(HRX, 'utf8');
    for (const bad of ['-1', '0', '1e400', '"NaN"', '9223372036854775808']) {
      writeFileSync(join(d, 'p.json'), text.replace('"frequency_hz": 100000000', `"frequency_hz": ${bad}`));
      expectRefused(tickwise(['info', join(d, 'p.json')]), /p\.json:4: /, /tick rate must be a number of Hz between 0\.001 and/);
    }
    writeFileSync(join(d, 'nofreq.json'), text.replace('"frequency_hz": 100000000,', ''));
    const huge = tickwise(['info', join(d, 'nofreq.json'), '--tick-hz', '1e30Hz']);
    expect(huge.code, huge.stderr).toBe(2);
    expect(huge.stderr).toMatch(/--tick-hz 1e\+30 Hz: a tick rate must be between/);
    for (const [tick, what] of [['-1', 'out of range'], ['18446744073709551616', 'out of range'], ['1.5', 'not an integer'], ['"7"', 'not an integer']]) {
      writeFileSync(join(d, 't.json'), text.replace(/"start_tick": \d+/, `"start_tick": ${tick}`));
      expectRefused(tickwise(['info', join(d, 't.json')]), /t\.json:6: /, new RegExp(`start_tick .* is ${what}`));
    }
    const lines = text.split('\n');
    const i = lines.findIndex((l) => l.includes('"start_tick"'));
    const buf = Buffer.from(lines.map((l, k) => (k === i + 1 ? l.replace('"name"', '"n\u0001me"') : l)).join('\n'), 'latin1');
    buf[buf.indexOf(1)] = 0xff;
    writeFileSync(join(d, 'ff.json'), buf);
    expectRefused(tickwise(['info', join(d, 'ff.json')]), new RegExp(`ff\\.json:${i + 2}: `), /UTF-8/);
    // 0xFF in the second profile's "intervals" key: its intervals were dropped with no word (2 of 3 dispatches kept)
    const two = readFileSync(join(ROOT, 'packages/capture/test/fixtures/hrx/two_devices.json'));
    const second = two.indexOf('"intervals"', two.indexOf('"intervals"') + 1);
    const dmg = Buffer.from(two);
    dmg[second + 3] = 0xff;
    writeFileSync(join(d, 'two.json'), dmg);
    const secondLine = two.subarray(0, second).toString('latin1').split('\n').length;
    expectRefused(tickwise(['info', join(d, 'two.json')]), new RegExp(`two\\.json:${secondLine + 1}: `), /not inside a profile's "intervals" array/);
  });

  it('hrx: a tick beyond int64 ns is kept with valid = false and a diagnostic (docs/trace-formats.md)', () => {
    const d = work();
    writeFileSync(join(d, 'big.json'), JSON.stringify({ device: 'npu0', kind: 'npu', frequency_hz: 1000, intervals: [] }).replace('[]',
      '[{"name":"a","start_tick":1000,"end_tick":2000},\n{"name":"b","start_tick":18446744073709551000,"end_tick":18446744073709551615}]'));
    const db = join(d, 'b.duckdb');
    const r = tickwise(['import', join(d, 'big.json'), '--db', db]);
    expect(r.code, r.stderr).toBe(0);
    const rows = tickwise(['sql', db, 'SELECT kernel, start_ns, valid, start_tick FROM dispatches ORDER BY start_tick', '--format', 'csv']).stdout;
    expect(rows).toContain('a,0,true,1000');
    expect(rows).toContain('b,,false,18446744073709551000');
    expect(tickwise(['sql', db, "SELECT line FROM diagnostics WHERE code = 'tick-beyond-ns-range'", '--format', 'csv']).stdout).toContain('2');
    // ireeperf-jsonl: the same through its clock fit
    const iree = resolve(ROOT, '../shared/fixtures/iree/fixture_smoke.ireeperf.jsonl');
    if (!existsSync(iree)) return void console.warn(`skipped: ${iree} absent`);
    writeFileSync(join(d, 'ib.jsonl'), readFileSync(iree, 'utf8').replace('"start_tick":120,', '"start_tick":18446744073709551000,')
      .replace(/("record_type":"dispatch_event".*?"end_tick":)\d+/, '$118446744073709551615'));
    const db2 = join(d, 'i.duckdb');
    const r2 = tickwise(['import', join(d, 'ib.jsonl'), '--db', db2]);
    expect(r2.code, r2.stderr).toBe(0);
    expect(tickwise(['sql', db2, 'SELECT start_ns, valid, start_tick FROM dispatches WHERE start_tick IS NOT NULL', '--format', 'csv']).stdout).toContain(',false,18446744073709551000');
    expect(tickwise(['sql', db2, 'SELECT code FROM diagnostics', '--format', 'csv']).stdout).toContain('tick-beyond-ns-range');
  });

  it('llama-bench: samples_ns and avg_ns of 2^64-1 are out of range with the line, not DuckDB text', () => {
    if (!existsSync(LLAMA)) return void console.warn(`skipped: ${LLAMA} absent`);
    const d = work();
    const text = readFileSync(LLAMA, 'utf8');
    writeFileSync(join(d, 's.jsonl'), text.replace(/"samples_ns": \[ \d+/, '"samples_ns": [ 18446744073709551615'));
    writeFileSync(join(d, 'a.jsonl'), text.replace(/"avg_ns": \d+/, '"avg_ns": 18446744073709551615'));
    expectRefused(tickwise(['import', HRX, '--wall', join(d, 's.jsonl'), '--db', join(d, 'x.duckdb')]), /s\.jsonl:1: /, /samples_ns 18446744073709551615 is out of range/);
    expectRefused(tickwise(['import', HRX, '--wall', join(d, 'a.jsonl'), '--db', join(d, 'x.duckdb')]), /a\.jsonl:1: /, /avg_ns 18446744073709551615 is out of range/);
    expect(existsSync(join(d, 'x.duckdb'))).toBe(false);
  });

  it('heteromosaic: a timestamp present but out of range is said so, apart from a missing one', () => {
    const d = work();
    const text = readFileSync(join(ROOT, 'packages/capture/test/fixtures/heteromosaic/prefill_split.jsonl'), 'utf8');
    writeFileSync(join(d, 'r.jsonl'), text.replace(/"start_ts_us": [0-9.]+/, '"start_ts_us": 1e400'));
    const db = join(d, 'h.duckdb');
    expect(tickwise(['import', join(d, 'r.jsonl'), '--db', db]).code).toBe(0);
    const diags = tickwise(['sql', db, 'SELECT code, line FROM diagnostics ORDER BY code', '--format', 'csv']).stdout;
    expect(diags).toContain('timestamp-out-of-range,1');
    expect(diags).not.toContain('missing-timestamp');
  });

  it('an empty or truncated conditions.json is one error with its line', async () => {
    const d = work();
    const p = join(d, 'conditions.json');
    writeFileSync(p, '');
    await expect(readConditionsFile(p)).rejects.toMatchObject({ code: 'bad-record', file: p, line: 1 });
    writeFileSync(p, '{"conditions": [\n  {"key": "a", "value": "1", "unit": null, "note": null},\n  {"key": "b", "val');
    await expect(readConditionsFile(p)).rejects.toMatchObject({ code: 'bad-record', line: 3, message: expect.stringMatching(/truncated/) });
    writeFileSync(p, '{"conditions": [{"value": "1"}]}');
    await expect(readConditionsFile(p)).rejects.toMatchObject({ message: expect.stringMatching(/no "key"/) });
  });

  it('kill -9 during an import: the store unchanged, the next import cleans the lock, the copy and its temporary input', async () => {
    const d = work();
    const db = join(d, 'k.duckdb');
    expect(tickwise(['import', HRX, '--db', db]).code).toBe(0);
    const before = readFileSync(db);
    // the import blocks on a FIFO whose writer stays open: it holds the lock and its copy when killed (no timing)
    const fifo = join(d, 'slow');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', `exec 3>"${fifo}"; printf '{"device": ' >&3; sleep 120`]);
    const victim = spawn(join(ROOT, 'scripts/tickwise'), ['import', fifo, '--db', db], { cwd: ROOT, stdio: 'ignore' });
    const leftovers = () => readdirSync(d).filter((n) => n.startsWith('k.duckdb.'));
    const pipeDirs = () => readdirSync(tmpdir()).filter((n) => n.startsWith(`tickwise-pipe-${victim.pid}-`));
    while (!leftovers().some((n) => n.includes('tickwise-tmp-')) || !leftovers().some((n) => n.endsWith('tickwise-lock')) || pipeDirs().length === 0) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const gone = new Promise((r) => victim.on('exit', r));
    victim.kill('SIGKILL');
    await gone;
    writer.kill('SIGKILL');
    expect(leftovers().length).toBeGreaterThan(0);
    expect(readFileSync(db).equals(before)).toBe(true);
    const next = tickwise(['import', HRX, '--db', db, '--lock-wait', '0s']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(/as capture 2/);
    expect(leftovers()).toEqual([]);
    // the killed import's copy of its FIFO went with the next import too (its process is gone)
    expect(pipeDirs()).toEqual([]);
  }, 120_000);

  it('while one import writes: readers see the old store, a second writer is refused naming the first, then both land', async () => {
    const d = work();
    const db = join(d, 'c.duckdb');
    expect(tickwise(['import', HRX, '--db', db]).code).toBe(0);
    const fifo = join(d, 'slow');
    execFileSync('mkfifo', [fifo]);
    // the writer holds the FIFO open until told (a file appearing), so the first import waits inside the store's lock
    const go = join(d, 'go');
    const writer = spawn('sh', ['-c', `exec 3>"${fifo}"; head -c 40 "${HRX}" >&3; while [ ! -e "${go}" ]; do sleep 0.05; done; tail -c +41 "${HRX}" >&3`]);
    const writerDone = new Promise((r) => writer.on('close', r));
    const first = spawn(join(ROOT, 'scripts/tickwise'), ['import', fifo, '--db', db], { cwd: ROOT });
    let firstOut = '';
    first.stdout.on('data', (b: Buffer) => { firstOut += b.toString(); });
    first.stderr.on('data', (b: Buffer) => { firstOut += b.toString(); });
    let exited = false;
    const firstDone = new Promise<number | null>((r) => first.on('exit', (c) => { exited = true; r(c); }));
    while (!existsSync(`${db}.tickwise-lock`) && !exited) await new Promise((r) => setTimeout(r, 50));
    expect(exited, firstOut).toBe(false);
    const info = tickwise(['sql', db, 'SELECT count(*) AS n FROM captures', '--format', 'csv']);
    expect(info.code, info.stderr).toBe(0);
    expect(info.stdout).toMatch(/^n\s*\n1\s*$/m);
    const second = tickwise(['import', HRX, '--db', db, '--lock-wait', '0s']);
    expectRefused(second, /c\.duckdb: /, /being written by another tickwise process \(pid \d+\)/);
    writeFileSync(go, '');
    expect(await firstDone).toBe(0);
    await writerDone;
    expect(firstOut).toMatch(/as capture 2/);
    expect(tickwise(['import', HRX, '--db', db]).stdout).toMatch(/as capture 3/);
  }, 120_000);

  it('a file that grows or shrinks during the import is refused, nothing stored for it', async () => {
    const d = work();
    for (const [phase, change] of [['scanning', 'grow'], ['loading tables', 'grow'], ['scanning', 'shrink']] as const) {
      const p = join(d, `${phase}-${change}.json`);
      copyFileSync(HRX, p);
      const store = await Store.open(':memory:');
      const e = await importInput(store, p, {
        onProgress: (ph) => {
          if (ph !== phase) return;
          if (change === 'grow') appendFileSync(p, '\n\n');
          else writeFileSync(p, readFileSync(p).subarray(0, 100));
        },
      }).then(() => null, (x: unknown) => x);
      expect(e, `${phase} ${change}`).toBeInstanceOf(TickwiseError);
      expect((e as TickwiseError).code).toBe('input-changed');
      expect((e as TickwiseError).message).toMatch(change === 'grow' ? /grew from \d+ to \d+ bytes/ : /shrank/);
      await store.close();
    }
  });
});

/** A small tmpfs (root only); null where it cannot be made here. */
function smallTmpfs(sizeBytes: number): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'tw-tmpfs-'));
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
else console.warn('input-faults: disk-full and read-only tests skipped: cannot mount a tmpfs here (needs root)');

const MATMUL = resolve(ROOT, '../shared/fixtures/iree/local_task_matmul.ireeperf.jsonl');
if (probe && !existsSync(MATMUL)) console.warn('input-faults: disk-full cases skipped: ../shared/fixtures is absent');
describe.skipIf(!probe || !existsSync(MATMUL))('full disks and read-only stores (issue 17.8, 17 smaller)', () => {
  it('report and export on a full disk: one clear error, no truncated file, an old file kept', () => {
    const d = work();
    const db = join(d, 'r.duckdb');
    expect(tickwise(['import', resolve(ROOT, '../shared/fixtures/iree/local_task_matmul.ireeperf.jsonl'), '--db', db]).code).toBe(0);
    const fs = smallTmpfs(300 * 1024)!;
    try {
      writeFileSync(join(fs, 'fill'), Buffer.alloc(280 * 1024));
      expectRefused(tickwise(['report', db, '--out', join(fs, 'r.html')]), /r\.html: /, /no room on the disk/);
      expect(readdirSync(fs)).toEqual(['fill']);
      writeFileSync(join(fs, 'r.html'), 'old');
      expectRefused(tickwise(['report', db, '--out', join(fs, 'r.html')]), /r\.html: /, /unchanged/);
      expect(readFileSync(join(fs, 'r.html'), 'utf8')).toBe('old');
      expectRefused(tickwise(['export', db, '--format', 'parquet', '--out', join(fs, 'e')]), /e: /, /no room on the disk; nothing of this export was kept/);
      expect(readdirSync(join(fs, 'e'))).toEqual([]);
      const pj = tickwise(['export', db, '--format', 'perfetto-json', '--out', join(fs, 'p.json')]);
      expect(pj.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(pj.code).toBe(2);
      expect(pj.stderr).toMatch(/No space left on device|no room/);
      // the message names the file asked for, never the temporary one
      expect(pj.stderr).toMatch(/p\.json: cannot write .*p\.json/);
      expect(pj.stderr).not.toMatch(/partial/);
      expect(readdirSync(fs).sort()).toEqual(['e', 'fill', 'r.html']);
    } finally {
      unmount(fs);
    }
  });

  it('no room for the temporary copy of stdin: one clear error, nothing stored', () => {
    const d = work();
    const fs = smallTmpfs(64 * 1024)!;
    try {
      const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', '-', '--db', join(d, 's.duckdb')], {
        // no reserve: the copy runs into the full disk itself (the reserve's own stop: the test after this one)
        encoding: 'utf8', cwd: ROOT, env: { ...process.env, TMPDIR: fs, TICKWISE_TMP_RESERVE_BYTES: '0' }, input: readFileSync(resolve(ROOT, '../shared/fixtures/iree/local_task_matmul.ireeperf.jsonl')),
      });
      expectRefused({ code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }, /<stdin>: /, /no room on the disk for a temporary copy/);
      expect(existsSync(join(d, 's.duckdb'))).toBe(false);
      expect(readdirSync(fs)).toEqual([]);
    } finally {
      unmount(fs);
    }
  });

  it('a stream that never ends (yes |): the copy stops before the disk is full, one clear error, the copy removed', () => {
    const d = work();
    const fs = smallTmpfs(48 << 20)!;
    try {
      const env = { ...process.env, TMPDIR: fs, TICKWISE_TMP_RESERVE_BYTES: String(24 << 20) };
      for (const how of ['-', '<(yes \'{"ph": "X"}\')']) {
        const cmd = how === '-' ? `yes '{"ph": "X"}' | "${join(ROOT, 'scripts/tickwise')}" import - --db "${join(d, 'y.duckdb')}"`
          : `"${join(ROOT, 'scripts/tickwise')}" import ${how} --db "${join(d, 'y.duckdb')}"`;
        const r = spawnSync('bash', ['-c', cmd], { encoding: 'utf8', cwd: ROOT, env, timeout: 120_000 });
        expect(r.signal).toBeNull();
        // stopped once 24 MiB are copied (the reserve reached; looked at every 12 MiB), never at ENOSPC
        expectRefused({ code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }, how === '-' ? /<stdin>: / : /\/dev\/fd\/\d+: /,
          /stopped copying it after (2[4-9]|3[0-6]) MiB: the temporary file system .* is down to \d+ MiB free, below the 24 MiB kept free/);
        expect(existsSync(join(d, 'y.duckdb'))).toBe(false);
        expect(readdirSync(fs)).toEqual([]);
      }
      // the default reserve: 10 % of this 48 MiB file system, looked at every 2.4 MiB, so the copy stops at 43-46 MiB
      const def = spawnSync('bash', ['-c', `yes '{"ph": "X"}' | "${join(ROOT, 'scripts/tickwise')}" import - --db "${join(d, 'y.duckdb')}"`],
        { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TMPDIR: fs }, timeout: 120_000 });
      expectRefused({ code: def.status, signal: def.signal, stdout: def.stdout, stderr: def.stderr }, /<stdin>: /,
        /stopped copying it after 4[3-6] MiB: .* below the 5 MiB kept free/);
      expect(readdirSync(fs)).toEqual([]);
      // an input that fits still comes through the same file system
      const ok = spawnSync(join(ROOT, 'scripts/tickwise'), ['import', '-', '--db', join(d, 'ok.duckdb')], { encoding: 'utf8', cwd: ROOT, env, input: readFileSync(MATMUL) });
      expect(ok.status, ok.stderr).toBe(0);
    } finally {
      unmount(fs);
    }
  });

  it('a store on a read-only file system: analyses read it, import says so and changes nothing', () => {
    const d = work();
    const fs = smallTmpfs(8 << 20)!;
    try {
      const db = join(fs, 's.duckdb');
      expect(tickwise(['import', HRX, '--db', db]).code).toBe(0);
      const before = readFileSync(db);
      execFileSync('mount', ['-o', 'remount,ro', fs]);
      const info = tickwise(['info', db]);
      expect(info.code, info.stderr).toBe(0);
      expectRefused(tickwise(['import', HRX, '--db', db]), /s\.duckdb: /, /read-only file system/);
      expect(readFileSync(db).equals(before)).toBe(true);
      expect(existsSync(join(d, 'x'))).toBe(false);
    } finally {
      unmount(fs);
    }
  });
});
