import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createGunzip } from 'node:zlib';
import { TickwiseError } from '@tickwise/time';
import { JsonTokenizer, Tok, byteName } from './json-tokenizer';
import { earlyScanDir, nativePlan, nativeScannerFor, scanNative, startNativeEarly } from './json-records-native';
export { scaleDecimal } from './decimal-scale';
import { traceMessages } from './trace-messages';
import { envBytes, processTempDir, type SourceFile } from './source-file';
import type { Diagnostic } from './readers/ireeperf-jsonl';

/**
 * Where records sit in a JSON document: a path of object keys and `[]` (an
 * array element), ending in `[]`. `[]` alone is a top-level array's
 * elements; in `lines` mode the empty path means each top-level object.
 */
export type JsonPath = readonly string[];

/** One kind of record to pull out of a document into its own NDJSON file. */
export interface RecordSpec {
  /** Paths whose objects are records of this kind. */
  readonly paths: readonly JsonPath[];
  /** The NDJSON file the records go to. */
  readonly out: string;
  /**
   * Keys of the record's own level whose scalar value must be read from its
   * exact text (JSON numbers lose digits as doubles). For each one present,
   * `convert(key, text)` is called with the number's text (or a string's raw
   * content) and its result is appended to the record as `"_<key>"` (a JSON
   * string, or null), with the text itself as `"_<key>_text"`.
   */
  readonly exactKeys?: readonly string[];
  /**
   * false: the `"_<key>_text"` keys are left out (a reader that reads only
   * the converted values: a Chrome trace's NDJSON is ~8% smaller without them,
   * bytes the scanner writes and DuckDB parses for nothing).
   */
  readonly exactText?: boolean;
  readonly convert?: (key: string, text: string) => string | null;
  /**
   * `convert` in the terms the native scanner knows (json-records-native.ts):
   * `scale`: `scaleDecimal(text, 10^pow10)`; `fs`: the same, then femtosecond
   * text to ns text (the Chrome reader's). A spec whose `convert` has none is
   * scanned by the TypeScript scanner.
   */
  readonly nativeConvert?: { readonly kind: 'scale' | 'fs'; readonly pow10: number };
  /**
   * Write the NDJSON in parts of about this many bytes (`out`, then
   * `out.1`, `out.2`, ...; the first about a quarter of it, so loading starts
   * soon), calling `onPart` as each is complete, so a reader can load a part
   * while the scan goes on. Default: one file.
   */
  readonly partBytes?: number;
  readonly onPart?: (part: NdjsonPart) => void;
  /**
   * Records whose own-level `key` holds a string written without escapes,
   * once, and not one of `keep`, may go to `out` instead of this spec's
   * NDJSON (a reader's records with no table, passed through as they are),
   * one per line: `<N>\x1f<value>\x1f<the record's text>` (N its source
   * line; no field holds 0x1f), the text as {@link sourceJsonText} gives it
   * back from a staged record. Only
   * the native scanner routes (its result's `routed`); the TypeScript
   * scanner writes every record to the spec's NDJSON.
   */
  readonly route?: { readonly key: string; readonly keep: readonly string[]; readonly out: string };
  /**
   * Begin/end records paired per group as they are scanned (a stack per
   * group: an `close` record ends the innermost `open` one), written to `out`
   * as lines `<open record's index>\t<close record's index>\t<the close
   * record's converted timeKey text>`. Only the native scanner pairs (its
   * result's `paired`), and only when the pairs are certainly those of a sort
   * by (time, index) per group: every open/close record has its `kindKey` as
   * a plain string, its group keys (absent, null, a plain string, an integer
   * of at most 18 digits, true or false) once each, an exact `timeKey`
   * (`timeKey` must be one of `exactKeys`), and each group's times never go
   * back. Anything else: no pairs, the caller pairs them itself.
   */
  readonly pairs?: PairSpec;
  /**
   * The Chrome reader's host lane: records whose own-level `kindKey` is the
   * string `kind` and whose `catKey` is a string the scanner's host rule
   * accepts (CAT_CLASS 'host': tw-jsonscan's `hostCategory`), whose
   * converted `tsKey` and `durKey` are whole numbers under 2^62, and whose
   * values read_json would give back as written, may go to spec number `to`
   * (a spec with no paths of its own: its parts, lines and ends are the
   * lane's) as tab-separated rows instead of this spec's NDJSON:
   * `line, name, cat, pid, tid, ts, dur, correlation, host args` (nulls
   * `\N`; the format in tw-jsonscan.cpp, HostLane). `onCategory` hears each
   * category the first time a record of it goes there, before the part that
   * holds it. Only the native scanner does this; the TypeScript scanner
   * writes every record to this spec. A reader checks the lane's rows as it
   * would have checked the records: the rule decides where a record is
   * loaded, never what it becomes.
   */
  readonly hostLane?: HostLaneSpec;
}

/** {@link RecordSpec.hostLane}. */
export interface HostLaneSpec {
  readonly to: number;
  readonly kindKey: string;
  readonly kind: string;
  readonly catKey: string;
  readonly nameKey: string;
  readonly pidKey: string;
  readonly tidKey: string;
  readonly argsKey: string;
  /** The key inside the args whose integer is the row's correlation. */
  readonly corrKey: string;
  /** Exact keys of this spec whose converted texts are the row's ts and dur. */
  readonly tsKey: string;
  readonly durKey: string;
  readonly onCategory?: (category: string) => void;
}

/** {@link RecordSpec.pairs}. */
export interface PairSpec {
  readonly kindKey: string;
  readonly open: string;
  readonly close: string;
  readonly timeKey: string;
  readonly groupKeys: readonly string[];
  readonly out: string;
}

