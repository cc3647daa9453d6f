/**
 * llama-bench output as wall-clock references. llama-bench prints one row
 * per test (`pp512`, `tg128`, `pp512+tg128`, optionally `@ d<depth>`) with
 * the mean and standard deviation of its repetitions in integer ns
 * (`avg_ns`, `stddev_ns`) and in tokens/s (`avg_ts`, `stddev_ts`). A
 * capture's prefill span must agree with `avg_ns`; the check
 * `wall-clock-mismatch` compares them.
 *
 * ```
 * bench file --sniff--> csv | json | jsonl | md | sql
 *   --parse (exact integers, file:line of each row)--> WallRef[]
 *   --importWallRefs--> wall_refs (tied to one capture_id)
 * ```
 *
 * Field names follow llama-bench's `test::get_fields()` (build_commit ...
 * model_type, model_size, model_n_params, ..., n_prompt, n_gen, n_depth,
 * test_time, avg_ns, stddev_ns, avg_ts, stddev_ts; JSON adds samples_ns and
 * samples_ts). Older builds lack n_depth; a `test` or `model` field, when a
 * fork writes one, is used as is. Markdown carries only t/s, so `avg_ns` is
 * derived from it there (and says so).
 */
import { readFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';

/** The output layouts llama-bench can print (`-o csv|json|jsonl|md|sql`). */
export const LlamaBenchLayout = {
  csv: 'comma-separated, every value quoted, header row of field names',
  json: 'a JSON array of objects, one per test',
  jsonl: 'one JSON object per line',
  md: 'a Markdown table (model, size, params, backend, ..., test, t/s): avg_ns is derived from t/s',
  sql: 'CREATE TABLE test + one INSERT per test (for sqlite3)',
} as const;
/** Key of {@link LlamaBenchLayout}. */
export type LlamaBenchLayout = keyof typeof LlamaBenchLayout;

/** One llama-bench test result: a wall-clock reference. */
export interface WallRef {
  /** The file it came from, as given. */
  readonly source_path: string;
  /** 1-based line where the row starts. */
  readonly line: number;
  /** `model_type` (or `model`, or `model_filename`), null when absent. */
  readonly model: string | null;
  /** llama-bench's test name: `pp512`, `tg128`, `pp512+tg128`, with ` @ d<depth>` when n_depth > 0. */
  readonly test: string;
  readonly n_prompt: number;
  readonly n_gen: number;
  readonly n_depth: number;
  /** Mean wall time of one repetition, ns (exact). */
  readonly avg_ns: bigint;
  readonly stddev_ns: bigint | null;
  /** Mean tokens per second. */
  readonly avg_ts: number | null;
  readonly stddev_ts: number | null;
  /** True when avg_ns was derived from t/s (Markdown), not read. */
  readonly avg_ns_derived: boolean;
  /** Every field of the row, as read (integers beyond 2^53 as strings). */
  readonly raw: Record<string, unknown>;
}

/** What a llama-bench file held. */
export interface LlamaBenchFile {
  readonly layout: LlamaBenchLayout;
  readonly refs: WallRef[];
}

/** Messages of this reader (one place, each a function). */
export const llamaBenchMessages = {
  empty: () => 'no llama-bench results in this file (expected its -o csv, json, jsonl, md or sql output)',
  noAvgColumn: (cols: string) => `not llama-bench output: the header has no avg_ns field (fields: ${cols})`,
  fieldCount: (got: number, want: number) => `row has ${got} fields, the header has ${want}`,
  missingField: (field: string) => `row has no ${field}`,
  notInteger: (field: string, text: string) => `${field} is not a non-negative integer: ${JSON.stringify(text)}`,
  notNumber: (field: string, text: string) => `${field} is not a number: ${JSON.stringify(text)}`,
  zeroAvg: () => 'avg_ns is 0: the test has no timed repetitions',
  noTokens: () => 'n_prompt and n_gen are both 0: the row names no test',
  badJson: (detail: string) => `not valid JSON: ${detail}`,
  notObject: (what: string) => `expected a JSON object for each test, got ${what}`,
  unterminatedQuote: () => 'a quoted CSV field is not closed before the end of the file',
  badMarkdownTest: (text: string) => `cannot read the test name ${JSON.stringify(text)} (expected pp512, tg128, pp512+tg128, optionally "@ d512")`,
  badMarkdownRate: (text: string) => `cannot read t/s ${JSON.stringify(text)} (expected "1234.56 ± 7.89")`,
  noCapture: (id: number) => `capture ${id} is not in the store; import the capture first (wall references are tied to a capture)`,
  unreadable: (detail: string) => `cannot read the file: ${detail}`,
} as const;

function fail(file: string, line: number | undefined, message: string): never {
  throw new TickwiseError('bad-wall-ref', message, { file, line });
}

/** Tells which llama-bench layout a text is in. */
export function sniffLlamaBench(text: string): LlamaBenchLayout {
  const head = text.trimStart();
  if (head.startsWith('[')) return 'json';
  if (head.startsWith('{')) return 'jsonl';
  if (head.startsWith('|')) return 'md';
  if (/^(CREATE\s+TABLE|INSERT\s+INTO)\b/i.test(head)) return 'sql';
  return 'csv';
}

/** Parses llama-bench output (any layout). Throws {@link TickwiseError} with file and line on a bad row. */
export function parseLlamaBench(textIn: string, file = '<llama-bench>'): LlamaBenchFile {
  const text = textIn.replace(/^\uFEFF/, '');
  if (text.trim().length === 0) fail(file, undefined, llamaBenchMessages.empty());
  const layout = sniffLlamaBench(text);
  const rows = layout === 'csv' ? csvRows(text, file)
    : layout === 'json' ? jsonRows(text, file, false)
    : layout === 'jsonl' ? jsonRows(text, file, true)
    : layout === 'md' ? markdownRows(text, file)
    : sqlRows(text, file);
  if (rows.length === 0) fail(file, undefined, llamaBenchMessages.empty());
  return { layout, refs: rows.map((r) => toWallRef(r, file, layout === 'md')) };
}

/** Reads and parses a llama-bench output file (plain or gzip). */
export async function readLlamaBench(path: string, displayPath = path): Promise<LlamaBenchFile> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new TickwiseError('unreadable-input', llamaBenchMessages.unreadable((e as NodeJS.ErrnoException).code ?? (e as Error).message), { file: displayPath, cause: e });
  }
  if (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      bytes = gunzipSync(bytes);
    } catch (e) {
      throw new TickwiseError('bad-compression', `the gzip data is damaged or cut off (${(e as Error).message})`, { file: displayPath, cause: e });
    }
  }
  return parseLlamaBench(bytes.toString('utf8'), displayPath);
}

