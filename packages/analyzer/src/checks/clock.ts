/**
 * Clock rules: the declared tick rate against the fitted one
 * (`tick-frequency-mismatch`), ticks with no way to become time
 * (`no-time-base`), and a fit too loose for the durations it times
 * (`clock-fit-poor`).
 */
import { nearPowerOfTen, round } from './factor';
import { checkMessages as msg } from './messages';
import { captureFilter, chosenDispatchesSql } from './sql';
import { defineRule, type Finding } from './types';

/** `tick-frequency-mismatch`: declared vs fitted rate, or a declared rate nothing can confirm. */
export const tickFrequencyMismatch = defineRule({
  code: 'tick-frequency-mismatch',
  worst: 'error',
  shape: {
    capture_id: 'number', device: 'number', tick_hz_declared: 'number', tick_hz_fitted: 'number?', slope_uncertainty_ppm: 'number?',
    clock_samples: 'number', time_base: 'string', tick_events: 'number',
  },
  sql: (scope) => `SELECT d.capture_id, d.device, d.tick_hz_declared, d.tick_hz_fitted, d.fit_slope_uncertainty_ppm AS slope_uncertainty_ppm,
      d.clock_samples, d.time_base, coalesce(x.tick_events, 0) AS tick_events
    FROM devices d
    LEFT JOIN (SELECT capture_id, device, count(*) AS tick_events FROM dispatches WHERE time_source LIKE 'device_tick%'
               GROUP BY capture_id, device) x ON x.capture_id = d.capture_id AND x.device = d.device
    WHERE ${captureFilter(scope, 'd')} AND d.tick_hz_declared IS NOT NULL AND d.tick_hz_declared > 0
    ORDER BY d.capture_id, d.device`,
  evaluate: (rows, { thresholds: t }) => {
    const out: Finding[] = [];
    for (const r of rows) {
      if (r.tick_hz_fitted === null) {
        if (r.time_base === 'device_tick_declared' && r.tick_events > 0) {
          out.push({
            code: 'tick-frequency-mismatch', severity: 'info', capture_id: r.capture_id, device: r.device,
            message: msg.tickHzDeclaredOnly(r.device, r.tick_hz_declared), advice: msg.tickHzDeclaredOnlyAdvice(),
            tick_hz_declared: r.tick_hz_declared, tick_hz_fitted: null, clock_samples: r.clock_samples,
          });
        }
        continue;
      }
      const ratio = r.tick_hz_declared / r.tick_hz_fitted;
      const diff = ratio - 1;
      const abs = Math.abs(diff);
      const power = nearPowerOfTen(ratio, t.power_of_ten_tolerance_fraction);
      const sigmaPpm = r.slope_uncertainty_ppm ?? 0;
      const severity = abs > t.tick_hz_error_fraction ? 'error'
        : abs > t.tick_hz_warning_fraction ? 'warning'
        : abs * 1e6 > Math.max(t.tick_hz_info_ppm, 3 * sigmaPpm) ? 'info' : null;
      if (severity === null) continue;
      const factor = power ? power.name : null;
      out.push({
        code: 'tick-frequency-mismatch', severity, capture_id: r.capture_id, device: r.device,
        message: msg.tickHzMismatch(r.device, r.tick_hz_declared, r.tick_hz_fitted, r.clock_samples, diff, factor),
        advice: msg.tickHzAdvice(factor, diff),
        tick_hz_declared: r.tick_hz_declared,
        tick_hz_fitted: round(r.tick_hz_fitted, 10),
        declared_over_fitted_ratio: round(ratio, 8),
        diff_ppm: Math.round(diff * 1e6),
        fit_slope_uncertainty_ppm: r.slope_uncertainty_ppm === null ? null : round(r.slope_uncertainty_ppm, 4),
        clock_samples: r.clock_samples,
        ...(factor ? { factor } : {}),
        used: 'tick_hz_fitted',
      });
    }
    return out;
  },
});

