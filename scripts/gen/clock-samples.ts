/**
 * Clock-correlation samples as a producer takes them: a host bracket in
 * iree_host_time_ns (begin before the driver call, end after it), the device
 * tick latched inside it, and the driver's own CPU timestamp of that latch
 * (KFD's raw monotonic domain, a constant offset from iree_host_time_ns here).
 *
 * Also IREE's exporter fit (first and last sample, driver CPU domain, exact
 * integer rounding), which the derived `*_driver_host_cpu_time_ns` and
 * `duration_ns` fields of device events come from.
 */
import type { Rng } from './rng';
import type { ClockSample, DeviceClockTruth } from './timeline';

/** How samples are spaced and how wide their host brackets are. */
export interface ClockPlanOptions {
  /** Host time of the first sample's latch (about). */
  readonly first_ns: number;
  /** Host time of the last sample's latch (about); the last sample is taken here. */
  readonly last_ns: number;
  /** Nominal spacing (100 ms). */
  readonly interval_ns: number;
  /** Each periodic sample lands within +-jitter of its nominal time. */
  readonly jitter_ns: number;
  /** Chance that a periodic sample's bracket is wide (the sampling thread was preempted). */
  readonly wide_probability: number;
  /** Make the last sample wide and lopsided, so a first/last bracket-midpoint fit is visibly off. */
  readonly last_sample_wide: boolean;
}

/** Narrow brackets: each side of the latch 250..1400 ns (an ioctl round trip). */
const NARROW_SIDE_NS: readonly [number, number] = [250, 1400];
/** A wide bracket's long side: 20..220 us. */
const WIDE_SIDE_NS: readonly [number, number] = [20_000, 220_000];
/** Driver CPU timestamp read jitter around the latch. */
const CPU_JITTER_NS = 20;

/** Plans the samples between first_ns and last_ns; ids start at 1. */
export function planClockSamples(
  clock: DeviceClockTruth,
  opts: ClockPlanOptions,
  rng: Rng,
): ClockSample[] {
  const targets: number[] = [opts.first_ns];
  for (let k = 1; ; k++) {
    const t = opts.first_ns + k * opts.interval_ns + Math.round(rng.range(-opts.jitter_ns, opts.jitter_ns));
    if (t >= opts.last_ns - opts.interval_ns / 4) break;
    targets.push(t);
  }
  targets.push(opts.last_ns);

  const samples: ClockSample[] = [];
  for (let i = 0; i < targets.length; i++) {
    const isLast = i === targets.length - 1;
    const device_tick = Math.ceil((targets[i]! - clock.offset_ns) / clock.ns_per_tick);
    const latch_ns = clock.offset_ns + device_tick * clock.ns_per_tick;
    let before = rng.int(NARROW_SIDE_NS[0], NARROW_SIDE_NS[1]);
    let after = rng.int(NARROW_SIDE_NS[0], NARROW_SIDE_NS[1]);
    if (isLast && opts.last_sample_wide) {
      before = rng.int(5_000, 15_000);
      after = rng.int(120_000, 200_000);
    } else if (i > 0 && !isLast && rng.chance(opts.wide_probability)) {
      if (rng.chance(0.5)) before = rng.int(WIDE_SIDE_NS[0], WIDE_SIDE_NS[1]);
      else after = rng.int(WIDE_SIDE_NS[0], WIDE_SIDE_NS[1]);
    }
    samples.push({
      sample_id: i + 1,
      device_tick,
      latch_ns,
      host_cpu_timestamp_ns: latch_ns - clock.driver_cpu_offset_ns + rng.int(-CPU_JITTER_NS, CPU_JITTER_NS),
      host_time_begin_ns: latch_ns - before,
      host_time_end_ns: latch_ns + after,
    });
  }
  return samples;
}

/**
 * IREE's exporter fit (`iree_profile_model_device_try_fit_clock_exact` over
 * the driver CPU domain, then `iree_profile_model_clock_fit_map_tick`):
 * `time = first_time + round_half_up((tick - first_tick) * time_span / tick_span)`.
 */
export class FirstLastFit {
  readonly first_sample_id: number;
  readonly last_sample_id: number;
  readonly first_tick: number;
  readonly first_time_ns: number;
  readonly tick_span: number;
  readonly time_span_ns: number;
  private readonly ratio: number;
  private readonly halfBias: number;

  /** Fits through the first and last sample's (device_tick, host_cpu_timestamp_ns). */
  constructor(samples: readonly ClockSample[]) {
    if (samples.length < 2) throw new Error('a clock fit needs at least two samples');
    const first = samples[0]!;
    const last = samples[samples.length - 1]!;
    this.first_sample_id = first.sample_id;
    this.last_sample_id = last.sample_id;
    this.first_tick = first.device_tick;
    this.first_time_ns = first.host_cpu_timestamp_ns;
    this.tick_span = last.device_tick - first.device_tick;
    this.time_span_ns = last.host_cpu_timestamp_ns - first.host_cpu_timestamp_ns;
    if (this.tick_span <= 0 || this.time_span_ns <= 0) throw new Error('clock samples are not increasing');
    this.ratio = this.time_span_ns / this.tick_span;
    // round_mul_div adds floor(d/2) before dividing: for odd d that is 0.5 - 1/(2d).
    this.halfBias = this.tick_span % 2 === 0 ? 0.5 : 0.5 - 0.5 / this.tick_span;
  }

  /** Fitted tick frequency as IREE's summary prints it (display value). */
  get tick_hz(): number {
    return 1e9 / this.ratio;
  }

  /** Maps a device tick to driver CPU ns exactly as the exporter does. */
  mapTick(tick: number): number {
    const after = tick >= this.first_tick;
    const delta = after ? tick - this.first_tick : this.first_tick - tick;
    const scaled = this.scale(delta);
    return after ? this.first_time_ns + scaled : this.first_time_ns - scaled;
  }

  private scale(delta: number): number {
    if (delta === 0) return 0;
    const y = delta * this.ratio + this.halfBias;
    const floor = Math.floor(y);
    const frac = y - floor;
    // Doubles are exact to ~1e-3 ns here; near a rounding edge use exact integers.
    if (frac > 0.01 && frac < 0.99) return floor;
    const d = BigInt(this.tick_span);
    return Number((BigInt(delta) * BigInt(this.time_span_ns) + d / 2n) / d);
  }
}
