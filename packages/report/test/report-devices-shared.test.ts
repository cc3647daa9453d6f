/**
 * The report's per-device numbers come from one gaps and one overlap call
 * over every device when all devices share a choice (all read whole, or all
 * steady), else from a call per device. Both must give what the per-device
 * calls give: checked on a store whose two devices both repeat (the sample
 * iGPU capture twice: steady), one where both are read whole (the NPU
 * capture twice), and the sample pair (one steady, one whole: per device).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { gaps, overlap } from '@tickwise/analyzer';
import { collectReport } from '@tickwise/report';
import { ROOT, SAMPLE_GPU, SAMPLE_NPU, sampleStore, tickwise, tmp } from './sample-store';

const REAL = join(ROOT, '../shared/fixtures/external/chrome-trace');
const TRACELENS_4GPU = join(REAL, 'hpctraining_tracefusion_merged_nccl_only.json.gz');
const HTA_STEPS = join(REAL, 'hta_trace_diff_control.json.gz');
const HAVE_REAL = existsSync(TRACELENS_4GPU) && existsSync(HTA_STEPS);
if (!HAVE_REAL) console.warn(`report-devices-shared: the real-trace cases are skipped: ${REAL} lacks its fixtures`);

function storeOf(files: readonly string[]): string {
  const db = join(tmp(), 'shared.duckdb');
  for (const f of files) tickwise(['import', f, '--db', db]);
  return db;
}

describe('report devices: one call for all devices or one per device, the same numbers', () => {
  for (const [name, db] of [
    ['both steady', () => storeOf([SAMPLE_GPU, SAMPLE_GPU])],
    ['both whole', () => storeOf([SAMPLE_NPU, SAMPLE_NPU])],
    ['mixed', () => sampleStore()],
    ['real: 4 GPUs of one merged Kineto trace, all whole', () => storeOf([TRACELENS_4GPU])],
    ['real: an HTA trace with profiler steps, twice, both steady', () => storeOf([HTA_STEPS, HTA_STEPS])],
  ] as const) {
    it.skipIf(name.startsWith('real') && !HAVE_REAL)(name, async () => {
      const store = await Store.open(db(), { readOnly: true });
      try {
        const r = await collectReport(store);
        expect(r.devices).toHaveLength(name.includes('4 GPUs') ? 4 : 2);
        const choices = [...new Set(r.devices.map((d) => d.steady_choice))];
        expect(choices).toEqual(name === 'mixed' ? ['steady', 'all'] : [name.includes('whole') ? 'all' : 'steady']);
        for (const d of r.devices) {
          const sel = { captureId: d.capture_id, device: d.device, segment: d.steady_choice };
          const g = (await gaps(store, { ...sel, thresholdNs: r.threshold_ns })).scopes.find((s) => s.queue === null)!;
          const o = (await overlap(store, sel)).devices[0]!;
          expect([d.dispatches, d.busy_ns, d.idle_ns, d.gap_count, d.max_gap_ns, d.gaps_over_threshold, d.cross_submission_inflight_ns])
            .toEqual([g.dispatches, g.busy_ns, g.idle_ns, g.gap_count, g.max_gap_ns, g.gaps_over_threshold.count, o.cross_submission_inflight_ns]);
          expect(d.busy_ns).toBeGreaterThan(0n);
        }
      } finally {
        await store.close();
      }
    }, 60_000);
  }
});
