import { describe, expect, it } from 'vitest';
import { formatTable } from '../src/output';

/** The plain-text table of every verb: column widths from every row, however many. */
describe('formatTable', () => {
  it('lays out 500k rows (all pairs of 1000 devices) without overflowing the call stack', () => {
    const rows = Array.from({ length: 500_000 }, (_, i) => ({ pair: `${i % 1000}/${i}`, overlap_ns: BigInt(i) * 1000n }));
    const text = formatTable(['pair', 'overlap_ns'], rows);
    const lines = text.split('\n');
    expect(lines).toHaveLength(500_002);
    // the widest cells set the widths: "999/499999" (10) and 499999000 (9 digits, right-aligned under "overlap_ns")
    expect(lines[1]).toBe(`${'-'.repeat(10)}  ${'-'.repeat(10)}`);
    expect(lines.at(-1)).toBe('999/499999   499999000');
  });
});
