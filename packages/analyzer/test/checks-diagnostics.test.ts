import { describe, expect, it } from 'vitest';
import { runChecks } from '../src/index';
import { importSynth, synthCapture } from './checks-helpers';

describe('dropped-records', () => {
  it('a producer record reporting dropped records: a warning with the count and the line', async () => {
    const { store } = await importSynth([synthCapture({ dropped_records: 17 })]);
    try {
      const fs = (await runChecks(store)).filter((f) => f.code === 'dropped-records');
      expect(fs).toMatchObject([{ severity: 'warning', capture_id: 1, dropped_records: 17n, diagnostics: 1, line: 48 }]);
      expect(fs[0]!.message).toContain('producer reports 17 dropped record(s)');
    } finally {
      await store.close();
    }
  });
});

describe('invalid-events', () => {
  it('one dispatch of 36 marked invalid: a warning; 4 of 36: an error (over 5 %)', async () => {
    for (const [n, severity] of [[1, 'warning'], [4, 'error']] as const) {
      const { store } = await importSynth([synthCapture({ invalid: n })]);
      try {
        const fs = (await runChecks(store)).filter((f) => f.code === 'invalid-events');
        expect(fs).toMatchObject([{ severity, capture_id: 1, invalid_dispatches: n, dispatches: 36, diagnostics: 1 }]);
        expect(fs[0]!.message).toContain(`${n} of 36 dispatch(es)`);
      } finally {
        await store.close();
      }
    }
  });
});
