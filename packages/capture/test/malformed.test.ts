import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { baseRecords, tickwise, tmp, toJsonl } from './helpers';

type Case =
  | { name: string; text: string | Buffer; exit: 2; line?: number; message: RegExp }
  | { name: string; text: string | Buffer; exit: 0; diagnostic: string; line?: number; check?: string; expect?: string };

const base = () => baseRecords();
const lines = () => toJsonl(base()).split('\n').slice(0, -1);
const withLine = (i: number, text: string) => { const l = lines(); l[i] = text; return l.join('\n') + '\n'; };
const edit = (i: number, patch: Record<string, unknown>) => { const r = base(); Object.assign(r[i]!, patch); return toJsonl(r); };
const edits = (...patches: [number, Record<string, unknown>][]) => { const r = base(); for (const [i, p] of patches) Object.assign(r[i]!, p); return toJsonl(r); };

/** The base capture with two raw bytes that are not UTF-8 inside a kernel name (line 9). */
function badUtf8(): Buffer {
  const buf = Buffer.from(toJsonl(base()));
  const at = buf.indexOf('gemm_b');
  buf[at + 4] = 0xff;
  buf[at + 5] = 0xfe;
  return buf;
}

/**
 * The malformed-input corpus: each input either stops the import with exit 2
 * and one message naming file and line, or imports with a diagnostic where
 * the rest of the capture is still sound.
 */
