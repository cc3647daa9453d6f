import { describe, expect, it } from 'vitest';
import { RowColumns, type ColumnarRows } from '../src/readers/recorder-map';

/**
 * RowColumns gathers a table's rows as columns for the recorder import's
 * batches: the values must come back exactly (64-bit integers, NULLs,
 * texts), batch after batch, whatever the growth; an integer its column
 * cannot hold is refused, never wrapped by the typed array.
 */

const COLUMNS = [
  { name: 'device', type: 'INTEGER' }, { name: 'event_id', type: 'UBIGINT' }, { name: 'start_ns', type: 'BIGINT' },
  { name: 'kernel', type: 'VARCHAR' }, { name: 'valid', type: 'BOOLEAN' },
];
type Row = { device: number; event_id: bigint | null; start_ns: bigint | number | null; kernel: string | null; valid: boolean };

const rowsOf = (b: ColumnarRows) => Array.from({ length: b.n }, (_, r) => Object.fromEntries(b.columns.map((c) =>
  [c.name, 'ints' in c ? (c.nulls[r] ? null : c.ints[r]) : c.values[r]])));

describe('RowColumns', () => {
  it('gives back every row pushed, exactly, batch after batch (growing past its first capacity)', () => {
    const t = new RowColumns<Row>('dispatches', COLUMNS, 4);
    const row = (i: number): Row => ({
      device: i % 3, event_id: i % 5 === 0 ? null : 2n ** 64n - 1n - BigInt(i), start_ns: i % 7 === 0 ? null : -(2n ** 63n) + BigInt(i),
      kernel: i % 2 ? `k${i}` : null, valid: i % 4 !== 0,
    });
    const first = Array.from({ length: 1000 }, (_, i) => row(i));
    for (const r of first) t.push(r);
    expect(t.length).toBe(1000);
    const a = t.take();
    expect(rowsOf(a)).toEqual(first);
    expect(t.length).toBe(0);
    // the next batch: a NULL where the batch before had a value at the same index, and the other way round
    const second = Array.from({ length: 300 }, (_, i) => row(i + 1));
    for (const r of second) t.push(r);
    expect(rowsOf(t.take())).toEqual(second.map((r) => ({ ...r })));
    // a safe-integer number in a 64-bit column is taken as its bigint
    t.push({ device: 1, event_id: null, start_ns: 12345, kernel: null, valid: true });
    expect(rowsOf(t.take())[0]!['start_ns']).toBe(12345n);
  });

  it('refuses an integer its column cannot hold, naming the table and column', () => {
    const t = new RowColumns<Row>('dispatches', COLUMNS);
    const ok: Row = { device: 0, event_id: 1n, start_ns: 1n, kernel: null, valid: true };
    expect(() => t.push({ ...ok, start_ns: 2n ** 63n })).toThrow(/dispatches\.start_ns: 9223372036854775808 is out of range/);
    expect(() => t.push({ ...ok, event_id: -1n })).toThrow(/dispatches\.event_id: -1 is out of range/);
    expect(() => t.push({ ...ok, device: 2 ** 31 })).toThrow(/dispatches\.device: 2147483648 is out of range/);
    expect(() => t.push({ ...ok, start_ns: 2 ** 60 })).toThrow(/dispatches\.start_ns: \d+ is beyond 2\^53/);
    expect(() => t.push({ ...ok, device: 1.5 })).toThrow(/dispatches\.device: 1\.5 is not an integer/);
  });
});
