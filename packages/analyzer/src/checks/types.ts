/**
 * The vocabulary of checks: codes, findings, thresholds, the plain-data
 * inputs a check may be given (a pin, wall references), and the shape of a
 * rule (a pure SQL builder plus a pure evaluation of its rows).
 */
import { checkRows, type Row, type RowOf, type Shape } from '@tickwise/store';

/** Every check code, with what it catches. Adding one breaks the build until a rule handles it. */
export const CheckCode = {
  'tick-frequency-mismatch': 'the producer-declared tick rate and the rate fitted to clock samples differ',
  'duration-unit-mismatch': "a source's own durations (duration_ns) disagree with its ticks through the fit by a factor",
  'wall-clock-mismatch': "a segment's span disagrees with the wall-clock reference (llama-bench avg_ns)",
  'no-time-base': 'device ticks with neither clock samples nor a declared rate: no time can be computed',
  'clock-fit-poor': 'the clock fit is too uncertain, or its samples disagree, for the dispatch durations measured',
  'stale-library': 'a recorded library differs from the pin (build-id, sha256, size or a marker count), or is missing',
  'mixed-builds': 'libraries of one capture come from different builds, or captures of one store loaded different builds',
  'no-provenance': 'no library provenance was recorded with the capture',
  'cold-first-pass': 'the capture is one pass (cold caches included), or its first segment idles far more than the rest',
  'no-dispatches': 'the capture holds no dispatches (an empty or header-only file, or a trace without device work): nothing to analyze',
  'dropped-records': 'the producer dropped or truncated records: the timeline has holes',
  'invalid-events': 'events the producer marked invalid, or that end before they start, were left out of time math',
  'busy-machine': 'the load average during the capture was above the threshold: other work shared the machine',
  'driver-errors': 'the GPU or NPU driver logged errors in the kernel log during the capture (or the log could not be read)',
  thermal: 'a CPU, GPU or NPU temperature during the capture was above the threshold: clocks may have been throttled',
  'conditions-differ': 'captures compared with each other ran under different conditions (environment, versions, firmware, load, temperature)',
  'device-kind-npu-names': 'every kernel of a device carries an NPU marker (names starting npu_) but the device is not of kind npu: --device-kind npu was probably left out',
} as const;
/** Key of {@link CheckCode}. */
export type CheckCode = keyof typeof CheckCode;
/** Type guard for {@link CheckCode}. */
export function isCheckCode(x: string): x is CheckCode {
  return Object.hasOwn(CheckCode, x);
}

/** How loud a finding is: an error makes `tickwise check` exit 1. */
export const FindingSeverity = { error: 'error', warning: 'warning', info: 'info' } as const;
/** Key of {@link FindingSeverity}. */
export type FindingSeverity = keyof typeof FindingSeverity;

/** A number or label a finding carries; names carry units (`span_ns`, `tick_hz_fitted`, `ratio`). */
export type FindingValue = number | bigint | string | boolean | null;

/**
 * One finding. Besides the fixed fields it carries the numbers behind it as
 * flat, unit-named fields (`tick_hz_declared`, `span_ns`, `ratio`,
 * `factor`), so `--json` gives `{"code", "severity", "message", ...numbers}`.
 */
export interface Finding {
  readonly code: CheckCode;
  readonly severity: FindingSeverity;
  /** One line for people: what is wrong, with the numbers. */
  readonly message: string;
  /** The capture it is about; null for a store-wide finding. */
  readonly capture_id: number | null;
  /** The device, when it is about one. */
  readonly device?: number;
  /** What to do about it. */
  readonly advice: string;
  readonly [field: string]: FindingValue | undefined;
}

/** One file of a pin (`tickwise-pin/1`), as plain data. */
export interface PinFileLike {
  readonly name: string;
  readonly path: string;
  readonly size: number;
  readonly build_id: string | null;
  readonly sha256: string;
  readonly markers: Readonly<Record<string, number>>;
}

/** A pin, as plain data: the expected identity of every file a program loads. */
export interface PinLike {
  readonly schema?: string;
  readonly executable?: string;
  readonly files: readonly PinFileLike[];
  readonly unresolved?: readonly string[];
}

