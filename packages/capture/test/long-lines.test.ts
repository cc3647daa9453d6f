/**
 * Lines longer than a read: the JSON-lines repair (`sanitizeJsonl`) and the
 * invalid-UTF-8 locator (`firstInvalidUtf8Line`) keep a long line's pieces
 * apart instead of concatenating them read by read (quadratic in the line's
 * length), find the same lines, and the repair refuses a line beyond the
 * record limit with its line number.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TickwiseError } from '@tickwise/time';
import { sanitizeJsonl } from '../src/jsonl-sanitize';
import { firstInvalidUtf8Line } from '../src/source-file';

const dir = () => mkdtempSync(join(tmpdir(), 'tw-long-lines-'));
afterEach(() => vi.unstubAllEnvs());

/** A JSON record of about `bytes` bytes whose string is two-byte characters (so 1 MiB reads split them). */
const longRecord = (bytes: number, extra = '') => `{"record_type":"x","s":"${'é'.repeat(Math.floor(bytes / 2))}"${extra}}`;

describe('firstInvalidUtf8Line', () => {
  it('finds the line of the first bad byte, before, inside and after lines of several MiB; none in a valid file', async () => {
    const d = dir();
    const bad = Buffer.from([0xff]);
    const cases: [Buffer, number | undefined][] = [
      // a 3 MiB valid line, then a bad byte on line 3
      [Buffer.concat([Buffer.from(`{"a":1}\n${longRecord(3 << 20)}\n{"b":"`), bad, Buffer.from('"}\n')]), 3],
      // the bad byte 2.5 MiB into line 2 (not at a read's edge)
      [Buffer.concat([Buffer.from(`{"a":1}\n{"s":"${'é'.repeat(1_310_720)}`), bad, Buffer.from(`${'é'.repeat(1000)}"}\n{"c":3}\n`)]), 2],
      // a character cut by the end of the file, on its last line (no newline)
      [Buffer.concat([Buffer.from(`{"a":1}\n${longRecord(2 << 20)}\n{"s":"`), Buffer.from('é').subarray(0, 1)]), 3],
      [Buffer.from(`{"a":1}\n${longRecord(3 << 20)}\n{"b":2}\n`), undefined],
    ];
    for (const [i, [bytes, want]] of cases.entries()) {
      const f = join(d, `c${i}.jsonl`);
      writeFileSync(f, bytes);
      expect(await firstInvalidUtf8Line(f), `case ${i}`).toBe(want);
    }
  });
});

describe('sanitizeJsonl', () => {
  it('a line of several MiB is repaired as one line (NaN to null), the line count kept', async () => {
    const d = dir();
    const f = join(d, 'in.jsonl');
    writeFileSync(f, `{"a":1}\n${longRecord(9 << 20, ',"v":NaN')}\n{"b":2}\n`);
    const out = join(d, 'out.jsonl');
    const r = await sanitizeJsonl(f, 'none', out, 'in.jsonl');
    expect(r.lines).toBe(3);
    expect(r.issues.map((x) => [x.line, x.code])).toEqual([[2, 'non-finite-number']]);
    const lines = readFileSync(out, 'utf8').split('\n');
    expect(lines).toHaveLength(4);
    expect(JSON.parse(lines[1]!)).toMatchObject({ record_type: 'x', v: null });
    expect((JSON.parse(lines[1]!) as { s: string }).s.length).toBe(Math.floor((9 << 20) / 2));
  });

  it('a line beyond the record limit stops with its line number', async () => {
    vi.stubEnv('TICKWISE_MAX_RECORD_BYTES', '1MiB');
    const d = dir();
    const f = join(d, 'in.jsonl');
    writeFileSync(f, `{"a":1}\n{"b":2}\n${longRecord(3 << 20, ',"v":NaN')}\n{"c":3}\n`);
    const err = await sanitizeJsonl(f, 'none', join(d, 'out.jsonl'), 'in.jsonl').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TickwiseError);
    expect((err as TickwiseError).where()).toMatch(/^in\.jsonl:3: a line of more than 1048576 bytes/);
  });
});
