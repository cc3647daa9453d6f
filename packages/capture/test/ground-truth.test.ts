import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { generateIreeperf } from '../../../scripts/gen/ireeperf';
import { ROOT, tmp } from './helpers';

interface DispatchTruth { event_id: number[]; start_ns: number[]; end_ns: number[] }

/**
 * Imports a generated capture and compares every dispatch with the
 * generator's true interval: the fitted tick rate within 10 ppm of the true
 * rate, each duration within one tick (10 ns) of the truth.
 */
async function compare(file: string, truth: { clock: { tick_hz_true: number }; dispatches: DispatchTruth }) {
  const store = await Store.open(':memory:');
  await importInput(store, file);
  const dev = await store.rows(`select tick_hz_fitted, fit_uncertainty_ns from devices`);
  const hz = Number(dev[0]!['tick_hz_fitted']);
  const ppm = Math.abs((hz - truth.clock.tick_hz_true) / truth.clock.tick_hz_true) * 1e6;
  const rows = await store.rows(`select event_id, start_ns, end_ns, dur_ns from dispatches order by event_id`);
  const byId = new Map(truth.dispatches.event_id.map((id, i) => [id, i]));
  let worstDur = 0n;
  let worstStart = 0n;
  for (const r of rows) {
    const i = byId.get(Number(r['event_id']))!;
    const trueDur = BigInt(truth.dispatches.end_ns[i]! - truth.dispatches.start_ns[i]!);
    const dDur = (r['dur_ns'] as bigint) - trueDur;
    const dStart = (r['start_ns'] as bigint) - BigInt(truth.dispatches.start_ns[i]!);
    if ((dDur < 0n ? -dDur : dDur) > worstDur) worstDur = dDur < 0n ? -dDur : dDur;
    if ((dStart < 0n ? -dStart : dStart) > worstStart) worstStart = dStart < 0n ? -dStart : dStart;
  }
  await store.close();
  return { ppm, worstDur, worstStart, n: rows.length, uncertainty: Number(dev[0]!['fit_uncertainty_ns']) };
}

describe('ground truth: generated captures', () => {
  it('the shipped sample: fit within 10 ppm, every duration within one tick', async () => {
    const file = join(ROOT, 'captures/sample/igpu-prefill.ireeperf.jsonl');
    const truth = JSON.parse(readFileSync(join(ROOT, 'captures/sample/igpu-prefill.truth.json'), 'utf8'));
    const r = await compare(file, truth);
    expect(r.n).toBe(truth.dispatches.event_id.length);
    expect(r.ppm).toBeLessThan(10);
    expect(r.worstDur).toBeLessThanOrEqual(10n);
    // placement on the host timeline: within a few fit uncertainties
    expect(Number(r.worstStart)).toBeLessThan(Math.max(1000, 5 * r.uncertainty));
  });

  it.each([
    { seed: 11, layers: 4, prompt_tokens: 1024, prefills: 3 },
    { seed: 12, layers: 2, prompt_tokens: 512, prefills: 2, clock: { offset_ns: -3_000_000_000_000, tick_hz_declared: 101_000_000 } },
  ])('other seeds and shapes: %o', async (opts) => {
    const g = generateIreeperf(opts);
    const dir = tmp();
    const file = join(dir, 'g.ireeperf.jsonl');
    writeFileSync(file, g.text);
    const r = await compare(file, g.truth as never);
    expect(r.ppm).toBeLessThan(10);
    expect(r.worstDur).toBeLessThanOrEqual(10n);
  });
});
