/**
 * `tickwise import` starts a large Chrome trace's scan once the store's lock
 * is held, while DuckDB loads; the reader takes the run over (the store is
 * the one of an import without it, TICKWISE_SCAN_EARLY=0), and no scan
 * folder is left behind, on success or failure.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './run-cli';

/** The native scanner scripts/setup builds. */
const SCANNER = join(ROOT, 'native/jsonscan/build/tw-jsonscan');

const work = mkdtempSync(join(tmpdir(), 'tickwise-early-cli-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs the CLI with its temporary files in `tmp`, the native scanner on and every trace streamed. */
function run(args: string[], tmp: string, env: Record<string, string> = {}) {
  return spawnSync(join(ROOT, 'scripts/tickwise'), args, {
    encoding: 'utf8', cwd: ROOT,
    env: { ...process.env, TZ: 'America/Los_Angeles', TMPDIR: tmp, TICKWISE_JSONSCAN: SCANNER, TICKWISE_CHROME_STREAM: '1', TICKWISE_TRACE_SCAN: '1', ...env },
  });
}

describe('tickwise import, the scan started early', () => {
  it('is taken over; the store is the one without it; nothing is left in the temporary folder', { timeout: 120_000 }, () => {
    expect(existsSync(SCANNER)).toBe(true);
    const ev = Array.from({ length: 30_000 }, (_v, i) => (i % 2 === 0
      ? `{"ph":"X","cat":"kernel","name":"k","pid":7,"tid":3,"ts":${1000 + i},"dur":1,"args":{"device":0,"stream":3,"correlation":${i}}}`
      : `{"ph":"X","cat":"cpu_op","name":"mm","pid":1,"tid":2,"ts":${1000 + i},"dur":1,"args":{"External id":${i}}}`));
    const file = join(work, 'trace.json');
    writeFileSync(file, `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`);
    const dumps: string[] = [];
    for (const early of ['1', '0']) {
      const tmp = mkdtempSync(join(work, 'tmp-'));
      const db = join(work, `early-${early}.duckdb`);
      const r = run(['import', file, '--db', db], tmp, { TICKWISE_SCAN_EARLY: early });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr.includes('the early scan of') && r.stderr.includes('taken over')).toBe(early === '1');
      expect(readdirSync(tmp).filter((n) => n.startsWith('tickwise-chrome-'))).toEqual([]);
      const q = run(['sql', db, 'SELECT (SELECT count(*) FROM dispatches) AS k, (SELECT count(*) FROM host_events) AS h, (SELECT sum(hash(name, start_ns, end_ns, line)) FROM host_events) AS hh, (SELECT sum(hash(kernel, start_ns, end_ns, line)) FROM dispatches) AS kh', '--format', 'json'], tmp);
      expect(q.status, q.stderr).toBe(0);
      dumps.push(q.stdout);
    }
    expect(dumps[0]).toBe(dumps[1]);
    expect(JSON.parse(dumps[0]!)[0]).toMatchObject({ k: 15_000, h: 15_000 });
  });

  it('a failed import leaves no scan behind either', { timeout: 60_000 }, () => {
    const tmp = mkdtempSync(join(work, 'tmp-'));
    const file = join(work, 'bad.json');
    // valid JSON, but a store path the import cannot write: the early scan runs, the import fails after the lock
    const ev = Array.from({ length: 5_000 }, (_v, i) => `{"ph":"X","cat":"cpu_op","name":"mm","pid":1,"tid":2,"ts":${i},"dur":1}`);
    writeFileSync(file, `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`);
    const notAStore = join(work, 'text.duckdb');
    writeFileSync(notAStore, 'not a database');
    const r = run(['import', file, '--db', notAStore], tmp);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/the early scan of \S+bad\.json stopped \(no reader took it\)/);
    expect(readdirSync(tmp).filter((n) => n.startsWith('tickwise-chrome-'))).toEqual([]);
  });
});
