/**
 * Rewrites the analyzer's diff-test goldens: for each case under
 * packages/analyzer/test/cases/, (re)writes a generated capture where the
 * case has a make.ts, runs its `cmd` lines and writes expected.json. Review
 * the diff before committing.
 *
 *   scripts/regen-goldens [case...]
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CASES_DIR, listCases, runCase } from '../packages/analyzer/test/goldens';
import { makeWorkedExample } from '../packages/analyzer/test/cases/worked-example/make';

const MAKERS: Record<string, (dir: string) => void> = { 'worked-example': makeWorkedExample };
const only = process.argv.slice(2);
for (const name of listCases()) {
  if (only.length && !only.includes(name)) continue;
  const dir = join(CASES_DIR, name);
  MAKERS[name]?.(dir);
  const outcomes = runCase(name);
  writeFileSync(join(dir, 'expected.json'), JSON.stringify(outcomes, null, 2) + '\n');
  const fails = Object.values(outcomes).filter((o) => o.exit !== 0).length;
  console.error(`${name}: ${Object.keys(outcomes).length} command(s)${fails ? `, ${fails} expected to fail` : ''}${existsSync(join(dir, 'make.ts')) ? ' (capture regenerated)' : ''}`);
}
