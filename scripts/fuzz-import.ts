/**
 * scripts/fuzz-import: runs the seeded import fuzz with more mutants than CI.
 * Options: --seed N (default 1), --per-seed N mutants per fixture (default
 * 300), --keep DIR for failing mutants, --hang-ms N (default 60000),
 * --show-no-line: also print refusals that name the file but no line.
 */
import { fuzzImport, type Outcome } from '../packages/capture/test/fuzz-import';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
}

const seed = Number(arg('seed', '1'));
const perSeed = Number(arg('per-seed', '300'));
const keepDir = arg('keep', '/tmp/tickwise-fuzz-kept');
const hangMs = Number(arg('hang-ms', '60000'));
const showNoLine = process.argv.includes('--show-no-line');
const byFormat = new Map<string, Record<Outcome['kind'], number>>();
const started = Date.now();
const outcomes = await fuzzImport({
  seed, perSeed, keepDir, hangMs,
  onOutcome: (o) => {
    const c = byFormat.get(o.format) ?? { ok: 0, refused: 0, unclear: 0, crash: 0, hang: 0 };
    c[o.kind]++;
    byFormat.set(o.format, c);
    if (showNoLine && o.kind === 'refused' && !/:\d+: /.test(o.message ?? '')) process.stdout.write(`NO-LINE ${o.format} [${o.mutation}]\n  ${o.message}\n`);
    if (o.kind !== 'ok' && o.kind !== 'refused') {
      process.stdout.write(`${o.kind.toUpperCase()} ${o.format} ${o.seed} [${o.mutation}] kept ${o.kept ?? '-'}\n  ${(o.message ?? '').split('\n').slice(0, 4).join('\n  ')}\n`);
    }
  },
});
const noLine = outcomes.filter((o) => o.kind === 'refused' && !/:\d+: /.test(o.message ?? '')).length;
process.stdout.write(`\nseed ${seed}, ${perSeed} mutants per fixture, ${outcomes.length} imports in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
process.stdout.write(`${'format'.padEnd(20)} ${['ok', 'refused', 'unclear', 'crash', 'hang'].map((k) => k.padStart(8)).join('')}\n`);
for (const [f, c] of [...byFormat].sort()) {
  process.stdout.write(`${f.padEnd(20)} ${(['ok', 'refused', 'unclear', 'crash', 'hang'] as const).map((k) => String(c[k]).padStart(8)).join('')}\n`);
}
process.stdout.write(`refused without a line number: ${noLine}\n`);
process.exitCode = outcomes.some((o) => o.kind !== 'ok' && o.kind !== 'refused') ? 1 : 0;