/** `no-time-base`: tick-timed dispatches with no clock samples and no declared rate (error), or an assumed rate (info). */
export const noTimeBase = defineRule({
  code: 'no-time-base',
  worst: 'error',
  shape: { capture_id: 'number', device: 'number', time_base: 'string', untimed: 'number', assumed: 'number', assumed_hz: 'string?' },
  sql: (scope) => `SELECT d.capture_id, d.device, d.time_base,
      coalesce(x.untimed, 0) AS untimed, coalesce(x.assumed, 0) AS assumed, a.assumed_hz
    FROM devices d
    LEFT JOIN (SELECT capture_id, device,
                 count(*) FILTER (WHERE time_source = 'device_tick_none') AS untimed,
                 count(*) FILTER (WHERE time_source = 'device_tick_assumed') AS assumed
               FROM dispatches GROUP BY capture_id, device) x ON x.capture_id = d.capture_id AND x.device = d.device
    LEFT JOIN (SELECT capture_id, device, min(value) AS assumed_hz FROM assumptions WHERE what = 'tick_hz'
               GROUP BY capture_id, device) a ON a.capture_id = d.capture_id AND a.device = d.device
    WHERE ${captureFilter(scope, 'd')} AND d.time_base IN ('device_tick_none', 'device_tick_assumed')
    ORDER BY d.capture_id, d.device`,
  evaluate: (rows) => {
    const out: Finding[] = [];
    for (const r of rows) {
      if (r.time_base === 'device_tick_none' && r.untimed > 0) {
        out.push({
          code: 'no-time-base', severity: 'error', capture_id: r.capture_id, device: r.device,
          message: msg.noTimeBase(r.device, r.untimed), advice: msg.noTimeBaseAdvice(), untimed_dispatches: r.untimed,
        });
      } else if (r.time_base === 'device_tick_assumed' && r.assumed > 0) {
        out.push({
          code: 'no-time-base', severity: 'info', capture_id: r.capture_id, device: r.device,
          message: msg.assumedTimeBase(r.device, r.assumed_hz), advice: msg.assumedTimeBaseAdvice(),
          assumed_dispatches: r.assumed, tick_hz_assumed: r.assumed_hz === null ? null : Number(r.assumed_hz),
        });
      }
    }
    return out;
  },
});

/** `clock-fit-poor`: the fit's error against the median dispatch it times; the slope's error against durations. */
export const clockFitPoor = defineRule({
  code: 'clock-fit-poor',
  worst: 'error',
  shape: {
    capture_id: 'number', device: 'number', clock_samples: 'number', fit_uncertainty_ns: 'number?', fit_slope_uncertainty_ppm: 'number?',
    fit_residual_max_ns: 'number?', excess_max_ns: 'number?', median_dur_ns: 'number?', dispatches: 'number?',
  },
  sql: (scope) => `WITH med AS (
      SELECT capture_id, device, median(dur_ns)::DOUBLE AS median_dur_ns, count(*) AS dispatches
      FROM ${chosenDispatchesSql(scope)} c WHERE c.valid AND c.dur_ns IS NOT NULL GROUP BY capture_id, device),
    ex AS (
      SELECT capture_id, device, max(greatest(abs(residual_ns) - (host_end_ns - host_begin_ns) / 2.0, 0)) AS excess_max_ns
      FROM clock_samples WHERE ${captureFilter(scope)} AND residual_ns IS NOT NULL GROUP BY capture_id, device)
    SELECT d.capture_id, d.device, d.clock_samples, d.fit_uncertainty_ns, d.fit_slope_uncertainty_ppm, d.fit_residual_max_ns,
      ex.excess_max_ns, med.median_dur_ns, med.dispatches
    FROM devices d LEFT JOIN med ON med.capture_id = d.capture_id AND med.device = d.device
      LEFT JOIN ex ON ex.capture_id = d.capture_id AND ex.device = d.device
    WHERE ${captureFilter(scope, 'd')} AND d.time_base = 'device_tick_fit'
    ORDER BY d.capture_id, d.device`,
  evaluate: (rows, { thresholds: t }) => {
    const out: Finding[] = [];
    for (const r of rows) {
      // two samples fit exactly: no scatter to judge
      if (r.clock_samples < 3 || r.median_dur_ns === null || !(r.median_dur_ns > 0)) continue;
      const uncertainty = r.fit_uncertainty_ns ?? 0;
      const excess = r.excess_max_ns ?? 0;
      const err = Math.max(uncertainty, excess);
      const share = err / r.median_dur_ns;
      const common = {
        code: 'clock-fit-poor' as const, capture_id: r.capture_id, device: r.device,
        fit_uncertainty_ns: round(uncertainty), fit_excess_residual_max_ns: round(excess), fit_residual_max_ns: r.fit_residual_max_ns === null ? null : round(r.fit_residual_max_ns),
        median_dispatch_ns: round(r.median_dur_ns), fit_error_over_median_dispatch_fraction: round(share, 4),
        fit_slope_uncertainty_ppm: r.fit_slope_uncertainty_ppm === null ? null : round(r.fit_slope_uncertainty_ppm, 4), clock_samples: r.clock_samples,
      };
      if (share >= t.fit_warning_fraction) {
        out.push({
          ...common, severity: share >= t.fit_error_fraction ? 'error' : 'warning',
          message: msg.fitPoor(r.device, err, uncertainty, excess, r.median_dur_ns, share), advice: msg.fitPoorAdvice(),
        });
      } else if ((r.fit_slope_uncertainty_ppm ?? 0) > t.fit_slope_warning_ppm) {
        out.push({
          ...common, severity: 'warning',
          message: msg.fitSlopePoor(r.device, r.fit_slope_uncertainty_ppm!, r.clock_samples), advice: msg.fitSlopePoorAdvice(),
        });
      }
    }
    return out;
  },
});