/**
 * Reads a llama-bench output file and stores its rows in `wall_refs`, tied
 * to `captureId`. All rows or none: a bad row throws before anything is
 * written. Returns the rows stored.
 */
export async function importWallRefs(store: Store, path: string, captureId: number): Promise<{ layout: LlamaBenchLayout; refs: WallRef[] }> {
  const n = await store.count('captures', `WHERE capture_id = ${Math.trunc(captureId)}`);
  if (n === 0) throw new TickwiseError('usage', llamaBenchMessages.noCapture(captureId), { file: path });
  const parsed = await readLlamaBench(path);
  for (const r of parsed.refs) {
    await store.run(
      `INSERT INTO wall_refs (capture_id, source_path, line, model, test, n_prompt, n_gen, avg_ns, stddev_ns, avg_ts, stddev_ts, raw)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12::JSON)`,
      [captureId, r.source_path, r.line, r.model, r.test, r.n_prompt, r.n_gen, r.avg_ns, r.stddev_ns, r.avg_ts, r.stddev_ts, JSON.stringify(r.raw)],
    );
    if (r.avg_ns_derived) {
      await store.run(`INSERT INTO diagnostics VALUES ($1, 'info', 'wall-ref-derived', $2, $3, $4)`, [
        captureId, `${r.test}: avg_ns ${r.avg_ns} derived from the Markdown t/s (${r.avg_ts}); -o csv or json gives llama-bench's own avg_ns`, r.source_path, r.line,
      ]);
    }
  }
  return parsed;
}

/** A row as read: field name to value text or JSON value, and its line. */
interface RawRow {
  readonly line: number;
  readonly fields: Record<string, unknown>;
}

/** llama-bench's test name from its token counts (as its markdown printer builds it). */
export function llamaBenchTestName(n_prompt: number, n_gen: number, n_depth: number): string {
  const base = n_prompt > 0 && n_gen === 0 ? `pp${n_prompt}` : n_gen > 0 && n_prompt === 0 ? `tg${n_gen}` : `pp${n_prompt}+tg${n_gen}`;
  return n_depth > 0 ? `${base} @ d${n_depth}` : base;
}

const INT64_MAX = (1n << 63n) - 1n;
const INT32_MAX = (1n << 31n) - 1n;

