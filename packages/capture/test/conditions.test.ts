/**
 * Host conditions: the environment allowlist (a secret-looking name never
 * gives its value, even under an allowed prefix), command-line redaction,
 * the kernel-log parsers, the sysfs readers on a fake /proc + /sys tree of a
 * Strix Halo machine, and a real process run on this machine, where what
 * this machine does not have is recorded as absent (NULL, note `absent`),
 * never as zero.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { release, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import {
  allowedEnv, countKmsg, currentDpmMhz, isAllowedEnvName, isSecretName, kmsgDriver, kmsgSeverity, parseDmesgRaw, parseKmsgRecord, redactArgv,
  runWithConditions, sampleConditions, storeConditions, type ConditionRow,
} from '@tickwise/capture';

const byKey = (rows: readonly ConditionRow[]) => new Map(rows.map((r) => [r.key, r]));

describe('environment allowlist', () => {
  it('records allowlisted names only; a secret-looking name under an allowed prefix is redacted, never its value', () => {
    const env = {
      HIP_VISIBLE_DEVICES: '0', HSA_OVERRIDE_GFX_VERSION: '11.5.1', GGML_HIP_UMA: '1', OMP_NUM_THREADS: '8', LD_LIBRARY_PATH: '/opt/rocm/lib',
      HIP_API_TOKEN: 'hunter2', XRT_PASSWORD: 'pw', GGML_APIKEY: 'k1', HRX_SECRET: 's', IREE_AUTH_HEADER: 'Bearer x',
      AWS_SECRET_ACCESS_KEY: 'aws-secret', GITHUB_TOKEN: 'ghp', HOME: '/root', PATH: '/usr/bin', OMP_PROC_BINDX: 'no',
      ROCM_PATH: 'https://user:pa55@mirror.example/rocm',
    };
    const got = allowedEnv(env);
    expect(got.map((e) => [e.name, e.value])).toEqual([
      ['GGML_APIKEY', null], ['GGML_HIP_UMA', '1'], ['HIP_API_TOKEN', null], ['HIP_VISIBLE_DEVICES', '0'], ['HRX_SECRET', null],
      ['HSA_OVERRIDE_GFX_VERSION', '11.5.1'], ['IREE_AUTH_HEADER', null], ['LD_LIBRARY_PATH', '/opt/rocm/lib'], ['LD_PRELOAD', null],
      ['OMP_NUM_THREADS', '8'], ['ROCM_PATH', 'https://<redacted>@mirror.example/rocm'], ['XRT_PASSWORD', null],
    ]);
    expect(got.find((e) => e.name === 'HIP_API_TOKEN')!.note).toMatch(/^redacted/);
    expect(got.find((e) => e.name === 'LD_PRELOAD')!.note).toBe('absent: not set');
    const text = JSON.stringify(got);
    for (const secret of ['hunter2', 'aws-secret', 'ghp', 'pa55', 'Bearer', 'k1"', '"pw"', '"s"']) expect(text).not.toContain(secret);
  });

  it('names: prefixes need something after them; secrets by word', () => {
    expect(isAllowedEnvName('HIP_')).toBe(false);
    expect(isAllowedEnvName('HIPX')).toBe(false);
    expect(isAllowedEnvName('CUDA_VISIBLE_DEVICES')).toBe(true);
    expect(isAllowedEnvName('AWS_SECRET_ACCESS_KEY')).toBe(false);
    for (const n of ['HIP_API_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'XRT_KEY', 'GGML_API_KEY', 'HSA_PASSWD', 'IREE_PRIVATE_PATH']) expect(isSecretName(n)).toBe(true);
    for (const n of ['HSA_ENABLE_SDMA', 'HIP_VISIBLE_DEVICES', 'GGML_HIP_UMA', 'HSA_XNACK', 'LD_LIBRARY_PATH', 'XRT_INI_PATH']) expect(isSecretName(n)).toBe(false);
  });

  it('command lines: secret-looking options and NAME=value words are redacted', () => {
    expect(redactArgv(['llama-bench', '-m', 'm.gguf', '--api-key', 'sk-123', '--hf-token=hf_abc', 'HIP_API_TOKEN=hunter2', 'HIP_VISIBLE_DEVICES=0', '-p', '512']))
      .toEqual(['llama-bench', '-m', 'm.gguf', '--api-key', '<redacted>', '--hf-token=<redacted>', 'HIP_API_TOKEN=<redacted>', 'HIP_VISIBLE_DEVICES=0', '-p', '512']);
  });
});

describe('kernel log', () => {
  it('parses /dev/kmsg records and dmesg --raw lines; counts driver lines by severity', () => {
    expect(parseKmsgRecord('3,1234,98765432,-;amdgpu 0000:c5:00.0: amdgpu: ring gfx_0.0.0 timeout\n DEVICE=+pci:0000:c5:00.0')).toEqual({
      level: 3, seq: 1234n, ts_us: 98765432n, message: 'amdgpu 0000:c5:00.0: amdgpu: ring gfx_0.0.0 timeout',
    });
    // facility bits are masked off: prio 12 = facility 1 (user), level 4
    expect(parseKmsgRecord('12,5,1,-;x')!.level).toBe(4);
    expect(parseKmsgRecord('garbage')).toBeNull();
    const recs = parseDmesgRaw('<3>[   12.500000] amdxdna 0000:c6:00.1: aie2_error_worker: firmware error\n<6>[   13.000001] amdgpu: SMU is initialized\n<4>[14.1] usb 1-1: reset\n');
    expect(recs.map((r) => [r.level, r.ts_us])).toEqual([[3, 12_500_000n], [6, 13_000_001n], [4, 14_100_000n]]);
    const c = countKmsg(recs);
    expect(c.counts.amdxdna.error).toBe(1);
    expect(c.counts.amdgpu.info).toBe(1);
    expect(c.first_error.amdxdna).toContain('firmware error');
    expect(kmsgDriver('usb 1-1: reset')).toBeNull();
    expect([0, 3, 4, 5, 6, 7].map(kmsgSeverity)).toEqual(['error', 'error', 'warning', 'notice', 'info', 'debug']);
  });
});

/** A fake /proc + /sys of a Strix Halo machine under load. */
function fakeTree(): string {
  const root = mkdtempSync(join(tmpdir(), 'tickwise-sysfs-'));
  const put = (p: string, text: string) => {
    mkdirSync(dirname(join(root, p)), { recursive: true });
    writeFileSync(join(root, p), text);
  };
  put('proc/loadavg', '14.20 9.10 4.00 3/900 12345\n');
  put('proc/cpuinfo', Array.from({ length: 4 }, (_, i) => `processor\t: ${i}\nmodel name\t: AMD RYZEN AI MAX+ 395 w/ Radeon 8060S\ncpu MHz\t\t: 3000.000\n`).join('\n'));
  put('proc/cmdline', 'BOOT_IMAGE=/vmlinuz amd_iommu=off amdgpu.gttsize=126976 ttm.pages_limit=32505856\n');
  put('sys/class/hwmon/hwmon0/name', 'k10temp\n');
  put('sys/class/hwmon/hwmon0/temp1_input', '85500\n');
  put('sys/class/hwmon/hwmon0/temp1_label', 'Tctl\n');
  put('sys/class/hwmon/hwmon1/name', 'amdgpu\n');
  put('sys/class/hwmon/hwmon1/temp1_input', '71000\n');
  put('sys/class/hwmon/hwmon1/temp1_label', 'edge\n');
  put('sys/class/hwmon/hwmon2/name', 'nvme\n');
  put('sys/class/hwmon/hwmon2/temp1_input', '40000\n');
  put('sys/class/thermal/thermal_zone0/type', 'acpitz\n');
  put('sys/class/thermal/thermal_zone0/temp', '50000\n');
  put('sys/class/drm/card1/device/gpu_busy_percent', '97\n');
  put('sys/class/drm/card1/device/pp_dpm_sclk', '0: 600Mhz\n1: 2900Mhz *\n');
  put('sys/class/drm/card1/device/pp_dpm_mclk', '0: 1000Mhz *\n');
  put('sys/class/drm/card1/device/vendor', '0x1002\n');
  put('sys/class/drm/card1/device/device', '0x1586\n');
  put('sys/class/drm/card1/device/vbios_version', '113-STRXLGEN-001\n');
  put('sys/class/drm/card1/device/fw_version/smc_fw_version', '0x04674d00\n');
  put('sys/class/drm/card1-eDP-1/status', 'connected\n');
  put('sys/module/amdgpu/srcversion', 'ABCDEF0123456789\n');
  put('sys/module/amdxdna/version', '0.6.0\n');
  put('sys/class/accel/accel0/device/fw_version', '1.5.4.389\n');
  put('sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq', '4000000\n');
  put('sys/devices/system/cpu/cpu1/cpufreq/scaling_cur_freq', '2000000\n');
  return root;
}

