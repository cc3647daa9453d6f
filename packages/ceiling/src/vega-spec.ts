import type { CeilingResult } from './ceiling';
import { formatGroups, formatMs, formatSpeedup } from './format-numbers';

/** A Vega-Lite specification as a plain JSON object. */
export type VegaLiteSpec = { readonly [key: string]: unknown };

/** Six significant digits: enough for drawing, stable for goldens. */
function r6(x: number): number {
  return Number(x.toPrecision(6));
}

/**
 * A Vega-Lite (v5) spec of the split ceiling, for the report to draw.
 *
 * Left: per-GEMM speedup versus groups on the NPU, with today's costs and
 * (when a target was asked) with the NPU tile at the required time; the
 * optimum marked and labelled, a rule at 1x (break-even), a rule at the
 * target, a dotted rule at the continuous balance point k*, and the p10/p90
 * speedup range as an error bar at the optimum when measured.
 * Right (only with a target): a bar of today's NPU tile time next to the
 * tile time the target needs.
 *
 * Data are inline, so the spec is self-contained JSON.
 */
export function ceilingSpec(r: CeilingResult): VegaLiteSpec {
  const todayLabel = `today (NPU tile ${formatMs(r.npu_tile_ms)} ms)`;
  const reqLabel = r.required_npu_tile_ms !== null && r.target_speedup !== null
    ? `NPU tile at ${formatMs(r.required_npu_tile_ms)} ms (needed for ${formatSpeedup(r.target_speedup)})` : null;
  const lines: Record<string, unknown>[] = [];
  for (const c of r.curve) {
    lines.push({ npu_groups: c.npu_groups, speedup: r6(c.speedup), split_ms: r6(c.split_ms), series: todayLabel });
  }
  if (reqLabel !== null) {
    for (const c of r.curve) {
      if (c.speedup_at_required_tile !== null) lines.push({ npu_groups: c.npu_groups, speedup: r6(c.speedup_at_required_tile), series: reqLabel });
    }
  }
  const series = reqLabel === null ? [todayLabel] : [todayLabel, reqLabel];
  const x = { field: 'npu_groups', type: 'quantitative', title: 'groups on the NPU (k)', axis: { tickMinStep: 1 } };
  const y = { field: 'speedup', type: 'quantitative', title: 'per-GEMM speedup (x)' };
  const layers: Record<string, unknown>[] = [
    {
      data: { values: lines },
      mark: { type: 'line', point: true },
      encoding: {
        x,
        y,
        color: {
          field: 'series',
          type: 'nominal',
          title: null,
          legend: { orient: 'bottom', direction: 'vertical', labelLimit: 400 },
          scale: { domain: series, range: ['#4c78a8', '#f58518'].slice(0, series.length) },
        },
        strokeDash: { field: 'series', type: 'nominal', title: null, scale: { domain: series, range: [[1, 0], [6, 3]].slice(0, series.length) } },
        tooltip: [
          { field: 'series', type: 'nominal' },
          { field: 'npu_groups', type: 'quantitative', title: 'k' },
          { field: 'speedup', type: 'quantitative', format: '.3f' },
          { field: 'split_ms', type: 'quantitative', title: 'wall ms', format: '.3f' },
        ],
      },
    },
    {
      data: { values: [{ speedup: 1, label: 'break-even' }] },
      mark: { type: 'rule', color: 'gray', strokeDash: [2, 2] },
      encoding: { y: { field: 'speedup', type: 'quantitative' } },
    },
    {
      data: { values: [{ npu_groups: r6(r.balance_groups), label: `k* = ${formatGroups(r.balance_groups)}` }] },
      layer: [
        { mark: { type: 'rule', color: 'gray', strokeDash: [1, 3] }, encoding: { x: { field: 'npu_groups', type: 'quantitative' } } },
        {
          mark: { type: 'text', align: 'left', baseline: 'bottom', dx: 3, y: 0, dy: 12, color: 'gray' },
          encoding: { x: { field: 'npu_groups', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    },
  ];
  if (r.target_speedup !== null) {
    layers.push({
      data: { values: [{ speedup: r6(r.target_speedup), label: `target ${formatSpeedup(r.target_speedup)}` }] },
      layer: [
        { mark: { type: 'rule', color: '#e45756', strokeDash: [6, 3] }, encoding: { y: { field: 'speedup', type: 'quantitative' } } },
        {
          mark: { type: 'text', align: 'right', baseline: 'bottom', x: 'width', dy: -2, color: '#e45756' },
          encoding: { y: { field: 'speedup', type: 'quantitative' }, text: { field: 'label' } },
        },
      ],
    });
  }
  if (r.speedup_range !== null) {
    layers.push({
      data: { values: [{ npu_groups: r.npu_groups, low: r6(r.speedup_range.low.speedup), high: r6(r.speedup_range.high.speedup) }] },
      mark: { type: 'rule', strokeWidth: 2, color: 'black' },
      encoding: {
        x: { field: 'npu_groups', type: 'quantitative' },
        y: { field: 'low', type: 'quantitative' },
        y2: { field: 'high' },
        tooltip: [
          { field: 'low', type: 'quantitative', title: 'speedup p10/p90 low', format: '.3f' },
          { field: 'high', type: 'quantitative', title: 'speedup p10/p90 high', format: '.3f' },
        ],
      },
    });
  }
  layers.push({
    data: { values: [{ npu_groups: r.npu_groups, speedup: r6(r.speedup), label: `best k = ${r.npu_groups}: ${formatSpeedup(r.speedup)}` }] },
    layer: [
      { mark: { type: 'point', filled: true, size: 140, color: 'black', shape: 'diamond' }, encoding: { x: { field: 'npu_groups', type: 'quantitative' }, y } },
      {
        mark: { type: 'text', align: 'left', dx: 8, dy: -10, fontWeight: 'bold' },
        encoding: { x: { field: 'npu_groups', type: 'quantitative' }, y, text: { field: 'label' } },
      },
    ],
  });

  const panels: Record<string, unknown>[] = [{ width: 420, height: 260, layer: layers }];
  if (r.required_npu_tile_ms !== null && r.target_speedup !== null && r.required?.npu_tile_ms_now != null) {
    const forTarget = `for ${formatSpeedup(r.target_speedup)}`;
    panels.push({
      width: 140,
      height: 260,
      title: 'NPU ms per tile',
      data: {
        values: [
          { tile: 'today', tile_ms: r6(r.required.npu_tile_ms_now) },
          { tile: forTarget, tile_ms: r6(r.required_npu_tile_ms) },
        ],
      },
      layer: [
        {
          mark: { type: 'bar' },
          encoding: {
            x: { field: 'tile', type: 'nominal', sort: null, title: null, axis: { labelAngle: 0 } },
            y: { field: 'tile_ms', type: 'quantitative', title: 'ms per tile' },
            color: { field: 'tile', type: 'nominal', legend: null, scale: { domain: ['today', forTarget], range: ['#4c78a8', '#e45756'] } },
          },
        },
        {
          mark: { type: 'text', dy: -6 },
          encoding: {
            x: { field: 'tile', type: 'nominal', sort: null },
            y: { field: 'tile_ms', type: 'quantitative' },
            text: { field: 'tile_ms', type: 'quantitative', format: '.2f' },
          },
        },
      ],
    });
  }
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    description: 'Split ceiling: per-GEMM speedup versus row groups on the NPU',
    title: {
      text: `Split ceiling: ${r.rows} rows, ${r.groups} groups of ${r.group_rows}`,
      subtitle: `best: ${r.npu_groups} groups on the NPU, ${formatSpeedup(r.speedup)}; balance k* = ${formatGroups(r.balance_groups)}` +
        (r.end_to_end_speedup !== null && r.splittable_fraction !== null ? `; end-to-end ${formatSpeedup(r.end_to_end_speedup)}` : ''),
    },
    hconcat: panels,
    // the line colours (series) and the bar colours (today / required) are different things
    resolve: { scale: { color: 'independent', strokeDash: 'independent' }, legend: { color: 'independent', strokeDash: 'independent' } },
  };
}
