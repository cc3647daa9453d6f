/**
 * Issue 17: the seeded import fuzz in CI. A few hundred mutants of the real
 * fixtures of every input format (fuzz-import.ts); each must import with
 * the counts it reports stored (exit 0), or be refused by one TickwiseError
 * naming the file (exit 2, file:line); never a crash (exit 70), a raw
 * DuckDB message, or a hang. A longer run: scripts/fuzz-import.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fuzzImport, seeds } from './fuzz-import';

const SEED = 17;
/**
 * Readers allowed to let a raw error through on some mutants (exit 2 naming
 * the file, the detail DuckDB's or sqlite's text). None now: rocprofv3 and
 * rocpd were cleared (37f87c6, 972a00c) and seeds 9, 23, 41 x 25 mutants per
 * fixture (scripts/fuzz-import) found no unclear outcome in any format.
 */
const KNOWN_UNCLEAR = new Set<string>();
/** Mutants per seed input: ~15 seed inputs x 18 = ~270 mutants. */
const PER_SEED = 18;

const SHARED_PRESENT = existsSync(resolve(import.meta.dirname, '../../../../shared/fixtures'));
if (!SHARED_PRESENT) console.warn('import fuzz skipped: ../shared/fixtures is absent (its real fixtures are the seeds)');

describe.skipIf(!SHARED_PRESENT)('import fuzz (issue 17)', () => {
  it('every seed format is present', () => {
    const formats = new Set(seeds().map((s) => s.format));
    for (const f of ['ireeperf-jsonl', 'rocprofv3-csv', 'rocprofv3-json', 'rocpd', 'chrome-trace', 'heteromosaic-jsonl', 'hrx-device-profile', 'llama-bench']) {
      expect(formats.has(f), f).toBe(true);
    }
    if (!formats.has('tickwise-recorder')) console.warn('import fuzz: no recorder capture under native/build*/test-captures (run native/test.sh); tickwise-recorder is not fuzzed');
  });

  it(`${PER_SEED} mutants per fixture, seed ${SEED}: exit 0 with its counts stored, or exit 2 naming the file`, async () => {
    const outcomes = await fuzzImport({ seed: SEED, perSeed: PER_SEED, hangMs: 30_000 });
    // crashes and hangs fail for every format; an unclear message (exit 2 with the file, but the reader's raw
    // text) fails too, except for the readers whose fixes are still open in issue 17.8 (listed, printed)
    const bad = outcomes.filter((o) => o.kind === 'crash' || o.kind === 'hang' || (o.kind === 'unclear' && !KNOWN_UNCLEAR.has(o.format)));
    const known = outcomes.filter((o) => o.kind === 'unclear' && KNOWN_UNCLEAR.has(o.format));
    if (known.length) console.warn(`import fuzz: ${known.length} unclear message(s) of ${[...KNOWN_UNCLEAR].join(', ')} (issue 17.8, open):\n` + known.map((o) => `  ${o.seed} [${o.mutation}]: ${o.message}`).join('\n'));
    const unmutatedFailed = outcomes.filter((o) => o.mutation === 'unmutated' && o.kind !== 'ok');
    expect(unmutatedFailed.map((o) => `${o.seed}: ${o.message}`)).toEqual([]);
    expect(bad.map((o) => `${o.kind} ${o.seed} [${o.mutation}]: ${o.message?.split('\n').slice(0, 3).join(' | ')}`)).toEqual([]);
    // both outcomes occur: the mutants are neither all harmless nor all fatal
    expect(outcomes.filter((o) => o.kind === 'ok').length).toBeGreaterThan(outcomes.length / 10);
    expect(outcomes.filter((o) => o.kind === 'refused').length).toBeGreaterThan(outcomes.length / 10);
  }, 240_000);
});