function toWallRef(row: RawRow, file: string, derived: boolean): WallRef {
  const f = row.fields;
  const has = (k: string) => Object.hasOwn(f, k) && f[k] !== null && f[k] !== '';
  // present but too large for its column: said so, never reported as missing or left to the database
  const outOfRange = (k: string, text: string, max: bigint): never =>
    fail(file, row.line, `${k} ${text} is out of range: at most ${max}${k.endsWith('_ns') ? ' ns (int64)' : ''}`);
  const int = (k: string, required: boolean, max: bigint = INT64_MAX): bigint | null => {
    if (!has(k)) {
      if (required) fail(file, row.line, llamaBenchMessages.missingField(k));
      return null;
    }
    const v = f[k];
    if (typeof v === 'bigint') {
      if (v < 0n) fail(file, row.line, llamaBenchMessages.notInteger(k, String(v)));
      if (v > max) outOfRange(k, String(v), max);
      return v;
    }
    const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : JSON.stringify(v);
    if (typeof v === 'number' && Number.isInteger(v) && v > Number(max)) outOfRange(k, s, max);
    if (!/^\d+$/.test(s)) fail(file, row.line, llamaBenchMessages.notInteger(k, s));
    if (BigInt(s) > max) outOfRange(k, s, max);
    return BigInt(s);
  };
  // per-sample times (JSON): each a non-negative integer within int64 ns
  const samples = f['samples_ns'];
  if (Array.isArray(samples)) {
    for (const x of samples as unknown[]) {
      const t = typeof x === 'bigint' || typeof x === 'number' ? String(x) : JSON.stringify(x);
      if (typeof x === 'bigint' ? x < 0n : typeof x !== 'number' || !Number.isInteger(x) || x < 0) fail(file, row.line, llamaBenchMessages.notInteger('samples_ns', t));
      if ((typeof x === 'bigint' && x > INT64_MAX) || (typeof x === 'number' && x > Number(INT64_MAX))) outOfRange('samples_ns', t, INT64_MAX);
    }
  }
  const num = (k: string): number | null => {
    if (!has(k)) return null;
    const v = f[k];
    const x = typeof v === 'number' ? v : typeof v === 'bigint' ? Number(v) : typeof v === 'string' ? Number(v.trim()) : NaN;
    if (!Number.isFinite(x)) fail(file, row.line, llamaBenchMessages.notNumber(k, typeof v === 'string' ? v : JSON.stringify(v)));
    return x;
  };
  const small = (k: string): number => {
    const v = int(k, false, INT32_MAX);
    return v === null ? 0 : Number(v);
  };
  const n_prompt = small('n_prompt');
  const n_gen = small('n_gen');
  const n_depth = small('n_depth');
  const avg_ns = int('avg_ns', true)!;
  if (avg_ns === 0n) fail(file, row.line, llamaBenchMessages.zeroAvg());
  if (n_prompt === 0 && n_gen === 0 && !has('test')) fail(file, row.line, llamaBenchMessages.noTokens());
  const str = (k: string) => (has(k) ? String(f[k]) : null);
  const raw: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(f)) raw[k] = typeof v === 'bigint' ? (v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString()) : v;
  return {
    source_path: file,
    line: row.line,
    model: str('model_type') ?? str('model') ?? str('model_filename'),
    test: str('test') ?? llamaBenchTestName(n_prompt, n_gen, n_depth),
    n_prompt,
    n_gen,
    n_depth,
    avg_ns,
    stddev_ns: int('stddev_ns', false),
    avg_ts: num('avg_ts'),
    stddev_ts: num('stddev_ts'),
    avg_ns_derived: derived,
    raw,
  };
}

// ---------------------------------------------------------------- CSV

/** RFC 4180 records with the line each starts on. */
function csvRecords(text: string, file: string): { line: number; cells: string[] }[] {
  const out: { line: number; cells: string[] }[] = [];
  let line = 1;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const start = line;
    const cells: string[] = [];
    let cell = '';
    let quotedStart = 0;
    for (;;) {
      if (text[i] === '"') {
        quotedStart = line;
        i++;
        for (;;) {
          if (i >= n) fail(file, quotedStart, llamaBenchMessages.unterminatedQuote());
          const c = text[i]!;
          if (c === '"') {
            if (text[i + 1] === '"') { cell += '"'; i += 2; continue; }
            i++;
            break;
          }
          if (c === '\n') line++;
          cell += c;
          i++;
        }
      }
      while (i < n && text[i] !== ',' && text[i] !== '\n' && text[i] !== '\r') cell += text[i++];
      cells.push(cell);
      cell = '';
      if (i < n && text[i] === ',') { i++; continue; }
      break;
    }
    if (text[i] === '\r') i++;
    if (text[i] === '\n') { i++; line++; }
    if (!(cells.length === 1 && cells[0]!.trim() === '')) out.push({ line: start, cells });
  }
  return out;
}