/** A wall-clock reference (a llama-bench row), as plain data. */
export interface WallReference {
  /** The capture it belongs to; null or absent: every capture checked. */
  readonly capture_id?: number | null;
  readonly source_path?: string | null;
  readonly line?: number | null;
  readonly model?: string | null;
  /** llama-bench's test name (`pp2048`). */
  readonly test: string;
  readonly n_prompt: number;
  readonly n_gen: number;
  /** Mean wall time of one repetition, ns. */
  readonly avg_ns: bigint;
  readonly stddev_ns?: bigint | null;
}

/** Thresholds of every rule; names carry units. */
export interface CheckThresholds {
  /** tick-frequency-mismatch: info above this many ppm (and 3 sigma of the fitted slope). */
  readonly tick_hz_info_ppm: number;
  /** tick-frequency-mismatch: warning above this relative difference (0.005 = 0.5 %). */
  readonly tick_hz_warning_fraction: number;
  /** tick-frequency-mismatch: error above this relative difference. */
  readonly tick_hz_error_fraction: number;
  /** duration-unit-mismatch: warning when the median source/fit ratio is off 1 by more than this. */
  readonly duration_warning_fraction: number;
  /** duration-unit-mismatch: error above this. */
  readonly duration_error_fraction: number;
  /** wall-clock-mismatch: avg_ns / span inside [min, max] is fine. */
  readonly wall_ratio_min: number;
  readonly wall_ratio_max: number;
  /** wall-clock-mismatch: outside [min, max] is an error (between: a warning). */
  readonly wall_error_ratio_min: number;
  readonly wall_error_ratio_max: number;
  /** clock-fit-poor: warning when the fit's error reaches this share of the median dispatch duration. */
  readonly fit_warning_fraction: number;
  /** clock-fit-poor: error at this share. */
  readonly fit_error_fraction: number;
  /** clock-fit-poor: warning when the slope's 1-sigma error exceeds this (durations scale by it). */
  readonly fit_slope_warning_ppm: number;
  /** cold-first-pass: the first segment's idle share must exceed the others' median by this factor ... */
  readonly cold_idle_ratio_min: number;
  /** ... and by this much absolute share (0.02 = 2 percentage points). */
  readonly cold_idle_excess_fraction: number;
  /** Segments (local splitter): a cut needs a gap at least this long ... */
  readonly segment_gap_min_ns: bigint;
  /** ... and this many times longer than the next-longest gap that is not a cut. */
  readonly segment_gap_jump_ratio: number;
  /** mixed-builds: project libraries of one capture whose mtimes spread more than this. */
  readonly mixed_builds_mtime_spread_ns: bigint;
  /** invalid-events: error when this share of a capture's dispatches is invalid. */
  readonly invalid_events_error_fraction: number;
  /** A ratio within this relative distance of 10^k (k != 0) is named as a power-of-ten factor. */
  readonly power_of_ten_tolerance_fraction: number;
  /** busy-machine: the 1-minute load average (start, end or peak sampled) above this. */
  readonly busy_load_max: number;
  /** thermal: a CPU/GPU/NPU temperature peak above this, degrees C. */
  readonly thermal_max_c: number;
}

/** Default thresholds (the numbers where it gives them). */
export const DEFAULT_THRESHOLDS: CheckThresholds = {
  tick_hz_info_ppm: 200,
  tick_hz_warning_fraction: 0.005,
  tick_hz_error_fraction: 0.05,
  duration_warning_fraction: 0.01,
  duration_error_fraction: 0.05,
  wall_ratio_min: 0.8,
  wall_ratio_max: 1.25,
  wall_error_ratio_min: 0.5,
  wall_error_ratio_max: 2,
  fit_warning_fraction: 0.1,
  fit_error_fraction: 1,
  fit_slope_warning_ppm: 1000,
  cold_idle_ratio_min: 1.5,
  cold_idle_excess_fraction: 0.02,
  segment_gap_min_ns: 1_000_000n,
  segment_gap_jump_ratio: 10,
  mixed_builds_mtime_spread_ns: 3_600_000_000_000n,
  invalid_events_error_fraction: 0.05,
  power_of_ten_tolerance_fraction: 0.15,
  busy_load_max: 10,
  thermal_max_c: 95,
};

