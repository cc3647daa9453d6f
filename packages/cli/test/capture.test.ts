import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';

// `tickwise capture` end to end: the real recorder preloaded into real
// programs that drive the fake HIP runtime and the fake amdxdna device
// (native/), then import, overlap and gaps on the capture directory.
const ROOT = resolve(import.meta.dirname, '../../..');
const BUILD = join(ROOT, 'native/build');
const HAVE_CMAKE = spawnSync('cmake', ['--version']).status === 0;
if (!HAVE_CMAKE) console.warn('capture CLI tests skipped: cmake not found (the native recorder cannot be built)');
const tw = (args: string[]) => spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT });

describe.skipIf(!HAVE_CMAKE)('tickwise capture (recorder under fake drivers)', () => {
  beforeAll(() => {
    if (existsSync(join(BUILD, 'bin/tw_app_npu')) && existsSync(join(BUILD, 'lib/libtickwise_recorder.so'))) return;
    const cfg = spawnSync('cmake', ['-S', join(ROOT, 'native'), '-B', BUILD, '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], { encoding: 'utf8' });
    if (cfg.status !== 0) throw new Error(cfg.stderr);
    const b = spawnSync('cmake', ['--build', BUILD, '-j', '2'], { encoding: 'utf8' });
    if (b.status !== 0) throw new Error(b.stdout + b.stderr);
  });

  it('records an iGPU and an NPU program together; import puts both on one host timeline', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tickwise-capture-'));
    const out = join(dir, 'run');
    const db = join(dir, 'run.duckdb');
    const gpuSummary = join(dir, 'gpu.json');
    const npuSummary = join(dir, 'npu.json');
    // Both devices busy at once by construction, not by two programs' timing: the
    // NPU program's first command creates npu-busy when submitted and is held until
    // gpu-idle exists; the GPU program's kernels start only once npu-busy exists, and
    // it writes gpu-idle at exit after its last kernel ended. So every kernel lies
    // inside that NPU command's span (submission to the wait that saw it complete).
    const busy = join(dir, 'npu-busy');
    const idle = join(dir, 'gpu-idle');
    const KERNEL_NS = 20000; // each fake kernel's duration (TICKWISE_FAKE_HIP_KERNEL_NS)
    const gpuEnv = `TICKWISE_FAKE_HIP_KERNEL_NS=${KERNEL_NS} TICKWISE_FAKE_HIP_START_FILE=${busy} TICKWISE_FAKE_HIP_IDLE_FILE=${idle}`;
    const npuEnv = `TICKWISE_FAKE_XDNA_STARTED_FILE=${busy} TICKWISE_FAKE_XDNA_HOLD_FILE=${idle}`;
    // one launching thread, so one stream whose kernels run back to back, never two at once
    const script = `${gpuEnv} ${BUILD}/bin/tw_app_launcher --threads 1 --launches 300 --out ${gpuSummary} & ${npuEnv} ${BUILD}/bin/tw_app_npu --cmds 40 --out ${npuSummary}; wait`;
    const r = tw(['capture', '--backend', 'hip,amdxdna', '--out', out, '--db', db, '--marker', 'amdxdna',
      '--preload-after', join(BUILD, 'fakes/libtickwise_fake_amdxdna.so'), '--', 'sh', '-c', script]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/imported as capture 1/);
    const gpu = JSON.parse(readFileSync(gpuSummary, 'utf8')) as { kernels: number; launch_calls: number };
    const npu = JSON.parse(readFileSync(npuSummary, 'utf8')) as { exec: number };
    const q = tw(['sql', db, 'select device, count(*) as n from dispatches group by 1 order by 1', '--format', 'json']);
    const rows = JSON.parse(q.stdout) as { device: number; n: number }[];
    // every kernel of the HIP program and every NPU command became a dispatch
    expect(rows).toEqual([{ device: 0, n: gpu.kernels }, { device: 100, n: npu.exec }]);
    const ov = JSON.parse(tw(['overlap', db, '--json']).stdout) as {
      devices: { device: number; busy_ns: number }[]; device_pairs: { overlap_ns: number }[];
    };
    // The GPU was busy exactly kernels x 20 us (one stream: its kernels never overlap each
    // other), all of it inside the held NPU command: the overlap is the GPU's whole busy time.
    const gpuBusy_ns = gpu.kernels * KERNEL_NS;
    // the construction held: one NPU command was in flight from before the first kernel to after the last
    const held = tw(['sql', db, 'select count(*) as n from dispatches n where n.device = 100 and n.valid and ' +
      'n.start_ns <= (select min(start_ns) from dispatches where device = 0) and ' +
      'n.end_ns >= (select max(end_ns) from dispatches where device = 0)', '--format', 'json']);
    expect(held.status, held.stderr).toBe(0);
    expect(JSON.parse(held.stdout)).toEqual([{ n: 1 }]);
    expect(ov.devices.find((d) => d.device === 0)?.busy_ns).toBe(gpuBusy_ns);
    expect(ov.device_pairs.length).toBe(1);
    expect(ov.device_pairs[0]!.overlap_ns).toBe(gpuBusy_ns);
    const g = tw(['gaps', db, '--min-gap', '100us', '--json']);
    expect(g.status, g.stderr).toBe(0);
    const cond = JSON.parse(tw(['sql', db, "select count(*) as n from conditions where key like 'load%'", '--format', 'json']).stdout) as { n: number }[];
    expect(cond[0]!.n).toBeGreaterThan(0);
  });

  it('refuses a program-less call and a non-empty --out', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tickwise-capture-'));
    const none = tw(['capture', '--out', join(dir, 'x')]);
    expect(none.status).toBe(2);
    expect(none.stderr).toMatch(/name the program after --/);
    writeFileSync(join(dir, 'keep.txt'), 'x');
    const full = tw(['capture', '--out', dir, '--', 'true']);
    expect(full.status).toBe(2);
    expect(full.stderr).toMatch(/not empty/);
  });
});
