/**
 * A JSON tokenizer over a window of bytes (one part of a streamed file).
 * It knows the token grammar only (strings, numbers, literals, punctuation,
 * whitespace and line numbers); which token may follow which is the
 * caller's business (see `json-records.ts`). A token cut by the end of the
 * window is reported as {@link Tok.More} with the position left at its
 * start, so the caller can add bytes and ask again; at the end of the input
 * (`final`), a number ends with the window.
 *
 * It accepts exactly what `JSON.parse` accepts at the token level (RFC 8259):
 * no raw control characters in strings, only the defined escapes, numbers
 * `-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`, the literals `true`,
 * `false`, `null`, whitespace of space, tab, CR, LF.
 */

/** Token kinds returned by {@link JsonTokenizer.next}. */
export const Tok = {
  /** The window ends inside (or before) the token: add bytes and call again. */
  More: 0,
  /** Not JSON: {@link JsonTokenizer.error} says why. */
  Error: 1,
  BeginObject: 2,
  EndObject: 3,
  BeginArray: 4,
  EndArray: 5,
  Colon: 6,
  Comma: 7,
  String: 8,
  Number: 9,
  /** true, false or null. */
  Literal: 10,
} as const;
export type Tok = (typeof Tok)[keyof typeof Tok];

const QUOTE = 0x22, BACKSLASH = 0x5c, NL = 0x0a, CR = 0x0d, SPACE = 0x20, TAB = 0x09;
const MINUS = 0x2d, PLUS = 0x2b, DOT = 0x2e, ZERO = 0x30, NINE = 0x39, LOWER_E = 0x65, UPPER_E = 0x45;

/** Bytes that may follow a backslash in a JSON string (`u` is checked apart). */
const SIMPLE_ESCAPE = new Uint8Array(256);
for (const c of '"\\/bfnrt') SIMPLE_ESCAPE[c.charCodeAt(0)] = 1;

/** Bytes that end the plain run of a string: ", \ and the control characters. */
const STRING_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STRING_STOP[c] = 1;
STRING_STOP[QUOTE] = 1;
STRING_STOP[BACKSLASH] = 1;

/** The one-byte tokens by their byte (0: not one). */
const PUNCT = new Uint8Array(256);
PUNCT[0x7b] = Tok.BeginObject;
PUNCT[0x7d] = Tok.EndObject;
PUNCT[0x5b] = Tok.BeginArray;
PUNCT[0x5d] = Tok.EndArray;
PUNCT[0x3a] = Tok.Colon;
PUNCT[0x2c] = Tok.Comma;

