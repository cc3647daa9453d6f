/**
 * A directory given to `import` (or to an analysis verb) stands for the
 * captures in it and below it, in name order (run2 before run10); what else
 * it holds is named on stderr and passed over; a directory with no capture
 * is one error, exit 2, and no store. The real CLI on real files.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { ROOT, tickwise } from './run-cli';

const FIX = join(ROOT, 'packages/capture/test/fixtures');
const HRX = join(FIX, 'hrx/npu_profile.json'); // 5 dispatches
const HRX2 = join(FIX, 'hrx/two_devices.json');
const KINETO = join(FIX, 'chrome-trace/kineto.pt.trace.json');

describe('a directory of captures', () => {
  it('imports every capture in it and below it, in name order, and names what it passes over', async () => {
    const d = mkdtempSync(join(tmpdir(), 'tw-dir-'));
    const runs = join(d, 'runs');
    mkdirSync(join(runs, 'rank1'), { recursive: true });
    copyFileSync(HRX, join(runs, 'run10.json'));
    copyFileSync(HRX2, join(runs, 'run2.json'));
    copyFileSync(KINETO, join(runs, 'rank1', 'trace.pt.trace.json'));
    writeFileSync(join(runs, 'README.md'), '# notes on these runs\n');
    writeFileSync(join(runs, 'empty.json'), '');
    writeFileSync(join(runs, '.hidden.json'), 'not looked at');
    symlinkSync(runs, join(runs, 'rank1', 'loop')); // a link back up: walked once
    const db = join(d, 'all.duckdb');
    const r = tickwise('import', runs, '--db', db);
    expect(r.code, r.stderr).toBe(0);
    // every capture, in name order: README and empty.json named, the link named, the hidden file not
    expect(r.stdout.split('\n').filter(Boolean).map((l) => /^imported (\S+)/.exec(l)?.[1])).toEqual([
      join(runs, 'rank1', 'trace.pt.trace.json'), join(runs, 'run2.json'), join(runs, 'run10.json'),
    ]);
    const skipped = r.stderr.split('\n').filter((l) => l.startsWith('skipped '));
    expect(skipped).toEqual([
      `skipped ${join(runs, 'empty.json')}: empty`,
      `skipped ${join(runs, 'rank1', 'loop')}: a link to a directory already walked`,
      `skipped ${join(runs, 'README.md')}: not a capture of a known format`,
    ]);
    // the same rows as importing each file on its own
    const one = join(d, 'one.duckdb');
    expect(tickwise('import', join(runs, 'run10.json'), '--db', one).code).toBe(0);
    const s = await Store.open(db, { readOnly: true });
    const s1 = await Store.open(one, { readOnly: true });
    try {
      const per = await s.query({ path: 'string', n: 'number' },
        `SELECT c.path, count(d.capture_id)::INTEGER AS n FROM captures c LEFT JOIN dispatches d USING (capture_id) GROUP BY c.capture_id, c.path ORDER BY c.capture_id`);
      expect(per.map((p) => p.path)).toEqual([join(runs, 'rank1', 'trace.pt.trace.json'), join(runs, 'run2.json'), join(runs, 'run10.json')]);
      expect(per[2]!.n).toBe(await s1.count('dispatches'));
      expect(per[2]!.n).toBe(5);
    } finally {
      await s.close();
      await s1.close();
    }
    // the store written into the walked directory is passed over on the next import (not read as a capture)
    const again = tickwise('import', d, '--db', join(d, 'again.duckdb'));
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain(`skipped ${db}: a tickwise store, not a capture`);
    expect(again.stdout.match(/^imported /gm)).toHaveLength(3);
    // --json names what was passed over too
    const j = tickwise('import', runs, '--db', join(d, 'j.duckdb'), '--json');
    expect(j.code, j.stderr).toBe(0);
    const doc = JSON.parse(j.stdout) as { imported: { input: string }[]; skipped: { path: string; why: string }[] };
    expect(doc.imported.map((i) => i.input)).toEqual([join(runs, 'rank1', 'trace.pt.trace.json'), join(runs, 'run2.json'), join(runs, 'run10.json')]);
    expect(doc.skipped.map((x) => x.path)).toEqual([join(runs, 'empty.json'), join(runs, 'rank1', 'loop'), join(runs, 'README.md')]);
    // an analysis verb reads a directory the same way
    const two = join(d, 'two');
    mkdirSync(two);
    copyFileSync(HRX, join(two, 'npu.json'));
    copyFileSync(KINETO, join(two, 'gpu.json'));
    const k = tickwise('kernels', two, '--json');
    expect(k.code, k.stderr).toBe(0);
    expect(new Set(JSON.parse(k.stdout).kernels.map((x: { capture_id: number }) => x.capture_id))).toEqual(new Set([1, 2]));
  });

  it('a capture in it that cannot be read (damaged gzip) stops the import: one error naming it, exit 2, no store', () => {
    const d = mkdtempSync(join(tmpdir(), 'tw-dir-'));
    mkdirSync(join(d, 'runs'));
    copyFileSync(HRX, join(d, 'runs', 'a.json'));
    writeFileSync(join(d, 'runs', 'b.json.gz'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x67, 0x61, 0x72, 0x62]));
    const r = tickwise('import', join(d, 'runs'), '--db', join(d, 'x.duckdb'));
    expect(r.code).toBe(2);
    expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
    expect(r.stderr.split('\n').find((l) => l.startsWith('tickwise: '))).toMatch(/b\.json\.gz: the gzip data is damaged/);
    expect(existsSync(join(d, 'x.duckdb'))).toBe(false);
  });

  it('a directory with no capture in it is one error, exit 2, and no store', () => {
    const d = mkdtempSync(join(tmpdir(), 'tw-dir-'));
    mkdirSync(join(d, 'none'));
    writeFileSync(join(d, 'none', 'notes.txt'), 'nothing to import\n');
    for (const [dir, what] of [[join(d, 'none'), /none: a directory with no capture in it: 1 file\(s\), none a capture \(.*notes\.txt: not a capture/], [join(d, 'none', '..', 'none'), /none a capture/]] as const) {
      const r = tickwise('import', dir, '--db', join(d, 'x.duckdb'));
      expect(r.code).toBe(2);
      expect(r.stderr).not.toMatch(/internal error|\n\s+at /);
      expect(r.stderr.split('\n').find((l) => l.startsWith('tickwise: '))).toMatch(what);
      expect(existsSync(join(d, 'x.duckdb'))).toBe(false);
    }
  });
});
