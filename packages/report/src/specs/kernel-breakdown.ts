import type { ReportKernel } from '../report/model';
import { KIND_COLORS, VEGA_LITE_SCHEMA, r6, type VegaLiteSpec } from './common';

/** Longest kernel name on the axis; longer ones are clipped in the middle (the whole name in the tooltip). */
export const AXIS_NAME_MAX = 56;

/** A kernel name for an axis label: clipped in the middle, so both ends (which tell kernels apart) stay. */
export function clipName(name: string, max = AXIS_NAME_MAX): string {
  if (name.length <= max) return name;
  const head = Math.ceil((max - 1) * 0.6);
  return `${name.slice(0, head)}…${name.slice(name.length - (max - 1 - head))}`;
}

/** Kernels shown per device before the rest are folded into "other". */
export const TOP_KERNELS = 12;

/**
 * Per device, each kernel's share of the device's busy time (its total over
 * the union of all dispatches) as a bar, with its dispatch count beside it;
 * the top {@link TOP_KERNELS} by time, the rest summed as "other (N kernels)".
 */
export function kernelBreakdownSpec(kernels: readonly ReportKernel[], kinds: ReadonlyMap<string, string>, deviceOrder: readonly string[]): VegaLiteSpec {
  const values: Record<string, unknown>[] = [];
  for (const label of deviceOrder) {
    const mine = kernels.filter((k) => k.label === label).sort((a, b) => (a.total_ns === b.total_ns ? a.kernel.localeCompare(b.kernel) : a.total_ns > b.total_ns ? -1 : 1));
    const top = mine.slice(0, TOP_KERNELS);
    const rest = mine.slice(TOP_KERNELS);
    for (const [i, k] of top.entries()) {
      values.push({ device: label, kind: kinds.get(label) ?? 'unknown', rank: i, kernel: clipName(k.kernel), name: k.kernel, share_of_busy: r6(k.share_of_busy ?? 0), dispatches: k.count, total_ms: r6(Number(k.total_ns) / 1e6), mean_ms: r6(k.mean_ns / 1e6) });
    }
    if (rest.length) {
      const total = rest.reduce((a, k) => a + k.total_ns, 0n);
      values.push({
        device: label, kind: kinds.get(label) ?? 'unknown', rank: TOP_KERNELS, kernel: `other (${rest.length} kernels)`, name: `other (${rest.length} kernels)`,
        share_of_busy: r6(rest.reduce((a, k) => a + (k.share_of_busy ?? 0), 0)), dispatches: rest.reduce((a, k) => a + k.count, 0),
        total_ms: r6(Number(total) / 1e6), mean_ms: null,
      });
    }
  }
  return {
    $schema: VEGA_LITE_SCHEMA,
    description: 'Kernel breakdown: share of busy time and dispatch count, per device',
    title: { text: 'Kernel breakdown', subtitle: 'share of the device\'s busy time (union); label: dispatches' },
    data: { values },
    facet: { row: { field: 'device', type: 'nominal', title: null, sort: [...deviceOrder], header: { labelAngle: 0, labelOrient: 'top', labelAnchor: 'start', labelAlign: 'left', labelLimit: 0, labelFontWeight: 'bold' } } },
    resolve: { scale: { y: 'independent' } },
    spec: {
      width: 420,
      encoding: {
        y: { field: 'kernel', type: 'nominal', title: null, sort: [...new Set(values.map((v) => String(v['kernel'])))], axis: { labelLimit: 0 } },
      },
      layer: [
        {
          mark: { type: 'bar', tooltip: true },
          encoding: {
            x: { field: 'share_of_busy', type: 'quantitative', title: 'share of busy time', axis: { format: '%', values: [0, 0.2, 0.4, 0.6, 0.8, 1] }, scale: { domain: [0, 1.12], nice: false } },
            color: { field: 'kind', type: 'nominal', legend: null, scale: { domain: [...KIND_COLORS.domain], range: [...KIND_COLORS.range] } },
            tooltip: [
              { field: 'name', type: 'nominal', title: 'kernel' },
              { field: 'share_of_busy', type: 'quantitative', title: 'share of busy', format: '.2%' },
              { field: 'dispatches', type: 'quantitative' },
              { field: 'total_ms', type: 'quantitative', title: 'total (ms)', format: ',.3f' },
              { field: 'mean_ms', type: 'quantitative', title: 'mean (ms)', format: ',.4f' },
            ],
          },
        },
        {
          mark: { type: 'text', align: 'left', dx: 4, fontSize: 10, color: '#444' },
          encoding: { x: { field: 'share_of_busy', type: 'quantitative' }, text: { field: 'dispatches', type: 'quantitative', format: ',d' } },
        },
      ],
    },
  };
}
