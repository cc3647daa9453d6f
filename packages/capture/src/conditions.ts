/**
 * The conditions a measurement was taken under, read on this machine:
 * load, temperatures and clocks sampled through a window, kernel and driver
 * versions, firmware, driver lines in the kernel log during the window, the
 * command line, and the allowlisted environment. Rows for the `conditions`
 * table (keys in `@tickwise/store`'s `CONDITION_KEYS` vocabulary).
 *
 * ```
 * startConditionSampling(opts)     -- at the start: load/temps/clocks sample, kernel-log mark
 *   every sampleIntervalMs         -- load/temps/clocks sample (peak, mean)
 * sampler.stop()                   -- a last sample, kernel-log lines since the mark,
 *   --> ConditionRow[]                versions, firmware, command line, allowlisted env
 * storeConditions(store, id, rows) -- INSERT INTO conditions
 * ```
 * `sampleConditions({durationMs})` samples a fixed window (the capture verb
 * calls it around a run); `runWithConditions(argv)` runs a real process and
 * samples while it runs. What this machine does not have is a row with a
 * NULL value and a note starting `absent`, never a zero.
 */
import { spawn } from 'node:child_process';
import { hostname, release, version } from 'node:os';
import { KMSG_DRIVERS, KMSG_SEVERITIES, kmsgKey, type Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { ENV_ALLOWLIST_VERSION, allowedEnv, redactArgv, shellJoin } from './conditions-env';
import { kmsgMark, kmsgSince, type KmsgMark } from './conditions-kmsg';
import {
  readCpuInfo, readCpufreqMhz, readFirmware, readGpus, readKernelCmdline, readLoadAverage, readModule, readTemperatures, type SensorClass,
} from './conditions-sysfs';

/** One row of the `conditions` table (without the capture id). */
export interface ConditionRow {
  readonly key: string;
  /** Text; null when absent or redacted (see `note`). */
  readonly value: string | null;
  readonly unit: string | null;
  readonly note: string | null;
}

/** Options of {@link startConditionSampling}. */
export interface ConditionOptions {
  /** Sampling period of load, temperatures and clocks (default 500 ms). */
  readonly sampleIntervalMs?: number;
  /** Root of /proc and /sys (default `/`; tests point it at a fake tree). */
  readonly root?: string;
  /** The environment the run had (default this process's); only allowlisted names are read. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The command line of the run; null or absent: recorded as absent. */
  readonly argv?: readonly string[] | null;
  /** Why the command line is unknown, for its `absent` note. */
  readonly argvAbsentWhy?: string;
  /** Read the kernel log (default true). */
  readonly kernelLog?: boolean;
}

/** A running sampler. */
export interface ConditionSampler {
  /** Takes the last sample and returns every row. Idempotent: later calls return the same rows. */
  stop(extra?: { exitCode?: number | null; signal?: string | null }): Promise<ConditionRow[]>;
}

interface Sample {
  readonly load: { m1: number; m5: number; m15: number } | null;
  readonly temps: Partial<Record<SensorClass, { celsius: number; sensor: string }>>;
  readonly sensors: ReadonlyMap<string, number>;
  readonly busy: number | null;
  readonly sclk: number | null;
  readonly mclk: number | null;
  readonly cpuMhz: number | null;
}

const CLASSES = ['cpu', 'gpu', 'npu'] as const;

function takeSample(root: string): Sample {
  const temps: Partial<Record<SensorClass, { celsius: number; sensor: string }>> = {};
  const sensors = new Map<string, number>();
  for (const t of readTemperatures(root)) {
    const name = `${t.chip}.${t.label}`.replace(/[^A-Za-z0-9_.-]+/g, '_');
    sensors.set(`${t.cls}.${name}`, Math.max(sensors.get(`${t.cls}.${name}`) ?? -Infinity, t.celsius));
    const cur = temps[t.cls];
    if (!cur || t.celsius > cur.celsius) temps[t.cls] = { celsius: t.celsius, sensor: t.path };
  }
  const amd = readGpus(root).filter((g) => g.busy_percent !== null || g.sclk_mhz !== null);
  const maxOf = (xs: (number | null)[]) => xs.reduce<number | null>((m, x) => (x !== null && (m === null || x > m) ? x : m), null);
  return {
    load: readLoadAverage(root),
    temps,
    sensors,
    busy: maxOf(amd.map((g) => g.busy_percent)),
    sclk: maxOf(amd.map((g) => g.sclk_mhz)),
    mclk: maxOf(amd.map((g) => g.mclk_mhz)),
    cpuMhz: readCpufreqMhz(root),
  };
}

const num = (x: number) => String(Number(x.toFixed(3)));

function row(key: string, value: string | number | null, unit: string | null = null, note: string | null = null): ConditionRow {
  return { key, value: value === null ? null : typeof value === 'number' ? num(value) : value, unit, note };
}

function absent(key: string, why: string, unit: string | null = null): ConditionRow {
  return { key, value: null, unit, note: `absent: ${why}` };
}

/** start / end / peak (/ mean) rows of one sampled series; absent rows when it was never readable. */
function seriesRows(key: string, unit: string, values: readonly (number | null)[], whyAbsent: string, parts: readonly ('start' | 'end' | 'peak' | 'mean')[], note: string | null = null): ConditionRow[] {
  const seen = values.filter((v): v is number => v !== null);
  if (seen.length === 0) return parts.map((p) => absent(`${key}.${p}`, whyAbsent, unit));
  const first = values[0] ?? null;
  const last = values[values.length - 1] ?? null;
  return parts.map((p) => {
    switch (p) {
      case 'start':
        return first === null ? absent(`${key}.start`, 'not readable at the start', unit) : row(`${key}.start`, first, unit, note);
      case 'end':
        return last === null ? absent(`${key}.end`, 'not readable at the end', unit) : row(`${key}.end`, last, unit, note);
      case 'peak':
        return row(`${key}.peak`, seen.reduce((a, b) => Math.max(a, b)), unit, note); // not a spread: a long sampling overflows the call stack
      case 'mean':
        return row(`${key}.mean`, seen.reduce((a, b) => a + b, 0) / seen.length, unit, note);
    }
  });
}

/**
 * Starts sampling the host's conditions. Samples at once and every
 * `sampleIntervalMs` until `stop()`; the timer does not keep the process
 * alive.
 */
export function startConditionSampling(opts: ConditionOptions = {}): ConditionSampler {
  const root = opts.root ?? '/';
  const interval = Math.max(10, opts.sampleIntervalMs ?? 500);
  const startUnixMs = Date.now();
  const mark: KmsgMark | null = opts.kernelLog === false ? null : kmsgMark();
  const samples: Sample[] = [takeSample(root)];
  const timer = setInterval(() => samples.push(takeSample(root)), interval);
  timer.unref();
  let done: ConditionRow[] | null = null;
  return {
    stop: async (extra = {}) => {
      if (done) return done;
      clearInterval(timer);
      samples.push(takeSample(root));
      done = collect(opts, root, interval, startUnixMs, Date.now(), samples, mark, extra);
      return done;
    },
  };
}

function collect(
  opts: ConditionOptions, root: string, interval: number, startMs: number, endMs: number, samples: readonly Sample[], mark: KmsgMark | null,
  extra: { exitCode?: number | null; signal?: string | null },
): ConditionRow[] {
  const rows: ConditionRow[] = [];
  rows.push(row('conditions.source', 'host', null, `sampled by tickwise on this host every ${interval} ms`));
  rows.push(row('conditions.env_allowlist', ENV_ALLOWLIST_VERSION, null, 'only allowlisted environment variables are recorded (docs/conditions.md)'));
  rows.push(row('window.start_unix_ms', String(startMs), 'ms'), row('window.end_unix_ms', String(endMs), 'ms'), row('window.duration_ms', String(endMs - startMs), 'ms'));
  rows.push(row('sample.count', String(samples.length)));
  rows.push(row('host.hostname', hostname()));

  const cpu = readCpuInfo(root);
  rows.push(cpu.count === null ? absent('cpu.count', 'no /proc/cpuinfo') : row('cpu.count', String(cpu.count)));
  rows.push(cpu.model === null ? absent('cpu.model', 'no model name in /proc/cpuinfo') : row('cpu.model', cpu.model));

  const loadNote = '/proc/loadavg: runnable + uninterruptible tasks, not divided by the CPU count';
  rows.push(...seriesRows('load.1m', 'load', samples.map((s) => s.load?.m1 ?? null), 'no /proc/loadavg', ['start', 'end', 'peak'], loadNote));
  rows.push(...seriesRows('load.5m', 'load', samples.map((s) => s.load?.m5 ?? null), 'no /proc/loadavg', ['start', 'end'], loadNote));
  rows.push(...seriesRows('load.15m', 'load', samples.map((s) => s.load?.m15 ?? null), 'no /proc/loadavg', ['start', 'end'], loadNote));

  const sensorWhy: Record<(typeof CLASSES)[number], string> = {
    cpu: 'no CPU temperature sensor (hwmon k10temp/coretemp/zenpower, thermal zone x86_pkg_temp) on this machine',
    gpu: 'no GPU temperature sensor (hwmon amdgpu) on this machine',
    npu: 'no NPU temperature sensor (amdxdna exposes none in hwmon) on this machine',
  };
  for (const c of CLASSES) {
    const sensor = samples.map((s) => s.temps[c]?.sensor).find((x) => x !== undefined);
    rows.push(...seriesRows(`temp.${c}`, 'C', samples.map((s) => s.temps[c]?.celsius ?? null), sensorWhy[c], ['start', 'peak'], sensor ? `hottest sensor, e.g. ${sensor}` : null));
  }
  const sensorNames = [...new Set(samples.flatMap((s) => [...s.sensors.keys()]))].sort();
  for (const name of sensorNames) {
    rows.push(...seriesRows(`temp.sensor.${name}`, 'C', samples.map((s) => s.sensors.get(name) ?? null), 'not readable', ['peak']));
  }

  const cpuMhz = samples.map((s) => s.cpuMhz);
  if (cpuMhz.some((v) => v !== null)) rows.push(...seriesRows('clock.cpu.mhz', 'MHz', cpuMhz, '', ['start', 'peak'], 'mean over cores of cpufreq scaling_cur_freq'));
  else if (cpu.mhz_mean !== null) rows.push(row('clock.cpu.mhz.start', cpu.mhz_mean, 'MHz', 'no cpufreq: mean "cpu MHz" of /proc/cpuinfo (may be the nominal clock)'));
  else rows.push(absent('clock.cpu.mhz.start', 'no cpufreq and no "cpu MHz" in /proc/cpuinfo', 'MHz'));

  const gpuWhy = 'no /sys/class/drm/card*/device/pp_dpm_sclk or gpu_busy_percent (no amdgpu device) on this machine';
  rows.push(...seriesRows('clock.gpu.sclk_mhz', 'MHz', samples.map((s) => s.sclk), gpuWhy, ['start', 'end', 'peak'], 'current pp_dpm_sclk level'));
  rows.push(...seriesRows('clock.gpu.mclk_mhz', 'MHz', samples.map((s) => s.mclk), gpuWhy, ['start', 'peak'], 'current pp_dpm_mclk level'));
  rows.push(...seriesRows('gpu.busy_percent', '%', samples.map((s) => s.busy), gpuWhy, ['start', 'peak', 'mean'], 'gpu_busy_percent'));
  rows.push(absent('clock.npu.mhz', 'amdxdna exposes no NPU clock in sysfs', 'MHz'));
  for (const g of readGpus(root)) {
    rows.push(row(`gpu.${g.card}.device`, [g.pci_id ?? 'unknown-id', g.driver ?? 'no driver'].join(' '), null, g.path));
  }

  rows.push(row('kernel.release', release()), row('kernel.version', version()));
  const cmdline = readKernelCmdline(root);
  rows.push(cmdline === null ? absent('kernel.cmdline', 'no /proc/cmdline') : row('kernel.cmdline', redactArgv(cmdline.split(/\s+/)).join(' ')));
  for (const m of KMSG_DRIVERS) {
    const mod = readModule(m, root);
    rows.push(row(`driver.${m}.loaded`, mod.loaded ? 'yes' : 'no', null, mod.loaded ? `/sys/module/${m}` : `no /sys/module/${m}`));
    rows.push(mod.version !== null
      ? row(`driver.${m}.version`, mod.version, null, mod.version_file)
      : absent(`driver.${m}.version`, mod.loaded ? `/sys/module/${m} has no version or srcversion (built in?)` : `module ${m} not loaded`));
  }
  const fw = readFirmware(root);
  for (const f of fw) rows.push(row(`firmware.${f.cls}.${f.name}`, f.version, null, f.path));
  if (!fw.some((f) => f.cls === 'gpu')) rows.push(absent('firmware.gpu', 'no vbios_version or fw_version/ under /sys/class/drm/card*/device'));
  if (!fw.some((f) => f.cls === 'npu')) rows.push(absent('firmware.npu', 'no fw_version under /sys/class/accel/*/device or the amdxdna PCI device'));

  if (mark === null) {
    rows.push(absent('kmsg.source', 'kernel log not read (turned off)'));
  } else {
    const k = kmsgSince(mark);
    if (k.source === null) {
      rows.push(absent('kmsg.source', `kernel log not readable: ${k.why ?? 'unknown'}`));
      for (const d of KMSG_DRIVERS) for (const s of KMSG_SEVERITIES) rows.push(absent(kmsgKey(d, s), 'kernel log not readable', 'lines'));
    } else {
      rows.push(row('kmsg.source', k.source === 'kmsg' ? '/dev/kmsg' : 'dmesg --raw', null,
        k.source === 'kmsg' ? 'records with a sequence number after the window started' : 'records stamped after the window started (to within 1 s)'));
      rows.push(row('window.kmsg_records', String(k.records_in_window), 'lines'));
      for (const d of KMSG_DRIVERS) {
        for (const s of KMSG_SEVERITIES) rows.push(row(kmsgKey(d, s), String(k.counts[d][s]), 'lines', s === 'error' ? (k.first_error[d] ?? null) : null));
      }
    }
  }

  if (opts.argv) rows.push(row('command.line', shellJoin(redactArgv(opts.argv)), null, 'secret-looking options and NAME=value words are redacted'));
  else rows.push(absent('command.line', opts.argvAbsentWhy ?? 'the command of the run is not known here'));
  if (extra.exitCode !== undefined) rows.push(row('command.exit_code', extra.exitCode === null ? null : String(extra.exitCode), null, extra.signal ? `signal ${extra.signal}` : null));

  for (const e of allowedEnv(opts.env ?? process.env)) rows.push({ key: `env.${e.name}`, value: e.value, unit: null, note: e.note });
  return rows;
}

/** Samples the host for `durationMs` (at least a start and an end sample) and returns the rows. */
export async function sampleConditions(opts: ConditionOptions & { durationMs: number }): Promise<ConditionRow[]> {
  const s = startConditionSampling(opts);
  await new Promise((r) => setTimeout(r, Math.max(0, opts.durationMs)));
  return s.stop();
}

/**
 * Runs a real process (`argv[0]` with `argv[1..]`, no shell) and samples
 * the host while it runs; the command line and the allowlisted part of the
 * environment it ran with (`env`, default this process's) are recorded.
 * Its stdio is inherited unless `stdio: 'ignore'`.
 */
export async function runWithConditions(
  argv: readonly string[],
  opts: Omit<ConditionOptions, 'argv'> & { cwd?: string; stdio?: 'inherit' | 'ignore' } = {},
): Promise<{ exit_code: number | null; signal: string | null; conditions: ConditionRow[] }> {
  if (argv.length === 0) throw new Error('runWithConditions: no command');
  const env = opts.env ?? process.env;
  const sampler = startConditionSampling({ ...opts, argv, env });
  const child = spawn(argv[0]!, argv.slice(1), { env: env as NodeJS.ProcessEnv, cwd: opts.cwd, stdio: opts.stdio ?? 'inherit' });
  const { code, signal } = await new Promise<{ code: number | null; signal: string | null }>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (c, s) => resolve({ code: c, signal: s }));
  }).catch(async (e: unknown) => {
    await sampler.stop();
    throw e;
  });
  const conditions = await sampler.stop({ exitCode: code, signal });
  return { exit_code: code, signal, conditions };
}

