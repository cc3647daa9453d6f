/**
 * The JSON tokenizer and the record scanner on the grammar's edge cases: each
 * document is accepted exactly when JSON.parse accepts it, and a rejection
 * names the line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TickwiseError } from '@tickwise/time';
import { openSource, scanJsonRecords } from '../src/index';
import { JsonTokenizer, Tok } from '../src/json-tokenizer';
import { tmp } from './helpers';

/** Tokens of a complete text (the input ends with it). */
function tokens(text: string): (Tok | string)[] {
  const t = new JsonTokenizer();
  const buf = Buffer.from(text);
  t.reset(buf, 0, buf.length, true);
  const out: (Tok | string)[] = [];
  for (;;) {
    const k = t.next();
    if (k === Tok.More) return out;
    if (k === Tok.Error) return [...out, `error: ${t.error}`];
    out.push(k === Tok.String || k === Tok.Number || k === Tok.Literal ? buf.toString('utf8', t.start, t.stop) : k);
  }
}

describe('JsonTokenizer', () => {
  it('reads numbers, strings, literals and punctuation, counting lines', () => {
    expect(tokens('{"a": [-0.5e+3, 0, 12, true, null]}')).toEqual([Tok.BeginObject, '"a"', Tok.Colon, Tok.BeginArray, '-0.5e+3', Tok.Comma, '0', Tok.Comma, '12', Tok.Comma, 'true', Tok.Comma, 'null', Tok.EndArray, Tok.EndObject]);
    const t = new JsonTokenizer();
    const buf = Buffer.from('\n\r\n "x\\u00e9\\n"');
    t.reset(buf, 0, buf.length, true);
    expect(t.next()).toBe(Tok.String);
    expect(t.line).toBe(3);
    expect(t.escaped).toBe(true);
  });

  it('says More at a cut token (not final) and keeps its position', () => {
    for (const text of ['"abc', '"a\\', '"\\u00', '12', '-', '1.', '1e', '1e+', 'tr', 'fals', 'nul']) {
      const t = new JsonTokenizer();
      const buf = Buffer.from(`  ${text}`);
      t.reset(buf, 0, buf.length, false);
      expect(t.next(), text).toBe(Tok.More);
      expect(t.pos, text).toBe(2);
    }
  });

  it('refuses what JSON.parse refuses at the token level', () => {
    for (const text of ['01x', '.5', '+1', '1.e3', '1e', '-', '"\\x"', '"\\u12g4"', '"a\tb"', '"a\nb"', 'True', 'nan', "'a'", '\u00a0']) {
      const got = tokens(text);
      expect(() => JSON.parse(text), text).toThrow(SyntaxError);
      // either a token error, or tokens that no JSON value is made of (01 -> 0 then 1)
      expect(got.some((x) => typeof x === 'string' && x.startsWith('error')) || got.length > 1, `${text}: ${JSON.stringify(got)}`).toBe(true);
    }
  });
});

describe('scanJsonRecords: accepted exactly when JSON.parse accepts', () => {
  const cases = [
    '{"traceEvents": [{"ts": 1}]}',
    '{"traceEvents": [{"ts": 1}], "a": {"b": [1, {"c": null}]}}',
    '[{"ph": "X"}, 5, "s", [1], {}]',
    '{"traceEvents": [{"ts": 1},]}',
    '{"traceEvents": [{"ts": 1}], }',
    '{"traceEvents": [{"ts": 1 "dur": 2}]}',
    '{"traceEvents": [{"ts": 1}, {"args": [1, 2}]}',
    '{"traceEvents": [{"ts": 1}, {"args": {"a": 1]}}]}',
    '{"traceEvents": [{"ts": 1}, "key": 2]}',
    '{"traceEvents": [{"ts": 01}]}',
    '{"traceEvents": [{"ts": 1.}]}',
    '{"traceEvents": [{"name": "tab\there"}]}',
    '{"traceEvents": [{"name": "\\q"}]}',
    '{"traceEvents": [{"a": tru}]}',
    '{"traceEvents": [{"a": 1}]} x',
    '{"traceEvents": [{"a": 1}]}\n{"b": 2}',
    '{"traceEvents": [{,"a": 1}]}',
    '{"traceEvents": [{"a" 1}]}',
    '{"traceEvents": [{"a": 1,}]}',
    '{"traceEvents": [{"a": [1,]}]}',
    '{"traceEvents": [{"a": [,1]}]}',
    '{"traceEvents": [{"a": {"b": 1}}], "meta": [1, 2,]}',
    '{"traceEvents": [{"a": "\\ud800"}]}',
    '{"traceEvents" [{"a": 1}]}',
    '{"traceEvents": [{"a": 1}]}\n\n  \t',
  ];
  it.each(cases)('%s', async (text) => {
    const dir = tmp();
    const file = join(dir, 'doc.json');
    writeFileSync(file, text);
    let parses = true;
    try {
      JSON.parse(text);
    } catch {
      parses = false;
    }
    const got = await scanJsonRecords(await openSource(file), { mode: 'document', records: [{ paths: [['[]'], ['traceEvents', '[]']], out: join(dir, 'o.ndjson') }], capture: [['meta']] })
      .then(() => 'accepted', (e: unknown) => e);
    if (parses) expect(got).toBe('accepted');
    else {
      expect(got).toBeInstanceOf(TickwiseError);
      expect((got as TickwiseError).line).toBeGreaterThanOrEqual(1);
    }
  });
});
