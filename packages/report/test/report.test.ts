import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as vega from 'vega';
import { compile } from 'vega-lite';
import { gaps, rowGroupCost } from '@tickwise/analyzer';
import { Store } from '@tickwise/store';
import { collectReport, globLiteral, globMatches, reportHtml, reportMarkdown, reportSpecs, type ReportData } from '../src/index';
import { XSS_KERNEL, XSS_LABEL, sampleStore, xssStore } from './sample-store';

/** Renders a Vega-Lite spec server-side (vega View, no browser); returns the data mark items. */
async function renderMarks(spec: Record<string, unknown>): Promise<number> {
  const view = new vega.View(vega.parse(compile(spec as never).spec), { renderer: 'none' });
  await view.runAsync();
  type Item = { items?: Item[]; marktype?: string; role?: string };
  const count = (node: Item): number => {
    if (node.marktype !== undefined) {
      if (node.marktype === 'group') return (node.items ?? []).reduce((n, g) => n + (g.items ?? []).reduce((m, c) => m + count(c), 0), 0);
      return node.role === 'mark' ? (node.items ?? []).length : 0;
    }
    return (node.items ?? []).reduce((n, c) => n + count(c), 0);
  };
  const n = count((view.scenegraph() as unknown as { root: Item }).root);
  view.finalize();
  return n;
}

