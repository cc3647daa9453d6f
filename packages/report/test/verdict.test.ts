import { describe, expect, it } from 'vitest';
import { ceiling, constantCost } from '@tickwise/ceiling';
import type { IdleBreakdown } from '@tickwise/analyzer';
import { ceilingVerdict, deviceVerdict, reportVerdict, type ReportDevice } from '../src/index';

/** The verdict's rules (issue 18.2) on devices and ceilings made to sit on each side of each threshold. */
const device = (over: Partial<ReportDevice>): ReportDevice => ({
  capture_id: 1, device: 0, kind: 'gpu', label: 'iGPU · x (capture 1, device 0)', row_label: 'iGPU · device 0', group: 0,
  clock_domain: 'host_monotonic', time_source: 'device_tick_fit', dispatches: 100, span_ns: 1_000_000n, busy_ns: 90_000n, idle_ns: 910_000n,
  idle_fraction: 0.91, sum_dur_ns: 90_000n, gap_count: 99, max_gap_ns: 20_000n, gaps_over_threshold: 0, idle_over_threshold_ns: 0n,
  between_submissions: { count: 0, idle_ns: 0n }, within_submission: { count: 0, idle_ns: 0n }, cross_submission_inflight_ns: null,
  segments: [], steady_choice: 'all', coverage: 'one segment', ...over,
});
const cls = (idle_ns: bigint) => ({ gaps: 1, idle_ns, interval_ns: idle_ns });
const breakdown = (host: bigint, other: bigint): IdleBreakdown => ({
  host_wait: cls(host), kernel_wait: cls(0n), other: cls(other), linked: 10, rows: 10, kernel_wait_threshold_ns: 50_000n,
  hta: { host_wait: cls(host), kernel_wait: cls(0n), other: cls(other) }, driver_linked: 0,
} as unknown as IdleBreakdown);

describe('the verdict', () => {
  it('idle 91 %, 99 % of it host wait: launch-bound; see launches', () => {
    expect(deviceVerdict(device({}), breakdown(990n, 10n), '')).toBe('GPU idle 91 % (one segment), 99 % of it host wait (launched late): launch-bound; see launches (tickwise launches)');
  });

  it('idle 91 %, little of it host wait: the idle is inside the work', () => {
    expect(deviceVerdict(device({}), breakdown(100n, 900n), '')).toMatch(/: the idle is inside the work \(dependencies, syncs\); see gaps$/);
  });

  it('idle 30 %, mostly host wait: partly launch-bound; idle 5 %: device-bound', () => {
    expect(deviceVerdict(device({ idle_fraction: 0.3 }), breakdown(900n, 100n), '')).toMatch(/: partly launch-bound; see launches and gaps$/);
    expect(deviceVerdict(device({ idle_fraction: 0.05 }), breakdown(100n, 900n), '')).toMatch(/^GPU idle 5 % \(one segment\), 10 % of it host wait \(launched late\): device-bound; see kernels$/);
  });

  it('no launch correlation: the idle between submissions is the host wait', () => {
    const d = device({ between_submissions: { count: 50, idle_ns: 800_000n }, within_submission: { count: 49, idle_ns: 110_000n } });
    expect(deviceVerdict(d, null, 'capture 1: ')).toBe('capture 1: GPU idle 91 % (one segment), 88 % of it waiting for the host (between submissions): launch-bound; see launches (tickwise launches)');
  });

  const result = (gpuGroupMs: number, npuTileMs: number) => ({
    kind: 'result' as const, inputs: [],
    result: ceiling({ rows: 8192, group_rows: 256, gpu: constantCost(gpuGroupMs, { what: 'iGPU cost' }), npu: constantCost(npuTileMs, { what: 'NPU cost' }), target_speedup: 1.15 }),
  });

  it('split ceiling below 1.05x: not worth a dispatcher; at the target: worth one; between: the tile it needs', () => {
    expect(ceilingVerdict(result(0.4, 12))).toMatch(/^split ceiling 1\.0\d+x \(iGPU only [\d.]+ ms, split [\d.]+ ms\): not worth a dispatcher$/);
    expect(ceilingVerdict(result(0.4, 0.5))).toMatch(/^split ceiling \d\.\d+x: meets the 1\.150?x target; worth a dispatcher; see Split ceiling$/);
    expect(ceilingVerdict(result(0.4, 4))).toMatch(/^split ceiling 1\.\d+x: below the 1\.150?x target; NPU tile <= /);
    expect(ceilingVerdict({ kind: 'off' })).toBeNull();
  });

  it('errors first; at most two timelines named, the rest counted', () => {
    const devs = [0, 1, 2].map((g) => device({ capture_id: g + 1, group: g, label: `d${g}` }));
    const lines = reportVerdict(devs, new Map(), { kind: 'off' }, [{ code: 'wall-clock-mismatch', severity: 'error', capture_id: 1, message: '', advice: '' }]);
    expect(lines[0]).toBe('1 check error: numbers below may be wrong; see Check findings');
    expect(lines.slice(1, 3).map((l) => l.slice(0, 10))).toEqual(['capture 1:', 'capture 2:']);
    expect(lines[3]).toBe('(1 more capture: see Devices)');
  });
});