const CASES: Case[] = [
  { name: 'empty file', text: '', exit: 2, message: /empty/ },
  { name: 'only blank lines', text: '\n\n\n', exit: 2, message: /cannot tell the format|empty|no records/ },
  { name: 'not JSON at all', text: 'hello world\n', exit: 2, line: 1, message: /cannot tell the format/ },
  { name: 'bad JSON in the middle', text: withLine(5, '{"schema_version":15,"record_type":"clock_correlation",,}'), exit: 2, line: 6, message: /not a JSON record/ },
  { name: 'truncated line in the middle', text: withLine(7, '{"schema_version":15,"record_type":"dispatch_event","start_tick":20'), exit: 2, line: 8, message: /not a JSON record/ },
  { name: 'a JSON array instead of an object', text: withLine(3, '[1,2,3]'), exit: 2, line: 4, message: /JSON object per line/ },
  { name: 'missing schema row', text: toJsonl(base().slice(1)), exit: 2, line: 1, message: /no "schema" record/ },
  { name: 'unknown schema version', text: toJsonl(base().map((r) => ({ ...r, schema_version: 16 }))), exit: 2, line: 1, message: /unknown ireeperf-jsonl schema_version 16/ },
  { name: 'one record of another schema version', text: edit(7, { schema_version: 14 }), exit: 2, line: 8, message: /schema_version 14 but the stream declared 15/ },
  { name: 'wrong format in the schema row', text: edit(0, { format: 'chrome-trace' }), exit: 2, line: 1, message: /format "chrome-trace"/ },
  { name: 'u64 overflow', text: withLine(7, lines()[7]!.replace('"start_tick":2000', '"start_tick":18446744073709551616')), exit: 2, line: 8, message: /cannot be read/ },
  { name: 'negative tick', text: edit(7, { start_tick: -5 }), exit: 2, line: 8, message: /cannot be read/ },
  { name: 'a dispatch on device 4294967295 (none)', text: edit(7, { physical_device_ordinal: 4294967295 }), exit: 2, line: 8, message: /"physical_device_ordinal" is 4294967295 \(no device\) in this dispatch_event/ },
  { name: 'a queue beyond the store\'s INTEGER', text: edit(7, { queue_ordinal: 2147483648 }), exit: 2, line: 8, message: /field "queue_ordinal": 2147483648 is out of range \(at most 2147483647\)/ },
  { name: 'a workgroup count beyond u32', text: edit(8, { workgroup_count: [4294967296, 1, 1] }), exit: 2, line: 9, message: /field "workgroup_count": 4294967296 is out of range \(at most 4294967295\)/ },
  { name: 'a negative duration in ns', text: edit(8, { duration_ns: -1 }), exit: 2, line: 9, message: /field "duration_ns": -1 is out of range \(ns >= 0\)|cannot be read/ },
  { name: 'two values out of range: the earlier line is named, whatever the field', text: edits([7, { workgroup_count: [4294967296, 1, 1] }], [8, { queue_ordinal: 2147483648 }]), exit: 2, line: 8, message: /field "workgroup_count"/ },
  { name: 'two values out of range on one line: the first field checked is named', text: edit(7, { command_index: 4294967296, queue_ordinal: 2147483648 }), exit: 2, line: 8, message: /field "queue_ordinal": 2147483648/ },
  { name: 'queue 4294967295 is "none", not out of range', text: edit(7, { queue_ordinal: 4294967295 }), exit: 0, diagnostic: '', check: 'select count(*) from dispatches where queue is null', expect: '1' },
  { name: 'string where a tick belongs', text: edit(8, { end_tick: 'soon' }), exit: 2, line: 9, message: /cannot be read/ },
  { name: 'truncated last line', text: toJsonl(base()) + '{"schema_version":15,"record_type":"dispatch_ev', exit: 0, diagnostic: 'truncated-record', line: 11, check: 'select count(*) from dispatches', expect: '2' },
  { name: 'bare NaN', text: withLine(8, lines()[8]!.replace('"duration_ns":1000', '"duration_ns":NaN')), exit: 0, diagnostic: 'non-finite-number', line: 9, check: 'select count(*) from dispatches where source_dur_ns is null', expect: '1' },
  { name: 'bare Infinity and -inf', text: withLine(7, lines()[7]!.replace('"duration_ns":5000', '"duration_ns":Infinity').replace('"duration_ticks":500', '"duration_ticks":-inf')), exit: 0, diagnostic: 'non-finite-number', line: 8 },
  { name: 'NaN inside a string stays text', text: edit(8, { key: 'NaN_kernel Infinity' }), exit: 0, diagnostic: '', check: "select kernel from dispatches where kernel like 'NaN%'", expect: 'NaN_kernel Infinity' },
  { name: 'invalid UTF-8 in a kernel name', text: badUtf8(), exit: 0, diagnostic: 'invalid-utf8', line: 9, check: 'select count(*) from dispatches', expect: '2' },
  { name: 'no session end', text: toJsonl(base().slice(0, -1)), exit: 0, diagnostic: 'no-session-end' },
  { name: 'session ended with an error status', text: edit(9, { session_status: 'DATA_LOSS' }), exit: 0, diagnostic: 'session-not-ok', line: 10 },
  { name: 'dispatch ends before it starts', text: edit(7, { end_tick: 1500 }), exit: 0, diagnostic: 'invalid-events', line: 8, check: 'select count(*) from dispatches where not valid', expect: '1' },
  { name: 'dispatch without its end tick', text: edit(7, { end_tick: undefined }), exit: 0, diagnostic: 'missing-timestamp', line: 8, check: 'select count(*) from dispatches where not valid', expect: '1' },
  { name: 'host-timed dispatch without its end (found by the import fuzz: NOT NULL constraint failed)', text: toJsonl([...base().slice(0, -1), { schema_version: 15, record_type: 'host_execution_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: 9, op: 'dispatch', key: 'gemm_host', start_host_time_ns: 1_000_500 }, base().at(-1)]), exit: 0, diagnostic: 'missing-timestamp', line: 10, check: "select count(*) from dispatches where kernel = 'gemm_host' and not valid", expect: '1' },
  { name: 'dispatch marked invalid by the producer', text: edit(8, { valid: false }), exit: 0, diagnostic: 'invalid-events', line: 9, check: 'select count(*) from dispatches where valid', expect: '1' },
  { name: 'unknown record type', text: toJsonl([...base().slice(0, -1), { schema_version: 15, record_type: 'future_thing', x: 1 }, base().at(-1)]), exit: 0, diagnostic: 'unknown-record-type', line: 10, check: "select count(*) from raw_records where record_type = 'future_thing'", expect: '1' },
  { name: 'non-monotonic clock samples', text: edit(6, { device_tick: 500 }), exit: 0, diagnostic: 'non-monotonic-clock-samples', check: 'select count(*) from dispatches where start_ns is null', expect: '2' },
  { name: 'inverted clock bracket', text: edit(5, { host_time_begin_ns: 1_000_010, host_time_end_ns: 999_990 }), exit: 0, diagnostic: 'inverted-bracket', line: 6 },
  { name: 'one clock sample only', text: toJsonl(base().filter((_, i) => i !== 6)), exit: 0, diagnostic: 'one-clock-sample' },
  { name: 'blank lines and CRLF endings', text: toJsonl(base()).replaceAll('\n', '\r\n\r\n'), exit: 0, diagnostic: '', check: 'select count(*) from dispatches', expect: '2' },
  { name: 'producer diagnostic record', text: toJsonl([...base().slice(0, -1), { schema_version: 15, record_type: 'diagnostic', severity: 'warning', message: 'ring overflowed' }, base().at(-1)]), exit: 0, diagnostic: 'producer-diagnostic', line: 10 },
];

describe('malformed ireeperf-jsonl corpus', () => {
  it('has at least 20 cases', () => expect(CASES.length).toBeGreaterThanOrEqual(20));

  for (const c of CASES) {
    it(c.name, () => {
      const dir = tmp();
      const file = join(dir, 'in.ireeperf.jsonl');
      writeFileSync(file, c.text);
      const db = join(dir, 'out.duckdb');
      const r = tickwise(['import', file, '--db', db]);
      expect(r.stderr).not.toMatch(/\n\s+at /); // never a stack trace
      expect(r.stderr).not.toMatch(/internal error/);
      if (c.exit === 2) {
        expect(r.status, r.stderr).toBe(2);
        const first = r.stderr.trim().split('\n')[0]!;
        expect(first).toContain(c.line === undefined ? 'in.ireeperf.jsonl' : `in.ireeperf.jsonl:${c.line}:`);
        expect(first).toMatch(c.message);
        expect(existsSync(db)).toBe(false); // no half-written store
        return;
      }
      expect(r.status, r.stderr).toBe(0);
      const diags = JSON.parse(tickwise(['sql', db, 'select code, line from diagnostics', '--format', 'json']).stdout) as { code: string; line: number | null }[];
      if (c.diagnostic) {
        const hit = diags.find((d) => d.code === c.diagnostic);
        expect(hit, JSON.stringify(diags)).toBeDefined();
        if (c.line !== undefined) expect(hit!.line).toBe(c.line);
      }
      if (c.check) {
        const v = tickwise(['sql', db, c.check, '--format', 'csv']).stdout.trim().split('\n')[1];
        expect(v).toBe(c.expect);
      }
    });
  }

  it('a missing file and a directory are clear errors', () => {
    const dir = tmp();
    mkdirSync(join(dir, 'sub'));
    const r1 = tickwise(['info', join(dir, 'nope.jsonl')]);
    expect(r1.status).toBe(2);
    expect(r1.stderr).toMatch(/nope\.jsonl: cannot read: ENOENT/);
    const r2 = tickwise(['info', join(dir, 'sub')]);
    expect(r2.status).toBe(2);
    expect(r2.stderr).toMatch(/sub: a directory with no capture in it/);
  });
});