describe('sysfs readers (a fake tree)', () => {
  it('reads load, temperatures by class, GPU busy and DPM clocks, module versions and firmware', async () => {
    const rows = byKey(await sampleConditions({ durationMs: 30, sampleIntervalMs: 10, root: fakeTree(), kernelLog: false, env: {}, argv: null }));
    const v = (k: string) => rows.get(k)?.value;
    expect([v('load.1m.start'), v('load.1m.peak'), v('load.5m.start'), v('load.15m.end')]).toEqual(['14.2', '14.2', '9.1', '4']);
    expect([v('cpu.count'), v('cpu.model')]).toEqual(['4', 'AMD RYZEN AI MAX+ 395 w/ Radeon 8060S']);
    expect(rows.get('temp.cpu.peak')).toEqual({ key: 'temp.cpu.peak', value: '85.5', unit: 'C', note: expect.stringContaining('hwmon0/temp1_input') });
    expect(v('temp.gpu.start')).toBe('71');
    expect(v('temp.sensor.other.nvme.temp1.peak')).toBe('40');
    expect(v('temp.sensor.other.acpitz.thermal_zone0.peak')).toBe('50');
    expect(rows.get('temp.npu.peak')).toMatchObject({ value: null, note: expect.stringMatching(/^absent: no NPU temperature sensor/) });
    expect([v('clock.gpu.sclk_mhz.start'), v('clock.gpu.sclk_mhz.peak'), v('clock.gpu.mclk_mhz.start'), v('gpu.busy_percent.peak'), v('gpu.busy_percent.mean')])
      .toEqual(['2900', '2900', '1000', '97', '97']);
    expect(v('clock.cpu.mhz.start')).toBe('3000');
    expect(v('gpu.card1.device')).toBe('1002:1586 no driver');
    expect([v('driver.amdgpu.loaded'), v('driver.amdgpu.version'), v('driver.amdxdna.version')]).toEqual(['yes', 'ABCDEF0123456789', '0.6.0']);
    expect([v('firmware.gpu.card1.vbios'), v('firmware.gpu.card1.smc'), v('firmware.npu.accel0')]).toEqual(['113-STRXLGEN-001', '0x04674d00', '1.5.4.389']);
    expect(v('kernel.cmdline')).toContain('amdgpu.gttsize=126976');
    expect(rows.get('kmsg.source')).toMatchObject({ value: null, note: 'absent: kernel log not read (turned off)' });
    expect(rows.get('command.line')).toMatchObject({ value: null, note: expect.stringMatching(/^absent/) });
    expect(currentDpmMhz('0: 400Mhz\n1: 1.2Ghz *\n')).toBe(1200);
  });

  it('an empty tree: everything absent, nothing zero', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tickwise-sysfs-empty-'));
    const rows = await sampleConditions({ durationMs: 0, root, kernelLog: false, env: {} });
    for (const r of rows) {
      if (/^(load|temp|clock|gpu\.busy|driver\.\w+\.version|firmware|cpu)\./.test(r.key) || r.key === 'firmware.gpu' || r.key === 'firmware.npu') {
        expect(r, r.key).toMatchObject({ value: null, note: expect.stringMatching(/^absent/) });
      }
    }
    expect(byKey(rows).get('driver.amdgpu.loaded')!.value).toBe('no');
  });
});

