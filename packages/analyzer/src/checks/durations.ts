/**
 * `duration-unit-mismatch`: a producer's own per-dispatch duration
 * (`duration_ns`, kept as `dispatches.source_dur_ns`) against the duration
 * tickwise computes (`dur_ns`: ticks through the clock fit, or the host
 * timestamps). They should agree to rounding; a factor near a power of ten
 * is a unit error (trap 1: ticks written as ns).
 */
import { factorName, nearPowerOfTen, round } from './factor';
import { checkMessages as msg } from './messages';
import { captureFilter } from './sql';
import { defineRule, type Finding } from './types';

/** `duration-unit-mismatch`. */
export const durationUnitMismatch = defineRule({
  code: 'duration-unit-mismatch',
  worst: 'error',
  shape: {
    capture_id: 'number', device: 'number', time_source: 'string', dispatches: 'number', median_ratio: 'number', sum_ratio: 'number?',
    file: 'string?', first_line: 'number?',
  },
  sql: (scope) => `SELECT x.capture_id, x.device, x.time_source, count(*) AS dispatches,
      median(x.source_dur_ns::DOUBLE / x.dur_ns) AS median_ratio,
      sum(x.source_dur_ns)::DOUBLE / nullif(sum(x.dur_ns), 0)::DOUBLE AS sum_ratio,
      min(c.path) AS file,
      min(x.line) FILTER (WHERE abs(x.source_dur_ns::DOUBLE / x.dur_ns - 1) > 0.01) AS first_line
    FROM dispatches x JOIN captures c ON c.capture_id = x.capture_id
    WHERE ${captureFilter(scope, 'x')} AND x.valid AND x.source_dur_ns IS NOT NULL AND x.dur_ns > 0 AND x.source_dur_ns >= 0
    GROUP BY x.capture_id, x.device, x.time_source
    ORDER BY x.capture_id, x.device, x.time_source`,
  evaluate: (rows, { thresholds: t }) => {
    const out: Finding[] = [];
    for (const r of rows) {
      const ratio = r.median_ratio;
      const off = Math.abs(ratio - 1);
      const power = nearPowerOfTen(ratio, t.power_of_ten_tolerance_fraction);
      if (off <= t.duration_warning_fraction && !power) continue;
      const severity = power || off > t.duration_error_fraction ? 'error' : 'warning';
      const factor = power ? power.name : factorName(ratio, t.power_of_ten_tolerance_fraction);
      const ticks = r.time_source.startsWith('device_tick');
      const basis = ticks ? 'the durations of their ticks through the clock fit' : 'the differences of their host timestamps';
      // ticks written as ns: duration_ns smaller than the real duration by the tick period
      const ticksAsNs = ticks && power !== null && power.exponent < 0;
      out.push({
        code: 'duration-unit-mismatch', severity, capture_id: r.capture_id, device: r.device,
        message: msg.durationMismatch(r.device, basis, ratio, factor, r.dispatches, r.file, r.first_line),
        advice: ticksAsNs ? msg.durationTicksAsNs(factor) : msg.durationAdvice(factor),
        source_over_computed_ratio: round(ratio, 6),
        source_over_computed_sum_ratio: r.sum_ratio === null ? null : round(r.sum_ratio, 6),
        factor,
        dispatches: r.dispatches,
        time_source: r.time_source,
        file: r.file,
        line: r.first_line,
      });
    }
    return out;
  },
});
