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
          if (spec.split('/').length > 2) problems.push(`${at} (import the package, not its internals)`);
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
if (problems.length) {
  console.error('layer boundary violations:\n' + problems.join('\n'));
  process.exit(1);
}
console.error(`layer boundaries ok (${Object.keys(ALLOWED).length} packages)`);