/** A spec's pairs ({@link RecordSpec.pairs}): the file and how many lines it holds. */
export interface PairedRecords {
  readonly path: string;
  readonly pairs: number;
}

/** A spec's routed records ({@link RecordSpec.route}). */
export interface RoutedRecords {
  readonly path: string;
  readonly records: number;
  /** The longest line's bytes, its newline too. */
  readonly longestLineBytes: number;
}

/** One complete part of a spec's NDJSON output. */
export interface NdjsonPart {
  readonly path: string;
  /** Its first byte's offset in the whole output (the parts one after another). */
  readonly startByte: number;
  /** Index of its first record in the whole output, and how many it holds. */
  readonly firstRecord: number;
  readonly records: number;
}

/** Options of {@link scanJsonRecords}. */
export interface ScanOptions {
  /** `document`: one JSON value; `lines`: a sequence of top-level objects (JSON lines). */
  readonly mode: 'document' | 'lines';
  readonly records: readonly RecordSpec[];
  /** Paths (with `[]` wildcards) whose values are kept as raw JSON text (small metadata). */
  readonly capture?: readonly JsonPath[];
  /** Largest captured value kept, bytes (default 16 MiB); longer ones are dropped with an issue. */
  readonly captureLimit?: number;
  /** Read size in bytes (default 4 MiB); tests use tiny ones to cross every chunk boundary. */
  readonly chunkBytes?: number;
  /**
   * Largest record (or other single value: a string, a number) read, bytes;
   * a longer one stops the scan with its line. Default
   * {@link DEFAULT_MAX_RECORD_BYTES}, or `TICKWISE_MAX_RECORD_BYTES` from the
   * environment (bytes, or with a unit: `256MiB`, `1GiB`).
   */
  readonly maxRecordBytes?: number;
  /**
   * Called when parts already handed to `onPart` are void: the native
   * scanner stopped (input beyond its common case) and the TypeScript scanner
   * starts over, handing the parts over again. Without it, a spec with
   * `onPart` is scanned by the TypeScript scanner only.
   */
  readonly onRestart?: () => void;
}

/** What a scan found. */
export interface ScanResult {
  /** Records written, per spec. */
  readonly counts: number[];
  /** 1-based source line of each written record, per spec (to map a reader's errors back). */
  readonly lines: Uint32Array[];
  /** Per spec: the byte offset in its NDJSON output just past each record's newline (to read chosen records back). */
  readonly ends: Float64Array[];
  /** Per spec: its NDJSON output's parts, in order (one file unless `partBytes` was given). */
  readonly parts: (readonly NdjsonPart[])[];
  /**
   * Captured values by concrete path: keys joined with `/`, array positions
   * as their index (`rocprofiler-sdk-tool/0/metadata`).
   */
  readonly captured: Map<string, string>;
  /** Problems repaired or noticed (a cut-off last record, a missing `]`). */
  readonly issues: Diagnostic[];
  /** Lines in the source. */
  readonly sourceLines: number;
  /** Per spec: its routed records, when the native scanner routed them (else absent, or null for that spec). */
  readonly routed?: (RoutedRecords | null)[];
  /** Per spec: its begin/end pairs, when the native scanner paired them (else absent, or null for that spec). */
  readonly paired?: (PairedRecords | null)[];
}

/** NDJSON is staged, and loaded by DuckDB while the scan goes on, in parts of this size. */
export const STAGE_PART_BYTES = 16 << 20;

/**
 * True when input `src` likely stages more than one part: its size on disk,
 * or for a compressed file a tenth of {@link STAGE_PART_BYTES} (a trace
 * compresses 10-20x).
 */
export function spansParts(src: { readonly sizeBytes: number; readonly compression: string }): boolean {
  return src.sizeBytes >= (src.compression === 'none' ? STAGE_PART_BYTES : STAGE_PART_BYTES / 10);
}

/** Default of {@link ScanOptions.maxRecordBytes}: 64 MiB. */
export const DEFAULT_MAX_RECORD_BYTES = 64 << 20;

/** The record limit: the option, else `TICKWISE_MAX_RECORD_BYTES`, else 64 MiB. */
export function maxRecordBytesOf(opts: Pick<ScanOptions, 'maxRecordBytes'>, env = process.env): number {
  if (opts.maxRecordBytes !== undefined) return opts.maxRecordBytes;
  return envBytes('TICKWISE_MAX_RECORD_BYTES', 1, env) ?? DEFAULT_MAX_RECORD_BYTES;
}

// ---------------------------------------------------------------------------
// The path matcher: a trie of the paths asked for

interface TrieNode {
  readonly children: Map<string, TrieNode>;
  record: number;
  capture: boolean;
}

function newNode(): TrieNode {
  return { children: new Map(), record: -1, capture: false };
}

function buildTrie(opts: ScanOptions): TrieNode {
  const root = newNode();
  const walk = (path: JsonPath): TrieNode => {
    let n = root;
    for (const k of path) {
      let c = n.children.get(k);
      if (!c) n.children.set(k, (c = newNode()));
      n = c;
    }
    return n;
  };
  opts.records.forEach((spec, i) => {
    for (const p of spec.paths) walk(p).record = i;
  });
  for (const p of opts.capture ?? []) walk(p).capture = true;
  return root;
}

// Frame states (what may come next in an open container outside records).
const OBJ_FIRST = 0; // a key or }
const OBJ_KEY = 1; // a key (after ,)
const OBJ_COLON = 2;
const OBJ_VALUE = 3;
const OBJ_NEXT = 4; // , or }
const ARR_FIRST = 5; // a value or ]
const ARR_VALUE = 6; // a value (after ,)
const ARR_NEXT = 7; // , or ]

