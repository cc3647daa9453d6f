import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GAP_THRESHOLD_NS, gaps, rowGroupCost } from '@tickwise/analyzer';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { parseNotebook, renderNotebookHtml, runNotebook, type NotebookRun, type SqlResult } from '../src/index';
import { ROOT, sampleStore, tickwise, tmp } from './sample-store';

const NOTEBOOKS = join(ROOT, 'notebooks');

function thrown(f: () => unknown): TickwiseError {
  try {
    f();
  } catch (e) {
    if (e instanceof TickwiseError) return e;
    throw e;
  }
  throw new Error('expected a TickwiseError');
}

async function rejected(p: Promise<unknown>): Promise<TickwiseError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof TickwiseError) return e;
    throw e;
  }
  throw new Error('expected a TickwiseError');
}

describe('notebook parsing', () => {
  const nb = [
    '# Title here', '', 'Some *prose*.', '',
    '```sql name=k show=5', 'select 1 as a', '```', '',
    '```text', 'not run', '```', '',
    '```vega-lite data=k', '{"mark": "point", "encoding": {"x": {"field": "a", "type": "quantitative"}}}', '```', '',
    'The end.',
  ].join('\n');

  it('splits prose, sql and vega-lite cells, with their lines; other fences stay prose', () => {
    const p = parseNotebook(nb, 'x.md');
    expect(p.title).toBe('Title here');
    expect(p.cells.map((c) => `${c.kind}@${c.line}`)).toEqual(['markdown@1', 'sql@5', 'markdown@8', 'vega-lite@13', 'markdown@16']);
    const sql = p.cells[1]!;
    expect(sql.kind === 'sql' && sql.name === 'k' && sql.show === 5 && sql.sql === 'select 1 as a').toBe(true);
    expect(p.cells[2]!.kind === 'markdown' && p.cells[2]!.text.includes('not run')).toBe(true);
  });

  it('names the file and line of every bad cell', () => {
    expect(thrown(() => parseNotebook('a\n```sql\nselect 1\n', 'nb.md')).where()).toBe('nb.md:2: code fence opened here is never closed (add a line with ``` after the cell)');
    expect(thrown(() => parseNotebook('```vega-lite data=nope\n{}\n```', 'nb.md')).where()).toMatch(/^nb\.md:1: vega-lite cell draws data=nope, but no sql cell above it is named nope/);
    expect(thrown(() => parseNotebook('```vega-lite\n{}\n```', 'nb.md')).where()).toMatch(/^nb\.md:1: vega-lite cell names no data/);
    expect(thrown(() => parseNotebook('```sql name=a\nselect 1\n```\n```sql name=a\nselect 2\n```', 'nb.md')).where()).toBe('nb.md:4: cell name "a" is already used by the cell at line 1');
    expect(thrown(() => parseNotebook('```sql name=dispatches\nselect 1\n```', 'nb.md')).where()).toMatch(/^nb\.md:1: cell name "dispatches" is a table of the store/);
    expect(thrown(() => parseNotebook('```sql nmae=a\nselect 1\n```', 'nb.md')).where()).toMatch(/^nb\.md:1: cannot read cell options "nmae=a"/);
    // a JSON error points at its line inside the cell
    const bad = '```sql name=a\nselect 1\n```\n```vega-lite data=a\n{\n  "mark": "bar",\n  "encoding": oops\n}\n```';
    expect(thrown(() => parseNotebook(bad, 'nb.md')).where()).toMatch(/^nb\.md:7: vega-lite cell is not a JSON object/);
  });
});

