/**
 * Layer boundaries: each package may import only the packages listed for it
 * (docs/architecture.md), and only through `@tickwise/<name>`, never by relative path
 * into another package's files.
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const ALLOWED: Record<string, readonly string[]> = {
  time: [],
  store: ['time'],
  capture: ['time', 'store'],
  ceiling: ['time'],
  // the stage vocabulary (STAGE_KINDS) is the model's: the analyzer classifies kernels into it
  analyzer: ['time', 'store', 'ceiling'],
  inputs: ['time', 'store', 'analyzer', 'ceiling'],
  report: ['time', 'store', 'analyzer', 'ceiling', 'inputs'],
  cli: ['time', 'store', 'capture', 'analyzer', 'ceiling', 'inputs', 'report'],
};

const root = resolve(import.meta.dirname, '..');

/** True when `spec` (`@tickwise/pkg/sub`) is an entry pkg's package.json declares in `exports` (`./sub`). */
function declaredEntry(pkg: string, spec: string): boolean {
  const sub = './' + spec.split('/').slice(2).join('/');
  const exportsMap = (JSON.parse(readFileSync(join(root, 'packages', pkg, 'package.json'), 'utf8')) as { exports?: Record<string, unknown> }).exports ?? {};
  return Object.hasOwn(exportsMap, sub);
}
const problems: string[] = [];
function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (/\.tsx?$/.test(name)) out.push(p);
  }
  return out;
}
for (const [pkg, allowed] of Object.entries(ALLOWED)) {
  for (const sub of ['src', 'test']) {
    const dir = join(root, 'packages', pkg, sub);
    let files: string[] = [];
    try { files = walk(dir, []); } catch { continue; }
    for (const f of files) {
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1]!;
        const at = `${relative(root, f)}: imports ${spec}`;
        if (spec.startsWith('@tickwise/')) {
          const target = spec.slice('@tickwise/'.length).split('/')[0]!;
          if (target !== pkg && !allowed.includes(target)) problems.push(`${at} (${pkg} may import: ${allowed.join(', ') || 'nothing of ours'})`);
          if (spec.split('/').length > 2 && !declaredEntry(target, spec)) problems.push(`${at} (import the package or an entry its package.json exports, not its internals)`);
        } else if (spec.startsWith('.')) {
          const abs = resolve(f, '..', spec);
          // tests may use the capture generators under scripts/gen (ground truth)
          const generator = sub === 'test' && abs.startsWith(join(root, 'scripts', 'gen') + '/');
          if (!abs.startsWith(join(root, 'packages', pkg) + '/') && !generator) problems.push(`${at} (relative import leaves the package)`);
        }
      }
    }
  }
}
// docs/architecture.md's table says the same as ALLOWED: | `pkg` | `dep`, `dep` (or nothing) | ... |
const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8').split('## What each package may import')[1] ?? '';
const documented = new Map<string, string[]>();
for (const m of doc.matchAll(/^\| `([a-z]+)` \| ([^|]*) \|/gm)) documented.set(m[1]!, [...m[2]!.matchAll(/`([a-z]+)`/g)].map((x) => x[1]!));
for (const [pkg, allowed] of Object.entries(ALLOWED)) {
  const said = documented.get(pkg);
  if (!said) problems.push(`docs/architecture.md: no row for ${pkg} in the import table`);
  else if ([...said].sort().join(',') !== [...allowed].sort().join(',')) {
    problems.push(`docs/architecture.md: ${pkg} may import ${said.join(', ') || 'nothing'} there, ${allowed.join(', ') || 'nothing'} here`);
  }
}
for (const pkg of documented.keys()) if (!(pkg in ALLOWED)) problems.push(`docs/architecture.md: ${pkg} is not a package of scripts/check-imports.ts`);
if (problems.length) {
  console.error('layer boundary violations:\n' + problems.join('\n'));
  process.exit(1);
}
console.error(`layer boundaries ok (${Object.keys(ALLOWED).length} packages)`);
