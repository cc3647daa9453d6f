import { spawnSync } from 'node:child_process';
import { copyFileSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { tickToNs } from '@tickwise/time';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { readRecorderDir, RECORDER_NPU_DEVICE } from '../src/readers/recorder-dir';
import type { ColumnarRows } from '../src/readers/recorder-map';
import { ROOT, tmp } from './helpers';

// Real native recorder under its fake drivers (native/): built here with
// cmake when native/build lacks it; skipped with a message without cmake.
const NATIVE = join(ROOT, 'native');
const BUILD = join(NATIVE, 'build');
const HAVE_CMAKE = spawnSync('cmake', ['--version']).status === 0;
if (!HAVE_CMAKE) console.warn('recorder-dir tests skipped: cmake not found (the native recorder cannot be built)');

const RECORDER = join(BUILD, 'lib/libtickwise_recorder.so');
const FAKE_XDNA = join(BUILD, 'fakes/libtickwise_fake_amdxdna.so');
const app = (name: string) => join(BUILD, 'bin', `tw_app_${name}`);

function capture(appName: string, args: string[], env: Record<string, string> = {}): { dir: string; summary: Record<string, unknown> } {
  const dir = join(tmp('tickwise-recorder-'), 'run');
  const summary = `${dir}.summary.json`;
  const r = spawnSync(app(appName), [...args, '--out', summary], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', LD_PRELOAD: `${RECORDER}:${FAKE_XDNA}`, TICKWISE_CAPTURE_DIR: dir, ...env },
  });
  if (r.status !== 0) throw new Error(`${appName} failed (${r.status}): ${r.stderr}`);
  return { dir, summary: JSON.parse(readFileSync(summary, 'utf8')) as Record<string, unknown> };
}

