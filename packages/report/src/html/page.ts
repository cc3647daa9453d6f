/**
 * The self-contained HTML page every report and notebook is written into:
 * styles, the inlined chart libraries, chart specs as JSON data elements,
 * and a small script that embeds them. Nothing is fetched: a CSP forbids
 * every network source, so a stray URL fails loudly instead of leaking.
 *
 * ```
 * body HTML with <div class="tw-chart" data-spec="ID"> placeholders
 *   + specs { ID: Vega-Lite spec }  ──> <script type="application/json" id="tw-spec-ID">
 *   + vega, vega-lite, vega-embed   ──> inline <script>s (UMD globals)
 *   + bootstrap                     ──> vegaEmbed(div, spec, {renderer: 'svg'})
 *                                       window.__tickwise = {views, ready, errors}
 * ```
 */
import { escapeHtml, jsonForScript } from './escape';
import { vendorScripts } from './vendor';

/** What a page holds. */
export interface PageInput {
  /** The title (escaped here). */
  readonly title: string;
  /** Body HTML: already built from escaped pieces. */
  readonly body: string;
  /** Chart specs by id; each drawn into `<div class="tw-chart" data-spec="ID">`. */
  readonly specs: Readonly<Record<string, unknown>>;
  /** A line under the title in the page's meta description (escaped here). */
  readonly description?: string;
}

/** No network at all: only inline scripts/styles and data: images. Vega compiles expressions with Function(), hence unsafe-eval. */
export const PAGE_CSP =
  "default-src 'none'; script-src 'unsafe-inline' 'unsafe-eval'; style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'";

const STYLE = `
:root { --fg: #1d2330; --muted: #5b6475; --line: #d9dde5; --bg: #ffffff; --band: #f5f7fa; --accent: #4c78a8; --warn: #b35c00; --err: #b00020; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px 28px 64px; font: 14px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 6px; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); padding-bottom: 4px; } h3 { font-size: 15px; margin: 18px 0 6px; }
code, pre, .num, .prov { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px; }
pre.code { background: var(--band); border: 1px solid var(--line); padding: 8px 10px; overflow-x: auto; }
.prov { background: var(--band); border-left: 3px solid var(--accent); padding: 6px 10px; white-space: pre-wrap; word-break: break-word; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border-bottom: 1px solid var(--line); padding: 3px 10px; vertical-align: top; }
th { text-align: left; background: var(--band); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.muted { color: var(--muted); } .small { font-size: 12px; }
.finding { margin: 2px 0; } .finding .sev { display: inline-block; min-width: 64px; font-weight: 600; }
.sev-error { color: var(--err); } .sev-warning { color: var(--warn); } .sev-info { color: var(--muted); }
.tw-chart { margin: 8px 0 18px; min-height: 40px; max-width: 100%; overflow-x: auto; }
.table-wrap { max-width: 100%; overflow-x: auto; margin: 6px 0 12px; }
.table-wrap > table { margin: 0; }
td { overflow-wrap: break-word; }
.covers { color: var(--muted); font-size: 12px; margin: 4px 0 2px; }
span.name { cursor: help; border-bottom: 1px dotted var(--line); white-space: nowrap; }
.table-wrap td:first-child { min-width: 13em; }
.verdict { background: var(--band); border-left: 4px solid var(--accent); padding: 8px 12px; margin: 10px 0 14px; font-size: 15px; font-weight: 600; overflow-wrap: break-word; }
.verdict-line + .verdict-line { margin-top: 4px; }
.text-block { font-size: 13px; margin: 6px 0 10px; overflow-wrap: anywhere; }
.text-block .indent { padding-left: 18px; }
.tw-chart-error { color: var(--err); white-space: pre-wrap; }
.cell { margin: 10px 0 18px; } .cell-head { font-size: 12px; color: var(--muted); margin-bottom: 2px; }
details > summary { cursor: pointer; color: var(--muted); font-size: 12px; }
.more { color: var(--muted); font-size: 12px; }
`;

const BOOTSTRAP = `
(function () {
  var tw = window.__tickwise = { views: [], errors: [], ready: null };
  var jobs = [];
  if (typeof vegaEmbed === 'undefined') { tw.ready = Promise.resolve(); document.documentElement.setAttribute('data-tw-ready', '0'); return; }
  document.querySelectorAll('.tw-chart[data-spec]').forEach(function (el) {
    var id = el.getAttribute('data-spec');
    var data = document.getElementById('tw-spec-' + id);
    var spec = JSON.parse(data.textContent);
    jobs.push(vegaEmbed(el, spec, { renderer: 'svg', actions: { export: true, source: false, compiled: false, editor: false } })
      .then(function (res) { tw.views.push({ id: id, view: res.view }); })
      .catch(function (err) {
        tw.errors.push({ id: id, message: String(err && err.message || err) });
        var box = document.createElement('div');
        box.className = 'tw-chart-error';
        box.textContent = 'chart ' + id + ' failed: ' + String(err && err.message || err);
        el.appendChild(box);
        console.error('tickwise chart ' + id + ': ' + String(err && err.message || err));
      }));
  });
  tw.ready = Promise.all(jobs).then(function () { document.documentElement.setAttribute('data-tw-ready', String(tw.views.length)); });
})();
`;

/** The chart placeholder for spec `id` (ids are generated, never from a capture). */
export function chartDiv(id: string, label?: string): string {
  return `<div class="tw-chart" data-spec="${escapeHtml(id)}"${label ? ` aria-label="${escapeHtml(label)}"` : ''}></div>`;
}

/** The whole page as one HTML string. */
export function htmlPage(input: PageInput): string {
  const vendor = vendorScripts();
  const specs = Object.entries(input.specs)
    .map(([id, spec]) => `<script type="application/json" id="tw-spec-${escapeHtml(id)}">${jsonForScript(spec)}</script>`)
    .join('\n');
  const hasCharts = Object.keys(input.specs).length > 0;
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(PAGE_CSP)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="generator" content="tickwise (${vendor.map((v) => `${v.name} ${v.version}`).join(', ')})">`,
    input.description ? `<meta name="description" content="${escapeHtml(input.description)}">` : '',
    `<title>${escapeHtml(input.title)}</title>`,
    `<style>${STYLE}</style>`,
    ...(hasCharts ? vendor.map((v) => `<script>/* ${v.name} ${v.version} */\n${v.code}\n</script>`) : []),
    '</head>',
    '<body>',
    input.body,
    specs,
    `<script>${BOOTSTRAP}</script>`,
    '</body>',
    '</html>',
    '',
  ].filter((x) => x !== '').join('\n');
}