/** A container being walked outside records. */
interface Frame {
  readonly obj: boolean;
  /** Trie node of this container; null when nothing below it is asked for. */
  readonly node: TrieNode | null;
  /** Current key (objects whose node is set) or element index (arrays). */
  key: string;
  index: number;
  state: number;
}

// ---------------------------------------------------------------------------
// Output: NDJSON records assembled in one growing buffer per spec

const NL = 0x0a, CR = 0x0d, SPACE = 0x20;
const NULL = Buffer.from('null');
const LINE_KEY = Buffer.from('{"_line":'), I_KEY = Buffer.from(',"_i":['), CLOSE_I = Buffer.from(']'), COMMA = Buffer.from(','), RECORD_END = Buffer.from('}\n');
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029]/;

/** A JSON string literal (fast for the plain number texts this file writes). */
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** One spec's NDJSON file: whole records only are ever in `buf`, written out in large blocks. */
class NdjsonOut {
  private stream: WriteStream;
  private readonly parts: NdjsonPart[] = [];
  private partPath: string;
  private partStart = 0;
  private partFirst = 0;
  buf = Buffer.allocUnsafe(1 << 20);
  pos = 0;
  count = 0;
  private lines = new Uint32Array(1024);
  /** Byte offset in the file just past each record's newline (record i is [ends[i-1], ends[i])). */
  private ends = new Float64Array(1024);
  /** Bytes handed to the stream before `buf`. */
  private written = 0;
  constructor(private readonly path: string, private readonly partBytes = Infinity, private readonly onPart?: (part: NdjsonPart) => void) {
    this.partPath = path;
    this.stream = NdjsonOut.open(path);
  }
  private static open(path: string): WriteStream {
    const stream = createWriteStream(path);
    stream.on('error', () => undefined); // reported by close()
    return stream;
  }
  ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }
  ascii(s: string): void {
    this.ensure(s.length);
    this.pos += this.buf.write(s, this.pos, 'latin1');
  }
  utf8(s: string): void {
    this.ensure(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
  /** A non-negative integer's digits. */
  uint(n: number): void {
    this.ensure(16);
    const b = this.buf;
    let digits = 1;
    for (let x = n; x >= 10; x = Math.floor(x / 10)) digits++;
    let k = this.pos + digits;
    this.pos = k;
    do {
      b[--k] = 0x30 + (n % 10);
      n = Math.floor(n / 10);
    } while (n > 0);
  }
  /** Bytes [a, b) of `src` (a loop for short spans: Buffer#copy costs more than it moves there). */
  copy(src: Uint8Array, a: number, b: number): void {
    const n = b - a;
    this.ensure(n);
    if (n > 256) {
      this.buf.set(src.subarray(a, b), this.pos);
      this.pos += n;
      return;
    }
    const d = this.buf;
    let p = this.pos;
    for (let i = a; i < b; i++) d[p++] = src[i]!;
    this.pos = p;
  }
  /**
   * Bytes [a, b) of `src` holding `newlines` LFs and `crs` CRs (whitespace
   * between tokens: strings cannot hold them), each written as a space.
   */
  copyFlat(src: Uint8Array, a: number, b: number, newlines: number, crs: number): void {
    const n = b - a;
    this.ensure(n);
    const d = this.buf;
    const from = this.pos;
    d.set(src.subarray(a, b), from);
    this.pos = from + n;
    for (let k = 0, at = from; k < newlines; k++) {
      at = d.indexOf(NL, at);
      d[at++] = SPACE;
    }
    for (let k = 0, at = from; k < crs; k++) {
      at = d.indexOf(CR, at);
      d[at++] = SPACE;
    }
  }
  /** A JSON string literal of `s`: written byte by byte when it is printable ASCII without " and \\ (number texts). */
  jsonString(s: string): void {
    const n = s.length;
    this.ensure(n + 2);
    const d = this.buf;
    let p = this.pos;
    d[p++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
        this.utf8(jsonString(s));
        return;
      }
      d[p++] = c;
    }
    d[p++] = 0x22;
    this.pos = p;
  }
  /** Counts a finished record and its source line. */
  done(line: number): void {
    if (this.count === this.lines.length) {
      const l = new Uint32Array(this.lines.length * 2);
      l.set(this.lines);
      this.lines = l;
      const e = new Float64Array(this.ends.length * 2);
      e.set(this.ends);
      this.ends = e;
    }
    this.ends[this.count] = this.written + this.pos;
    this.lines[this.count++] = line;
  }
  sourceLines(): Uint32Array {
    return this.lines.subarray(0, this.count);
  }
  recordEnds(): Float64Array {
    return this.ends.subarray(0, this.count);
  }
  /** Writes out what is assembled once it is large. */
  async flush(force = false): Promise<void> {
    if (this.pos === 0 || (!force && this.pos < Math.min(4 << 20, this.partLimit()))) return;
    const done = this.buf.subarray(0, this.pos);
    this.buf = Buffer.allocUnsafe(Math.max(1 << 20, this.buf.length));
    this.written += this.pos;
    this.pos = 0;
    if (!this.stream.write(done)) await once(this.stream, 'drain');
    // the buffer holds whole records only, so a part ends at a record's end
    if (!force && this.written - this.partStart >= this.partLimit()) await this.endPart(true);
  }
  /**
   * The bytes the current part holds at least before it ends: a quarter of
   * partBytes for the first, so the loader starts on it soon after the scan
   * does (a 174 MB trace's first 16 MiB took ~270 ms to scan, its first 4
   * MiB ~70 ms), partBytes after (the native scanner's rule too; its parts
   * end where its own writes fall).
   */
  private partLimit(): number {
    return this.parts.length === 0 ? Math.floor(this.partBytes / 4) : this.partBytes;
  }
  /** Closes the current part (handing it to onPart), and opens the next one when `more`. */
  private async endPart(more: boolean): Promise<void> {
    this.stream.end();
    await once(this.stream, 'finish');
    const part: NdjsonPart = { path: this.partPath, startByte: this.partStart, firstRecord: this.partFirst, records: this.count - this.partFirst };
    this.parts.push(part);
    this.onPart?.(part);
    if (!more) return;
    this.partStart = this.written;
    this.partFirst = this.count;
    this.partPath = `${this.path}.${this.parts.length}`;
    this.stream = NdjsonOut.open(this.partPath);
  }
  async close(): Promise<void> {
    await this.flush(true);
    await this.endPart(false);
  }
  /** The parts written, in order (one, at `out`, unless partBytes was set). */
  allParts(): readonly NdjsonPart[] {
    return this.parts;
  }
  destroy(): void {
    this.stream.destroy();
  }
}

