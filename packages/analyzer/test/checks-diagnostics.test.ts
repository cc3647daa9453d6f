import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { runChecks } from '../src/index';
import { importSynth, synthCapture, tickwise, tmp } from './checks-helpers';

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

describe('no-dispatches', () => {
  it('a Kineto trace with host work only: an error finding naming it, check exits 1; not dropped-records', async () => {
    const dir = tmp();
    const trace = join(dir, 'host-only.json');
    writeFileSync(trace, JSON.stringify({ traceEvents: [{ ph: 'X', cat: 'cpu_op', name: 'aten::mm', pid: 1, tid: 1, ts: 10, dur: 5 }] }));
    const db = join(dir, 'run.duckdb');
    expect(tickwise(['import', trace, '--db', db]).status).toBe(0);
    const store = await Store.open(db, { readOnly: true });
    try {
      const fs = await runChecks(store);
      expect(fs.filter((f) => f.code === 'no-dispatches')).toMatchObject([{ severity: 'error', capture_id: 1, dispatches: 0, records: 1 }]);
      expect(fs.find((f) => f.code === 'no-dispatches')!.message).toMatch(/^capture 1 \(host-only\.json\): the capture holds no dispatches \(1 record\(s\) read\): no kernel/);
      expect(fs.filter((f) => f.code === 'dropped-records')).toEqual([]);
    } finally {
      await store.close();
    }
    const r = tickwise(['check', db]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('error no-dispatches');
  });

  it('an IREE capture cut before its first dispatch (no session end): no-dispatches, not "enlarge the profiler\'s buffers"', async () => {
    const dir = tmp();
    const f = join(dir, 'cut.ireeperf.jsonl');
    const head = synthCapture().text.split('\n').filter((l) => l !== '' && !/"record_type":"(dispatch_event|session)"/.test(l.replace(/\s/g, '')));
    writeFileSync(f, head.join('\n') + '\n');
    const db = join(dir, 'run.duckdb');
    const imp = tickwise(['import', f, '--db', db]);
    expect(imp.status, imp.stderr).toBe(0);
    const store = await Store.open(db, { readOnly: true });
    try {
      const fs = await runChecks(store);
      expect(fs.filter((f) => f.code === 'no-dispatches').map((f) => f.severity)).toEqual(['error']);
      expect(fs.filter((f) => f.code === 'dropped-records')).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
