import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { tmp } from './helpers';

/**
 * The Chrome reader's host spans land in file order, the same from one
 * import to the next. DuckDB's LEFT JOIN emits a chunk's unmatched rows
 * after its matched ones, so a span whose process had no metadata row, or
 * no device row, once came out late within its chunk (90 of 332k host spans
 * of a 174 MB Kineto trace, a different order each import): the trace here
 * interleaves copies of a GPU process (which has a device and a name) with
 * CPU ops of a process the trace never names, in chunks of both.
 */
function trace(): string {
  const ev: string[] = ['{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"GPU 0"}}'];
  for (let i = 0; i < 12_000; i++) {
    const ts = 1_000_000 + i * 10;
    if (i % 3 === 0) ev.push(`{"ph":"X","cat":"gpu_memcpy","name":"Memcpy HtoD","pid":1,"tid":7,"ts":${ts},"dur":4,"args":{"device":0,"stream":7}}`);
    else if (i % 3 === 1) ev.push(`{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":2,"tid":${20 + (i % 4)},"ts":${ts},"dur":3,"args":{"n":${i}}}`);
    else ev.push(`{"ph":"X","cat":"kernel","name":"gemm","pid":1,"tid":7,"ts":${ts},"dur":5,"args":{"device":0,"stream":7,"correlation":${i}}}`);
  }
  return `{"traceEvents":[\n${ev.join(',\n')}\n]}\n`;
}

describe('Chrome trace: host spans in file order', () => {
  it('every host span in rowid order has a larger line than the one before; two imports store the same order', async () => {
    const file = join(tmp(), 'mixed.json');
    writeFileSync(file, trace());
    const orders: number[][] = [];
    for (let run = 0; run < 2; run++) {
      const store = await Store.open(':memory:');
      try {
        await importInput(store, file);
        const rows = await store.query({ line: 'number', kind: 'string' }, `SELECT line::BIGINT AS line, kind FROM host_events ORDER BY rowid`);
        expect(rows.filter((r) => r.kind === 'gpu_memcpy')).toHaveLength(4000); // a copy's kind is its category
        expect(rows).toHaveLength(8000);
        const lines = rows.map((r) => r.line);
        const late = lines.filter((l, i) => i > 0 && l < lines[i - 1]!).length;
        expect(late, `run ${run}: host spans stored out of file order`).toBe(0);
        expect(await store.count('dispatches')).toBe(4000);
        orders.push(lines);
      } finally {
        await store.close();
      }
    }
    expect(orders[1]).toEqual(orders[0]);
  });
});
