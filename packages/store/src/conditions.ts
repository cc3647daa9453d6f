/**
 * The vocabulary of the `conditions` table, shared by the code that writes
 * host conditions (`@tickwise/capture`) and the code that judges them
 * (`@tickwise/analyzer`'s checks and diff): the two meet here, in the
 * schema, never in each other.
 *
 * A condition row is `(capture_id, key, value, unit, note)`. `value` is
 * text; a number is written as its decimal text with its unit in `unit`.
 * What could not be read is a row with `value` NULL and a `note` starting
 * with `absent` (never a zero); a value withheld on purpose (an environment
 * variable whose name looks like a secret) has `value` NULL and a note
 * starting with `redacted`.
 */

/** Keys written by the host sampler (`sampleConditions`, `import --conditions-from-host`). */
export const CONDITION_KEYS = {
  /** `host`: this capture carries conditions sampled by tickwise on the host (context). */
  source: 'conditions.source',
  /** Load average (1 min) at the start, end, and the highest sampled during the window. */
  load1Start: 'load.1m.start',
  load1End: 'load.1m.end',
  load1Peak: 'load.1m.peak',
  load5Start: 'load.5m.start',
  load5End: 'load.5m.end',
  load15Start: 'load.15m.start',
  load15End: 'load.15m.end',
  /** Hottest sensor of each class, at the start and the highest sampled (degrees C). */
  tempCpuStart: 'temp.cpu.start',
  tempCpuPeak: 'temp.cpu.peak',
  tempGpuStart: 'temp.gpu.start',
  tempGpuPeak: 'temp.gpu.peak',
  tempNpuStart: 'temp.npu.start',
  tempNpuPeak: 'temp.npu.peak',
  /** Kernel-log lines of a driver in the window, by severity: `kmsg.<driver>.<severity>`. */
  kmsgSource: 'kmsg.source',
} as const;

/** Drivers whose kernel-log lines are counted. */
export const KMSG_DRIVERS = ['amdgpu', 'amdxdna'] as const;
/** Kernel-log severities as counted (syslog levels 0-3 are `error`). */
export const KMSG_SEVERITIES = ['error', 'warning', 'notice', 'info', 'debug'] as const;

/** `kmsg.<driver>.<severity>`. */
export function kmsgKey(driver: (typeof KMSG_DRIVERS)[number], severity: (typeof KMSG_SEVERITIES)[number]): string {
  return `kmsg.${driver}.${severity}`;
}

/** How a condition is compared between two captures. */
export const ConditionClass = {
  exact: 'what the run was set up with (environment, versions, firmware, command): any change is a difference',
  measured: 'a measurement of the machine (load, temperature, clock, kernel-log counts): a difference beyond a tolerance',
  context: 'facts of the sampling itself (window times, sample counts): never a difference',
} as const;
/** Key of {@link ConditionClass}. */
export type ConditionClass = keyof typeof ConditionClass;

/** How a measured condition's two values are compared: absolute or relative tolerance, by key prefix. */
export interface ConditionTolerance {
  readonly prefix: string;
  /** Values within this absolute distance are the same (in the key's unit). */
  readonly absolute?: number;
  /** Values within this relative distance are the same (0.1 = 10 %). */
  readonly relative?: number;
}

/** Default tolerances of measured conditions (first matching prefix wins). */
export const CONDITION_TOLERANCES: readonly ConditionTolerance[] = [
  { prefix: 'load.', absolute: 2 },
  { prefix: 'temp.', absolute: 10 },
  { prefix: 'clock.', relative: 0.1 },
  { prefix: 'gpu.busy_percent.', absolute: 20 },
  { prefix: 'kmsg.', absolute: 0 },
];

const CONTEXT_PREFIXES = ['conditions.', 'window.', 'load.samples', 'sample.', 'command.cwd', 'command.pid', 'command.exit'];
const CONTEXT_KEYS = new Set(['pid']);

/** The class of a condition key (unknown keys, from a source or the user, are `exact`). */
export function conditionClass(key: string): ConditionClass {
  if (CONTEXT_KEYS.has(key) || CONTEXT_PREFIXES.some((p) => key.startsWith(p))) return 'context';
  if (CONDITION_TOLERANCES.some((t) => key.startsWith(t.prefix))) return 'measured';
  return 'exact';
}

/** The tolerance of a measured key, or null. */
export function conditionTolerance(key: string): ConditionTolerance | null {
  return CONDITION_TOLERANCES.find((t) => key.startsWith(t.prefix)) ?? null;
}

/** True when a note marks the value as absent (not readable, not present on this machine). */
export function isAbsentNote(note: string | null | undefined): boolean {
  return typeof note === 'string' && note.startsWith('absent');
}
