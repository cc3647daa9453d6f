/**
 * `tickwise import --wall/--provenance-of`, `tickwise pin <store>` and
 * `tickwise check --pin/--wall`, run as a user runs them (the CLI from
 * source, in a child process), on a real program of this machine.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const tmp = () => mkdtempSync(join(tmpdir(), 'tickwise-check-cli-'));

function tickwise(args: string[]) {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles', LD_LIBRARY_PATH: '' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Two passes of four 500 us dispatches on a 100 MHz clock with samples. */
function capture(): string {
  const v = 15;
  const recs: unknown[] = [
    { schema_version: v, record_type: 'schema', format: 'ireeperf-jsonl' },
    { schema_version: v, record_type: 'session', event: 'begin', session_id: 1, session_status: 'OK' },
    { schema_version: v, record_type: 'device', physical_device_ordinal: 0, timestamp_frequency_hz: 100e6 },
    { schema_version: v, record_type: 'clock_correlation', sample_id: 1, physical_device_ordinal: 0, device_tick: 0, host_time_begin_ns: 999_900, host_time_end_ns: 1_000_100 },
    { schema_version: v, record_type: 'clock_correlation', sample_id: 2, physical_device_ordinal: 0, device_tick: 10_000_000, host_time_begin_ns: 100_999_900, host_time_end_ns: 101_000_100 },
  ];
  let t = 1000;
  let id = 0;
  for (let p = 0; p < 2; p++) {
    for (let i = 0; i < 4; i++) {
      recs.push({ schema_version: v, record_type: 'dispatch_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: ++id, submission_id: id, key: 'gemm', start_tick: t, end_tick: t + 50_000, valid: true, duration_ns: 500_000 });
      t += 51_000;
    }
    t += 5_000_000;
  }
  recs.push({ schema_version: v, record_type: 'session', event: 'end', session_id: 1, session_status: 'OK' });
  return recs.map((r) => JSON.stringify(r)).join('\n') + '\n';
}

/** A pass of the capture above: 4 x 500 us + 3 x 10 us. */
const PASS_NS = 2_030_000;

const PROGRAM = '/bin/true';
const MARKER = 'GLIBC_2.';

describe('import --provenance-of, pin <store>, check --pin', () => {
  it.skipIf(!existsSync(PROGRAM))('stores the libraries, pins them from the store, and check --pin flags a changed build', () => {
    const dir = tmp();
    const cap = join(dir, 'c.ireeperf.jsonl');
    writeFileSync(cap, capture());
    const db = join(dir, 'run.duckdb');
    const imp = tickwise(['import', cap, '--db', db, '--provenance-of', PROGRAM, '--marker', MARKER]);
    expect(imp.status).toBe(0);
    expect(imp.stdout).toContain(`provenance of ${PROGRAM}`);
    const rows = JSON.parse(tickwise(['sql', db, 'select role, name, path, how_found from provenance order by rowid', '--format', 'json']).stdout) as Record<string, unknown>[];
    expect(rows[0]).toEqual({ role: 'executable', name: 'true', path: PROGRAM, how_found: 'given' });
    expect(rows.map((r) => r['name'])).toContain('libc.so.6');

    const pinPath = join(dir, 'pin.json');
    const p = tickwise(['pin', db, '--out', pinPath]);
    expect(p.status).toBe(0);
    expect(p.stderr).toContain(`from capture 1 of ${db}`);
    const pin = JSON.parse(readFileSync(pinPath, 'utf8')) as { schema: string; files: { name: string; build_id: string | null; markers: Record<string, number> }[] };
    expect(pin.schema).toBe('tickwise-pin/1');
    // the same files, identities and marker counts as a pin made from the program itself
    const direct = tickwise(['pin', PROGRAM, '--marker', MARKER]);
    expect(direct.status).toBe(0);
    expect(pin.files).toEqual((JSON.parse(direct.stdout) as typeof pin).files);
    const libc = pin.files.find((f) => f.name === 'libc.so.6')!;
    expect(libc.markers[MARKER]).toBeGreaterThan(0);

    const ok = tickwise(['check', db, '--pin', pinPath, '--json']);
    expect(ok.status).toBe(0);
    const okCodes = (JSON.parse(ok.stdout) as { findings: { code: string }[] }).findings.map((f) => f.code);
    expect(okCodes).not.toContain('stale-library');
    expect(okCodes).not.toContain('no-provenance');

    // the pin expects another libc build with another marker count
    libc.build_id = 'deadbeef';
    libc.markers[MARKER] = libc.markers[MARKER]! + 1;
    const stalePin = join(dir, 'stale.json');
    writeFileSync(stalePin, JSON.stringify(pin));
    const bad = tickwise(['check', db, '--pin', stalePin, '--json']);
    expect(bad.status).toBe(1);
    const stale = (JSON.parse(bad.stdout) as { findings: Record<string, unknown>[] }).findings.filter((f) => f['code'] === 'stale-library');
    expect(stale).toMatchObject([{ severity: 'error', name: 'libc.so.6', pinned_build_id: 'deadbeef', differs: `build_id,marker:${MARKER}` }]);
    const human = tickwise(['check', db, '--pin', stalePin]);
    expect(human.status).toBe(1);
    expect(human.stdout).toContain('error     stale-library');
    expect(human.stdout).toContain('what to do: the capture ran another build than the pin');
  });
});

describe('import --wall and check --wall', () => {
  it('a wall reference 10x the span: exit 1 naming 10x; one that agrees: no wall finding', () => {
    const dir = tmp();
    const cap = join(dir, 'c.ireeperf.jsonl');
    writeFileSync(cap, capture());
    const header = 'model_type,n_prompt,n_gen,avg_ns,stddev_ns,avg_ts,stddev_ts\n';
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, header + `"m","512","0","${PASS_NS * 10}","0","1","0"\n`);
    const good = join(dir, 'good.csv');
    writeFileSync(good, header + `"m","512","0","${PASS_NS + 50_000}","0","1","0"\n`);
    const db = join(dir, 'run.duckdb');
    expect(tickwise(['import', cap, '--db', db, '--wall', bad]).status).toBe(0);
    const r = tickwise(['check', db, '--json']);
    expect(r.status).toBe(1);
    const wall = (JSON.parse(r.stdout) as { findings: Record<string, unknown>[] }).findings.filter((f) => f['code'] === 'wall-clock-mismatch');
    expect(wall).toMatchObject([{ severity: 'error', factor: '10x', span_ns: PASS_NS, wall_avg_ns: PASS_NS * 10, file: bad, line: 2 }]);
    const g = tickwise(['check', cap, '--wall', good, '--json']);
    expect((JSON.parse(g.stdout) as { findings: Record<string, unknown>[] }).findings.filter((f) => f['code'] === 'wall-clock-mismatch')).toEqual([]);
  });

  it('a bad row stops the import with file and line (exit 2) and leaves the store as it was', () => {
    const dir = tmp();
    const cap = join(dir, 'c.ireeperf.jsonl');
    writeFileSync(cap, capture());
    const db = join(dir, 'run.duckdb');
    expect(tickwise(['import', cap, '--db', db]).status).toBe(0);
    const before = statSync(db).mtimeMs;
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'model_type,n_prompt,n_gen,avg_ns\n"m","512","0","1000"\n"m","512","0","12.5ms"\n');
    const r = tickwise(['import', cap, '--db', db, '--wall', bad]);
    expect(r.status).toBe(2);
    expect(r.stderr).toBe(`tickwise: ${bad}:3: avg_ns is not a non-negative integer: "12.5ms"\n`);
    expect(statSync(db).mtimeMs).toBe(before);
    expect(JSON.parse(tickwise(['sql', db, 'select count(*) as n from captures', '--format', 'json']).stdout)).toEqual([{ n: 1 }]);
    const u = tickwise(['import', cap, '--db', db, '--marker', 'x']);
    expect(u.status).toBe(2);
    expect(u.stderr).toContain('--env and --marker go with --provenance-of');
  });
});
