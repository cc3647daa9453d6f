/**
 * The native scanner (native/jsonscan, built by scripts/setup) against the
 * TypeScript scanner, the reference: on seeded generated documents (plain
 * and gzip, every chunk size, parts of a few hundred bytes) the same NDJSON
 * byte for byte, the same lines, record ends, captured values and counts;
 * on seeded one-byte mutants it never accepts what the TypeScript scanner
 * rejects or repairs; and an import whose input fails late in the native
 * scan (parts already loaded) starts over and stores what the TypeScript
 * scanner alone stores.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError, seededRng } from '@tickwise/time';
import { fsToNsText, importInput, openSource, scaleDecimal, scanJsonRecords, type RecordSpec, type ScanOptions, type ScanResult } from '../src/index';
import { NATIVE_MIN_BYTES, nativePlan, nativeScanner, nativeScannerFor, scanNative } from '../src/json-records-native';
import { maxRecordBytesOf } from '../src/json-records';
import { sourceJsonText } from '../src/capture-rows';
import { tmp } from './helpers';
import { genDoc, genMutant } from './json-gen';
import { fixture } from './trace-helpers';

const BIN = nativeScanner();

/** The scan options of one test document: ts/dur scaled by 10^pow10 (also in the native scanner's terms); `exactText`: the spec's. */
function options(dir: string, pow10: number, chunkBytes: number, partBytes: number, exactText?: boolean): ScanOptions {
  const scale = 10n ** BigInt(pow10);
  return {
    mode: 'document',
    records: [{
      paths: [['traceEvents', '[]'], ['[]']], out: join(dir, 'ev.ndjson'), exactKeys: ['ts', 'dur'],
      convert: (_k, t) => scaleDecimal(t, scale), nativeConvert: { kind: 'scale', pow10 }, partBytes,
      ...(exactText === undefined ? {} : { exactText }),
    }],
    capture: [['meta'], ['tail']],
    chunkBytes,
  };
}

/** What a scan gives, with its NDJSON (the parts one after another) and each part's bounds checked. */
function summary(r: ScanResult): Record<string, unknown> {
  const text = r.parts[0]!.map((p) => readFileSync(p.path, 'utf8')).join('');
  let start = 0, first = 0;
  for (const p of r.parts[0]!) {
    expect(p.startByte).toBe(start);
    expect(p.firstRecord).toBe(first);
    // a part ends at a record's end
    if (p.records > 0) expect(r.ends[0]![first + p.records - 1]).toBe(start + Buffer.byteLength(readFileSync(p.path, 'utf8')));
    start += Buffer.byteLength(readFileSync(p.path, 'utf8'));
    first += p.records;
  }
  expect(first).toBe(r.counts[0]);
  return { text, counts: r.counts, lines: Array.from(r.lines[0]!), ends: Array.from(r.ends[0]!), captured: [...r.captured], issues: r.issues, sourceLines: r.sourceLines };
}

async function typescriptScan(file: string, opts: ScanOptions): Promise<ScanResult | TickwiseError> {
  vi.stubEnv('TICKWISE_JSONSCAN', '0');
  try {
    return await scanJsonRecords(await openSource(file), opts);
  } catch (e) {
    if (e instanceof TickwiseError) return e;
    throw e;
  } finally {
    vi.unstubAllEnvs();
  }
}

async function nativeScan(file: string, opts: ScanOptions, dir: string): Promise<ScanResult | null> {
  const plan = nativePlan(opts, maxRecordBytesOf(opts), dir);
  expect(plan).not.toBeNull();
  return (await scanNative(BIN!, await openSource(file), opts, plan!, dir)).result;
}

afterEach(() => vi.unstubAllEnvs());