// ---------------------------------------------------------------------------
// The scanner

/**
 * Deepest nesting of the document outside records (a record's own depth is
 * bounded by the record size limit): each level is a frame held in memory,
 * so a file of 64 MB of `[` would take gigabytes without it.
 */
export const MAX_DOCUMENT_DEPTH = 10_000;

/** What a run over the window ended with. */
const DONE = 0, MORE = 1;

/** Container kinds on a record's validation stack. */
const IN_OBJ = 1, IN_ARR = 2;

/**
 * Walks a document through {@link JsonTokenizer}: outside records, a path
 * matcher (a stack of frames against the trie of asked-for paths) that
 * captures small metadata values and skips the rest; at a record, a
 * validating parse of the whole record (it must lie in the window: a record
 * cut by the window's end is parsed again once more bytes came), which
 * copies its bytes to the spec's NDJSON file.
 */
class RecordScanner {
  private readonly t = new JsonTokenizer();
  private readonly root: TrieNode;
  private readonly outs: NdjsonOut[];
  private readonly exactKeys: (readonly string[])[];
  /** Per spec and exact key: the bytes `,"_<key>":` and `,"_<key>_text":`. */
  private readonly exactNames: (readonly [Buffer, Buffer])[][];
  readonly captured = new Map<string, string>();
  readonly issues: Diagnostic[] = [];
  private readonly stack: Frame[] = [];
  private sawAnything = false;
  private documentDone = false;
  private topCount = 0;
  // a captured container being read: its concrete path, its frame depth, where it starts in the window, bytes before the window
  private capPath: string | null = null;
  private capDepth = 0;
  private capStart = 0;
  private capParts: Buffer[] = [];
  private capSize = 0;
  // a record's validation stack and its exact values
  private kinds = new Uint8Array(64);
  private exactText: (string | undefined)[] = [];
  private exactOrder: number[] = [];

  constructor(
    private readonly file: string,
    private readonly opts: ScanOptions,
    private readonly captureLimit: number,
  ) {
    this.root = buildTrie(opts);
    this.outs = opts.records.map((r) => new NdjsonOut(r.out, r.partBytes, r.onPart));
    this.exactKeys = opts.records.map((r) => r.exactKeys ?? []);
    this.exactNames = this.exactKeys.map((keys) => keys.map((k) => [Buffer.from(`,"_${k}":`), Buffer.from(`,"_${k}_text":`)] as const));
  }

  /** The current line (after a run that wanted more: the line of the cut record or token). */
  get line(): number {
    return this.t.line;
  }

  /** After a run: the first byte not consumed (a cut record's or token's start). */
  get pos(): number {
    return this.t.pos;
  }

  private fail(message: string, line = this.t.line): never {
    throw new TickwiseError('bad-record', message, { file: this.file, line });
  }

  private bad(detail: string, line = this.t.line): never {
    return this.fail(traceMessages.badJson(detail), line);
  }

  /** Malformed JSON inside a record. */
  private badRecord(detail: string): never {
    return this.fail(traceMessages.badRecord(traceMessages.badJson(detail)));
  }

  /**
   * Scans `buf[pos, end)` as far as it goes; MORE when the window ends
   * inside a token or record (the tokenizer's position is then its start, the
   * first byte to keep).
   */
  run(buf: Buffer, pos: number, end: number, final: boolean): number {
    const t = this.t;
    t.reset(buf, pos, end, final);
    if (this.opts.mode === 'lines') return this.runLines();
    const stack = this.stack;
    for (;;) {
      if (stack.length === 0) {
        if (!this.topValue()) return MORE;
        continue;
      }
      const f = stack[stack.length - 1]!;
      const tok = t.next();
      if (tok === Tok.More) return MORE;
      if (tok === Tok.Error) this.bad(t.error);
      switch (f.state) {
        case OBJ_FIRST:
        case OBJ_KEY:
          if (tok === Tok.String) {
            if (f.node !== null) f.key = keyText(buf, t.start, t.stop, t.escaped);
            f.state = OBJ_COLON;
          } else if (tok === Tok.EndObject && f.state === OBJ_FIRST) this.closeFrame();
          else this.bad(`${tokenName(tok, buf, t.start)} where a key was expected`);
          break;
        case OBJ_COLON:
          if (tok !== Tok.Colon) this.bad(`${tokenName(tok, buf, t.start)} where ":" after a key was expected`);
          f.state = OBJ_VALUE;
          break;
        case OBJ_VALUE:
          f.state = OBJ_NEXT;
          if (this.value(tok, f.node === null ? null : f.node.children.get(f.key) ?? null) === MORE) {
            f.state = OBJ_VALUE;
            return MORE;
          }
          break;
        case OBJ_NEXT:
          if (tok === Tok.Comma) f.state = OBJ_KEY;
          else if (tok === Tok.EndObject) this.closeFrame();
          else this.bad(`${tokenName(tok, buf, t.start)} where "," or "}" was expected in an object`);
          break;
        case ARR_FIRST:
        case ARR_VALUE:
          if (tok === Tok.EndArray && f.state === ARR_FIRST) {
            this.closeFrame();
            break;
          }
          f.state = ARR_NEXT;
          if (this.value(tok, f.node === null ? null : f.node.children.get('[]') ?? null) === MORE) {
            f.state = f.index === 0 ? ARR_FIRST : ARR_VALUE;
            return MORE;
          }
          break;
        default: // ARR_NEXT
          if (tok === Tok.Comma) {
            f.state = ARR_VALUE;
            f.index++;
          } else if (tok === Tok.EndArray) this.closeFrame();
          else this.bad(`${tokenName(tok, buf, t.start)} where "," or "]" was expected in an array`);
      }
    }
  }

