/**
 * Readers of the machine's state from procfs and sysfs: load average, CPU
 * count and clock, temperatures (hwmon, thermal zones), AMD GPU busy share
 * and DPM clocks (`/sys/class/drm/card*\/device`), driver module versions
 * and firmware versions. Each returns null (or an empty list) for what this
 * machine does not have: the caller records that as absent, never as zero.
 * Every path is under `root` (default `/`), so tests can point it at a fake
 * tree.
 */
import { existsSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { basename, join } from 'node:path';

/** The class of processor a sensor or clock belongs to. */
export const SensorClass = { cpu: 'cpu', gpu: 'gpu', npu: 'npu', other: 'other' } as const;
/** Key of {@link SensorClass}. */
export type SensorClass = keyof typeof SensorClass;

/** hwmon chip names and thermal-zone types, by class. */
const CLASS_OF_CHIP: readonly (readonly [RegExp, SensorClass])[] = [
  [/^(k10temp|coretemp|zenpower|cpu_thermal|x86_pkg_temp|acpi_cpu|cpu-thermal|soc_thermal)$/i, 'cpu'],
  [/^(amdgpu|radeon|nouveau|i915|xe)$/i, 'gpu'],
  [/^(amdxdna|amdipu|xdna)$/i, 'npu'],
];

/** The class of a hwmon chip name or thermal-zone type. */
export function sensorClass(chip: string): SensorClass {
  for (const [re, c] of CLASS_OF_CHIP) if (re.test(chip)) return c;
  return 'other';
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return null;
  }
}

function list(dir: string): string[] {
  try {
    return readdirSync(dir).sort((a, b) => a.localeCompare(b, 'en', { numeric: true }));
  } catch {
    return [];
  }
}

/** `/proc/loadavg`: 1, 5 and 15 minute load averages. */
export function readLoadAverage(root = '/'): { m1: number; m5: number; m15: number } | null {
  const t = read(join(root, 'proc/loadavg'));
  if (t === null) return null;
  const [a, b, c] = t.split(/\s+/).map(Number);
  if (![a, b, c].every((x) => x !== undefined && Number.isFinite(x))) return null;
  return { m1: a!, m5: b!, m15: c! };
}

/** CPU count (online processors in /proc/cpuinfo) and model name. */
export function readCpuInfo(root = '/'): { count: number | null; model: string | null; mhz_mean: number | null } {
  const t = read(join(root, 'proc/cpuinfo'));
  if (t === null) return { count: null, model: null, mhz_mean: null };
  const procs = t.split('\n').filter((l) => /^processor\s*:/.test(l)).length;
  const model = /^model name\s*:\s*(.+)$/m.exec(t)?.[1]?.trim() ?? null;
  const mhz = [...t.matchAll(/^cpu MHz\s*:\s*([\d.]+)$/gm)].map((m) => Number(m[1]));
  return { count: procs || null, model, mhz_mean: mhz.length ? mhz.reduce((a, b) => a + b, 0) / mhz.length : null };
}

/** Mean current CPU clock over cores from cpufreq (`scaling_cur_freq`, kHz), or null. */
export function readCpufreqMhz(root = '/'): number | null {
  const base = join(root, 'sys/devices/system/cpu');
  const vals: number[] = [];
  for (const c of list(base)) {
    if (!/^cpu\d+$/.test(c)) continue;
    const v = read(join(base, c, 'cpufreq/scaling_cur_freq'));
    if (v !== null && /^\d+$/.test(v)) vals.push(Number(v) / 1000);
  }
  return vals.length ? vals.reduce((a, b) => a + b, 0) / vals.length : null;
}

/** One temperature reading. */
export interface TempReading {
  readonly cls: SensorClass;
  /** hwmon chip name or thermal-zone type. */
  readonly chip: string;
  /** `temp1_label` (e.g. Tctl, edge, junction), or the input's name. */
  readonly label: string;
  readonly path: string;
  readonly celsius: number;
}

/** Every temperature of hwmon chips and thermal zones (millidegrees in sysfs). */
export function readTemperatures(root = '/'): TempReading[] {
  const out: TempReading[] = [];
  const hw = join(root, 'sys/class/hwmon');
  for (const h of list(hw)) {
    const dir = join(hw, h);
    const chip = read(join(dir, 'name')) ?? h;
    for (const f of list(dir)) {
      const m = /^temp(\d+)_input$/.exec(f);
      if (!m) continue;
      const v = read(join(dir, f));
      if (v === null || !/^-?\d+$/.test(v)) continue;
      const label = read(join(dir, `temp${m[1]}_label`)) ?? `temp${m[1]}`;
      out.push({ cls: sensorClass(chip), chip, label, path: join(dir, f), celsius: Number(v) / 1000 });
    }
  }
  const th = join(root, 'sys/class/thermal');
  for (const z of list(th)) {
    if (!z.startsWith('thermal_zone')) continue;
    const type = read(join(th, z, 'type')) ?? z;
    const v = read(join(th, z, 'temp'));
    if (v === null || !/^-?\d+$/.test(v)) continue;
    out.push({ cls: sensorClass(type), chip: type, label: z, path: join(th, z, 'temp'), celsius: Number(v) / 1000 });
  }
  return out;
}