describe.skipIf(!HAVE_CMAKE)('recorder capture directories (native recorder under fake HIP, rocprofiler-sdk, amdxdna)', () => {
  beforeAll(() => {
    const stale = !existsSync(RECORDER) || !existsSync(app('launcher')) || statSync(RECORDER).mtimeMs < statSync(join(NATIVE, 'src/recorder/core.cpp')).mtimeMs;
    if (!stale) return;
    const gen = spawnSync('ninja', ['--version']).status === 0 ? ['-G', 'Ninja'] : [];
    const cfg = spawnSync('cmake', ['-S', NATIVE, '-B', BUILD, ...gen, '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], { encoding: 'utf8' });
    if (cfg.status !== 0) throw new Error(cfg.stderr);
    const b = spawnSync('cmake', ['--build', BUILD, '-j', '2'], { encoding: 'utf8' });
    if (b.status !== 0) throw new Error(b.stdout + b.stderr);
  });

  it('every HIP launch becomes a host event, every kernel a dispatch on CLOCK_MONOTONIC with its name', async () => {
    const { dir, summary } = capture('launcher', ['--threads', '4', '--launches', '600', '--graph-every', '50']);
    const c = await readRecorderDir(dir, { captureId: 7 });
    expect(c.capture).toMatchObject({ format: 'tickwise-recorder', timeline: 'host_monotonic', session_status: 'complete' });
    const launches = c.host_events.filter((e) => e.kind === 'hip_launch');
    expect(launches.length).toBe(summary['launch_calls']);
    const hip = c.dispatches.filter((d) => d.device === 0);
    expect(hip.length).toBe(summary['kernels']);
    const bySubmission = new Map(launches.map((l) => [l.submission_id, l]));
    for (const d of hip) {
      expect(d.capture_id).toBe(7);
      expect(d.time_source).toBe('host_monotonic'); // BOOTTIME shifted by the recorded offset
      const l = bySubmission.get(d.submission_id)!;
      expect(l).toBeDefined();
      // shifted from BOOTTIME onto MONOTONIC: the kernel starts after its launch call began, within a second
      expect(d.start_ns! >= l.start_ns).toBe(true);
      expect(d.start_ns! - l.start_ns < 1_000_000_000n).toBe(true);
      expect(d.dur_ns).toBe(20_000n); // the fake's kernel duration
      if (l.op !== 'hipGraphLaunch') expect(d.kernel).toBe(l.name);
    }
    expect(new Set(hip.map((d) => d.kernel))).toEqual(new Set([null, 'rms_norm_f32', 'rope_neox_f32', 'soft_max_f32', 'mul_mat_q4_K_rows', 'flash_attn_ext_f16']));
    expect(c.devices.find((d) => d.device === 0)).toMatchObject({ kind: 'gpu', name: 'hip:0', tick_hz_declared: 100_000_000 });
    expect(c.provenance.some((p) => p.role === 'recorder' && p.build_id && p.path.endsWith('libtickwise_recorder.so'))).toBe(true);
    expect(c.diagnostics.filter((d) => d.severity !== 'info')).toEqual([]);
  });

  it('the clock samples recover the fake device clock: injected 37.5 ppm drift within 5 ppm, offset within 2 us', async () => {
    const ppm = 37.5, offset = 123_456_789_012n;
    const { dir } = capture('launcher', ['--threads', '2', '--launches', '200', '--duration-ms', '1200'], {
      TICKWISE_CLOCK_PERIOD_MS: '50', TICKWISE_FAKE_HIP_DRIFT_PPM: String(ppm), TICKWISE_FAKE_HIP_OFFSET_TICKS: offset.toString(),
      TICKWISE_FAKE_CLOCK_JITTER_NS: '20000',
    });
    const c = await readRecorderDir(dir);
    const dev = c.devices.find((d) => d.device === 0)!;
    expect(dev.clock_samples).toBeGreaterThanOrEqual(20);
    const fittedPpm = (dev.tick_hz_fitted! / 100e6 - 1) * 1e6;
    expect(Math.abs(fittedPpm - ppm)).toBeLessThan(5);
    // the fake's truth: tick = offset + t_ns * 0.1 * (1 + ppm / 1e6); map a tick back and compare
    const fit = c.fits.get(0)!;
    const samples = c.clock_samples.filter((s) => s.device === 0);
    const tMid = (samples[0]!.host_begin_ns + samples.at(-1)!.host_end_ns) / 2n;
    const tickTrue = offset + BigInt(Math.round(Number(tMid) * 0.1 * (1 + ppm / 1e6)));
    const err = Number(tickToNs(fit, tickTrue) - tMid);
    expect(Math.abs(err)).toBeLessThan(2_000);
  });

  it('NPU commands become dispatches from submit to the observed completion, one NPU device', async () => {
    const { dir, summary } = capture('npu', ['--threads', '2', '--cmds', '60'], { TICKWISE_FAKE_XDNA_DELAY_US: '300' });
    const c = await readRecorderDir(dir);
    const npu = c.dispatches.filter((d) => d.device === RECORDER_NPU_DEVICE);
    expect(npu.length).toBe(summary['exec']);
    for (const d of npu) {
      expect(d.valid).toBe(true);
      expect(d.dur_ns! >= 300_000n).toBe(true);
    }
    expect(new Set(npu.map((d) => d.queue)).size).toBe(2); // one hw context per thread
    expect(c.devices.find((d) => d.device === RECORDER_NPU_DEVICE)).toMatchObject({ kind: 'npu', name: 'amdxdna', time_base: 'host_monotonic' });
    expect(c.diagnostics.filter((d) => d.code === 'recorder-unknown-ioctl').length).toBe(summary['unknown']);
    expect(c.host_events.filter((e) => e.kind === 'npu_exec_cmd').length).toBe(summary['exec']);
  });

  it('a forked child is read from proc-<pid>/ on the same timeline; a cut file reads up to its last whole chunk', async () => {
    const { dir, summary } = capture('fork', ['--parent-launches', '1000', '--child-launches', '200']);
    const c = await readRecorderDir(dir);
    expect(c.processes.length).toBe(2);
    const child = c.processes.find((p) => p.header.fork_child)!;
    expect(child.header.pid).toBe(summary['child_pid']);
    expect(c.host_events.filter((e) => e.kind === 'hip_launch').length).toBe(Number(summary['parent_launches']) + Number(summary['child_launches']));

    const cut = join(tmp('tickwise-recorder-cut-'), 'run');
    mkdirSync(cut);
    copyFileSync(join(dir, 'records.twr'), join(cut, 'records.twr'));
    truncateSync(join(cut, 'records.twr'), statSync(join(cut, 'records.twr')).size - 7);
    const t = await readRecorderDir(cut);
    expect(t.diagnostics.some((d) => d.code === 'recorder-truncated')).toBe(true);
    expect(t.host_events.length).toBeGreaterThan(0);
    rmSync(cut, { recursive: true, force: true });
  });
});

/** The chunks of a records.twr: byte offset of each header, its type, payload size, seq. */
function chunksOf(b: Buffer): { at: number; type: number; bytes: number; count: number; seq: bigint }[] {
  const out = [];
  for (let at = 64; at + 32 <= b.length; at += 32 + b.readUInt32LE(at + 8))
    out.push({ at, type: b.readUInt16LE(at + 4), bytes: b.readUInt32LE(at + 8), count: b.readUInt32LE(at + 12), seq: b.readBigUInt64LE(at + 16) });
  return out;
}

/** Rewrites a chunk's CRCs after its header or payload was edited. */
function resealChunk(b: Buffer, at: number): void {
  const bytes = b.readUInt32LE(at + 8);
  b.writeUInt32LE(crc32(b.subarray(at + 32, at + 32 + bytes)), at + 24);
  b.writeUInt32LE(crc32(b.subarray(at, at + 28)), at + 28);
}

/** A copy of a capture directory to edit. */
function copyCapture(dir: string): string {
  const out = join(tmp('tickwise-recorder-edit-'), 'run');
  cpSync(dir, out, { recursive: true });
  return out;
}

describe.skipIf(!HAVE_CMAKE)('recorder captures that lie (issue 17.4): kept, flagged, never counted twice', () => {
  let launcherDir = '';
  beforeAll(() => {
    launcherDir = capture('launcher', ['--threads', '2', '--launches', '300', '--graph-every', '0']).dir;
  });

  it('a capture of more than one row group is stored in its records\' order, the same each import (140k dispatches)', { timeout: 120_000 }, async () => {
    const big = capture('launcher', ['--threads', '2', '--launches', '70000', '--graph-every', '0']).dir;
    const whole = await readRecorderDir(big);
    const want = whole.dispatches.map((d) => `${String(d['queue'])}:${String(d['start_ns'])}`).join(',');
    for (let i = 0; i < 2; i++) {
      const store = await Store.open(join(tmp('tickwise-recorder-order-'), 'x.duckdb'));
      try {
        await importInput(store, big);
        // (each text column's names were a scalar subquery in the insert: its first row group was stored after the second)
        expect(await store.scalar(`SELECT string_agg(queue::VARCHAR || ':' || start_ns::VARCHAR, ',' ORDER BY rowid) FROM dispatches`)).toBe(want);
      } finally {
        await store.close();
      }
    }
  });

  it('rows handed over in batches (the importer\'s path, as columns) are the rows read at once, in the same order', async () => {
    const whole = await readRecorderDir(launcherDir);
    const got: { dispatches: unknown[]; host_events: unknown[] } = { dispatches: [], host_events: [] };
    // a batch's columns back as row objects: a typed array's NULLs from its mask
    const rowsOf = (b: ColumnarRows) => Array.from({ length: b.n }, (_, r) => Object.fromEntries(b.columns.map((c) =>
      [c.name, 'ints' in c ? (c.nulls[r] ? null : c.ints[r]) : c.values[r]])));
    let batches = 0;
    const c = await readRecorderDir(launcherDir, {
      batchRows: 100,
      onBatch: async (b) => {
        batches++;
        got.dispatches.push(...rowsOf(b.dispatches));
        got.host_events.push(...rowsOf(b.host_events));
      },
    });
    expect(batches).toBeGreaterThan(2);
    expect(c.dispatches).toEqual([]);
    expect(c.host_events).toEqual([]);
    expect([c.dispatch_count, c.host_event_count]).toEqual([whole.dispatches.length, whole.host_events.length]);
    expect(got.dispatches).toEqual(whole.dispatches);
    expect(got.host_events).toEqual(whole.host_events);
    expect(c.devices).toEqual(whole.devices);
  });

  it('a launch whose exit precedes its enter is stored valid = false with no dur_ns, and said', async () => {
    const dir = copyCapture(launcherDir);
    const file = join(dir, 'records.twr');
    const b = readFileSync(file);
    // the first HipLaunch record (kind 1) of the file
    const chunk = chunksOf(b).find((c) => c.type === 1 && [...Array(c.count).keys()].some((i) => b.readUInt16LE(c.at + 32 + i * 64) === 1))!;
    const index = [...Array(chunk.count).keys()].find((i) => b.readUInt16LE(chunk.at + 32 + i * 64) === 1)!;
    const at = chunk.at + 32 + index * 64;
    const enter = b.readBigUInt64LE(at + 8);
    const exit = b.readBigUInt64LE(at + 16);
    const launchId = b.readBigUInt64LE(at + 24);
    b.writeBigUInt64LE(exit, at + 8); // swapped: exit before enter
    b.writeBigUInt64LE(enter, at + 16);
    resealChunk(b, chunk.at);
    writeFileSync(file, b);
    const c = await readRecorderDir(dir);
    const e = c.host_events.find((x) => x.kind === 'hip_launch' && x.submission_id === launchId)!;
    expect(e).toMatchObject({ start_ns: exit, end_ns: enter, dur_ns: null, valid: false });
    expect(c.host_events.filter((x) => x.dur_ns !== null && x.dur_ns < 0n)).toEqual([]);
    expect(c.host_events.filter((x) => !x.valid)).toHaveLength(1);
    const d = c.diagnostics.filter((x) => x.code === 'recorder-end-before-start');
    expect(d).toHaveLength(1);
    expect(d[0]!.message).toContain('1 HIP launch record(s) end before they start');
    expect(d[0]!.file).toBe(file);
  });

  it('a provenance size or mtime in meta.json beyond int64 (found by the import fuzz) is NULL with one diagnostic, the capture read', async () => {
    const dir = copyCapture(launcherDir);
    const metaFile = join(dir, 'meta.json');
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { provenance: { path: string; file_found: boolean; mtime_ns?: string; size_bytes?: number }[] };
    const found = meta.provenance.filter((e) => e.file_found);
    expect(found.length).toBeGreaterThanOrEqual(2);
    found[0]!.mtime_ns = '18446744073709551615';
    found[1]!.size_bytes = 1e30;
    writeFileSync(metaFile, JSON.stringify(meta));
    const c = await readRecorderDir(dir);
    const rows = new Map(c.provenance.map((r) => [r.path, r]));
    expect(rows.get(found[0]!.path)!.mtime_ns).toBeNull();
    expect(rows.get(found[1]!.path)!.size_bytes).toBeNull();
    expect(rows.get(found[1]!.path)!.mtime_ns).not.toBeNull();
    const d = c.diagnostics.filter((x) => x.code === 'value-out-of-range');
    expect(d).toHaveLength(1);
    expect(d[0]!.message).toContain(`mtime_ns of ${found[0]!.path} 18446744073709551615`);
    expect(d[0]!.message).toContain(`size_bytes of ${found[1]!.path} 1e+30`);
    expect(d[0]!.file).toBe(metaFile);
    // and the store takes it (before: "provenance.mtime_ns: ... is out of range", the import refused)
    const store = await Store.open(':memory:');
    try {
      const r = await importInput(store, dir);
      expect(r.dispatches).toBe(c.dispatch_count);
    } finally {
      await store.close();
    }
  });

  it('a clock domain id in meta.json beyond 16 bits (4294967295, found by the import fuzz) is ignored with a diagnostic, the capture imported', async () => {
    const dir = copyCapture(launcherDir);
    const metaFile = join(dir, 'meta.json');
    const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { clock_domains: { id: number; kind: string; name: string }[] };
    const dev = meta.clock_domains.find((d) => d.kind === 'device_tick')!;
    expect(dev).toBeDefined();
    dev.id = 4294967295;
    writeFileSync(metaFile, JSON.stringify(meta));
    const c = await readRecorderDir(dir);
    expect(c.devices.every((d) => d.device >= 0 && d.device <= 0xffff)).toBe(true);
    const d = c.diagnostics.filter((x) => x.code === 'value-out-of-range');
    expect(d).toHaveLength(1);
    expect(d[0]!.message).toContain('clock domain 4294967295');
    const store = await Store.open(':memory:');
    try {
      expect((await importInput(store, dir)).dispatches).toBe(c.dispatch_count);
    } finally {
      await store.close();
    }
  });

  it('a chunk written twice (verbatim, or renumbered at the end) is read once, with a diagnostic', async () => {
    const ref = await readRecorderDir(launcherDir);
    const b = readFileSync(join(launcherDir, 'records.twr'));
    const chunks = chunksOf(b);
    const rec = chunks.filter((c) => c.type === 1 && c.count > 0)[1]!;
    const copy = Buffer.from(b.subarray(rec.at, rec.at + 32 + rec.bytes));

    // verbatim right after itself: same seq, same payload
    const verbatim = copyCapture(launcherDir);
    const end = rec.at + 32 + rec.bytes;
    writeFileSync(join(verbatim, 'records.twr'), Buffer.concat([b.subarray(0, end), copy, b.subarray(end)]));
    // renumbered and appended: the next seq, header CRC rewritten
    const renumbered = copyCapture(launcherDir);
    const moved = Buffer.from(copy);
    moved.writeBigUInt64LE(chunks.at(-1)!.seq + 1n, 16);
    resealChunk(moved, 0);
    writeFileSync(join(renumbered, 'records.twr'), Buffer.concat([b, moved]));

    for (const dir of [verbatim, renumbered]) {
      const c = await readRecorderDir(dir);
      expect(c.host_events.length).toBe(ref.host_events.length);
      expect(c.dispatches.length).toBe(ref.dispatches.length);
      expect(c.capture.record_count).toBe(ref.capture.record_count);
      expect(new Set(c.host_events.filter((e) => e.kind === 'hip_launch').map((e) => e.submission_id)).size).toBe(ref.host_events.filter((e) => e.kind === 'hip_launch').length);
      const d = c.diagnostics.filter((x) => x.severity !== 'info');
      expect(d.map((x) => x.code)).toEqual(['recorder-duplicate-chunk']);
      expect(d[0]!.message).toContain(`1 chunk(s) repeat an earlier chunk`);
      expect(d[0]!.message).toContain(`their ${rec.count} record(s) read once`);
    }
  });

  it('an empty child records.twr leaves the others readable and is named', async () => {
    const { dir, summary } = capture('fork', ['--parent-launches', '300', '--child-launches', '100']);
    const child = join(dir, `proc-${summary['child_pid']}`, 'records.twr');
    truncateSync(child, 0);
    const c = await readRecorderDir(dir);
    expect(c.processes).toHaveLength(1);
    expect(c.host_events.filter((e) => e.kind === 'hip_launch').length).toBe(summary['parent_launches']);
    const d = c.diagnostics.filter((x) => x.code === 'recorder-empty-process');
    expect(d).toHaveLength(1);
    expect(d[0]!.file).toBe(child);
    expect(d[0]!.message).toContain(`${child} is empty`);
    // every process empty: no capture
    truncateSync(join(dir, 'records.twr'), 0);
    await expect(readRecorderDir(dir)).rejects.toThrow(/empty records\.twr/);
  });
});