describe('a real process on this machine', () => {
  it('runWithConditions: samples while it runs; the command and the allowlisted env are recorded, secrets are not; absent is not zero', async () => {
    const env = { PATH: process.env['PATH'] ?? '/usr/bin:/bin', HIP_VISIBLE_DEVICES: '0', HIP_API_TOKEN: 'hunter2', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI' };
    const r = await runWithConditions(['sh', '-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3', '--token', 'tok-999'], { env, sampleIntervalMs: 50, stdio: 'ignore' });
    expect(r.exit_code).toBe(3);
    const rows = byKey(r.conditions);
    expect(rows.get('command.line')!.value).toMatch(/^sh -c '.*exit 3' --token '<redacted>'$/);
    expect(rows.get('command.exit_code')!.value).toBe('3');
    expect(rows.get('env.HIP_VISIBLE_DEVICES')!.value).toBe('0');
    expect(rows.get('env.HIP_API_TOKEN')).toMatchObject({ value: null, note: expect.stringMatching(/^redacted/) });
    expect(rows.has('env.AWS_SECRET_ACCESS_KEY')).toBe(false);
    expect(rows.has('env.PATH')).toBe(false);
    expect(JSON.stringify(r.conditions)).not.toMatch(/hunter2|wJalrXUtnFEMI|tok-999/);
    expect(rows.get('kernel.release')!.value).toBe(release());
    expect(Number(rows.get('sample.count')!.value)).toBeGreaterThanOrEqual(2);
    // load average is always readable on Linux
    expect(Number(rows.get('load.1m.peak')!.value)).toBeGreaterThanOrEqual(0);
    expect(rows.get('load.1m.peak')!.note).not.toMatch(/^absent/);
    // what this machine lacks is absent, never '0'
    const hasHwmon = existsSync('/sys/class/hwmon') && existsSync('/sys/class/hwmon/hwmon0');
    const hasAmdgpu = existsSync('/sys/module/amdgpu');
    if (!hasHwmon) expect(rows.get('temp.cpu.peak')).toMatchObject({ value: null, note: expect.stringMatching(/^absent/) });
    if (!hasAmdgpu) {
      expect(rows.get('driver.amdgpu.version')).toMatchObject({ value: null, note: 'absent: module amdgpu not loaded' });
      expect(rows.get('clock.gpu.sclk_mhz.peak')).toMatchObject({ value: null, note: expect.stringMatching(/^absent/) });
      expect(rows.get('gpu.busy_percent.mean')).toMatchObject({ value: null, note: expect.stringMatching(/^absent/) });
    }
    for (const row of r.conditions) {
      if (row.value === null) expect(row.note, row.key).toMatch(/^(absent|redacted)/);
    }
    // the kernel log: counted where readable, else absent with the reason
    const kmsg = rows.get('kmsg.source')!;
    if (kmsg.value === null) {
      expect(kmsg.note).toMatch(/^absent: kernel log not readable/);
      expect(rows.get('kmsg.amdgpu.error')!.value).toBeNull();
    } else {
      expect(['/dev/kmsg', 'dmesg --raw']).toContain(kmsg.value);
      expect(rows.get('kmsg.amdgpu.error')!.value).toMatch(/^\d+$/);
    }
  });

  it('storeConditions writes the rows to a capture', async () => {
    const s = await Store.open(':memory:');
    const rows = await sampleConditions({ durationMs: 0, kernelLog: false, env: {} });
    expect(await storeConditions(s, 7, rows)).toBe(rows.length);
    expect(await s.scalar(`SELECT count(*) FROM conditions WHERE capture_id = 7 AND key = 'load.1m.start' AND unit = 'load'`)).toBe(1n);
    await s.close();
  });
});