describe('the report of the sample captures', () => {
  let store: Store;
  let data: ReportData;
  beforeAll(async () => {
    store = await Store.open(sampleStore(), { readOnly: true });
    data = await collectReport(store, { ceiling: { rows: 8192 } });
  });
  afterAll(async () => { await store.close(); });

  it('device numbers are the analyzer\'s gaps() over the segments kernels and costs use (steady where there are repetitions)', async () => {
    for (const d of data.devices) {
      const g = await gaps(store, { captureId: d.capture_id, device: d.device, segment: d.steady_choice });
      const s = g.scopes.find((x) => x.capture_id === d.capture_id && x.device === d.device && x.queue === null)!;
      expect([d.span_ns, d.busy_ns, d.idle_ns, d.gap_count]).toEqual([s.span_ns, s.busy_ns, s.idle_ns, s.gap_count]);
    }
    expect(data.devices.map((d) => d.label)).toEqual(['iGPU · igpu-prefill (capture 1, device 0)', 'NPU · npu-tiles (capture 2, device 0)']);
    expect(data.devices.map((d) => d.steady_choice)).toEqual(['steady', 'all']);
    expect(data.devices.map((d) => d.coverage)).toEqual(['steady segment 1 of 2', 'one segment']);
    // one default on the page: the Devices row counts what the kernel table counts
    for (const d of data.devices) expect(data.kernels.filter((k) => k.label === d.label).reduce((a, k) => a + k.count, 0)).toBe(d.dispatches);
  });

  it('timeline bars keep every device\'s busy time exactly (all segments: the timeline shows everything), at any aggregation', async () => {
    const all = (await gaps(store)).scopes.filter((x) => x.queue === null);
    const whole = (d: { capture_id: number; device: number }) => all.find((x) => x.capture_id === d.capture_id && x.device === d.device)!;
    for (const max of [2000, 40, 1]) {
      const r = max === 2000 ? data : await collectReport(store, { maxIntervals: max, ceiling: null });
      for (const d of r.devices) {
        const bars = r.timeline.intervals.filter((i) => i.label === d.label);
        expect(bars.length).toBeLessThanOrEqual(max);
        expect(bars.reduce((a, b) => a + b.busy_ns, 0n)).toBe(whole(d).busy_ns);
        expect(bars.reduce((a, b) => a + b.dispatches, 0)).toBe(whole(d).dispatches);
        expect(bars[0]!.start_ns).toBe(r.devices.find((x) => x.label === d.label)!.segments[0]?.start_ns ?? bars[0]!.start_ns);
        for (let i = 1; i < bars.length; i++) expect(bars[i]!.start_ns > bars[i - 1]!.end_ns).toBe(true);
      }
    }
    // unmerged: one bar per busy block (the iGPU sample has 2028 blocks: gaps + 1)
    const igpu = data.timeline.aggregation[0]!;
    expect(igpu.raw_blocks).toBe(whole(data.devices[0]!).gap_count + 1);
    expect(igpu.intervals).toBe(2000);
    expect(igpu.merged_gap_max_ns).not.toBeNull();
  });

  it('the gap histogram holds every gap the Devices table counts (the same segments), split by class as the analyzer splits them', () => {
    for (const d of data.devices) {
      const bars = data.histogram.filter((b) => b.label === d.label);
      expect(bars.reduce((a, b) => a + b.count, 0)).toBe(d.gap_count);
      expect(bars.reduce((a, b) => a + b.idle_ns, 0n)).toBe(d.idle_ns);
      const between = bars.filter((b) => b.class === 'between submissions');
      expect(between.reduce((a, b) => a + b.count, 0)).toBe(d.between_submissions.count);
      expect(between.reduce((a, b) => a + b.idle_ns, 0n)).toBe(d.between_submissions.idle_ns);
      for (const b of bars) expect(b.hi_ns).toBe(b.lo_ns * 2n);
    }
  });

  it('the per-row-group cost table covers the GEMMs; the ceiling is derived from the NPU capture\'s GEMM', async () => {
    expect(data.costs.map((c) => c.kernel).sort()).toEqual([
      'npu_prefill_dispatch_6_matmul_256x8192x3072_bf16',
      'prefill_dispatch_2_matmul_512x5120x3072_f16', 'prefill_dispatch_5_matmul_512x3072x3072_f16', 'prefill_dispatch_6_matmul_512x8192x3072_f16',
      'prefill_dispatch_7_matmul_512x8192x3072_f16', 'prefill_dispatch_9_matmul_512x3072x8192_f16',
    ]);
    expect(data.ceiling.kind).toBe('result');
    if (data.ceiling.kind !== 'result') return;
    const g = await rowGroupCost(store, { kernel: '*512x8192x3072*', rowsPerDispatch: 512, segment: 'steady', captureId: 1, device: 0 });
    const t = await rowGroupCost(store, { kernel: 'npu_*', rowsPerDispatch: 256, captureId: 2, device: 0 });
    expect(data.ceiling.result.gpu_group_ms).toBeCloseTo(g.group_ms, 12);
    expect(data.ceiling.result.npu_tile_ms).toBeCloseTo(t.group_ms, 12);
    expect(data.ceiling.result.rows).toBe(8192);
    expect(data.ceiling.result.target_speedup).toBe(1.15);
    expect(data.ceiling.inputs.join('\n')).toMatch(/derived: the GEMM with the NPU kernel's N x K = 8192 x 3072/);
  });

  it('without --rows (and no wall reference) the ceiling says what it needs', async () => {
    const r = await collectReport(store, { maxIntervals: 10 });
    expect(r.ceiling).toEqual({ kind: 'missing', missing: ['the rows to split: --rows M (e.g. the prompt length, 8192)'], found: expect.any(Array) });
    const explicit = await collectReport(store, { maxIntervals: 10, ceiling: { gpuKernel: '*_dispatch_6_matmul_*', gpuRowsPerDispatch: 512, npuTileMs: 6, rows: 8192 } });
    expect(explicit.ceiling.kind === 'result' && explicit.ceiling.result.npu_tile_ms).toBe(6);
  });

  it('every chart spec compiles and renders marks (vega, server side)', async () => {
    const specs = reportSpecs(data);
    expect(Object.keys(specs)).toEqual(['timeline', 'gaps', 'kernels', 'ceiling']);
    for (const [id, spec] of Object.entries(specs)) {
      const n = await renderMarks(spec);
      expect(n, id).toBeGreaterThan(0);
    }
    expect(await renderMarks(specs['gaps']!)).toBe(data.histogram.length + 2);
  });

  it('HTML and Markdown put provenance and findings first', () => {
    const html = reportHtml(data);
    const body = html.slice(html.indexOf('<body>'));
    expect(body.indexOf('id="provenance"')).toBeLessThan(body.indexOf('id="findings"'));
    expect(body.indexOf('id="findings"')).toBeLessThan(body.indexOf('id="devices"'));
    expect(body).toContain('# capture 1: captures/sample/igpu-prefill.ireeperf.jsonl');
    const md = reportMarkdown(data);
    const lines = md.split('\n');
    // the verdict first, then provenance
    expect(lines[2]).toMatch(/^\*\*GPU idle \d+ % \(steady segment 1 of 2\)/);
    expect(lines.findIndex((l) => /^# capture 1: captures\/sample\/igpu-prefill/.test(l))).toBeGreaterThan(2);
    expect(body.indexOf('id="verdict"')).toBeLessThan(body.indexOf('id="provenance"'));
    expect(md.indexOf('### Check findings')).toBeLessThan(md.indexOf('### Devices'));
  });
});

describe('escaping', () => {
  it('a kernel named <script>alert(1)</script> is text in HTML and Markdown', async () => {
    const store = await Store.open(xssStore(), { readOnly: true });
    try {
      const data = await collectReport(store, { maxIntervals: 50, ceiling: { rows: 8192 } });
      expect(data.kernels.some((k) => k.kernel === XSS_KERNEL)).toBe(true);
      const html = reportHtml(data);
      const body = html.slice(html.indexOf('<body>'));
      expect(body).not.toContain(XSS_KERNEL);
      expect(body).not.toContain(XSS_LABEL);
      expect(body).not.toContain('<img');
      expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
      expect(body).toContain('\\u003cscript\\u003ealert(1)\\u003c/script\\u003e');
      const md = reportMarkdown(data);
      // outside the fenced provenance block (code: shown as written, never rendered) nothing is raw
      const fence = md.indexOf('```text');
      const prose = md.slice(0, fence) + md.slice(md.indexOf('```', fence + 7) + 3);
      expect(md.slice(fence, md.indexOf('```', fence + 7))).toContain(XSS_LABEL);
      expect(prose).not.toContain(XSS_KERNEL);
      expect(prose).not.toContain(XSS_LABEL);
      expect(prose).not.toContain('<img');
      expect(md).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    } finally {
      await store.close();
    }
  });

  it('globLiteral matches exactly the name it was made from', () => {
    for (const name of [XSS_KERNEL, 'a*b?c[d]e', 'plain_512x8x8']) {
      expect(globMatches(globLiteral(name), name)).toBe(true);
      expect(globMatches(globLiteral(name), name + 'x')).toBe(false);
    }
    expect(globMatches(globLiteral('a*b'), 'aXXb')).toBe(false);
  });
});
