import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createGunzip } from 'node:zlib';
import { TickwiseError } from '@tickwise/time';
import { traceMessages } from './trace-messages';
import type { SourceFile } from './source-file';
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
  readonly convert?: (key: string, text: string) => string | null;
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
}

/** What a scan found. */
export interface ScanResult {
  /** Records written, per spec. */
  readonly counts: number[];
  /** 1-based source line of each written record, per spec (to map a reader's errors back). */
  readonly lines: Uint32Array[];
  /**
   * Captured values by concrete path: keys joined with `/`, array positions
   * as their index (`rocprofiler-sdk-tool/0/metadata`).
   */
  readonly captured: Map<string, string>;
  /** Problems repaired or noticed (a cut-off last record, a missing `]`). */
  readonly issues: Diagnostic[];
  /** Lines in the source. */
  readonly sourceLines: number;
}

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

/**
 * A buffered NDJSON writer: records are assembled in place in one growing
 * byte buffer (no allocation per record) and written out between chunks.
 */
class NdjsonOut {
  private readonly stream: WriteStream;
  buf = Buffer.allocUnsafe(1 << 20);
  pos = 0;
  constructor(path: string) {
    this.stream = createWriteStream(path);
  }
  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const b = Buffer.allocUnsafe(size);
    this.buf.copy(b, 0, 0, this.pos);
    this.buf = b;
  }
  /** Appends bytes [a, b) of a chunk. */
  copy(chunk: Buffer, a: number, b: number): void {
    if (b <= a) return;
    this.ensure(b - a);
    chunk.copy(this.buf, this.pos, a, b);
    this.pos += b - a;
  }
  /** Appends ASCII text. */
  text(s: string): void {
    this.ensure(s.length);
    this.pos += this.buf.write(s, this.pos, 'latin1');
  }
  /** Appends text that may hold any character. */
  utf8(s: string): void {
    this.ensure(Buffer.byteLength(s));
    this.pos += this.buf.write(s, this.pos, 'utf8');
  }
  /** Writes out the finished records before `keep` (a record still being assembled stays). */
  async flush(keep: number): Promise<void> {
    if (keep === 0) return;
    const done = Buffer.from(this.buf.subarray(0, keep));
    this.buf.copy(this.buf, 0, keep, this.pos);
    this.pos -= keep;
    if (!this.stream.write(done)) await once(this.stream, 'drain');
  }
  async close(): Promise<void> {
    await this.flush(this.pos);
    this.stream.end();
    await once(this.stream, 'finish');
  }
}

class LineArray {
  private a = new Uint32Array(1024);
  n = 0;
  push(v: number): void {
    if (this.n === this.a.length) {
      const b = new Uint32Array(this.a.length * 2);
      b.set(this.a);
      this.a = b;
    }
    this.a[this.n++] = v;
  }
  done(): Uint32Array {
    return this.a.subarray(0, this.n);
  }
}

// Byte values used by the scanner.
const QUOTE = 0x22, BACKSLASH = 0x5c, LBRACE = 0x7b, RBRACE = 0x7d, LBRACKET = 0x5b, RBRACKET = 0x5d;
const COLON = 0x3a, COMMA = 0x2c, NL = 0x0a, CR = 0x0d, SPACE = 0x20, TAB = 0x09;

function isWs(c: number): boolean {
  return c === SPACE || c === NL || c === CR || c === TAB;
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f\u2028\u2029]/;

