/**
 * Real Kineto traces (../shared/fixtures/external/chrome-trace/): gaps'
 * idle-by-launch breakdown against HTA's idle-time breakdown on the same
 * files. There is no Python HTA in the dev setup, so the expected numbers
 * come from `hta-reference.ts`, an independent implementation of HTA's
 * published algorithm that reads the JSON text itself (exact decimals: HTA
 * with HTA_DISABLE_NS_ROUNDING=1, the last profiler step included). Each
 * trace's expected numbers are also written below (printed by that
 * implementation: `htaIdleBreakdown(readTraceEvents(file))`, runtime calls
 * only as HTA links them; `{ driverLaunches: true }` for the variant that
 * links cuLaunchKernelEx too), so a change in the reference shows as well.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, tickwise } from './goldens';
import { htaIdleBreakdown, readTraceEvents } from './hta-reference';

const DIR = resolve(ROOT, '../shared/fixtures/external/chrome-trace');
const HAVE = existsSync(join(DIR, 'truth.json'));
if (!HAVE) console.warn(`real-trace tests skipped: ${DIR} is absent`);

type Cls = { idle_ns: number; interval_ns: number; gaps: number };
type Bd = { host_wait: Cls; kernel_wait: Cls; other: Cls; hta: { host_wait: Cls; kernel_wait: Cls; other: Cls }; driver_linked: number };
interface GapsJson { work: string; work_default: string; scopes: { queue: number | null; idle_ns: number; has_submissions: boolean; idle_breakdown: Bd | null }[] }

/** Per stream: [host wait, kernel wait, other] ns, HTA (runtime links) -- from hta-reference.ts on the file. */
const EXPECTED: Record<string, Record<number, [number, number, number]>> = {
  'hta_trace_diff_control.json.gz': { 7: [133311000, 0, 49903000], 20: [424456000, 0, 10423000], 21: [285806000, 0, 78000], 22: [340772000, 0, 1515000] },
  'hta_nccl_data.json.gz': { 7: [540091317, 0, 2150343], 40: [583924256, 0, 0] },
  'tracelens_mi300_owlv2.json.gz': { 0: [576268147, 1288, 249496] },
  // 221 kernels launched by cuLaunchKernelEx / cuLaunchKernel: HTA misses them (host wait 40.9 ms); linked, host wait is 72.5 ms
  'tracelens_b200_eager_trace.json.gz': { 7: [40876395, -69278, 32014301] },
};
const B200_WITH_DRIVER: [number, number, number] = [72470093, -69278, 420603];

const within = (got: number, want: number) => Math.abs(got - want) <= Math.max(1, Math.abs(want) * 0.001);

describe.skipIf(!HAVE)('idle by launch = HTA idle-time breakdown (real Kineto traces, --work all)', () => {
  for (const [file, streams] of Object.entries(EXPECTED)) {
    it(file, () => {
      const path = join(DIR, file);
      const ref = htaIdleBreakdown(readTraceEvents(path));
      for (const [s, want] of Object.entries(streams)) {
        const r = ref.get(Number(s))!;
        expect([Number(r.host_wait_ns), Number(r.kernel_wait_ns), Number(r.other_ns)], `reference, stream ${s}`).toEqual(want);
      }
      const out = tickwise(['gaps', path, '--work', 'all', '--json'], ROOT);
      expect(out.status, out.stderr).toBe(0);
      const g = JSON.parse(out.stdout) as GapsJson;
      expect(g.work).toBe('all');
      for (const [s, [h, k, o]] of Object.entries(streams)) {
        const bd = g.scopes.find((x) => x.queue === Number(s))!.idle_breakdown!;
        expect(within(bd.hta.host_wait.interval_ns, h), `stream ${s} host wait ${bd.hta.host_wait.interval_ns} vs HTA ${h}`).toBe(true);
        expect(within(bd.hta.kernel_wait.interval_ns, k), `stream ${s} kernel wait`).toBe(true);
        expect(within(bd.hta.other.interval_ns, o), `stream ${s} other`).toBe(true);
      }
      for (const sc of g.scopes) expect(sc.has_submissions).toBe(false);
    });
  }

  it('tracelens_b200_eager_trace: cuLaunchKernelEx launches are linked (host wait 72.5 ms, not HTA\'s 40.9 ms)', () => {
    const path = join(DIR, 'tracelens_b200_eager_trace.json.gz');
    const r = htaIdleBreakdown(readTraceEvents(path), { driverLaunches: true }).get(7)!;
    expect([Number(r.host_wait_ns), Number(r.kernel_wait_ns), Number(r.other_ns)]).toEqual(B200_WITH_DRIVER);
    const g = JSON.parse(tickwise(['gaps', path, '--work', 'all', '--json'], ROOT).stdout) as GapsJson;
    const bd = g.scopes.find((x) => x.queue === 7)!.idle_breakdown!;
    expect([bd.host_wait.interval_ns, bd.kernel_wait.interval_ns, bd.other.interval_ns]).toEqual(B200_WITH_DRIVER);
    expect(bd.driver_linked).toBe(221);
  });

  it('gaps states its work set; no "between submissions" on a trace without submissions', () => {
    const out = tickwise(['gaps', join(DIR, 'hta_trace_diff_control.json.gz')], ROOT);
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/work: kernels \(the default\)/);
    expect(out.stdout).toMatch(/882 copies\/memsets/);
    expect(out.stdout).not.toMatch(/between subs/);
  });
});

