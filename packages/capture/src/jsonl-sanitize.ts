import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createGunzip } from 'node:zlib';
import { TickwiseError } from '@tickwise/time';
import { maxRecordBytesOf } from './json-records';
import { captureMessages } from './messages';
import type { Compression } from './source-file';

/** A problem the sanitizer repaired, with its 1-based line. */
export interface LineIssue {
  readonly line: number;
  readonly severity: 'warning' | 'error';
  readonly code: string;
  readonly message: string;
}

const NON_FINITE = /^(-?(?:NaN|nan|Infinity|infinity|inf|Inf))/;

/**
 * Replaces bare non-finite number tokens (NaN, Infinity, inf) that appear
 * outside strings with `null`; returns the tokens replaced.
 */
export function replaceNonFinite(line: string): { text: string; replaced: string[] } {
  let out = '';
  let inString = false;
  let last = 0;
  const replaced: string[] = [];
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
      continue;
    }
    if (c === 34) { inString = true; continue; }
    if (c === 78 || c === 73 || c === 110 || c === 105 || c === 45) {
      const prev = line.slice(Math.max(0, i - 1), i);
      if (i > 0 && /[A-Za-z0-9_.]/.test(prev)) continue;
      const m = NON_FINITE.exec(line.slice(i, i + 10));
      if (m && !/[A-Za-z0-9_]/.test(line.charAt(i + m[1]!.length))) {
        out += line.slice(last, i) + 'null';
        replaced.push(m[1]!);
        i += m[1]!.length - 1;
        last = i + 1;
      }
    }
  }
  return { text: replaced.length ? out + line.slice(last) : line, replaced };
}

/**
 * Rewrites a JSON-lines file so DuckDB can read it: exactly one output line
 * per input line (blank and dropped lines become `{}`, so record ordinals are
 * line numbers), invalid UTF-8 replaced, bare NaN/Infinity turned to null, a
 * cut-off last line dropped. A line that is not JSON anywhere else stops the
 * import with its file and line.
 */
export async function sanitizeJsonl(
  inPath: string,
  compression: Compression,
  outPath: string,
  displayPath: string,
): Promise<{ issues: LineIssue[]; lines: number }> {
  if (compression === 'zstd') {
    throw new TickwiseError('unreadable-input', 'zstd input with malformed records: decompress it (zstd -d) to locate the bad line', { file: displayPath });
  }
  const issues: LineIssue[] = [];
  let input: NodeJS.ReadableStream = createReadStream(inPath, { highWaterMark: 4 << 20 });
  if (compression === 'gzip') input = (input as ReturnType<typeof createReadStream>).pipe(createGunzip());
  const out = createWriteStream(outPath, { highWaterMark: 4 << 20 });
  const strict = new TextDecoder('utf-8', { fatal: true });
  const lenient = new TextDecoder('utf-8');
  let lineNo = 0;
  const write = async (s: string) => {
    if (!out.write(s + '\n')) await once(out, 'drain');
  };
  const handle = async (raw: Buffer, isLast: boolean, hadNewline: boolean) => {
    lineNo++;
    let text: string;
    try {
      text = strict.decode(raw);
    } catch {
      text = lenient.decode(raw);
      issues.push({ line: lineNo, severity: 'warning', code: 'invalid-utf8', message: captureMessages.invalidUtf8() });
    }
    if (text.endsWith('\r')) text = text.slice(0, -1);
    if (text.trim() === '') return write('{}');
    const fixed = replaceNonFinite(text);
    for (const tok of fixed.replaced) {
      issues.push({ line: lineNo, severity: 'warning', code: 'non-finite-number', message: captureMessages.nonFinite(tok) });
    }
    try {
      const v: unknown = JSON.parse(fixed.text);
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        throw new TickwiseError('bad-record', captureMessages.notJson('a JSON object per line is expected'), { file: displayPath, line: lineNo });
      }
    } catch (e) {
      if (e instanceof TickwiseError) throw e;
      if (isLast && !hadNewline) {
        issues.push({ line: lineNo, severity: 'warning', code: 'truncated-record', message: captureMessages.truncatedLastLine() });
        return write('{}');
      }
      throw new TickwiseError('bad-record', captureMessages.notJson((e as Error).message), { file: displayPath, line: lineNo });
    }
    return write(fixed.text);
  };
  // a line's pieces are kept apart until its newline comes (one copy a line: concatenating them chunk by chunk made a
  // long line quadratic), and a line beyond the record limit stops the import with its line
  const maxLine = maxRecordBytesOf({});
  let pieces: Buffer[] = [];
  let piecesBytes = 0;
  const checkLength = (bytes: number) => {
    if (bytes > maxLine) {
      throw new TickwiseError('bad-record', `a line of more than ${maxLine} bytes: beyond the limit of one record (TICKWISE_MAX_RECORD_BYTES raises it)`, { file: displayPath, line: lineNo + 1 });
    }
  };
  const lineOf = (tail: Buffer) => (pieces.length === 0 ? tail : Buffer.concat([...pieces, tail]));
  for await (const chunk of input as AsyncIterable<Buffer>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      checkLength(piecesBytes + nl - start);
      await handle(lineOf(chunk.subarray(start, nl)), false, true);
      pieces = [];
      piecesBytes = 0;
      start = nl + 1;
    }
    if (start < chunk.length) {
      pieces.push(Buffer.from(chunk.subarray(start)));
      piecesBytes += chunk.length - start;
      checkLength(piecesBytes);
    }
  }
  if (piecesBytes > 0) await handle(lineOf(Buffer.alloc(0)), true, false);
  out.end();
  await once(out, 'finish');
  return { issues, lines: lineNo };
}
