/**
 * Seeded JSON documents shaped like a Chrome trace (json-records-random and
 * json-records-native tests): strings with every escape and non-ASCII text,
 * numbers in every shape the grammar allows, whitespace with CR and LF,
 * nested values, events with ts/dur (numbers or numeric strings, now and
 * then a duplicate key), and now and then a non-object element.
 */
import type { Rng } from '@tickwise/time';

/** A generated document: its text, and where each event record starts (byte offset). */
export interface Doc {
  text: string;
  /** Offsets of the traceEvents elements that are objects, in order. */
  recordStarts: number[];
  /** Per record: whether a scan routing by "ph" may route it (genDoc's `phases`). */
  routable: boolean[];
}

const KEY_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 _-/.:';

/** A JSON string literal with the escapes JSON.stringify would not write (\u00e9, \/) and non-ASCII text. */
function genString(r: Rng): string {
  const n = r.int(12);
  let s = '"';
  for (let i = 0; i < n; i++) {
    const k = r.int(20);
    if (k === 0) s += ['\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t'][r.int(8)];
    else if (k === 1) s += `\\u${r.int(0xd7ff).toString(16).padStart(4, '0')}`;
    else if (k === 2) s += ['é', '→', '漢', '😀'][r.int(4)];
    else s += KEY_CHARS[r.int(KEY_CHARS.length)];
  }
  return s + '"';
}

/** A JSON number text in any of the grammar's shapes (exponents, fractions, signs, beyond 2^53). */
export function genNumber(r: Rng): string {
  const digits = (n: number) => Array.from({ length: n }, () => '0123456789'[r.int(10)]).join('');
  let s = r.int(4) === 0 ? '-' : '';
  s += r.int(5) === 0 ? '0' : String(1 + r.int(9)) + digits(r.int(r.int(3) === 0 ? 22 : 6));
  if (r.int(2) === 0) s += '.' + digits(1 + r.int(6));
  if (r.int(8) === 0) s += ['e', 'E'][r.int(2)] + ['', '+', '-'][r.int(3)] + digits(1 + r.int(2));
  return s;
}

function ws(r: Rng): string {
  const k = r.int(10);
  if (k < 5) return '';
  return Array.from({ length: 1 + r.int(3) }, () => ' \n\t\r'[r.int(k === 9 ? 4 : 2)]).join('');
}

function genValue(r: Rng, depth: number): string {
  const k = r.int(depth > 3 ? 4 : 7);
  if (k === 0) return genString(r);
  if (k === 1) return genNumber(r);
  if (k === 2) return ['true', 'false', 'null'][r.int(3)]!;
  if (k === 3) return genString(r);
  if (k === 4 || k === 5) return genObject(r, depth + 1, false).text;
  return `[${ws(r)}${Array.from({ length: r.int(4) }, () => genValue(r, depth + 1)).join(`${ws(r)},${ws(r)}`)}${ws(r)}]`;
}

/**
 * An event's `"ph"` members, and whether a scan routing by ph (route key
 * "ph", keeping "X" and "B": RecordSpec.route) may route it: a plain
 * string not kept, once; not an escaped value or key (they may decode to
 * anything), a duplicate, a number, or a ph inside a nested value only.
 */
function genPhase(r: Rng, ws: () => string): { members: string[]; routable: boolean } {
  const k = r.int(9);
  const plain = ['"s"', '"f"', '"M"', '"é"', '""'][r.int(5)]!;
  if (k <= 2) return { members: [`"ph"${ws()}:${ws()}${plain}`], routable: true };
  if (k === 3) return { members: [`"ph":${ws()}${['"X"', '"B"'][r.int(2)]}`], routable: false };
  if (k === 4) return { members: [`"ph":${['"\\u0073"', '"\\u0058"', '"s\\n"'][r.int(3)]}`], routable: false };
  if (k === 5) return { members: [`"p\\u0068":${plain}`], routable: false };
  if (k === 6) return { members: [`"ph":${plain}`, `"ph":${plain}`], routable: false };
  if (k === 7) return { members: [`"ph":${['1', 'null', '["s"]', '{"ph":"s"}'][r.int(4)]}`], routable: false };
  return { members: [`"args":{"ph":${plain}}`], routable: false };
}

/** An object; an event (`event`) gets ts/dur (numbers or numeric strings) among random members, and with `phases` a ph (genPhase). */
function genObject(r: Rng, depth: number, event: boolean, phases = false): { text: string; routable: boolean } {
  const members: string[] = [];
  const n = r.int(5);
  for (let i = 0; i < n; i++) members.push(`${JSON.stringify(KEY_CHARS[r.int(26)]! + i)}${ws(r)}:${ws(r)}${genValue(r, depth)}`);
  let routable = false;
  if (event) {
    if (r.int(6) !== 0) members.splice(r.int(members.length + 1), 0, `"ts"${ws(r)}:${ws(r)}${r.int(8) === 0 ? `"${genNumber(r)}"` : genNumber(r)}`);
    if (r.int(3) !== 0) members.splice(r.int(members.length + 1), 0, `"dur":${ws(r)}${genNumber(r)}`);
    if (r.int(10) === 0) members.push(`"ts": ${genNumber(r)}`); // a duplicate key: the last one counts, as in JSON.parse
    if (phases && r.int(5) !== 0) {
      const ph = genPhase(r, () => ws(r));
      for (const m of ph.members) members.splice(r.int(members.length + 1), 0, m);
      routable = ph.routable;
    }
  }
  return { text: `{${ws(r)}${members.join(`${ws(r)},${ws(r)}`)}${ws(r)}}`, routable };
}

/** A generated document; with `phases`, its events hold "ph" members of every kind (genPhase), said in `routable`. */
export function genDoc(r: Rng, phases = false): Doc {
  let text = `{${ws(r)}"meta"${ws(r)}:${ws(r)}${genObject(r, 1, false).text},${ws(r)}"traceEvents":${ws(r)}[${ws(r)}`;
  const recordStarts: number[] = [];
  const routable: boolean[] = [];
  const n = r.int(30);
  for (let i = 0; i < n; i++) {
    if (i > 0) text += `${ws(r)},${ws(r)}`;
    // now and then any value (a scalar or an array is not a record)
    const ev = r.int(15) === 0 ? { text: genValue(r, 2), routable: false } : genObject(r, 1, true, phases);
    if (ev.text.startsWith('{')) {
      recordStarts.push(text.length);
      routable.push(ev.routable);
    }
    text += ev.text;
  }
  text += `${ws(r)}]${ws(r)},${ws(r)}"tail"${ws(r)}:${ws(r)}${genValue(r, 1)}${ws(r)}}${ws(r)}`;
  return { text, recordStarts, routable };
}


/** Bytes a one-byte mutant inserts or puts in place of one. */
const MUTANT_BYTES = '{}[]:,"\\ 0e.-+tfnu\n\u0001x';

/** A seeded one-byte mutant of `text`: a byte dropped, inserted or replaced, at a random place. */
export function genMutant(r: Rng, text: string): string {
  const at = r.int(text.length);
  const k = r.int(3);
  const b = MUTANT_BYTES[r.int(MUTANT_BYTES.length)]!;
  return k === 0 ? text.slice(0, at) + text.slice(at + 1) : k === 1 ? text.slice(0, at) + b + text.slice(at) : text.slice(0, at) + b + text.slice(at + 1);
}
