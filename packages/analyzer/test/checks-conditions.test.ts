/**
 * The condition checks (busy-machine, driver-errors, thermal,
 * conditions-differ) and `compareConditions`, on condition rows written as
 * the host sampler writes them (keys of @tickwise/store's vocabulary,
 * absent values as NULL with an `absent` note). The sampler itself is
 * tested in the capture package, on this machine.
 */
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { compareConditions, runChecks, type CheckCode } from '@tickwise/analyzer';

type Cond = readonly [key: string, value: string | null, note?: string];

/** A host-sampled condition set of a quiet, cool machine with a readable kernel log and nothing logged. */
const QUIET: readonly Cond[] = [
  ['conditions.source', 'host'], ['window.start_unix_ms', '1000'], ['host.hostname', 'strix'], ['cpu.count', '32'],
  ['load.1m.start', '0.8'], ['load.1m.end', '1.1'], ['load.1m.peak', '1.4'],
  ['temp.cpu.peak', '61.5'], ['temp.gpu.peak', '58'], ['temp.npu.peak', null, 'absent: no NPU temperature sensor'],
  ['clock.gpu.sclk_mhz.peak', '2900'], ['driver.amdgpu.version', null, 'absent: built in'], ['driver.amdxdna.version', '0.6'],
  ['kmsg.source', '/dev/kmsg'], ['kmsg.amdgpu.error', '0'], ['kmsg.amdgpu.warning', '0'], ['kmsg.amdxdna.error', '0'],
  ['env.HIP_VISIBLE_DEVICES', '0'], ['env.LD_LIBRARY_PATH', null, 'absent: not set'], ['env.HIP_API_TOKEN', null, 'redacted: the name looks like a secret'],
];

function withChanges(base: readonly Cond[], changes: Record<string, Cond[1] | [Cond[1], string]>): Cond[] {
  const out = base.map((c): Cond => {
    if (!(c[0] in changes)) return c;
    const v = changes[c[0]];
    return Array.isArray(v) ? [c[0], v[0], v[1]] : [c[0], v ?? null];
  });
  for (const [k, v] of Object.entries(changes)) if (!base.some((c) => c[0] === k)) out.push(Array.isArray(v) ? [k, v[0], v[1]] : [k, v ?? null]);
  return out;
}

async function storeWith(captures: readonly (readonly Cond[] | null)[]): Promise<Store> {
  const s = await Store.open(':memory:');
  for (let i = 0; i < captures.length; i++) {
    await s.run(`INSERT INTO captures (capture_id, path, format, timeline) VALUES ($1, $2, 'test', 'host_monotonic')`, [i + 1, `c${i + 1}`]);
    for (const [k, v, note] of captures[i] ?? []) {
      const unit = k.startsWith('temp.') ? 'C' : k.startsWith('load.') ? 'load' : null;
      await s.run(`INSERT INTO conditions VALUES ($1, $2, $3, $4, $5)`, [i + 1, k, v, unit, note ?? null]);
    }
  }
  return s;
}

const CODES: CheckCode[] = ['busy-machine', 'driver-errors', 'thermal', 'conditions-differ'];