/** Writes rows to `conditions` for a capture; returns how many. */
export async function storeConditions(store: Store, captureId: number, rows: readonly ConditionRow[]): Promise<number> {
  // through the appender, which redacts secrets (one redaction on every path into the store)
  return store.append('conditions', rows.map((r) => ({ capture_id: captureId, key: r.key, value: r.value, unit: r.unit, note: r.note })));
}

/** The 1-based line of a character offset in a text. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/**
 * Reads a `conditions.json` written by `tickwise capture`
 * (`{"conditions": [{key, value, unit, note}, ...]}`). An empty, truncated
 * or malformed file, or rows of another shape, is one `TickwiseError` with
 * the file and line (never a stack trace).
 */
export async function readConditionsFile(path: string, displayPath = path): Promise<ConditionRow[]> {
  const { readFile } = await import('node:fs/promises');
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new TickwiseError('unreadable-input', `cannot read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, { file: displayPath });
  }
  if (text.trim() === '') throw new TickwiseError('bad-record', 'conditions.json is empty (the capture was cut off while writing it?)', { file: displayPath, line: 1 });
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    const msg = (e as Error).message;
    const pos = /position (\d+)/.exec(msg);
    const line = pos ? lineAt(text, Number(pos[1])) : /end of JSON input/i.test(msg) ? lineAt(text, text.length) : 1;
    const atEnd = /end of JSON input|Unterminated string/i.test(msg) || (pos !== null && Number(pos[1]) >= text.trimEnd().length - 1);
    const why = atEnd ? 'the file ends inside a value (truncated)' : msg.replace(/ in JSON at position \d+.*$/, '').replace(/^.*?: /, '');
    throw new TickwiseError('bad-record', `conditions.json is not valid JSON: ${why}`, { file: displayPath, line });
  }
  const rows = (doc as { conditions?: unknown } | null)?.conditions;
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc) || (rows !== undefined && !Array.isArray(rows))) {
    throw new TickwiseError('bad-record', 'conditions.json: expected {"conditions": [{"key", "value", "unit", "note"}, ...]}', { file: displayPath, line: 1 });
  }
  const text1 = (v: unknown): string | null => (v === null || v === undefined ? null : typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : JSON.stringify(v));
  return (rows ?? []).map((r: unknown, i: number) => {
    const o = r as Record<string, unknown> | null;
    if (o === null || typeof o !== 'object' || typeof o['key'] !== 'string' || o['key'] === '') {
      const at = text.indexOf('"key"');
      throw new TickwiseError('bad-record', `conditions.json: row ${i + 1} has no "key" string`, { file: displayPath, line: at < 0 ? 1 : lineAt(text, at) });
    }
    return { key: o['key'], value: text1(o['value']), unit: text1(o['unit']), note: text1(o['note']) };
  });
}
