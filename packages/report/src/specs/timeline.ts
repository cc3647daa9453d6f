import type { ReportDevice, ReportTimeline, TimelineGroup } from '../report/model';
import { FULL_WIDTH, KIND_COLORS, VEGA_LITE_SCHEMA, msSince, r6, type VegaLiteSpec } from './common';

/**
 * Per device, a busy/idle timeline: bars where the device is busy, white
 * where it idles, all devices on one time axis (ms since the first
 * dispatch). Two views: the detail on top and an overview below; dragging
 * on the overview (a brush) zooms the detail. The brush opens on the first
 * steady segment, so the page starts zoomed into one prefill; segments are
 * drawn as labelled bands in both views, and a dropdown under the chart
 * zooms the detail to any segment (its `domainRaw` overrides the brush
 * until "the overview brush" is chosen again). Bars are shaded by how much of
 * them is busy (aggregated bars of big captures are not all busy).
 */
export function timelineSpec(t: ReportTimeline, allDevices: readonly ReportDevice[], group?: TimelineGroup): VegaLiteSpec {
  const g: TimelineGroup = group ?? t.groups[0] ?? { id: 'timeline', title: '', capture_ids: [], labels: allDevices.map((d) => d.label), origin_ns: t.origin_ns, end_ns: t.origin_ns };
  const devices = allDevices.filter((d) => g.labels.includes(d.label));
  const origin = g.origin_ns;
  const kindOf = new Map(devices.map((d) => [d.label, d.kind]));
  // rows are named short ("iGPU · device 0"): the capture is in the title, the whole label in the tooltip
  const rowOf = new Map(devices.map((d) => [d.label, d.row_label]));
  const busy = t.intervals.filter((i) => rowOf.has(i.label)).map((i) => ({
    device: rowOf.get(i.label)!,
    label: i.label,
    kind: kindOf.get(i.label) ?? 'unknown',
    start_ms: msSince(i.start_ns, origin),
    end_ms: msSince(i.end_ns, origin),
    busy_ms: r6(Number(i.busy_ns) / 1e6),
    busy_share: i.end_ns > i.start_ns ? r6(Number(i.busy_ns) / Number(i.end_ns - i.start_ns)) : 1,
    dispatches: i.dispatches,
    blocks: i.blocks,
  }));
  const segments = devices.flatMap((d) => (d.segments.length < 2 ? [] : d.segments.map((s) => ({
    device: d.row_label,
    name: `${s.segment}${s.role === 'first' ? ' (first)' : ''}`,
    start_ms: msSince(s.start_ns, origin),
    end_ms: msSince(s.end_ns, origin),
    dispatches: s.dispatches,
  }))));
  // a dropdown under the chart zooms the detail to one segment (scale domainRaw overrides the brush while set)
  const zoomable = devices.flatMap((d) => (d.segments.length < 2 ? [] : d.segments.map((s) => ({
    label: `${d.row_label}: segment ${s.segment}${s.role === 'first' ? ' (first)' : ''}`,
    range: [msSince(s.start_ns, origin), msSince(s.end_ns, origin)],
  }))));
  const window = openingWindow(devices, t);
  const brushValue = window ? { x: [msSince(window[0], origin), msSince(window[1], origin)] } : undefined;
  const rows = devices.map((d) => d.row_label);
  const longest = Math.max(...rows.map((r) => r.length), 8);
  const y = { field: 'device', type: 'nominal' as const, title: null, sort: rows, axis: { labelLimit: 0, labelFontSize: 11, minExtent: Math.min(260, 7 * longest) } };
  const tooltip = [
    { field: 'label', type: 'nominal' as const, title: 'device' },
    { field: 'start_ms', type: 'quantitative' as const, title: 'start (ms)', format: ',.3f' },
    { field: 'end_ms', type: 'quantitative' as const, title: 'end (ms)', format: ',.3f' },
    { field: 'busy_ms', type: 'quantitative' as const, title: 'busy (ms)', format: ',.3f' },
    { field: 'busy_share', type: 'quantitative' as const, title: 'busy share', format: '.1%' },
    { field: 'dispatches', type: 'quantitative' as const },
    { field: 'blocks', type: 'quantitative' as const, title: 'busy blocks merged' },
  ];
  const color = { field: 'kind', type: 'nominal' as const, scale: { ...KIND_COLORS, domain: [...KIND_COLORS.domain], range: [...KIND_COLORS.range] }, title: 'device kind' };
  const opacity = { field: 'busy_share', type: 'quantitative' as const, scale: { domain: [0, 1], range: [0.25, 1] }, legend: null };
  // the detail's domain: the chosen segment, else the overview's brush (VL's top-level "brush" signal
  // holds the selection as {start_ms: [from, to]}), else everything
  const brushDomain = 'brush && brush.start_ms ? brush.start_ms : null';
  const detailX = {
    field: 'start_ms', type: 'quantitative' as const, title: `ms since the first dispatch of ${g.capture_ids.length > 1 ? 'these captures' : `capture ${g.capture_ids[0] ?? ''}`}`.trim(),
    scale: zoomable.length
      ? { domainRaw: { expr: `zoom_segment >= 0 ? ${JSON.stringify(zoomable.map((z) => z.range))}[zoom_segment] : (${brushDomain})` } }
      : { domain: { param: 'brush' } },
  };
  return {
    $schema: VEGA_LITE_SCHEMA,
    description: 'Busy/idle timeline per device; drag on the overview to zoom the detail',
    datasets: { busy, segments },
    ...(zoomable.length ? {
      params: [{
        name: 'zoom_segment',
        value: -1,
        bind: { input: 'select', name: 'zoom the detail to ', options: [-1, ...zoomable.map((_z, i) => i)], labels: ['the overview brush', ...zoomable.map((z) => z.label)] },
      }],
    } : {}),
    vconcat: [
      {
        title: { text: g.title ? `Busy / idle per device: ${g.title}` : 'Busy / idle per device', subtitle: 'bars: busy; gaps: idle. Drag on the overview below to zoom; double-click it to reset.', anchor: 'start' as const, limit: FULL_WIDTH },
        width: FULL_WIDTH,
        height: Math.max(60, 34 * rows.length),
        layer: [
          ...(segments.length ? [{
            data: { name: 'segments' },
            mark: { type: 'rect' as const, color: '#eeeeee', clip: true },
            encoding: { x: detailX, x2: { field: 'end_ms' }, y, tooltip: [{ field: 'name', title: 'segment' }, { field: 'dispatches', type: 'quantitative' as const }] },
          }] : []),
          {
            data: { name: 'busy' },
            mark: { type: 'rect' as const, clip: true, tooltip: true },
            encoding: { x: detailX, x2: { field: 'end_ms' }, y, color, opacity, tooltip },
          },
        ],
      },
      {
        width: FULL_WIDTH,
        height: Math.max(30, 14 * rows.length),
        layer: [
          ...(segments.length ? [
            {
              data: { name: 'segments' },
              mark: { type: 'rect' as const, color: '#eeeeee' },
              encoding: { x: { field: 'start_ms', type: 'quantitative' as const, title: 'overview: drag to zoom' }, x2: { field: 'end_ms' }, y: { ...y, axis: null } },
            },
            {
              data: { name: 'segments' },
              mark: { type: 'text' as const, align: 'left' as const, baseline: 'top' as const, dx: 2, dy: -12, fontSize: 9, color: '#666' },
              encoding: { x: { field: 'start_ms', type: 'quantitative' as const }, text: { field: 'name' } },
            },
          ] : []),
          {
            data: { name: 'busy' },
            params: [{ name: 'brush', select: { type: 'interval' as const, encodings: ['x' as const] }, ...(brushValue ? { value: brushValue } : {}) }],
            mark: { type: 'rect' as const },
            encoding: {
              x: { field: 'start_ms', type: 'quantitative' as const, title: 'overview: drag to zoom' },
              x2: { field: 'end_ms' },
              y: { ...y, axis: null },
              color: { ...color, legend: null },
            },
          },
        ],
      },
    ],
    resolve: { scale: { color: 'shared' } },
  };
}

/**
 * Where the detail opens (issue 18.5): a window in which every device of the
 * timeline shows. Each device contributes its first steady segment (its
 * whole span when it has no repetitions); the window is their hull, so it
 * opens on one prefill of a device with repetitions and still reaches the
 * others.
 */
export function openingWindow(devices: readonly ReportDevice[], t: ReportTimeline): [bigint, bigint] | null {
  let lo: bigint | null = null;
  let hi: bigint | null = null;
  for (const d of devices) {
    let a: bigint | undefined;
    let b: bigint | undefined;
    const steady = d.segments.length >= 2 ? d.segments[1] : undefined;
    if (steady) {
      a = steady.start_ns;
      b = steady.end_ns;
    } else {
      for (const i of t.intervals) {
        if (i.label !== d.label) continue;
        if (a === undefined || i.start_ns < a) a = i.start_ns;
        if (b === undefined || i.end_ns > b) b = i.end_ns;
      }
    }
    if (a === undefined || b === undefined) continue;
    lo = lo === null || a < lo ? a : lo;
    hi = hi === null || b > hi ? b : hi;
  }
  return lo !== null && hi !== null && hi > lo ? [lo, hi] : null;
}