describe('condition checks', () => {
  it('a quiet, cool machine with nothing in the kernel log: no finding; a capture without conditions: none either', async () => {
    const s = await storeWith([QUIET, null]);
    expect(await runChecks(s, { codes: CODES })).toEqual([]);
    await s.close();
  });

  it('busy-machine: the 1-minute load peaked above 10 (a warning with the numbers); the threshold can be moved', async () => {
    const s = await storeWith([withChanges(QUIET, { 'load.1m.peak': '14.2', 'load.1m.end': '12' })]);
    const f = await runChecks(s, { codes: ['busy-machine'] });
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ code: 'busy-machine', severity: 'warning', capture_id: 1, load_1m_peak: 14.2, load_1m_start: 0.8, load_1m_end: 12, cpu_count: 32, busy_load_max: 10 });
    expect(f[0]!.message).toContain('reached 14.2');
    expect(await runChecks(s, { codes: ['busy-machine'], thresholds: { busy_load_max: 20 } })).toEqual([]);
    await s.close();
  });

  it('driver-errors: amdgpu error lines in the window are an error quoting the first line; an unreadable log is an info, not a pass', async () => {
    const s = await storeWith([
      withChanges(QUIET, { 'kmsg.amdgpu.error': ['2', 'amdgpu 0000:c5:00.0: amdgpu: ring gfx_0.0.0 timeout, signaled seq=1234'] }),
      withChanges(QUIET, { 'kmsg.source': [null, 'absent: kernel log not readable: /dev/kmsg: EPERM; dmesg: Operation not permitted'], 'kmsg.amdgpu.error': [null, 'absent: kernel log not readable'] }),
    ]);
    const f = await runChecks(s, { codes: ['driver-errors'] });
    expect(f.map((x) => [x.capture_id, x.severity])).toEqual([[1, 'error'], [2, 'info']]);
    expect(f[0]).toMatchObject({ error_lines: 2, amdgpu_error_lines: 2, amdxdna_error_lines: 0 });
    expect(f[0]!.message).toContain('ring gfx_0.0.0 timeout');
    expect(f[1]!.message).toContain('EPERM');
    await s.close();
  });

  it('thermal: a GPU peak above 95 C is a warning; an absent NPU sensor is not a temperature', async () => {
    const s = await storeWith([withChanges(QUIET, { 'temp.gpu.peak': ['101', 'hottest sensor, e.g. /sys/class/hwmon/hwmon3/temp2_input'] })]);
    const f = await runChecks(s, { codes: ['thermal'] });
    expect(f).toHaveLength(1);
    expect(f[0]).toMatchObject({ code: 'thermal', severity: 'warning', key: 'temp.gpu.peak', celsius: 101, thermal_max_c: 95 });
    expect(f[0]!.message).toContain('/sys/class/hwmon/hwmon3/temp2_input');
    await s.close();
  });

  it('conditions-differ: another environment or driver is a warning; load within tolerance is nothing, beyond it an info', async () => {
    const s = await storeWith([
      QUIET,
      withChanges(QUIET, { 'load.1m.peak': '2.9', 'window.start_unix_ms': '99999' }),
      withChanges(QUIET, { 'env.HIP_VISIBLE_DEVICES': '1', 'driver.amdxdna.version': '0.7' }),
      withChanges(QUIET, { 'load.1m.peak': '6.5' }),
    ]);
    const f = await runChecks(s, { codes: ['conditions-differ'] });
    expect(f.map((x) => [x.capture_id, x.severity, x['exact_differences'], x['measured_differences']])).toEqual([[3, 'warning', 2, 0], [4, 'info', 0, 1]]);
    expect(f[0]!.message).toBe('capture 3 ran under other conditions than capture 1: set up differently (driver.amdxdna.version, env.HIP_VISIBLE_DEVICES)');
    await s.close();
  });
});

describe('compareConditions', () => {
  const rows = (cs: readonly Cond[]) => cs.map(([key, value, note]) => ({ capture_id: 1, key, value, unit: null, note: note ?? null }));

  it('a condition set against itself: nothing', () => {
    expect(compareConditions(rows(QUIET), rows(QUIET))).toEqual([]);
  });

  it('absent is not zero: a sensor missing on one side and reading 0 on the other differs', () => {
    const d = compareConditions(rows(QUIET), rows(withChanges(QUIET, { 'temp.npu.peak': '0' })));
    expect(d).toEqual([expect.objectContaining({ key: 'temp.npu.peak', class: 'measured', a: null, b: '0', a_note: 'absent: no NPU temperature sensor' })]);
  });

  it('redacted on both sides is the same; a variable set on one side only differs; context keys never do', () => {
    const d = compareConditions(rows(QUIET), rows(withChanges(QUIET, { 'env.HIP_FORCE_DEV_KERNARG': '1', 'window.start_unix_ms': '5', 'sample.count': '9' })));
    expect(d.map((x) => [x.key, x.a, x.b, x.in_both])).toEqual([['env.HIP_FORCE_DEV_KERNARG', null, '1', false]]);
  });

  it('keys one side lacks count only when both sides were sampled on a host', () => {
    const source = [['command', 'llama-bench -p 512'], ['pid', '42']] as const;
    expect(compareConditions(rows(source), rows(QUIET))).toEqual([]);
    expect(compareConditions(rows(source), rows([['command', 'llama-bench -p 2048']]))).toEqual([expect.objectContaining({ key: 'command', class: 'exact' })]);
  });
});