/** A JSON string literal (fast for the plain number texts this file writes). */
function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** A container being walked outside records. */
interface Frame {
  readonly obj: boolean;
  /** Trie node of this container's position; null when nothing below matters (skipped). */
  readonly node: TrieNode | null;
  /** Current key (objects) or element index (arrays). */
  key: string;
  index: number;
  /** Object: 0 expect key, 1 in key, 2 expect colon, 3 expect value, 4 after value. Array: 3 expect value, 4 after value. */
  state: number;
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
 * bytes --state machine (strings, depth, keys on the way down)--> record spans
 *   --copy + `_line`, `_i`, exact conversions--> NDJSON per spec
 * ```
 * Malformed JSON inside a record is left for the NDJSON reader to reject (its
 * line maps back through `lines`); structural damage outside records and a
 * file that is not JSON stop with file and line.
 */
export async function scanJsonRecords(src: SourceFile, opts: ScanOptions): Promise<ScanResult> {
  if (src.compression === 'zstd') {
    throw new TickwiseError('unreadable-input', traceMessages.zstdUnsupported(), { file: src.displayPath });
  }
  const root = buildTrie(opts);
  const outs = opts.records.map((r) => new NdjsonOut(r.out));
  const lineArrays = opts.records.map(() => new LineArray());
  const counts = opts.records.map(() => 0);
  const captured = new Map<string, string>();
  const issues: Diagnostic[] = [];
  const captureLimit = opts.captureLimit ?? 16 << 20;
  const file = src.displayPath;
  const fail = (message: string, line: number): never => {
    throw new TickwiseError('bad-record', message, { file, line });
  };

  // Position.
  let line = 1;
  // Outside-record walk.
  const stack: Frame[] = [];
  let topCount = 0; // top-level values seen (lines mode: records attempted)
  let keyBytes: number[] = [];
  // Skipping a value nobody asked for: depth inside it (0 = not skipping).
  let skipDepth = 0;
  let skipScalar = false;
  // Strings (shared by all modes).
  let inString = false;
  let escape = false;
  // Record capture.
  let rec = -1; // spec index while inside a record
  let recDepth = 0; // nesting inside the record (1 = its own level)
  let recBase = 0; // output position where the record starts
  let recBody = 0; // output position after its leading keys
  let recSpan = 0; // start of the current copy span in the chunk
  let recLine = 0;
  let recState = 0; // record's own level: 0 expect key or }, 1 in key, 2 colon, 3 value, 4 after value
  let recFirst = true; // no member seen yet (a ',' must be inserted before the first one)
  let recKey = '';
  let recExact: Map<string, string> = new Map();
  let exactOn = false; // capturing a scalar of an exact key
  let exactParts: Buffer[] = [];
  let keyStart = -1; // chunk position of the record key being read (-1: it began in an earlier chunk)
  let exactSpan = 0;
  let exactIsString = false;
  let exactKeys = null as Set<string> | null;
  let exactKeyList: readonly string[] = [];
  // Raw value capture (metadata).
  let cap: string | null = null; // concrete path being captured
  let capParts: Buffer[] = [];
  let capSpan = 0;
  let capSize = 0;
  let capScalar = false;

  /** Concrete path of the value now starting: every frame's key or index. */
  const concretePath = (): string => stack.map((f) => (f.obj ? f.key : String(f.index))).join('/');

  const indices = (): number[] => {
    const out: number[] = [];
    for (const f of stack) if (!f.obj) out.push(f.index);
    return out;
  };

  const startRecord = (spec: number, i: number, idx: number[]): void => {
    rec = spec;
    recDepth = 1;
    const out = outs[spec]!;
    recBase = out.pos;
    out.text(`{"_line":${line},"_i":[${idx.join(',')}]`);
    recBody = out.pos;
    recSpan = i + 1;
    recLine = line;
    recState = 0;
    recFirst = true;
    const keys = opts.records[spec]!.exactKeys;
    exactKeys = keys && keys.length ? new Set(keys) : null;
    exactKeyList = keys ?? [];
  };

  const endRecord = (chunk: Buffer, i: number): void => {
    const out = outs[rec]!;
    out.copy(chunk, recSpan, i);
    if (line !== recLine) {
      // a pretty-printed record spans lines: its raw newlines are whitespace (strings cannot hold them), flatten it to one NDJSON line
      const b = out.buf;
      for (let k = recBody; k < out.pos; k++) if (b[k] === NL || b[k] === CR) b[k] = SPACE;
    }
    if (recExact.size) {
      const spec = opts.records[rec]!;
      for (const [k, text] of recExact) {
        const v = spec.convert ? spec.convert(k, text) : text;
        out.utf8(`,"_${k}":${v === null ? 'null' : jsonString(v)},"_${k}_text":${jsonString(text)}`);
      }
      recExact.clear();
    }
    out.text('}\n');
    lineArrays[rec]!.push(recLine);
    counts[rec]!++;
    rec = -1;
  };

  const finishExact = (chunk: Buffer, i: number): void => {
    let text: string;
    if (exactParts.length === 0) text = chunk.toString('utf8', exactSpan, i);
    else {
      exactParts.push(chunk.subarray(exactSpan, i));
      text = Buffer.concat(exactParts).toString('utf8');
      exactParts = [];
    }
    if (exactIsString) text = text.slice(1); // drop the opening quote; the closing one is excluded by i
    recExact.set(recKey, text.trim());
    exactOn = false;
  };

  /** The record key that just ended at byte i when it is one of the exact keys, else '' (compared in place: no string built). */
  const exactKeyAt = (chunk: Buffer, i: number): string => {
    if (keyStart < 0) {
      const key = Buffer.from(keyBytes).toString('latin1');
      return exactKeys!.has(key) ? key : '';
    }
    const len = i - keyStart;
    for (const k of exactKeyList) {
      if (k.length !== len) continue;
      let j = 0;
      while (j < len && chunk[keyStart + j] === k.charCodeAt(j)) j++;
      if (j === len) return k;
    }
    return '';
  };

  const startCapture = (path: string, i: number, scalar: boolean): void => {
    cap = path;
    capParts = [];
    capSpan = i;
    capSize = 0;
    capScalar = scalar;
  };

  const endCapture = (chunk: Buffer, i: number): void => {
    capParts.push(chunk.subarray(capSpan, i));
    capSize += i - capSpan;
    if (capSize <= captureLimit) captured.set(cap!, Buffer.concat(capParts).toString('utf8').trim());
    else issues.push({ line, severity: 'warning', code: 'value-too-large', message: traceMessages.captureTooLarge(cap!, capSize) });
    cap = null;
    capParts = [];
  };

  /** A value starts at byte `c` (position i) where the trie says `node`: record it, capture it, walk into it or skip it. */
  const beginValue = (c: number, i: number, node: TrieNode | null): void => {
    if (node && node.record >= 0 && c === LBRACE) {
      startRecord(node.record, i, indices());
      return;
    }
    if (node && node.capture) {
      const scalar = c !== LBRACE && c !== LBRACKET;
      startCapture(concretePath(), i, scalar);
      if (!scalar) {
        // containers are captured by depth counting in the skip machinery
        skipDepth = 1;
      } else if (c === QUOTE) {
        inString = true;
        skipScalar = true;
      } else {
        skipScalar = true;
      }
      return;
    }
    if (c === LBRACE || c === LBRACKET) {
      if (node && node.children.size > 0) {
        stack.push({ obj: c === LBRACE, node, key: '', index: 0, state: c === LBRACE ? 0 : 3 });
      } else {
        skipDepth = 1;
      }
      return;
    }
    if (c === QUOTE) inString = true;
    skipScalar = true;
  };

  const hwm = opts.chunkBytes ?? 4 << 20;
  const stream = src.compression === 'gzip'
    ? createReadStream(src.path, { highWaterMark: hwm }).pipe(createGunzip({ chunkSize: Math.max(64, hwm) }))
    : createReadStream(src.path, { highWaterMark: hwm });
  let sawAnything = false;
  let documentDone = false;

  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      recSpan = 0;
      exactSpan = 0;
      capSpan = 0;
      const n = chunk.length;
      for (let i = 0; i < n; i++) {
        const c = chunk[i]!;
        if (c === NL) line++;

        // ---- inside a record: copy through, watch its own level ----
        if (rec >= 0) {
          if (inString) {
            if (escape) escape = false;
            else if (c === BACKSLASH) escape = true;
            else if (c === QUOTE) {
              inString = false;
              if (recDepth === 1 && recState === 1) {
                recKey = exactKeys ? exactKeyAt(chunk, i) : '';
                recState = 2;
              } else if (recDepth === 1 && recState === 3) {
                if (exactOn) finishExact(chunk, i);
                recState = 4;
              }
            } else if (recDepth === 1 && recState === 1 && keyStart < 0 && exactKeys) keyBytes.push(c);
            continue;
          }
          if (recDepth === 1) {
            if (exactOn && !exactIsString && (c === COMMA || c === RBRACE || isWs(c))) finishExact(chunk, i);
            if (recFirst && !isWs(c) && c !== RBRACE) {
              // the record's first member: separate it from the leading keys (only whitespace came before it: drop it)
              const out = outs[rec]!;
              out.pos = recBody;
              out.text(',');
              recSpan = i;
              recFirst = false;
            }
            switch (recState) {
              case 0:
                if (c === QUOTE) {
                  inString = true;
                  keyBytes = [];
                  keyStart = i + 1;
                  recState = 1;
                } else if (c === RBRACE) {
                  recDepth = 0;
                  endRecord(chunk, i);
                } else if (!isWs(c) && c !== COMMA) fail(traceMessages.badJson(`unexpected ${JSON.stringify(String.fromCharCode(c))} where a key was expected`), line);
                continue;
              case 2:
                if (c === COLON) recState = 3;
                else if (!isWs(c)) fail(traceMessages.badJson('expected ":" after a key'), line);
                continue;
              case 3:
                if (isWs(c)) continue;
                if (c === LBRACE || c === LBRACKET) {
                  recDepth++;
                  recState = 4;
                } else if (c === QUOTE) {
                  inString = true;
                  if (recKey) {
                    exactOn = true;
                    exactIsString = true;
                    exactParts = [];
                    exactSpan = i;
                  }
                } else {
                  if (recKey) {
                    exactOn = true;
                    exactIsString = false;
                    exactParts = [];
                    exactSpan = i;
                  }
                  recState = 4;
                }
                continue;
              case 4:
                if (c === COMMA) recState = 0;
                else if (c === RBRACE) {
                  recDepth = 0;
                  endRecord(chunk, i);
                }
                continue;
              default:
                continue;
            }
          }
          // deeper inside the record
          if (c === QUOTE) inString = true;
          else if (c === LBRACE || c === LBRACKET) recDepth++;
          else if (c === RBRACE || c === RBRACKET) recDepth--;
          continue;
        }

        // ---- skipping a value (possibly capturing it) ----
        if (skipScalar) {
          if (inString) {
            if (escape) escape = false;
            else if (c === BACKSLASH) escape = true;
            else if (c === QUOTE) {
              inString = false;
              skipScalar = false;
              if (cap !== null && capScalar) endCapture(chunk, i + 1);
            }
            continue;
          }
          if (c === COMMA || c === RBRACE || c === RBRACKET || isWs(c)) {
            skipScalar = false;
            if (cap !== null && capScalar) endCapture(chunk, i);
            // fall through: the delimiter belongs to the enclosing container
          } else continue;
        } else if (skipDepth > 0) {
          if (inString) {
            if (escape) escape = false;
            else if (c === BACKSLASH) escape = true;
            else if (c === QUOTE) inString = false;
            continue;
          }
          if (c === QUOTE) inString = true;
          else if (c === LBRACE || c === LBRACKET) skipDepth++;
          else if (c === RBRACE || c === RBRACKET) {
            skipDepth--;
            if (skipDepth === 0) {
              if (cap !== null) endCapture(chunk, i + 1);
            }
          }
          continue;
        }

        // ---- walking the structure outside records ----
        if (stack.length === 0) {
          if (isWs(c)) continue;
          if (!sawAnything && (c === 0xef || c === 0xbb || c === 0xbf)) continue; // UTF-8 BOM
          if (opts.mode === 'document' && documentDone) fail(traceMessages.trailingData(), line);
          sawAnything = true;
          if (opts.mode === 'lines') {
            if (c !== LBRACE) fail(traceMessages.notJsonObjectLine(), line);
            const node = root.record >= 0 ? root : null;
            if (!node) fail(traceMessages.notJsonObjectLine(), line);
            startRecord(root.record, i, [topCount]);
            topCount++;
            continue;
          }
          if (c !== LBRACE && c !== LBRACKET) fail(traceMessages.notJsonDocument(), line);
          const node = root;
          if (c === LBRACKET) {
            stack.push({ obj: false, node, key: '', index: 0, state: 3 });
          } else {
            stack.push({ obj: true, node, key: '', index: 0, state: 0 });
          }
          continue;
        }
        const f = stack[stack.length - 1]!;
        if (f.obj) {
          if (f.state === 1) {
            if (escape) {
              escape = false;
              keyBytes.push(c);
            } else if (c === BACKSLASH) escape = true;
            else if (c === QUOTE) {
              f.key = Buffer.from(keyBytes).toString('latin1');
              f.state = 2;
            } else keyBytes.push(c);
            continue;
          }
          if (isWs(c)) continue;
          if (f.state === 0 || f.state === 4) {
            if (c === QUOTE && f.state === 0) {
              keyBytes = [];
              f.state = 1;
            } else if (c === COMMA && f.state === 4) f.state = 0;
            else if (c === RBRACE) closeContainer();
            else fail(traceMessages.badJson(`unexpected ${JSON.stringify(String.fromCharCode(c))} in an object`), line);
            continue;
          }
          if (f.state === 2) {
            if (c !== COLON) fail(traceMessages.badJson('expected ":" after a key'), line);
            f.state = 3;
            continue;
          }
          // state 3: a value begins
          f.state = 4;
          beginValue(c, i, f.node ? f.node.children.get(f.key) ?? null : null);
          continue;
        }
        // array
        if (isWs(c)) continue;
        if (c === RBRACKET) {
          closeContainer();
          continue;
        }
        if (c === COMMA) {
          // tolerate a trailing comma before ]: Chrome's writer leaves one when a trace is cut
          if (f.state === 4) {
            f.state = 3;
            f.index++;
          }
          continue;
        }
        if (f.state === 4) fail(traceMessages.badJson('expected "," between array elements'), line);
        f.state = 4;
        beginValue(c, i, f.node ? f.node.children.get('[]') ?? null : null);
      }

    // carry partial spans across the chunk boundary
      if (rec >= 0) {
        outs[rec]!.copy(chunk, recSpan, chunk.length);
        if (exactOn) exactParts.push(Buffer.from(chunk.subarray(exactSpan)));
        if (recState === 1 && keyStart >= 0) {
          // a key cut by the chunk boundary: keep its bytes so far
          keyBytes = [...chunk.subarray(keyStart)];
          keyStart = -1;
        }
      }
      // write out finished records (keep the one being assembled)
      for (let k = 0; k < outs.length; k++) {
        const o = outs[k]!;
        const keep = rec === k ? recBase : o.pos;
        if (keep >= 4 << 20) {
          await o.flush(keep);
          if (rec === k) {
            recBody -= keep;
            recBase = 0;
          }
        }
      }
      if (cap !== null) {
        capParts.push(chunk.subarray(capSpan));
        capSize += chunk.length - capSpan;
        if (capSize > captureLimit * 2) {
          issues.push({ line, severity: 'warning', code: 'value-too-large', message: traceMessages.captureTooLarge(cap, capSize) });
          cap = null;
          capParts = [];
        }
      }
    }

  } catch (e) {
    (stream as { destroy?: () => void }).destroy?.();
    await Promise.all(outs.map((o) => o.close().catch(() => undefined)));
    if (e instanceof TickwiseError) throw e;
    const err = e as NodeJS.ErrnoException;
    throw new TickwiseError('unreadable-input', traceMessages.unreadable(err.code === 'Z_DATA_ERROR' || err.code === 'Z_BUF_ERROR' ? 'corrupt gzip data' : err.message), { file, line, cause: e });
  }

  function closeContainer(): void {
    stack.pop();
    if (stack.length === 0) documentDone = true;
  }

  // ---- end of input ----
  if (rec >= 0) {
    issues.push({ line: recLine, severity: 'warning', code: 'truncated-record', message: traceMessages.truncatedRecord() });
    outs[rec]!.pos = recBase;
    rec = -1;
  }
  if (!sawAnything) {
    await Promise.all(outs.map((o) => o.close()));
    throw new TickwiseError('empty-input', traceMessages.emptyFile(), { file });
  }
  if (stack.length > 0 || inString || skipDepth > 0) {
    const top = stack[stack.length - 1];
    const arrayOfRecords = top !== undefined && !top.obj && (top.node?.children.get('[]')?.record ?? -1) >= 0;
    if (arrayOfRecords && stack.length <= 2 && !inString && skipDepth === 0) {
      issues.push({ line, severity: 'info', code: 'unterminated-array', message: traceMessages.unterminatedArray() });
    } else {
      await Promise.all(outs.map((o) => o.close()));
      fail(traceMessages.truncatedDocument(), line);
    }
  }
  await Promise.all(outs.map((o) => o.close()));
  return { counts, lines: lineArrays.map((l) => l.done()), captured, issues, sourceLines: line };
}

/** Maps a 1-based NDJSON line (as DuckDB reports it) to the source line. */
export function sourceLineOf(lines: Uint32Array, ndjsonLine: number | undefined): number | undefined {
  if (ndjsonLine === undefined || lines.length === 0) return undefined;
  const k = Math.min(Math.max(ndjsonLine, 1), lines.length) - 1;
  return lines[k];
}