function csvRows(text: string, file: string): RawRow[] {
  const recs = csvRecords(text, file);
  const header = recs[0];
  if (!header) return [];
  const cols = header.cells.map((c) => c.trim());
  if (!cols.includes('avg_ns')) fail(file, header.line, llamaBenchMessages.noAvgColumn(cols.slice(0, 12).join(', ') + (cols.length > 12 ? ', ...' : '')));
  return recs.slice(1).map((r) => {
    if (r.cells.length !== cols.length) fail(file, r.line, llamaBenchMessages.fieldCount(r.cells.length, cols.length));
    const fields: Record<string, unknown> = {};
    cols.forEach((c, i) => { fields[c] = r.cells[i]!; });
    return { line: r.line, fields };
  });
}

// ---------------------------------------------------------------- JSON

/**
 * A small JSON reader that keeps integers exact (bigint beyond 2^53) and
 * knows the line of every top-level object. JSON.parse would round a u64
 * and cannot say where a row starts.
 */
class JsonReader {
  private i = 0;
  line = 1;
  constructor(private readonly s: string, private readonly file: string) {}

  error(detail: string): never {
    return fail(this.file, this.line, llamaBenchMessages.badJson(detail));
  }
  ws(): void {
    const s = this.s;
    while (this.i < s.length) {
      const c = s.charCodeAt(this.i);
      if (c === 10) this.line++;
      else if (c !== 32 && c !== 9 && c !== 13) break;
      this.i++;
    }
  }
  peek(): string | undefined {
    return this.s[this.i];
  }
  eof(): boolean {
    return this.i >= this.s.length;
  }
  expect(ch: string): void {
    this.ws();
    if (this.s[this.i] !== ch) this.error(`expected "${ch}" but found ${this.eof() ? 'the end of the file' : JSON.stringify(this.s[this.i])}`);
    this.i++;
  }
  value(): unknown {
    this.ws();
    const c = this.s[this.i];
    if (c === '{') return this.object();
    if (c === '[') {
      this.i++;
      const arr: unknown[] = [];
      this.ws();
      if (this.s[this.i] === ']') { this.i++; return arr; }
      for (;;) {
        arr.push(this.value());
        this.ws();
        if (this.s[this.i] === ',') { this.i++; continue; }
        this.expect(']');
        return arr;
      }
    }
    if (c === '"') return this.string();
    const m = /^-?(?:0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(this.s.slice(this.i, this.i + 64));
    if (m) {
      this.i += m[0].length;
      if (m[1] === undefined && m[2] === undefined) {
        const b = BigInt(m[0]);
        return b <= BigInt(Number.MAX_SAFE_INTEGER) && b >= -BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
      }
      return Number(m[0]);
    }
    for (const [word, v] of [['true', true], ['false', false], ['null', null]] as const) {
      if (this.s.startsWith(word, this.i)) { this.i += word.length; return v; }
    }
    if (/^(nan|-?inf)/i.test(this.s.slice(this.i, this.i + 4))) {
      // llama-bench prints a non-finite double bare (e.g. stddev_ts of one repetition on some builds)
      const w = /^-?[a-z]+/i.exec(this.s.slice(this.i, this.i + 16))![0];
      this.i += w.length;
      return null;
    }
    return this.error(this.eof() ? 'the file ends inside a value' : `unexpected ${JSON.stringify(c)}`);
  }
  object(): Record<string, unknown> {
    this.expect('{');
    const o: Record<string, unknown> = {};
    this.ws();
    if (this.s[this.i] === '}') { this.i++; return o; }
    for (;;) {
      this.ws();
      if (this.s[this.i] !== '"') this.error(`expected a field name, found ${this.eof() ? 'the end of the file' : JSON.stringify(this.s[this.i])}`);
      const k = this.string();
      this.expect(':');
      o[k] = this.value();
      this.ws();
      if (this.s[this.i] === ',') { this.i++; continue; }
      this.expect('}');
      return o;
    }
  }
  string(): string {
    const start = this.i;
    this.i++;
    while (this.i < this.s.length) {
      const c = this.s[this.i];
      if (c === '\\') { this.i += 2; continue; }
      if (c === '"') {
        this.i++;
        try {
          return JSON.parse(this.s.slice(start, this.i)) as string;
        } catch (e) {
          return this.error((e as Error).message);
        }
      }
      if (c === '\n') this.error('a string runs past the end of its line');
      this.i++;
    }
    return this.error('the file ends inside a string');
  }
}

function jsonRows(text: string, file: string, lines: boolean): RawRow[] {
  const r = new JsonReader(text, file);
  const rows: RawRow[] = [];
  const take = () => {
    r.ws();
    const line = r.line;
    const v = r.value();
    if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(file, line, llamaBenchMessages.notObject(Array.isArray(v) ? 'an array' : JSON.stringify(v)));
    rows.push({ line, fields: v as Record<string, unknown> });
  };
  if (lines) {
    for (;;) {
      r.ws();
      if (r.eof()) break;
      take();
    }
    return rows;
  }
  r.expect('[');
  r.ws();
  if (r.peek() === ']') return rows;
  for (;;) {
    take();
    r.ws();
    if (r.peek() === ',') { r.expect(','); continue; }
    r.expect(']');
    break;
  }
  r.ws();
  if (!r.eof()) r.error('text after the closing "]"');
  return rows;
}

// ---------------------------------------------------------------- Markdown

function markdownRows(text: string, file: string): RawRow[] {
  const lines = text.split('\n');
  let header: string[] | null = null;
  const rows: RawRow[] = [];
  lines.forEach((l, idx) => {
    const t = l.trim();
    if (!t.startsWith('|')) return;
    const cells = t.replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
    if (header === null) { header = cells; return; }
    if (cells.every((c) => /^:?-+:?$/.test(c))) return;
    const line = idx + 1;
    if (cells.length !== header.length) fail(file, line, llamaBenchMessages.fieldCount(cells.length, header.length));
    const fields: Record<string, unknown> = {};
    header.forEach((h, i) => { fields[h] = cells[i]!; });
    const test = String(fields['test'] ?? '');
    const m = /^(?:pp\s*(\d+))?(?:\+?tg\s*(\d+))?(?:\s*@\s*d(\d+))?$/.exec(test);
    if (!m || (m[1] === undefined && m[2] === undefined)) fail(file, line, llamaBenchMessages.badMarkdownTest(test));
    const rate = String(fields['t/s'] ?? '');
    const r = /^([0-9.eE+-]+)\s*(?:±|\+-|\+\/-)\s*([0-9.eE+-]+)$/.exec(rate) ?? /^([0-9.eE+-]+)$/.exec(rate);
    const avg_ts = r ? Number(r[1]) : NaN;
    if (!r || !(avg_ts > 0)) fail(file, line, llamaBenchMessages.badMarkdownRate(rate));
    const n_prompt = Number(m[1] ?? 0);
    const n_gen = Number(m[2] ?? 0);
    fields['n_prompt'] = String(n_prompt);
    fields['n_gen'] = String(n_gen);
    fields['n_depth'] = String(m[3] ?? 0);
    fields['avg_ts'] = String(avg_ts);
    if (r[2] !== undefined) fields['stddev_ts'] = r[2];
    // t/s is a mean of per-repetition rates; tokens / mean rate is close to, not equal to, the mean time
    fields['avg_ns'] = String(Math.round(((n_prompt + n_gen) * 1e9) / avg_ts));
    fields['test'] = llamaBenchTestName(n_prompt, n_gen, Number(m[3] ?? 0));
    if (fields['model'] !== undefined) fields['model_type'] = fields['model'];
    rows.push({ line, fields });
  });
  return rows;
}

// ---------------------------------------------------------------- SQL

function sqlRows(text: string, file: string): RawRow[] {
  const rows: RawRow[] = [];
  const lines = text.split('\n');
  lines.forEach((l, idx) => {
    const m = /^\s*INSERT\s+INTO\s+\w+\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*;?\s*$/i.exec(l);
    if (!m) return;
    const cols = m[1]!.split(',').map((c) => c.trim());
    const vals: string[] = [];
    const re = /\s*(?:'((?:[^']|'')*)'|([^,]*?))\s*(?:,|$)/gy;
    const body = m[2]!;
    let mm: RegExpExecArray | null;
    while (re.lastIndex < body.length && (mm = re.exec(body)) !== null) {
      vals.push(mm[1] !== undefined ? mm[1].replaceAll("''", "'") : mm[2]!);
      if (mm[0].length === 0) break;
    }
    if (vals.length !== cols.length) fail(file, idx + 1, llamaBenchMessages.fieldCount(vals.length, cols.length));
    const fields: Record<string, unknown> = {};
    cols.forEach((c, i) => { fields[c] = vals[i]!; });
    rows.push({ line: idx + 1, fields });
  });
  return rows;
}