/** What to check and against what. */
export interface CheckOptions {
  /** Only these captures (default: every capture in the store). */
  readonly captureIds?: readonly number[];
  /** A pin to compare recorded provenance against (stale-library). */
  readonly pin?: PinLike;
  /** Wall references besides those stored in `wall_refs`. */
  readonly wallRefs?: readonly WallReference[];
  /** Threshold overrides. */
  readonly thresholds?: Partial<CheckThresholds>;
  /** Only these codes (default: all). */
  readonly codes?: readonly CheckCode[];
  /**
   * Only the rules that can give a finding at least this severe (a verb's
   * header wants the errors: rules that at worst warn are not run).
   */
  readonly atLeast?: FindingSeverity;
}

/** One segment (a pass of the workload) of one device of one capture. */
export interface CheckSegment {
  readonly capture_id: number;
  readonly device: number;
  /** 0-based, in time order. */
  readonly segment: number;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly span_ns: bigint;
  /** Union of the dispatch intervals (not their sum). */
  readonly busy_ns: bigint;
  readonly dispatches: number;
}

/** Where a check looks: the captures of the store it is about. */
export interface CheckScope {
  /** null: every capture. */
  readonly captureIds: readonly number[] | null;
}

/** What a rule's evaluation sees besides its rows. */
export interface RuleContext {
  readonly thresholds: CheckThresholds;
  readonly pin: PinLike | null;
  /** Wall references from `wall_refs` and from the options. */
  readonly wallRefs: readonly WallReference[];
  /** Segments of every (capture, device) with timed dispatches. */
  readonly segments: readonly CheckSegment[];
  /** Captures in scope. */
  readonly captureIds: readonly number[];
}

/** A rule as written: a declared row shape, a pure SQL builder, a pure evaluation. */
export interface RuleSpec<S extends Shape> {
  readonly code: CheckCode;
  /** The most severe finding the rule can give (the runner refuses a worse one). */
  readonly worst: FindingSeverity;
  readonly shape: S;
  /** The query whose rows the rule evaluates (pure: builds text, runs nothing); null: the rule needs only the context. */
  readonly sql: ((scope: CheckScope) => string) | null;
  readonly evaluate: (rows: RowOf<S>[], ctx: RuleContext) => Finding[];
  /** What the rule measured, finding or not (one record per thing compared; unit-named keys). */
  readonly figures?: (rows: RowOf<S>[], ctx: RuleContext) => Record<string, FindingValue>[];
  /** True when the evaluation reads `ctx.segments` for these rows (absent: never); segmenting is the suite's costliest step. */
  readonly needsSegments?: (rows: RowOf<S>[], ctx: Omit<RuleContext, 'segments'>) => boolean;
}

/** A rule as the runner uses it (its row shape checked on the way in). */
export interface CheckRule {
  readonly code: CheckCode;
  readonly worst: FindingSeverity;
  readonly sql: ((scope: CheckScope) => string) | null;
  readonly evaluate: (rows: Row[], ctx: RuleContext) => Finding[];
  readonly figures?: (rows: Row[], ctx: RuleContext) => Record<string, FindingValue>[];
  readonly needsSegments: (rows: Row[], ctx: Omit<RuleContext, 'segments'>) => boolean;
}

/** Makes a {@link CheckRule} from a {@link RuleSpec}. */
export function defineRule<S extends Shape>(spec: RuleSpec<S>): CheckRule {
  const typed = (rows: Row[]) => checkRows(spec.shape, rows, `rows of check ${spec.code}`);
  return {
    code: spec.code,
    worst: spec.worst,
    sql: spec.sql,
    evaluate: (rows, ctx) => spec.evaluate(typed(rows), ctx),
    ...(spec.figures ? { figures: (rows: Row[], ctx: RuleContext) => spec.figures!(typed(rows), ctx) } : {}),
    needsSegments: (rows, ctx) => spec.needsSegments?.(typed(rows), ctx) ?? false,
  };
}
