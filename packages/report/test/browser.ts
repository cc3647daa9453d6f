/**
 * Test helper: open a written HTML page in a real headless Chromium
 * (playwright-core with Debian's /usr/bin/chromium), served from 127.0.0.1
 * (one file, nothing else), recording every request and console message,
 * waiting for the page's charts, counting their marks through the Vega View
 * API, and saving a screenshot under out/test-screenshots/.
 */
import { createServer, type Server } from 'node:http';
import { mkdirSync, readFileSync, existsSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { ROOT } from './sample-store';

/** Where screenshots go (gitignored: out/). */
export const SCREENSHOT_DIR = join(ROOT, 'out', 'test-screenshots');

/** Chromium's path; tests skip with a message when it is absent. */
export const CHROMIUM = process.env['TICKWISE_CHROMIUM'] ?? '/usr/bin/chromium';

/** True when the browser can be launched here. */
export function hasChromium(): boolean {
  return existsSync(CHROMIUM);
}

/** What a page showed. */
export interface PageVisit {
  /** Every request the page made, beyond the one for the page itself. */
  readonly requests: readonly string[];
  /** Console messages of type error, and uncaught page errors. */
  readonly errors: readonly string[];
  /** Per chart (in page order): its spec id and the number of mark items in its scenegraph. */
  readonly charts: readonly { id: string; marks: number; svgElements: number }[];
  /** Chart errors the page's bootstrap caught. */
  readonly chartErrors: readonly { id: string; message: string }[];
  /** Text content of the body. */
  readonly text: string;
  /** Did an alert/confirm/prompt dialog open (it must not). */
  readonly dialogs: readonly string[];
  /** Screenshots written. */
  readonly screenshots: readonly string[];
}

let browser: BrowserContext | null = null;
let profile: string | null = null;

/** Launches the shared browser with a fresh profile (user data dir). */
export async function launch(): Promise<BrowserContext> {
  if (browser) return browser;
  profile = mkdtempSync(join(tmpdir(), 'tickwise-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
  return browser;
}

/** Closes the shared browser. */
export async function closeBrowser(): Promise<void> {
  await browser?.close();
  browser = null;
  if (profile) rmSync(profile, { recursive: true, force: true });
  profile = null;
}

function serve(html: Buffer): Promise<{ server: Server; url: string }> {
  return new Promise((resolve) => {
    const server = createServer((req, res) => {
      if (req.url === '/page.html') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        res.end(html);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${addr.port}/page.html` });
    });
  });
}

/**
 * Opens `file` and waits for its charts; `name` names the screenshots
 * (`<name>.png` of the full page and `<name>-<chart id>.png` of each chart).
 */
export async function visit(file: string, name: string, opts: { interact?: (page: import('playwright-core').Page) => Promise<void> } = {}): Promise<PageVisit> {
  const b = await launch();
  const { server, url } = await serve(readFileSync(file));
  const page = await b.newPage();
  const requests: string[] = [];
  const errors: string[] = [];
  const dialogs: string[] = [];
  page.on('request', (r) => { if (r.url() !== url) requests.push(r.url()); });
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { dialogs.push(`${d.type()}: ${d.message()}`); void d.dismiss(); });
  try {
    await page.goto(url, { waitUntil: 'load' });
    await page.waitForFunction(() => (window as unknown as { __tickwise?: { ready: Promise<void> | null } }).__tickwise?.ready != null);
    await page.evaluate(() => (window as unknown as { __tickwise: { ready: Promise<void> } }).__tickwise.ready);
    if (opts.interact) await opts.interact(page);
    const charts = await page.evaluate(() => {
      type Item = { items?: Item[]; marktype?: string; role?: string };
      // data marks only: a mark node with role "mark" counts its items; groups are walked, guides skipped
      const count = (node: Item | undefined): number => {
        if (!node) return 0;
        if (node.marktype !== undefined) {
          if (node.marktype === 'group') return (node.items ?? []).reduce((n, g) => n + (g.items ?? []).reduce((m, c) => m + count(c), 0), 0);
          return node.role === 'mark' ? (node.items ?? []).length : 0;
        }
        return (node.items ?? []).reduce((n, c) => n + count(c), 0);
      };
      const tw = (window as unknown as { __tickwise: { views: { id: string; view: { scenegraph(): { root: Item } } }[] } }).__tickwise;
      return tw.views.map(({ id, view }) => ({
        id,
        marks: count(view.scenegraph().root),
        svgElements: document.querySelectorAll(`.tw-chart[data-spec="${id}"] svg g.role-mark > *`).length,
      }));
    });
    const chartErrors = await page.evaluate(() => (window as unknown as { __tickwise: { errors: { id: string; message: string }[] } }).__tickwise.errors);
    const text = await page.evaluate(() => document.body.innerText);
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    const shots: string[] = [];
    const full = join(SCREENSHOT_DIR, `${name}.png`);
    await page.screenshot({ path: full, fullPage: true });
    shots.push(full);
    for (const c of charts) {
      const p = join(SCREENSHOT_DIR, `${name}-${c.id}.png`);
      await page.locator(`.tw-chart[data-spec="${c.id}"]`).screenshot({ path: p });
      shots.push(p);
    }
    return { requests, errors, charts, chartErrors, text, dialogs, screenshots: shots };
  } finally {
    await page.close();
    // the browser keeps its connection alive; close it, or close() waits for the idle timeout
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
}