describe('running notebooks against a store', () => {
  let store: Store;
  let db: string;
  beforeAll(async () => {
    db = sampleStore();
    store = await Store.open(db, { readOnly: true });
  });
  afterAll(async () => { await store.close(); });

  it('a SQL error names the notebook line DuckDB points at', async () => {
    const nb = parseNotebook('# t\n\n```sql\nselect kernel\nfrom no_such_table\n```\n', 'bad.md');
    const e = await rejected(runNotebook(store, nb));
    expect(e.where()).toMatch(/^bad\.md:5: sql cell failed: Catalog Error: Table with name no_such_table does not exist/);
  });

  it('a spec Vega-Lite cannot compile names its cell', async () => {
    const nb = parseNotebook('```sql name=a\nselect 1 as x\n```\n\n```vega-lite data=a\n{"layer": 3}\n```\n', 'bad.md');
    const e = await rejected(runNotebook(store, nb));
    expect(e.where()).toMatch(/^bad\.md:5: vega-lite cell does not compile/);
  });

  it('named cells become temp tables later cells read; charts carry their rows', async () => {
    const nb = parseNotebook('```sql name=a\nselect 7 as x union all select 8\n```\n```sql\nselect sum(x) as s from a\n```\n```vega-lite data=a\n{"mark":"point","encoding":{"x":{"field":"x","type":"quantitative"}}}\n```', 'ok.md');
    const run = await runNotebook(store, nb);
    expect((run.cells[1] as SqlResult).rows).toEqual([{ s: 15n }]);
    const chart = run.cells[2]!;
    expect(chart.kind === 'vega-lite' && (chart.bound['data'] as { values: unknown[] }).values).toEqual([{ x: 7 }, { x: 8 }]);
  });

  async function runShipped(name: string): Promise<NotebookRun> {
    const file = join(NOTEBOOKS, name);
    return runNotebook(store, parseNotebook(readFileSync(file, 'utf8'), `notebooks/${name}`));
  }
  const cell = (run: NotebookRun, name: string) => run.cells.find((c): c is SqlResult => c.kind === 'sql' && c.name === name)!;

  it('capture-to-ceiling: per-row-group cost in SQL equals the analyzer\'s rowGroupCost; the ceiling table peaks at the balance point', async () => {
    const run = await runShipped('capture-to-ceiling.md');
    const cost = cell(run, 'cost').rows.find((r) => String(r['kernel']).includes('dispatch_6_matmul'))!;
    const a = await rowGroupCost(store, { kernel: '*_dispatch_6_matmul_512x8192x3072_*', rowsPerDispatch: 512, segment: 'steady', captureId: 1 });
    expect(cost['group_ms']).toBeCloseTo(a.group_ms, 4);
    expect(Number(cost['per_prefill'])).toBe(112);
    expect(Number(cost['expected_per_prefill'])).toBe(112);
    expect(Number(cost['ratio'])).toBeGreaterThan(0.8);
    expect(Number(cost['ratio'])).toBeLessThan(1.25);
    const ceiling = cell(run, 'ceiling').rows;
    const best = ceiling.reduce((m, r) => (Number(r['speedup']) > Number(m['speedup']) ? r : m));
    expect(Number(best['npu_groups'])).toBe(Math.floor(Number(best['balance_k'])));
    expect(Number(best['speedup'])).toBeGreaterThan(1);
    expect(run.cells.filter((c) => c.kind === 'vega-lite')).toHaveLength(3);
  });

  it('idle-anatomy: gap counts and idle by class equal the analyzer\'s gaps()', async () => {
    const run = await runShipped('idle-anatomy.md');
    const g = await gaps(store, { thresholdNs: DEFAULT_GAP_THRESHOLD_NS });
    const summary = cell(run, 'summary').rows;
    for (const scope of g.scopes.filter((s) => s.queue === null)) {
      const mine = summary.filter((r) => Number(r['capture_id']) === scope.capture_id && Number(r['device']) === scope.device);
      const between = mine.find((r) => r['class'] === 'between submissions');
      const inside = mine.find((r) => r['class'] === 'inside a submission');
      expect(Number(between?.['gaps'] ?? 0)).toBe(scope.between_submissions.count);
      expect(Number(inside?.['gaps'] ?? 0)).toBe(scope.within_submission.count);
      const gapRows = cell(run, 'gaps').rows.filter((r) => Number(r['capture_id']) === scope.capture_id && Number(r['device']) === scope.device);
      expect(gapRows.reduce((a, r) => a + (r['gap_ns'] as bigint), 0n)).toBe(scope.idle_ns);
    }
    const hist = cell(run, 'histogram').rows;
    expect(hist.reduce((a, r) => a + Number(r['gaps']), 0)).toBe(cell(run, 'gaps').rows.length);
  });

  it('renders escaped: markup in prose and results shows as text', async () => {
    const nb = parseNotebook('# <img src=x onerror=alert(1)>\n\nhi <script>alert(1)</script>\n\n```sql name=a\nselect \'<script>alert(2)</script>\' as k\n```\n```vega-lite data=a\n{"mark":"text","encoding":{"text":{"field":"k"}}}\n```', 'x.md');
    const html = renderNotebookHtml(await runNotebook(store, nb));
    const body = html.slice(html.indexOf('<body>'));
    expect(body).not.toContain('<script>alert');
    expect(body).not.toContain('<img');
    expect(body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(body).toContain('\\u003cscript\\u003ealert(2)');
    expect(html).toContain('<title>&lt;img src=x onerror=alert(1)&gt;</title>');
  });

  it('every notebook in notebooks/ runs on the sample store (CI runs them all)', async () => {
    const names = readdirSync(NOTEBOOKS).filter((f) => f.endsWith('.md'));
    expect(names.length).toBeGreaterThanOrEqual(2);
    for (const name of names) {
      const run = await runShipped(name);
      expect(run.cells.some((c) => c.kind === 'vega-lite'), name).toBe(true);
      expect(renderNotebookHtml(run)).toContain('<title>');
    }
  });

  it('the CLI runs a shipped notebook, and says file:line for a bad one (exit 2)', () => {
    const dir = tmp();
    tickwise(['notebook', 'run', 'notebooks/idle-anatomy.md', '--db', db, '--out', join(dir, 'idle.html')]);
    expect(readFileSync(join(dir, 'idle.html'), 'utf8')).toContain('<title>Anatomy of idle time</title>');
    const bad = join(dir, 'bad.md');
    writeFileSync(bad, '# bad\n\n```sql\nselect nope\n```\n');
    let err = '';
    let code = 0;
    try {
      tickwise(['notebook', 'run', bad, '--db', db, '--out', join(dir, 'bad.html')]);
    } catch (e) {
      err = String((e as { stderr: string }).stderr);
      code = (e as { status: number }).status;
    }
    expect(code).toBe(2);
    expect(err).toMatch(new RegExp(`^tickwise: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4: sql cell failed: Binder Error: Referenced column "nope"`));
    expect(err.trim().split('\n')).toHaveLength(1);
  });
});