describe.skipIf(!HAVE)('devices of one capture compare (issue 15.5)', () => {
  it('hpctraining_tracefusion_merged_nccl_only: overlap of a TraceLens merge of 4 GPUs (one file, one clock); busy = truth.json per device', async () => {
    const { readFileSync } = await import('node:fs');
    const truth = (JSON.parse(readFileSync(join(DIR, 'truth.json'), 'utf8')) as { file: string; per_device_pid: Record<string, { busy_union_ns: number }> }[])
      .find((t) => t.file === 'hpctraining_tracefusion_merged_nccl_only.json.gz')!;
    const out = tickwise(['overlap', join(DIR, 'hpctraining_tracefusion_merged_nccl_only.json.gz'), '--json'], ROOT);
    expect(out.status, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as { devices: { busy_ns: number }[]; device_pairs: { overlap_ns: number }[] };
    const want = Object.values(truth.per_device_pid).map((d) => d.busy_union_ns).sort((a, b) => a - b);
    expect(r.devices.map((d) => d.busy_ns).sort((a, b) => a - b)).toEqual(want);
    expect(r.device_pairs).toHaveLength(6);
    for (const p of r.device_pairs) expect(p.overlap_ns).toBeGreaterThan(0);
  });
});

describe.skipIf(!HAVE)('launches on Kineto data (issue 15.3)', () => {
  it('tracelens_b200_eager_trace: every kernel linked (cuLaunchKernelEx included), GPU 87 % idle, launch-bound', () => {
    const out = tickwise(['launches', join(DIR, 'tracelens_b200_eager_trace.json.gz'), '--json'], ROOT);
    expect(out.status, out.stderr).toBe(0);
    const r = JSON.parse(out.stdout) as { launch_correlation: { kernels: number; linked: number; apis: { api: string; launches: number }[]; verdict: string; idle_fraction: number; max_queue_depth: number; delay: { min_ns: number; negative: number } }[]; submit_latency: { note: string | null }[] };
    const c = r.launch_correlation[0]!;
    // truth.json: 768 kernels on the device
    expect(c.kernels).toBe(768);
    expect(c.linked).toBe(768);
    expect(Object.fromEntries(c.apis.map((a) => [a.api, a.launches]))).toEqual({ cudaLaunchKernel: 367, cuLaunchKernelEx: 220, cudaLaunchKernelExC: 180, cuLaunchKernel: 1 });
    // idle = span - busy union of truth.json: 1 - 10793638 / 83365710
    expect(c.idle_fraction).toBeCloseTo(1 - 10793638 / 83365710, 9);
    expect(c.verdict).toBe('launch-bound');
    expect(c.delay.negative).toBe(0);
    expect(c.max_queue_depth).toBeGreaterThanOrEqual(1);
    expect(r.submit_latency[0]!.note).not.toMatch(/no host submit times/);
  });
});

describe.skipIf(!HAVE)('segments on Kineto data (issue 15.4)', () => {
  it('hta_trace_diff_control: 6 profiler steps (ProfilerStep#N) = 6 segments of 1428 kernels (8568 in truth.json); stream syncs refused with a reason; check agrees', () => {
    const path = join(DIR, 'hta_trace_diff_control.json.gz');
    const out = tickwise(['segments', path, '--json'], ROOT);
    expect(out.status, out.stderr).toBe(0);
    const d = (JSON.parse(out.stdout) as { devices: { method: string; period_dispatches: number; summary: { count: number }; refused: { method: string; reason: string }[] }[] }).devices[0]!;
    expect(d.method).toBe('profiler_steps');
    expect(d.summary.count).toBe(6);
    expect(d.period_dispatches * 6).toBe(8568);
    const chk = tickwise(['check', path, '--json'], ROOT);
    const findings = (JSON.parse(chk.stdout) as { findings: { code: string; segments?: number }[] }).findings.filter((f) => f.code === 'cold-first-pass');
    for (const f of findings) expect(f.segments).toBe(6);
  });
});
