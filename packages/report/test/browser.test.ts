import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { collectReport, parseNotebook, renderNotebookHtml, reportHtml, runNotebook } from '../src/index';
import { CHROMIUM, closeBrowser, hasChromium, visit, type PageVisit } from './browser';
import { ROOT, XSS_KERNEL, XSS_LABEL, sampleStore, tmp, xssStore } from './sample-store';

/**
 * The report and the notebooks in a real headless Chromium (playwright-core,
 * Debian's chromium), served from 127.0.0.1: no console errors, no request
 * beyond the page itself, every chart draws marks (counted through the Vega
 * View API's scenegraph and in the SVG), a screenshot of the page and of
 * each chart saved under out/test-screenshots/.
 */
const skip = !hasChromium();
if (skip) console.warn(`skipping browser tests: no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set TICKWISE_CHROMIUM)`);

function expectClean(v: PageVisit, charts: readonly string[]): void {
  expect(v.errors).toEqual([]);
  expect(v.requests).toEqual([]);
  expect(v.chartErrors).toEqual([]);
  expect(v.dialogs).toEqual([]);
  expect(v.charts.map((c) => c.id).sort()).toEqual([...charts].sort());
  for (const c of v.charts) {
    expect(c.marks, `chart ${c.id}: scenegraph marks`).toBeGreaterThan(0);
    expect(c.svgElements, `chart ${c.id}: SVG mark elements`).toBeGreaterThan(0);
  }
  for (const s of v.screenshots) expect(existsSync(s), s).toBe(true);
}

describe.skipIf(skip)('in headless Chromium', () => {
  let store: Store;
  let dir: string;
  beforeAll(async () => {
    store = await Store.open(sampleStore(), { readOnly: true });
    dir = tmp();
  });
  afterAll(async () => {
    await store.close();
    await closeBrowser();
  });

  it('the report opens clean, draws every chart; the overview brush and the segment dropdown zoom the timeline', async () => {
    const data = await collectReport(store, { ceiling: { gpuKernel: '*_dispatch_6_matmul_512x8192x3072_*', gpuRowsPerDispatch: 512, npuTileMs: 6.0, rows: 8192 } });
    const file = join(dir, 'report.html');
    writeFileSync(file, reportHtml(data));
    let before: number[] = [];
    let after: number[] = [];
    let first: number[] = [];
    const steady = data.devices[0]!.segments[1]!;
    const v = await visit(file, 'report', {
      interact: async (page) => {
        const domain = () => page.evaluate(() => {
          const tw = (window as unknown as { __tickwise: { views: { id: string; view: { scale(n: string): { domain(): number[] } } }[] } }).__tickwise;
          return tw.views.find((x) => x.id === 'timeline')!.view.scale('concat_0_x').domain();
        });
        before = await domain();
        // drag a new brush on the overview, left of the current one (the cold first prefill)
        const handle = page.locator('.tw-chart[data-spec="timeline"] .brush_brush path').first();
        await handle.scrollIntoViewIfNeeded();
        const brush = (await handle.boundingBox())!;
        const y = brush.y + brush.height / 2;
        await page.mouse.move(brush.x - 300, y);
        await page.mouse.down();
        await page.mouse.move(brush.x - 200, y, { steps: 5 });
        await page.mouse.up();
        after = await domain();
        // the dropdown under the chart zooms the detail to a segment
        await page.locator('.tw-chart[data-spec="timeline"] select').selectOption({ label: 'iGPU · capture 1 device 0: segment 0 (first)' });
        first = await domain();
      },
    });
    expectClean(v, ['timeline', 'gaps', 'kernels', 'ceiling']);
    // opens zoomed into the first steady segment (the second prefill)
    const origin = data.timeline.origin_ns;
    expect(before[0]).toBeCloseTo(Number(steady.start_ns - origin) / 1e6, 1);
    expect(before[1]).toBeCloseTo(Number(steady.end_ns - origin) / 1e6, 1);
    expect(after[1]! - after[0]!).toBeLessThan(before[1]! - before[0]!);
    expect(after[1]!).toBeLessThan(before[0]!);
    const cold = data.devices[0]!.segments[0]!;
    expect(first[0]).toBeCloseTo(Number(cold.start_ns - origin) / 1e6, 1);
    expect(first[1]).toBeCloseTo(Number(cold.end_ns - origin) / 1e6, 1);
    expect(v.text).toContain('# capture 1: captures/sample/igpu-prefill.ireeperf.jsonl');
    const timeline = v.charts.find((c) => c.id === 'timeline')!;
    expect(timeline.marks).toBeGreaterThan(2000);
  });

  for (const name of ['capture-to-ceiling', 'idle-anatomy']) {
    it(`notebook ${name} opens clean and draws its charts`, async () => {
      const text = readFileSync(join(ROOT, 'notebooks', `${name}.md`), 'utf8');
      const run = await runNotebook(store, parseNotebook(text, `notebooks/${name}.md`));
      const file = join(dir, `${name}.html`);
      writeFileSync(file, renderNotebookHtml(run));
      const charts = run.cells.filter((c) => c.kind === 'vega-lite').map((_c, i) => `c${i + 1}`);
      expect(charts.length).toBeGreaterThanOrEqual(2);
      expectClean(await visit(file, `notebook-${name}`), charts);
    });
  }

  it('a kernel named <script>alert(1)</script> shows as text: in tables, chart labels and tooltips, and never runs', async () => {
    const x = await Store.open(xssStore(), { readOnly: true });
    try {
      const data = await collectReport(x, { maxIntervals: 200, ceiling: { rows: 8192 } });
      const file = join(dir, 'xss.html');
      writeFileSync(file, reportHtml(data));
      let seen = { table: '', label: false, tooltipText: '', tooltipHtml: '', executable: 0 };
      const v = await visit(file, 'report-xss', {
        interact: async (page) => {
          await page.locator('#kernels > details > summary').click();
          // hover the bar of that kernel in the breakdown chart to raise its tooltip
          const bars = page.locator('.tw-chart[data-spec="kernels"] g.mark-rect.role-mark path');
          const n = await bars.count();
          for (let i = 0; i < n; i++) {
            await bars.nth(i).hover({ force: true });
            const tip = await page.evaluate(() => document.getElementById('vg-tooltip-element')?.textContent ?? '');
            if (tip.includes('alert(1)')) break;
          }
          seen = await page.evaluate((k) => ({
            table: document.querySelector('#kernels table')?.textContent ?? '',
            label: [...document.querySelectorAll('.tw-chart[data-spec="kernels"] svg text')].some((t) => t.textContent === k),
            tooltipText: document.getElementById('vg-tooltip-element')?.textContent ?? '',
            tooltipHtml: document.getElementById('vg-tooltip-element')?.innerHTML ?? '',
            executable: [...document.scripts].filter((s) => s.type !== 'application/json' && (s.textContent ?? '').includes('alert(1)')).length,
          }), XSS_KERNEL);
        },
      });
      expectClean(v, ['timeline', 'gaps', 'kernels', 'ceiling']);
      expect(seen.table).toContain(XSS_KERNEL);
      expect(seen.label).toBe(true);
      expect(seen.tooltipText).toContain(XSS_KERNEL);
      expect(seen.tooltipHtml).toContain('&lt;script&gt;');
      expect(seen.executable).toBe(0);
      // the capture label names the device in tables, facet headers and the zoom dropdown: text too
      expect(v.text).toContain(XSS_LABEL);
      expect(v.requests).toEqual([]);
    } finally {
      await x.close();
    }
  });
});