/** One DRM card's state. */
export interface GpuReading {
  readonly card: string;
  readonly path: string;
  /** Kernel driver bound to the device (`amdgpu`), from the `driver` link. */
  readonly driver: string | null;
  /** `vendor:device` PCI ids. */
  readonly pci_id: string | null;
  readonly busy_percent: number | null;
  /** The current DPM level of pp_dpm_sclk / pp_dpm_mclk (the line marked `*`), MHz. */
  readonly sclk_mhz: number | null;
  readonly mclk_mhz: number | null;
}

/** The level marked `*` in a `pp_dpm_*` file (`1: 2900Mhz *`), MHz. */
export function currentDpmMhz(text: string | null): number | null {
  if (text === null) return null;
  for (const line of text.split('\n')) {
    const m = /^\s*\d+:\s*([\d.]+)\s*([MG]hz)\s*\*\s*$/i.exec(line);
    if (m) return Number(m[1]) * (m[2]!.toLowerCase() === 'ghz' ? 1000 : 1);
  }
  return null;
}

/** Every `/sys/class/drm/cardN` (not its connectors). */
export function readGpus(root = '/'): GpuReading[] {
  const drm = join(root, 'sys/class/drm');
  const out: GpuReading[] = [];
  for (const c of list(drm)) {
    if (!/^card\d+$/.test(c)) continue;
    const dev = join(drm, c, 'device');
    let driver: string | null = null;
    try {
      driver = basename(readlinkSync(join(dev, 'driver')));
    } catch {
      driver = read(join(dev, 'driver_name'));
    }
    const vendor = read(join(dev, 'vendor'));
    const device = read(join(dev, 'device'));
    const busy = read(join(dev, 'gpu_busy_percent'));
    out.push({
      card: c,
      path: dev,
      driver,
      pci_id: vendor && device ? `${vendor.replace(/^0x/, '')}:${device.replace(/^0x/, '')}` : null,
      busy_percent: busy !== null && /^\d+$/.test(busy) ? Number(busy) : null,
      sclk_mhz: currentDpmMhz(read(join(dev, 'pp_dpm_sclk'))),
      mclk_mhz: currentDpmMhz(read(join(dev, 'pp_dpm_mclk'))),
    });
  }
  return out;
}

/** A kernel module: loaded or not, and its version (`version`, else `srcversion`) where it has one. */
export function readModule(name: string, root = '/'): { loaded: boolean; version: string | null; version_file: string | null } {
  const dir = join(root, 'sys/module', name);
  if (!existsSync(dir)) return { loaded: false, version: null, version_file: null };
  for (const f of ['version', 'srcversion']) {
    const v = read(join(dir, f));
    if (v) return { loaded: true, version: v, version_file: join(dir, f) };
  }
  return { loaded: true, version: null, version_file: null };
}

/** One firmware version. */
export interface FirmwareReading {
  readonly cls: SensorClass;
  readonly name: string;
  readonly path: string;
  readonly version: string;
}

/**
 * Firmware versions where sysfs shows them: amdgpu's `vbios_version` and
 * `fw_version/*` per card; the NPU's `fw_version` under its accel device or
 * PCI driver (amdxdna versions differ in where, or whether, they expose it).
 */
export function readFirmware(root = '/'): FirmwareReading[] {
  const out: FirmwareReading[] = [];
  const drm = join(root, 'sys/class/drm');
  for (const c of list(drm)) {
    if (!/^card\d+$/.test(c)) continue;
    const dev = join(drm, c, 'device');
    const vbios = read(join(dev, 'vbios_version'));
    if (vbios) out.push({ cls: 'gpu', name: `${c}.vbios`, path: join(dev, 'vbios_version'), version: vbios });
    for (const f of list(join(dev, 'fw_version'))) {
      const v = read(join(dev, 'fw_version', f));
      if (v) out.push({ cls: 'gpu', name: `${c}.${f.replace(/_fw_version$/, '')}`, path: join(dev, 'fw_version', f), version: v });
    }
  }
  const npuDirs = [
    ...list(join(root, 'sys/class/accel')).map((a) => join(root, 'sys/class/accel', a, 'device')),
    ...list(join(root, 'sys/bus/pci/drivers/amdxdna')).filter((d) => /^[0-9a-f]{4}:/.test(d)).map((d) => join(root, 'sys/bus/pci/drivers/amdxdna', d)),
  ];
  const seen = new Set<string>();
  for (const d of npuDirs) {
    for (const f of ['fw_version', 'npu_fw_version', 'firmware_version']) {
      const v = read(join(d, f));
      if (v && !seen.has(v)) {
        seen.add(v);
        out.push({ cls: 'npu', name: basename(d.replace(/\/device$/, '')), path: join(d, f), version: v });
      }
    }
  }
  return out;
}

/** `/proc/cmdline`, or null. */
export function readKernelCmdline(root = '/'): string | null {
  return read(join(root, 'proc/cmdline'));
}