describe('native JSON scanner vs the TypeScript scanner (seeded)', () => {
  it('is built (scripts/setup builds native/jsonscan)', () => {
    expect(BIN).not.toBeNull();
  });

  it('writes the same NDJSON, lines, record ends and captured values on generated documents, plain and gzip', async () => {
    const r = seededRng(20261204);
    const jsDir = tmp('tickwise-scan-js-'), natDir = tmp('tickwise-scan-nat-');
    let records = 0;
    for (let d = 0; d < 120; d++) {
      const doc = genDoc(r);
      const gz = r.int(4) === 0;
      const pow10 = [0, 3, 6, 9, 12][r.int(5)]!;
      const chunk = [1, 3, 7, 64, 4096][r.int(5)]!;
      const part = [1, 200, 1000, 1 << 24][r.int(4)]!;
      const name = gz ? 'doc.json.gz' : 'doc.json';
      // the exact keys' text kept (by default or asked) or left out (the Chrome reader's)
      const exactText = [undefined, true, false][r.int(3)];
      for (const dir of [jsDir, natDir]) writeFileSync(join(dir, name), gz ? gzipSync(doc.text) : doc.text);
      const js = await typescriptScan(join(jsDir, name), options(jsDir, pow10, chunk, part, exactText));
      if (js instanceof TickwiseError) throw new Error(`document ${d} rejected: ${js.message}`);
      const want = summary(js);
      const text = String(want['text']);
      if (exactText === false) expect(text).not.toMatch(/"_(ts|dur)_text":/);
      else if (/"_ts":/.test(text)) expect(text).toMatch(/"_ts_text":/);
      const nat = await nativeScan(join(natDir, name), options(natDir, pow10, chunk, part, exactText), natDir);
      expect(nat, `document ${d}: the native scanner fell back`).not.toBeNull();
      expect({ ...summary(nat!), text: undefined }, `document ${d}`).toEqual({ ...want, text: undefined });
      expect(summary(nat!)['text'], `document ${d}`).toBe(want['text']);
      records += js.counts[0]!;
    }
    expect(records).toBeGreaterThan(1000);
  });

  it('cuts its first part at a quarter of partBytes and the others at partBytes, as the TypeScript scanner does', async () => {
    const dir = tmp('tickwise-scan-nat-');
    const nat = await nativeScan(fixture('chrome-trace', 'kineto.pt.trace.json'), options(dir, 3, 64, 800), dir);
    expect(nat).not.toBeNull();
    const sizes = nat!.parts[0]!.map((p) => Buffer.byteLength(readFileSync(p.path, 'utf8')));
    expect(sizes.length).toBeGreaterThanOrEqual(4);
    expect(sizes[0]).toBeGreaterThanOrEqual(200);
    expect(sizes[0]).toBeLessThan(800);
    for (const s of sizes.slice(1, -1)) expect(s).toBeGreaterThanOrEqual(800);
  });

  it('converts every exact text as the TypeScript scanner does: its fast path (digits, a fraction), the texts it leaves to the full conversion, by a power of ten and through fs', async () => {
    // the fast path's texts: zero, leading zeros, a fraction shorter than, as long as and longer than the scale
    const plain = ['0', '7', '00', '007', '0.5', '0.000', '000.0100', '10.0', '1.25', '1.2345', '1661203462598.772', '1661203462598772',
      '123456789012345678901234567890', '99999999999999999999999999999999999999999999999999.5'];
    // the full conversion's: signs, exponents, spaces, a point with no digits on one side, rounding
    const odd = ['-1.5', '-0', '1e3', '1.5E-2', ' 12 ', '1.', '.5', '1.23456789012345', '-0.0000001', '0.0000005'];
    const isNumber = (t: string) => /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(t);
    const converts = [{ kind: 'scale', pow10: 0 }, { kind: 'scale', pow10: 3 }, { kind: 'scale', pow10: 9 },
      { kind: 'fs', pow10: 6 }, { kind: 'fs', pow10: 9 }, { kind: 'fs', pow10: 12 }, { kind: 'fs', pow10: 15 }] as const;
    const jsDir = tmp('tickwise-exact-js-'), natDir = tmp('tickwise-exact-nat-');
    const opts = (dir: string, c: (typeof converts)[number]): ScanOptions => {
      const scale = 10n ** BigInt(c.pow10);
      return {
        mode: 'document',
        records: [{
          paths: [['traceEvents', '[]']], out: join(dir, 'ev.ndjson'), exactKeys: ['ts', 'dur'],
          convert: (_k, t) => (c.kind === 'scale' ? scaleDecimal(t, scale) : fsToNsText(scaleDecimal(t, scale))), nativeConvert: c,
        }],
        chunkBytes: 4096,
      };
    };
    let compared = 0;
    // the plain texts in one document (the native scan must take it); each odd text alone (one it leaves hides no other)
    const docs = [{ texts: plain, mustTake: true }, ...odd.map((t) => ({ texts: [t], mustTake: false }))];
    for (const c of converts) {
      for (const { texts, mustTake } of docs) {
        const events = texts.flatMap((t, i) => [`{"ts":"${t}","dur":"${texts[(i + 1) % texts.length]}"}`, ...(isNumber(t) ? [`{"ts":${t},"dur":${t}}`] : [])]);
        for (const dir of [jsDir, natDir]) writeFileSync(join(dir, 'doc.json'), `{"traceEvents":[\n${events.join(',\n')}\n]}`);
        const js = await typescriptScan(join(jsDir, 'doc.json'), opts(jsDir, c));
        if (js instanceof TickwiseError) throw new Error(`${c.kind} ${c.pow10} ${texts.join(' ')}: ${js.message}`);
        const nat = await nativeScan(join(natDir, 'doc.json'), opts(natDir, c), natDir);
        if (mustTake) expect(nat, `${c.kind} ${c.pow10}: the native scanner fell back`).not.toBeNull();
        if (nat === null) continue;
        expect(summary(nat), `${c.kind} ${c.pow10} ${texts.join(' ')}`).toEqual(summary(js));
        compared++;
      }
    }
    // (the odd texts the fast conversion refuses, a sign, an exponent, a space, fall back; most are converted)
    expect(compared).toBeGreaterThan(converts.length * 6);
  });

  it('routes by a key: exactly the records with one plain "ph" not kept go to the route, as their source text; the rest are the TypeScript scanner\'s NDJSON', async () => {
    const r = seededRng(20261205);
    const jsDir = tmp('tickwise-route-js-'), natDir = tmp('tickwise-route-nat-');
    let routedSeen = 0, keptSeen = 0, fellBack = 0;
    for (let d = 0; d < 150; d++) {
      const doc = genDoc(r, true);
      const chunk = [1, 7, 4096][r.int(3)]!;
      const part = [200, 1 << 24][r.int(2)]!;
      // with exact keys (ts, dur: an escaped key in the record is the TypeScript scanner's) and without
      const exactKeys = r.int(2) === 0 ? ['ts', 'dur'] : [];
      const opts = (dir: string, route?: RecordSpec['route']): ScanOptions => {
        const base = options(dir, 6, chunk, part);
        return { ...base, records: [{ ...base.records[0]!, exactKeys, ...(route ? { route } : {}) }] };
      };
      for (const dir of [jsDir, natDir]) writeFileSync(join(dir, 'doc.json'), doc.text);
      const js = await typescriptScan(join(jsDir, 'doc.json'), opts(jsDir));
      if (js instanceof TickwiseError) throw new Error(`document ${d} rejected: ${js.message}`);
      const routeOut = join(natDir, 'routed.usv');
      const routedOpts = opts(natDir, { key: 'ph', keep: ['X', 'B'], out: routeOut });
      const plan = nativePlan(routedOpts, maxRecordBytesOf(routedOpts), natDir)!;
      const { result: nat, why } = await scanNative(BIN!, await openSource(join(natDir, 'doc.json')), routedOpts, plan, natDir);
      if (nat === null) {
        // an escaped key in a record with exact keys (ts, dur) is the TypeScript scanner's, routed or not
        expect(why, `document ${d}`).toBe('tw-jsonscan: an escaped key in a record with exact keys');
        fellBack++;
        continue;
      }
      expect(nat.routed?.[0]?.path).toBe(routeOut);
      // every record, in order: the TypeScript scanner's staged text, its source line, and whether it is routed
      const staged = summary(js)['text'] as string;
      const jsRecords = staged.split('\n').slice(0, -1);
      expect(jsRecords.length).toBe(doc.routable.length);
      const routedLines = readFileSync(routeOut, 'utf8').split('\n').slice(0, -1);
      expect(nat.routed![0]!.records).toBe(routedLines.length);
      const kept: string[] = [], keptLines: number[] = [], routed: string[] = [];
      jsRecords.forEach((text, i) => {
        if (!doc.routable[i]) {
          kept.push(text);
          keptLines.push(js.lines[0]![i]!);
          return;
        }
        const source = sourceJsonText(text, exactKeys);
        const ph = (JSON.parse(source) as { ph: string }).ph;
        routed.push(`${js.lines[0]![i]}\x1f${ph}\x1f${source}`);
      });
      expect(routedLines, `document ${d}`).toEqual(routed);
      const natSummary = summary(nat);
      expect(natSummary['text'], `document ${d}`).toBe(kept.map((t) => t + '\n').join(''));
      expect(natSummary['lines'], `document ${d}`).toEqual(keptLines);
      expect(nat.counts[0]).toBe(kept.length);
      routedSeen += routed.length;
      keptSeen += doc.routable.filter((x, i) => !x && /"ph"|"p\\u0068"/.test(jsRecords[i]!)).length;
    }
    // both outcomes are common: routed records, and records with a ph that may not be routed
    expect(routedSeen).toBeGreaterThan(200);
    expect(keptSeen).toBeGreaterThan(200);
    expect(fellBack).toBeLessThan(100);
  });

  it('never accepts a one-byte mutant the TypeScript scanner rejects or repairs', async () => {
    const r = seededRng(4242);
    const jsDir = tmp('tickwise-scan-js-'), natDir = tmp('tickwise-scan-nat-');
    let fellBack = 0, same = 0;
    for (let d = 0; d < 300; d++) {
      const mutant = genMutant(r, genDoc(r).text);
      for (const dir of [jsDir, natDir]) writeFileSync(join(dir, 'm.json'), mutant);
      const chunk = [2, 64, 4096][r.int(3)]!;
      const js = await typescriptScan(join(jsDir, 'm.json'), options(jsDir, 3, chunk, 1 << 24));
      const nat = await nativeScan(join(natDir, 'm.json'), options(natDir, 3, chunk, 1 << 24), natDir);
      if (nat === null) {
        fellBack++;
        continue;
      }
      const label = `mutant ${d}: the native scanner accepted it\n${mutant}`;
      expect(js instanceof TickwiseError, label).toBe(false);
      expect((js as ScanResult).issues, label).toEqual([]);
      expect(summary(nat), label).toEqual(summary(js as ScanResult));
      same++;
    }
    // both outcomes are common: the test covers rejection and acceptance
    expect(fellBack).toBeGreaterThan(50);
    expect(same).toBeGreaterThan(50);
  });

  it('a Chrome trace cut off in its last event: parts loaded by the native scan are dropped, and the import stores what the TypeScript scanner stores', { timeout: 120_000 }, async () => {
    const dir = tmp('tickwise-scan-restart-');
    // ~20 MB of kernels: more than one 16 MiB staging part before the cut
    const ev = (i: number) => `{"ph":"X","cat":"kernel","name":"k${i % 7}","pid":1,"tid":7,"ts":${1000 + i * 3}.${i % 1000},"dur":2.5,"args":{"correlation":${i},"device":0,"stream":7,"pad":"${'x'.repeat(60)}"}}`;
    const events = Array.from({ length: 150_000 }, (_, i) => ev(i));
    const text = `{"traceEvents":[\n${events.join(',\n')},\n${ev(150_000).slice(0, 40)}`;
    expect(text.length).toBeGreaterThan(18 << 20);
    const file = join(dir, 'cut.json');
    writeFileSync(file, text);
    const stored = async (native: boolean) => {
      vi.stubEnv('TICKWISE_JSONSCAN', native ? 'always' : '0');
      vi.stubEnv('TICKWISE_TRACE_SCAN', '1');
      const said: string[] = [];
      const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s) => (said.push(String(s)), true));
      const store = await Store.open(':memory:');
      try {
        const res = await importInput(store, file);
        const rows = await store.rows(`SELECT count(*)::INTEGER AS n, sum(start_ns)::VARCHAR AS s, sum(dur_ns)::VARCHAR AS d, min(line)::INTEGER AS l0, max(line)::INTEGER AS l1 FROM dispatches`);
        const diags = await store.rows(`SELECT code, line FROM diagnostics ORDER BY code`);
        return { res: { ...res, capture_id: 0 }, rows, diags, said };
      } finally {
        spy.mockRestore();
        vi.unstubAllEnvs();
        await store.close();
      }
    };
    const js = await stored(false);
    const nat = await stored(true);
    expect(js.rows).toEqual([{ n: 150_000, s: expect.any(String), d: String(150_000 * 2500), l0: 2, l1: 150_001 }]);
    expect(js.diags).toContainEqual({ code: 'truncated-record', line: 150_002n });
    expect({ ...nat, said: [] }).toEqual({ ...js, said: [] });
    // the native scan ran first and stopped at the cut (after handing parts over)
    expect(nat.said.join('')).toMatch(/tw-jsonscan: the input ends inside a record or value; the TypeScript scanner reads/);
  });
});

describe('which inputs start the native scanner', () => {
  it.runIf(BIN !== null)('4 MiB and more (a compressed input at ten times its size); any size when named; none when off', () => {
    const env = {};
    expect(nativeScannerFor(NATIVE_MIN_BYTES - 1, 'none', env)).toBeNull();
    expect(nativeScannerFor(NATIVE_MIN_BYTES, 'none', env)).toBe(BIN);
    expect(nativeScannerFor(Math.ceil(NATIVE_MIN_BYTES / 10), 'gzip', env)).toBe(BIN);
    expect(nativeScannerFor(Math.floor(NATIVE_MIN_BYTES / 10) - 1, 'gzip', env)).toBeNull();
    expect(nativeScannerFor(10, 'none', { TICKWISE_JSONSCAN: 'always' })).toBe(BIN);
    expect(nativeScannerFor(10, 'none', { TICKWISE_JSONSCAN: BIN! })).toBe(BIN);
    expect(nativeScannerFor(NATIVE_MIN_BYTES * 100, 'none', { TICKWISE_JSONSCAN: '0' })).toBeNull();
  });
});