  /** Outside every container (document mode): the document's start, or only whitespace after its end. False: needs more bytes. */
  private topValue(): boolean {
    const t = this.t;
    if (!this.sawAnything && t.pos === 0 && t.end >= 3 && t.buf[0] === 0xef && t.buf[1] === 0xbb && t.buf[2] === 0xbf) t.pos = 3; // UTF-8 BOM
    if (!this.sawAnything && t.pos === 0 && t.end < 3 && !t.final && t.buf[0] === 0xef) return false;
    if (!t.skipWs()) return false;
    if (this.documentDone) this.fail(traceMessages.trailingData());
    const tok = t.next();
    if (tok !== Tok.BeginObject && tok !== Tok.BeginArray) this.fail(traceMessages.notJsonDocument());
    this.sawAnything = true;
    this.stack.push({ obj: tok === Tok.BeginObject, node: this.root, key: '', index: 0, state: tok === Tok.BeginObject ? OBJ_FIRST : ARR_FIRST });
    return true;
  }

  /** A value begins with token `tok` where the trie says `node`: a record, a capture, a container to walk, or a scalar. */
  private value(tok: Tok, node: TrieNode | null): number {
    const t = this.t;
    if (tok === Tok.BeginObject || tok === Tok.BeginArray) {
      if (node !== null && node.record >= 0 && tok === Tok.BeginObject) {
        return this.record(node.record, -1);
      }
      if (node !== null && node.capture && this.capPath === null) {
        this.capPath = this.concretePath();
        this.capStart = t.start;
        this.capParts = [];
        this.capSize = 0;
        this.capDepth = this.stack.length + 1;
      }
      const obj = tok === Tok.BeginObject;
      if (this.stack.length >= MAX_DOCUMENT_DEPTH) this.fail(traceMessages.tooDeep(MAX_DOCUMENT_DEPTH));
      this.stack.push({ obj, node: node !== null && node.children.size > 0 ? node : null, key: '', index: 0, state: obj ? OBJ_FIRST : ARR_FIRST });
      return DONE;
    }
    if (tok === Tok.String || tok === Tok.Number || tok === Tok.Literal) {
      if (node !== null && node.capture) {
        const path = this.concretePath();
        const size = t.stop - t.start;
        if (size <= this.captureLimit) this.captured.set(path, t.buf.toString('utf8', t.start, t.stop));
        else this.issues.push({ line: t.line, severity: 'warning', code: 'value-too-large', message: traceMessages.captureTooLarge(path, size) });
      }
      return DONE;
    }
    return this.bad(`${tokenName(tok, t.buf, t.start)} where a value was expected`);
  }

  private closeFrame(): void {
    const stack = this.stack;
    if (this.capPath !== null && this.capDepth === stack.length) {
      const t = this.t;
      this.capParts.push(t.buf.subarray(this.capStart, t.stop));
      this.capSize += t.stop - this.capStart;
      if (this.capSize <= this.captureLimit) this.captured.set(this.capPath, Buffer.concat(this.capParts).toString('utf8'));
      else this.issues.push({ line: t.line, severity: 'warning', code: 'value-too-large', message: traceMessages.captureTooLarge(this.capPath, this.capSize) });
      this.capPath = null;
      this.capParts = [];
    }
    stack.pop();
    if (stack.length === 0) this.documentDone = true;
  }

  /** Concrete path of the value now starting: every frame's key or index. */
  private concretePath(): string {
    return this.stack.map((f) => (f.obj ? f.key : String(f.index))).join('/');
  }

  /** Lines mode: each top-level value an object, each a record of the root path. */
  private runLines(): number {
    const t = this.t;
    const spec = this.root.record;
    for (;;) {
      if (!t.skipWs()) return MORE;
      this.sawAnything = true;
      const tok = t.next();
      if (tok === Tok.More) return MORE;
      if (tok !== Tok.BeginObject || spec < 0) this.fail(traceMessages.notJsonObjectLine());
      if (this.record(spec, this.topCount) === MORE) return MORE;
      this.topCount++;
    }
  }

