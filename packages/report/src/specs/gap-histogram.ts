import type { HistogramBar } from '../report/model';
import { CLASS_COLORS, VEGA_LITE_SCHEMA, r6, type VegaLiteSpec } from './common';

/**
 * Per device, the idle time held by gaps of each length, on log2 buckets
 * (bucket k: 2^k <= gap_ns < 2^(k+1)) drawn on a log axis in microseconds,
 * stacked by class (between submissions / inside one), with the threshold
 * marked as a rule.
 */
export function gapHistogramSpec(bars: readonly HistogramBar[], thresholdNs: bigint, deviceOrder: readonly string[]): VegaLiteSpec {
  const thresholdUs = r6(Number(thresholdNs) / 1e3);
  // stacked here, not by Vega-Lite: between submissions at the bottom, inside a submission on top
  const below = new Map<string, number>();
  const ordered = [...bars].sort((a, b) => a.label.localeCompare(b.label) || a.bucket - b.bucket || (a.class === b.class ? 0 : a.class === 'between submissions' ? -1 : 1));
  const values = ordered.map((b) => {
    const key = `${b.label}|${b.bucket}`;
    const idle = Number(b.idle_ns) / 1e6;
    const y0 = below.get(key) ?? 0;
    below.set(key, y0 + idle);
    return {
      device: b.label,
      class: b.class,
      lo_us: r6(Number(b.lo_ns) / 1e3),
      hi_us: r6(Number(b.hi_ns) / 1e3),
      gaps: b.count,
      idle_ms: r6(idle),
      y0_ms: r6(y0),
      y1_ms: r6(y0 + idle),
      threshold_us: thresholdUs,
    };
  });
  return {
    $schema: VEGA_LITE_SCHEMA,
    description: 'Idle time by gap length (log2 buckets), per device, with the threshold',
    title: { text: 'Idle time by gap length', subtitle: `log2 buckets of gap length; red rule: the threshold (${thresholdUs} us)` },
    data: { values },
    facet: { row: { field: 'device', type: 'nominal', title: null, sort: [...deviceOrder], header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelAlign: 'left', labelLimit: 0, labelFontWeight: 'bold' } } },
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: 560,
      height: 150,
      layer: [
        {
          mark: { type: 'rect', tooltip: true, stroke: 'white', strokeWidth: 0.5 },
          encoding: {
            x: { field: 'lo_us', type: 'quantitative', scale: { type: 'log' }, title: 'gap length (us, log scale)' },
            x2: { field: 'hi_us' },
            y: { field: 'y1_ms', type: 'quantitative', title: 'idle (ms)' },
            y2: { field: 'y0_ms' },
            color: { field: 'class', type: 'nominal', title: 'gap', scale: { domain: [...CLASS_COLORS.domain], range: [...CLASS_COLORS.range] } },
            tooltip: [
              { field: 'device', type: 'nominal' },
              { field: 'class', type: 'nominal' },
              { field: 'lo_us', type: 'quantitative', title: 'from (us)' },
              { field: 'hi_us', type: 'quantitative', title: 'to (us)' },
              { field: 'gaps', type: 'quantitative' },
              { field: 'idle_ms', type: 'quantitative', title: 'idle (ms)', format: ',.3f' },
            ],
          },
        },
        {
          mark: { type: 'rule', color: '#d62728', strokeWidth: 2 },
          // aggregated: one rule per device, not one per bar
          encoding: { x: { aggregate: 'max', field: 'threshold_us', type: 'quantitative' } },
        },
      ],
    },
  };
}
