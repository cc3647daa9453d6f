import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { parseNotebook, renderInline, runNotebook, safeHref } from '../src/index';
import { ROOT, sampleStore, tmp } from './sample-store';

/** A notebook of one sql cell. */
const oneCell = (sql: string) => parseNotebook(`# hostile\n\n\`\`\`sql\n${sql}\n\`\`\`\n`, 'hostile.md');

describe('a notebook from someone else can only read the store', () => {
  let db: string;
  const dir = tmp('tickwise-sandbox-');
  const secret = join(dir, 'secret.csv');
  const dropped = join(dir, 'x.sh');
  beforeAll(() => {
    db = sampleStore({ npu: false });
    writeFileSync(secret, 'token\nHUNTER2\n');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const hostile: [string, string][] = [
    ['writes a file', `COPY (SELECT 'echo pwned') TO '${dropped}' (FORMAT csv)`],
    ['reads a local CSV', `SELECT * FROM read_csv('${secret}')`],
    ['reads a local file as a blob', `SELECT * FROM read_blob('${secret}')`],
    ['reads a local file as text', `SELECT * FROM read_text('${secret}')`],
    ['lists a folder', `SELECT * FROM glob('${dir}/*')`],
    ['attaches another database', `ATTACH '${join(dir, 'other.duckdb')}' AS o`],
    ['installs an extension', 'INSTALL httpfs'],
    ['loads an extension', 'LOAD httpfs'],
    ['turns external access back on', 'SET enable_external_access = true'],
    ['unlocks the configuration', 'SET lock_configuration = false'],
    ['exports the database', `EXPORT DATABASE '${join(dir, 'export')}'`],
  ];
  for (const [what, sql] of hostile) {
    it(`refuses a cell that ${what}, with the notebook's file and line`, async () => {
      const store = await Store.open(db, { readOnly: true });
      try {
        const e = await runNotebook(store, oneCell(sql)).then(() => null, (x: unknown) => x);
        expect(e).toBeInstanceOf(TickwiseError);
        expect((e as TickwiseError).where()).toMatch(/^hostile\.md:4: /);
      } finally {
        await store.close();
      }
      expect(existsSync(dropped)).toBe(false);
      expect(existsSync(join(dir, 'export'))).toBe(false);
      expect(existsSync(join(dir, 'other.duckdb'))).toBe(false);
    });
  }

  it('still reads the store, and named cells still make temp tables', async () => {
    const store = await Store.open(db, { readOnly: true });
    try {
      const nb = parseNotebook('```sql name=k\nSELECT count(*) AS n FROM dispatches\n```\n\n```sql\nSELECT n FROM k\n```\n', 'ok.md');
      const run = await runNotebook(store, nb);
      const last = run.cells[run.cells.length - 1] as { rows: Record<string, unknown>[] };
      expect(Number(last.rows[0]!['n'])).toBe(2252);
    } finally {
      await store.close();
    }
  });

  it('the notebook verb refuses a hostile cell with exit 2 and writes nothing', () => {
    const nbFile = join(dir, 'hostile.md');
    writeFileSync(nbFile, `# hostile\n\n\`\`\`sql\nCOPY (SELECT 1) TO '${dropped}'\n\`\`\`\n`);
    const r = spawnSync(join(ROOT, 'scripts/tickwise'), ['notebook', 'run', nbFile, '--db', db, '--out', join(dir, 'nb.html')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${nbFile}:4:`);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(existsSync(dropped)).toBe(false);
    expect(existsSync(join(dir, 'nb.html'))).toBe(false);
  });
});

describe('links in notebook Markdown', () => {
  it('keep http(s), relative paths and anchors; drop script and scheme-relative hosts', () => {
    expect(safeHref('https://ui.perfetto.dev')).toBe('https://ui.perfetto.dev');
    expect(safeHref('docs/analyses.md')).toBe('docs/analyses.md');
    expect(safeHref('#gaps')).toBe('#gaps');
    expect(safeHref('/abs/path')).toBe('/abs/path');
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', 'data:text/html,x', 'vbscript:x', '//evil.example/x', '\\\\evil.example\\x', '/\\evil.example/x', '\\/evil.example']) {
      expect(safeHref(bad), bad).toBeNull();
    }
    expect(renderInline('see [here](//evil.example/x)')).toBe('see here');
    expect(renderInline('see [here](https://a.example/x)')).toContain('<a href="https://a.example/x">here</a>');
  });
});
