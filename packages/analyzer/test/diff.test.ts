/**
 * Diff tests of the analysis verbs: every case under cases/ (a tiny
 * hand-made capture, its `cmd` lines and the reviewed `expected.json`) must
 * give exactly the committed output. `scripts/regen-goldens` rewrites them.
 */
import { describe, expect, it } from 'vitest';
import { expectedOf, listCases, runCase } from './goldens';

describe('analysis verbs against committed goldens (scripts/regen-goldens rewrites them)', () => {
  for (const name of listCases()) {
    it(name, () => {
      expect(runCase(name)).toEqual(expectedOf(name));
    });
  }

  it("domain.md's worked example comes out exactly: 1 792 dispatches in 2 prefills, 1.20 ms per 512-row dispatch = 0.60 ms per 256-row group", () => {
    const all = runCase('worked-example');
    const cost = all['cost capture.ireeperf.jsonl.gz --json --kernel *matmul* --rows-per-dispatch 512 --group-rows 256 --segment all']!.json as Record<string, unknown>;
    expect(cost['dispatch_count']).toBe(1792);
    expect(cost['segments_selected']).toBe(2);
    expect((cost['per_segment'] as { dispatch_count: number }[]).map((p) => p.dispatch_count)).toEqual([896, 896]);
    expect(cost['mean_dispatch_ns']).toBe(1_200_000);
    expect(cost['group_ms']).toBe(0.6);
    expect(cost['group_ms_median']).toBe(0.6);
  });
});