  /**
   * The record whose `{` the tokenizer just read (`top`: its `_i` in lines
   * mode, -1 to take the array positions of the frames): validated token by token
   * (nested containers on a small kind stack), its own level's exact keys
   * noted, then written as one NDJSON line. MORE (position back at the `{`)
   * when the window ends inside it.
   */
  private record(spec: number, top: number): number {
    const t = this.t;
    const buf = t.buf;
    const recStart = t.start;
    const recLine = t.line;
    const recCrs = t.crs;
    const keys = this.exactKeys[spec]!;
    const exactText = this.exactText;
    const exactOrder = this.exactOrder;
    for (const k of exactOrder) exactText[k] = undefined; // left by an attempt cut by the window's end
    exactOrder.length = 0;
    let kinds = this.kinds;
    let depth = 1;
    kinds[0] = IN_OBJ;
    let state = OBJ_FIRST;
    let bodyStart = -1; // the first member's first byte
    let bodyLine = 0; // lines and CRs passed before it
    let bodyCrs = 0;
    let exact = -1; // index in keys of the key whose value comes next (own level)
    for (;;) {
      const tok = t.next();
      if (tok <= Tok.Error) {
        if (tok === Tok.More) {
          t.pos = recStart;
          t.line = recLine;
          t.crs = recCrs;
          return MORE;
        }
        this.badRecord(t.error);
      }
      switch (state) {
        case OBJ_FIRST:
        case OBJ_KEY:
          if (tok === Tok.String) {
            state = OBJ_COLON;
            if (depth === 1) {
              if (bodyStart < 0) {
                bodyStart = t.start;
                bodyLine = t.line;
                bodyCrs = t.crs;
              }
              exact = keys.length === 0 ? -1 : exactKeyIndex(buf, t.start, t.stop, t.escaped, keys);
            }
            continue;
          }
          if (tok === Tok.EndObject && state === OBJ_FIRST) break; // an empty object closes
          return this.badRecord(`${tokenName(tok, buf, t.start)} where a key was expected`);
        case OBJ_COLON:
          if (tok !== Tok.Colon) this.badRecord(`${tokenName(tok, buf, t.start)} where ":" after a key was expected`);
          state = OBJ_VALUE;
          continue;
        case OBJ_NEXT:
          if (tok === Tok.Comma) {
            state = OBJ_KEY;
            continue;
          }
          if (tok === Tok.EndObject) break;
          return this.badRecord(`${tokenName(tok, buf, t.start)} where "," or "}" was expected in an object`);
        case ARR_NEXT:
          if (tok === Tok.Comma) {
            state = ARR_VALUE;
            continue;
          }
          if (tok === Tok.EndArray) break;
          return this.badRecord(`${tokenName(tok, buf, t.start)} where "," or "]" was expected in an array`);
        default: // OBJ_VALUE, ARR_FIRST, ARR_VALUE: a value
          if (tok === Tok.EndArray && state === ARR_FIRST) break;
          if (tok >= Tok.String) {
            if (exact >= 0 && depth === 1) {
              if (exactText[exact] === undefined) exactOrder.push(exact);
              exactText[exact] = tok === Tok.String ? buf.toString('utf8', t.start + 1, t.stop - 1).trim() : buf.toString('latin1', t.start, t.stop);
            }
            exact = -1;
            state = kinds[depth - 1] === IN_OBJ ? OBJ_NEXT : ARR_NEXT;
            continue;
          }
          if (tok === Tok.BeginObject || tok === Tok.BeginArray) {
            exact = -1;
            if (depth === kinds.length) {
              const k = new Uint8Array(kinds.length * 2);
              k.set(kinds);
              this.kinds = kinds = k;
            }
            const obj = tok === Tok.BeginObject;
            kinds[depth++] = obj ? IN_OBJ : IN_ARR;
            state = obj ? OBJ_FIRST : ARR_FIRST;
            continue;
          }
          return this.badRecord(`${tokenName(tok, buf, t.start)} where a value was expected`);
      }
      // a container closed (its closing token matched its kind: the states above only accept the right one)
      depth--;
      if (depth === 0) break;
      state = kinds[depth - 1] === IN_OBJ ? OBJ_NEXT : ARR_NEXT;
    }
    this.writeRecord(spec, top, recLine, bodyLine, bodyCrs, bodyStart, t.start);
    return DONE;
  }

  /** One NDJSON line: `{"_line":L,"_i":[...]`, the record's members as they are (one line), its exact values, `}`. */
  private writeRecord(spec: number, top: number, recLine: number, bodyLine: number, bodyCrs: number, bodyStart: number, closeAt: number): void {
    const t = this.t;
    const out = this.outs[spec]!;
    out.copy(LINE_KEY, 0, LINE_KEY.length);
    out.uint(recLine);
    out.copy(I_KEY, 0, I_KEY.length);
    if (top >= 0) out.uint(top);
    else {
      let first = true;
      for (const f of this.stack) {
        if (f.obj) continue;
        if (!first) out.copy(COMMA, 0, 1);
        first = false;
        out.uint(f.index);
      }
    }
    out.copy(CLOSE_I, 0, 1);
    if (bodyStart >= 0) {
      out.copy(COMMA, 0, 1);
      // a pretty-printed record spans lines: its raw newlines are whitespace (strings cannot hold them), written as spaces
      if (t.line !== bodyLine || t.crs !== bodyCrs) out.copyFlat(t.buf, bodyStart, closeAt, t.line - bodyLine, t.crs - bodyCrs);
      else out.copy(t.buf, bodyStart, closeAt);
    }
    const order = this.exactOrder;
    if (order.length > 0) {
      const keys = this.exactKeys[spec]!;
      const names = this.exactNames[spec]!;
      const convert = this.opts.records[spec]!.convert;
      const withText = this.opts.records[spec]!.exactText !== false;
      for (const k of order) {
        const text = this.exactText[k]!;
        this.exactText[k] = undefined;
        const v = convert ? convert(keys[k]!, text) : text;
        // ,"_<key>":<v>,"_<key>_text":<text> (or without the text)
        const [valueKey, textKey] = names[k]!;
        out.copy(valueKey, 0, valueKey.length);
        if (v === null) out.copy(NULL, 0, 4);
        else out.jsonString(v);
        if (withText) {
          out.copy(textKey, 0, textKey.length);
          out.jsonString(text);
        }
      }
      order.length = 0;
    }
    out.copy(RECORD_END, 0, 2);
    out.done(recLine);
  }