function isHex(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

function isDigit(c: number): boolean {
  return c >= ZERO && c <= NINE;
}

/** A printable name for a byte in an error message. */
export function byteName(c: number): string {
  return c >= 0x20 && c < 0x7f ? JSON.stringify(String.fromCharCode(c)) : `byte 0x${c.toString(16).padStart(2, '0')}`;
}

/**
 * Reads tokens from `buf[pos, end)`. `line` counts the newlines passed
 * (1-based); `start`/`stop` bound the last token (a string's span includes
 * its quotes); `escaped` says whether the last string held a backslash.
 */
export class JsonTokenizer {
  buf: Buffer = Buffer.alloc(0);
  pos = 0;
  end = 0;
  /** No bytes follow the window (a number at its end is complete). */
  final = false;
  line = 1;
  /** Carriage returns passed (between tokens). */
  crs = 0;
  start = 0;
  stop = 0;
  escaped = false;
  /** Why the last {@link Tok.Error}. */
  error = '';

  /** Points the tokenizer at a new window (positions restart at `pos`). */
  reset(buf: Buffer, pos: number, end: number, final: boolean): void {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
    this.final = final;
  }

  /** Skips whitespace, counting lines; false when the window ends first. */
  skipWs(): boolean {
    const b = this.buf;
    const end = this.end;
    let i = this.pos;
    if (i < end && b[i]! > SPACE) return true; // the common case: a token right here
    while (i < end) {
      const c = b[i]!;
      if (c === SPACE || c === TAB) i++;
      else if (c === CR) {
        i++;
        this.crs++;
      } else if (c === NL) {
        i++;
        this.line++;
      } else break;
    }
    this.pos = i;
    return i < end;
  }

  /** The next token; on {@link Tok.More} and {@link Tok.Error} the position stays at the token's start. */
  next(): Tok {
    if (!this.skipWs()) return Tok.More;
    const i = this.pos;
    const c = this.buf[i]!;
    this.start = i;
    const k = PUNCT[c]!;
    if (k !== 0) {
      this.pos = this.stop = i + 1;
      return k as Tok;
    }
    if (c === QUOTE) return this.string();
    return this.word(c);
  }

  /** A number or a literal (or not JSON). */
  private word(c: number): Tok {
    if (c === MINUS || isDigit(c)) return this.number();
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    return this.fail(`unexpected ${byteName(c)}`);
  }

  private fail(message: string): Tok {
    this.error = message;
    return Tok.Error;
  }

  private string(): Tok {
    const b = this.buf;
    const end = this.end;
    let i = this.start + 1;
    let escaped = false;
    for (;;) {
      // the common bytes first: anything printable but " and \
      while (i < end && STRING_STOP[b[i]!] === 0) i++;
      if (i >= end) return Tok.More;
      const c = b[i]!;
      if (c === QUOTE) break;
      if (c < 0x20) return this.fail(`${byteName(c)} inside a string (control characters must be escaped)`);
      // backslash
      escaped = true;
      if (i + 1 >= end) return Tok.More;
      const e = b[i + 1]!;
      if (SIMPLE_ESCAPE[e] === 1) i += 2;
      else if (e === 0x75) {
        if (i + 6 > end) {
          for (let k = i + 2; k < end; k++) if (!isHex(b[k]!)) return this.fail('bad \\u escape in a string');
          return Tok.More;
        }
        for (let k = i + 2; k < i + 6; k++) if (!isHex(b[k]!)) return this.fail('bad \\u escape in a string');
        i += 6;
      } else return this.fail(`bad escape \\${String.fromCharCode(e)} in a string`);
    }
    this.escaped = escaped;
    this.pos = this.stop = i + 1;
    return Tok.String;
  }

  private literal(word: string): Tok {
    const b = this.buf;
    const i = this.start;
    const n = word.length;
    const avail = Math.min(n, this.end - i);
    for (let k = 0; k < avail; k++) {
      if (b[i + k] !== word.charCodeAt(k)) return this.fail(`unexpected ${byteName(b[i]!)}`);
    }
    if (avail < n) return Tok.More;
    this.pos = this.stop = i + n;
    return Tok.Literal;
  }

  /** At the window's end inside a number: it may go on (More), unless the input ends there. */
  private numberCut(): Tok {
    return this.final ? this.fail('a number ends early') : Tok.More;
  }

  private number(): Tok {
    const b = this.buf;
    const end = this.end;
    let i = this.start;
    if (b[i] === MINUS) {
      i++;
      if (i >= end) return this.numberCut();
    }
    let c = b[i]!;
    if (c === ZERO) {
      i++;
    } else if (isDigit(c)) {
      i++;
      while (i < end && isDigit(b[i]!)) i++;
    } else return this.fail('a number without digits');
    if (i < end && b[i] === DOT) {
      i++;
      if (i >= end) return this.numberCut();
      if (!isDigit(b[i]!)) return this.fail('a number without digits after "."');
      while (i < end && isDigit(b[i]!)) i++;
    }
    if (i < end && (b[i] === LOWER_E || b[i] === UPPER_E)) {
      i++;
      if (i >= end) return this.numberCut();
      c = b[i]!;
      if (c === PLUS || c === MINUS) {
        i++;
        if (i >= end) return this.numberCut();
      }
      if (!isDigit(b[i]!)) return this.fail('a number without exponent digits');
      while (i < end && isDigit(b[i]!)) i++;
    }
    if (i >= end && !this.final) return Tok.More;
    this.pos = this.stop = i;
    return Tok.Number;
  }
}