  /**
   * Bytes before `keep` leave the window: a captured container keeps its
   * part (dropped with an issue once beyond the capture limit).
   */
  beforeShift(keep: number): void {
    if (this.capPath === null) return;
    const t = this.t;
    const part = t.buf.subarray(this.capStart, keep);
    this.capSize += part.length;
    if (this.capSize > this.captureLimit) {
      this.issues.push({ line: t.line, severity: 'warning', code: 'value-too-large', message: traceMessages.captureTooLarge(this.capPath, this.capSize) });
      this.capPath = null;
      this.capParts = [];
      return;
    }
    this.capParts.push(Buffer.from(part));
    this.capStart = 0;
  }

  /** Writes out the NDJSON assembled so far once it is large. */
  async flush(): Promise<void> {
    for (const o of this.outs) await o.flush();
  }

  /** The input ended with `run` wanting more: a cut-off record, an unterminated array, or a document that ends early. */
  end(pending: boolean): void {
    const t = this.t;
    if (pending) {
      // the window ends inside a token, or inside a record (the tokenizer is back at its start)
      const c = t.buf[t.pos];
      const inRecord = c === 0x7b && (this.opts.mode === 'lines' || this.recordAt());
      if (!inRecord) this.fail(traceMessages.truncatedDocument());
      this.issues.push({ line: t.line, severity: 'warning', code: 'truncated-record', message: traceMessages.truncatedRecord() });
    }
    if (!this.sawAnything) throw new TickwiseError('empty-input', traceMessages.emptyFile(), { file: this.file });
    const stack = this.stack;
    if (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      const arrayOfRecords = !top.obj && (top.node?.children.get('[]')?.record ?? -1) >= 0;
      if (arrayOfRecords && stack.length <= 2) {
        this.issues.push({ line: t.line, severity: 'info', code: 'unterminated-array', message: traceMessages.unterminatedArray() });
      } else this.fail(traceMessages.truncatedDocument());
    }
  }

  /** The value now pending is at a record path (so a cut there is a cut-off record). */
  private recordAt(): boolean {
    const f = this.stack[this.stack.length - 1];
    if (f === undefined || f.node === null) return false;
    const n = f.obj ? f.node.children.get(f.key) : f.node.children.get('[]');
    return n !== undefined && n.record >= 0;
  }

  result(): ScanResult {
    return {
      counts: this.outs.map((o) => o.count),
      lines: this.outs.map((o) => o.sourceLines()),
      ends: this.outs.map((o) => o.recordEnds()),
      parts: this.outs.map((o) => o.allParts()),
      captured: this.captured,
      issues: this.issues,
      sourceLines: this.t.line,
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.outs.map((o) => o.close()));
  }

  destroy(): void {
    for (const o of this.outs) o.destroy();
  }
}

/** An object key as text (decoded when it holds escapes). */
function keyText(buf: Buffer, start: number, stop: number, escaped: boolean): string {
  return escaped ? (JSON.parse(buf.toString('utf8', start, stop)) as string) : buf.toString('utf8', start + 1, stop - 1);
}

/** Index in `keys` of the key token `buf[start, stop)` (quotes included), or -1; compared in place. */
function exactKeyIndex(buf: Buffer, start: number, stop: number, escaped: boolean, keys: readonly string[]): number {
  if (escaped) return keys.indexOf(keyText(buf, start, stop, true));
  const len = stop - start - 2;
  for (let k = 0; k < keys.length; k++) {
    const key = keys[k]!;
    if (key.length !== len) continue;
    let j = 0;
    while (j < len && buf[start + 1 + j] === key.charCodeAt(j)) j++;
    if (j === len) return k;
  }
  return -1;
}

/** A token in an error message. */
function tokenName(tok: Tok, buf: Buffer, start: number): string {
  if (tok === Tok.String) return 'a string';
  if (tok === Tok.Number) return 'a number';
  if (tok === Tok.Literal) return buf[start] === 0x74 ? 'true' : buf[start] === 0x66 ? 'false' : 'null';
  return `unexpected ${byteName(buf[start]!)}`;
}

/**
 * Streams a JSON document (or JSON lines), writing each record found at the
 * given paths as one line of NDJSON, so DuckDB can read any size with
 * explicit columns. Each record gets `"_line"` (its 1-based source line) and
 * `"_i"` (the array positions along its path, its own last) as leading keys;
 * number texts of `exactKeys` are converted exactly (see {@link RecordSpec}).
 * Gzip input is decompressed on the fly.
 *
 * ```
 * bytes --JsonTokenizer--> tokens --path matcher (trie of asked-for paths)--> record starts
 *   --validating parse of the record (whole, in the window)--> copy + `_line`, `_i`, exact conversions --> NDJSON per spec
 * ```
 * Everything is validated as `JSON.parse` would: anything it rejects stops
 * the scan with file and line (a cut-off last record and a missing final `]`
 * of an event array are the two repairs, each said in `issues`). A record
 * (or any single value) longer than {@link ScanOptions.maxRecordBytes} stops
 * it too, so memory stays bounded.
 */
export async function scanJsonRecords(src: SourceFile, opts: ScanOptions): Promise<ScanResult> {
  const file = src.displayPath;
  if (src.compression === 'zstd') {
    throw new TickwiseError('unreadable-input', traceMessages.zstdUnsupported(), { file });
  }
  const maxRecord = maxRecordBytesOf(opts);
  const plan = nativeScanOf(src, opts, maxRecord);
  if (plan !== null) {
    const native = await scanNative(plan.bin, src, opts, plan.plan, plan.capdir);
    if (native.result !== null) return native.result;
    if (process.env['TICKWISE_TRACE_SCAN']) process.stderr.write(`tw-jsonscan: ${native.why.replace(/^tw-jsonscan: /, '')}; the TypeScript scanner reads ${file}\n`);
    if (native.emitted) opts.onRestart!();
  }
  return scanJs(src, opts, maxRecord);
}

/** The native scanner's binary, plan and output folder for this scan; null when the TypeScript scanner reads it. */
function nativeScanOf(src: SourceFile, opts: ScanOptions, maxRecord: number): { bin: string; plan: string; capdir: string } | null {
  const bin = nativeScannerFor(src.sizeBytes, src.compression);
  const first = opts.records[0];
  const restartable = opts.onRestart !== undefined || opts.records.every((r) => r.onPart === undefined);
  if (bin === null || first === undefined || !restartable || (src.compression !== 'none' && src.compression !== 'gzip')) return null;
  const capdir = dirname(first.out);
  const plan = nativePlan(opts, maxRecord, capdir);
  return plan === null ? null : { bin, plan, capdir };
}

/**
 * Starts the native scan {@link scanJsonRecords} would run for `optsIn(dir)`
 * now, before its caller is ready for the parts (see json-records-native.ts:
 * `scanJsonRecords` with the same options on the same file takes it over),
 * its output in a fresh folder `dir` of this process (`what`: its name's
 * kind), which the run's reader adopts (`earlyScanDir`). Nothing starts
 * when a scan of the file already runs, or the native scanner would not
 * read it (the folder is removed then).
 */
export async function startScanEarly(src: SourceFile, what: string, optsIn: (dir: string) => ScanOptions): Promise<void> {
  if (src.compression === 'zstd' || earlyScanDir(src.path) !== undefined) return;
  const dir = await processTempDir(what);
  const opts = optsIn(dir);
  const native = nativeScanOf(src, opts, maxRecordBytesOf(opts));
  if (native === null || !startNativeEarly(native.bin, src, native.plan, native.capdir)) await rm(dir, { recursive: true, force: true });
}

/** The TypeScript scanner: every input, the reference for errors and repairs. */
async function scanJs(src: SourceFile, opts: ScanOptions, maxRecord: number): Promise<ScanResult> {
  const file = src.displayPath;
  const scanner = new RecordScanner(file, opts, opts.captureLimit ?? 16 << 20);
  const hwm = opts.chunkBytes ?? 4 << 20;
  const stream = src.compression === 'gzip'
    ? createReadStream(src.path, { highWaterMark: hwm }).pipe(createGunzip({ chunkSize: Math.max(64, hwm) }))
    : createReadStream(src.path, { highWaterMark: hwm });
  // the window: bytes not yet consumed (a cut record or token), then the chunks read since
  let rest: Buffer = Buffer.alloc(0);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const tooLarge = (bytes: number): never => {
    throw new TickwiseError('bad-record', `a single JSON value (a record) of more than ${bytes} bytes starts here: beyond the limit of ${maxRecord} bytes (TICKWISE_MAX_RECORD_BYTES raises it)`, { file, line: scanner.line });
  };
  /** Scans the window; true when it ends inside a record or token (kept as `rest`). */
  const step = (final: boolean): boolean => {
    const win = pending.length === 0 ? rest : rest.length === 0 && pending.length === 1 ? pending[0]! : Buffer.concat([rest, ...pending]);
    pending = [];
    pendingBytes = 0;
    scanner.run(win, 0, win.length, final);
    const keep = scanner.pos;
    scanner.beforeShift(keep);
    rest = win.subarray(keep);
    if (rest.length > maxRecord) tooLarge(rest.length);
    return rest.length > 0;
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      // a large cut record is parsed again only once as many bytes again have come (linear, not quadratic)
      if (pendingBytes < rest.length && rest.length + pendingBytes <= maxRecord) continue;
      step(false);
      await scanner.flush();
    }
    scanner.end(step(true));
    await scanner.close();
    return scanner.result();
  } catch (e) {
    (stream as { destroy?: () => void }).destroy?.();
    scanner.destroy();
    if (e instanceof TickwiseError) throw e;
    const err = e as NodeJS.ErrnoException;
    // writing the staged records failed: the temporary folder's room, not the input (readerFailure says so)
    if (err.code === 'ENOSPC' || err.code === 'EDQUOT') throw e;
    throw new TickwiseError('unreadable-input', traceMessages.unreadable(err.code === 'Z_DATA_ERROR' || err.code === 'Z_BUF_ERROR' ? 'corrupt gzip data' : err.message), { file, line: scanner.line, cause: e });
  }
}

/** Maps a 1-based NDJSON line (as DuckDB reports it) to the source line. */
export function sourceLineOf(lines: Uint32Array, ndjsonLine: number | undefined): number | undefined {
  if (ndjsonLine === undefined || lines.length === 0) return undefined;
  const k = Math.min(Math.max(ndjsonLine, 1), lines.length) - 1;
  return lines[k];
}
