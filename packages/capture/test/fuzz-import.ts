/**
 * A seeded import fuzzer: mutants of the real fixtures of every input
 * format, each imported in-process as the CLI does (`openInputs` into an
 * in-memory store; `readLlamaBench` for llama-bench output) and classified
 * by the exit code the CLI would give:
 *
 * - `ok`: imported (exit 0), and the counts it reports are the rows stored;
 * - `refused`: a `TickwiseError` naming the file (exit 2, `file[:line]`);
 * - `unclear`: exit 2 without a file (a raw query error: DuckDB's text);
 * - `crash`: anything else (exit 70 and a stack trace);
 * - `hang`: no outcome within the time limit.
 *
 * Used by `fuzz-import.test.ts` (a few hundred mutants in CI) and
 * `scripts/fuzz-import` (any number, any seed).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import { gunzipSync, gzipSync } from 'node:zlib';
import { seededRng, TickwiseError, type Rng } from '@tickwise/time';
import { openInputs, readLlamaBench } from '../src/index';

const ROOT = resolve(import.meta.dirname, '../../..');
const LOCAL = join(ROOT, 'packages/capture/test/fixtures');
const SHARED = resolve(ROOT, '../shared/fixtures');
const require = createRequire(import.meta.url);

/** One seed input: a format and how to make its file (or directory) from mutated bytes. */
export interface Seed {
  readonly format: string;
  readonly name: string;
  /** The bytes mutated (for a directory: its main file). */
  readonly bytes: Buffer;
  /** Writes a mutant at `dir`, returns the path to import. */
  readonly write: (dir: string, bytes: Buffer) => string;
}

function fileSeed(format: string, path: string, fileName = path.split('/').pop()!): Seed | null {
  if (!existsSync(path)) return null;
  let bytes = readFileSync(path);
  if (path.endsWith('.gz')) bytes = gunzipSync(bytes);
  const name = fileName.replace(/\.gz$/, '');
  return { format, name, bytes, write: (dir, b) => { const p = join(dir, name); writeFileSync(p, b); return p; } };
}

/** A recorder capture left by the native tests (native/build*\/test-captures), if any. */
function recorderSeed(): Seed | null {
  for (const b of ['build', 'build-asan']) {
    const base = join(ROOT, 'native', b, 'test-captures');
    if (!existsSync(base)) continue;
    for (const n of readdirSync(base).sort()) {
      const d = join(base, n);
      if (!existsSync(join(d, 'records.twr')) || !existsSync(join(d, 'meta.json'))) continue;
      return {
        format: 'tickwise-recorder', name: `recorder/${n}/meta.json`, bytes: readFileSync(join(d, 'meta.json')),
        write: (dir, bytes) => {
          const out = join(dir, 'capture');
          cpSync(d, out, { recursive: true });
          writeFileSync(join(out, 'meta.json'), bytes);
          return out;
        },
      };
    }
  }
  return null;
}

/** A rocpd SQLite database built from a SQL fixture (by the sqlite3 of better-sqlite3); its SQL text is mutated. */
function rocpdSeed(sqlFile: string): Seed | null {
  const path = join(LOCAL, 'rocpd', sqlFile);
  if (!existsSync(path)) return null;
  return {
    format: 'rocpd', name: sqlFile, bytes: readFileSync(path),
    write: (dir, bytes) => {
      const out = join(dir, '4242_results.db');
      const Database = require('better-sqlite3') as new (p: string) => { exec(s: string): void; close(): void };
      const db = new Database(out);
      try {
        db.exec(bytes.toString('latin1'));
      } catch {
        // a mutant SQL script that sqlite refuses: keep what it built (a partial database is a real input too)
      } finally {
        db.close();
      }
      return out;
    },
  };
}

/** Every seed whose fixture is present. */
export function seeds(): Seed[] {
  const s: (Seed | null)[] = [
    fileSeed('ireeperf-jsonl', join(SHARED, 'iree/fixture_smoke.ireeperf.jsonl')),
    fileSeed('ireeperf-jsonl', join(SHARED, 'iree/local_task_matmul.ireeperf.jsonl')),
    fileSeed('rocprofv3-csv', join(LOCAL, 'rocprofv3/kernel_trace.csv')),
    fileSeed('rocprofv3-csv', join(SHARED, 'external/rocprofv3-csv/sdkdocs_2025-06_1562e457_kernel_trace.csv')),
    fileSeed('rocprofv3-json', join(LOCAL, 'rocprofv3/results.json')),
    rocpdSeed('schema3-inline.sql'),
    rocpdSeed('schema4-spine.sql'),
    fileSeed('chrome-trace', join(LOCAL, 'chrome-trace/kineto.pt.trace.json')),
    fileSeed('chrome-trace', join(LOCAL, 'chrome-trace/precision.json')),
    fileSeed('heteromosaic-jsonl', join(LOCAL, 'heteromosaic/prefill_split.jsonl')),
    fileSeed('hrx-device-profile', join(LOCAL, 'hrx/npu_profile.json')),
    fileSeed('hrx-device-profile', join(LOCAL, 'hrx/two_devices.json')),
    fileSeed('llama-bench', join(SHARED, 'external/llama-bench/strixhalo_llama32-1b.default-hip.jsonl')),
    fileSeed('llama-bench', join(SHARED, 'external/llama-bench/llamacpp_readme_json_example.json')),
    recorderSeed(),
  ];
  return s.filter((x): x is Seed => x !== null);
}

const HOSTILE_NUMBERS = ['18446744073709551615', '18446744073709551616', '9223372036854775807', '9223372036854775808', '-1', '-9223372036854775809',
  '1e400', '-0', '0', '1.5', '4294967295', '170141183460469231731687303715884105728'];
const HOSTILE_BYTES = [0xff, 0x00, 0x22, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x0a, 0x3a, 0x5c, 0x27];

/** One mutation of `b`, described. */
function mutate(b: Buffer, rng: Rng): { bytes: Buffer; what: string } {
  const pos = () => rng.int(Math.max(1, b.length));
  const kind = rng.int(10);
  switch (kind) {
    case 0: { // flip a byte to a hostile one
      const i = pos();
      const c = Buffer.from(b);
      const v = HOSTILE_BYTES[rng.int(HOSTILE_BYTES.length)]!;
      c[i] = v;
      return { bytes: c, what: `byte ${i} = 0x${v.toString(16)}` };
    }
    case 1: { // truncate
      const i = pos();
      return { bytes: b.subarray(0, i), what: `truncated at ${i}` };
    }
    case 2: { // delete a range
      const i = pos();
      const n = 1 + rng.int(64);
      return { bytes: Buffer.concat([b.subarray(0, i), b.subarray(i + n)]), what: `deleted ${n} at ${i}` };
    }
    case 3: case 4: { // a number becomes a hostile one
      const text = b.toString('latin1');
      const nums = [...text.matchAll(/-?\d+(\.\d+)?([eE][+-]?\d+)?/g)];
      if (nums.length === 0) return mutate(b, rng);
      const m = nums[rng.int(nums.length)]!;
      const v = HOSTILE_NUMBERS[rng.int(HOSTILE_NUMBERS.length)]!;
      return { bytes: Buffer.from(text.slice(0, m.index) + v + text.slice(m.index! + m[0].length), 'latin1'), what: `number at ${m.index} (${m[0]}) = ${v}` };
    }
    case 5: { // duplicate a line
      const lines = b.toString('latin1').split('\n');
      const i = rng.int(lines.length);
      lines.splice(i, 0, lines[i]!);
      return { bytes: Buffer.from(lines.join('\n'), 'latin1'), what: `line ${i + 1} duplicated` };
    }
    case 6: { // swap two lines
      const lines = b.toString('latin1').split('\n');
      const i = rng.int(lines.length);
      const j = rng.int(lines.length);
      [lines[i], lines[j]] = [lines[j]!, lines[i]!];
      return { bytes: Buffer.from(lines.join('\n'), 'latin1'), what: `lines ${i + 1} and ${j + 1} swapped` };
    }
    case 7: { // a string value emptied or made hostile
      const text = b.toString('latin1');
      const strs = [...text.matchAll(/"([^"\\\n]{1,80})"/g)];
      if (strs.length === 0) return mutate(b, rng);
      const m = strs[rng.int(strs.length)]!;
      const vals = ['""', '"\u2028\u202e"', 'null', '[]', '{}', 'true', '"-1"', '"NaN"'];
      const v = vals[rng.int(vals.length)]!;
      return { bytes: Buffer.from(text.slice(0, m.index) + (v === '"\u2028\u202e"' ? '"\\u2028\\u202e"' : v) + text.slice(m.index! + m[0].length), 'latin1'), what: `string at ${m.index} = ${v}` };
    }
    case 8: { // insert a hostile byte
      const i = pos();
      const v = HOSTILE_BYTES[rng.int(HOSTILE_BYTES.length)]!;
      return { bytes: Buffer.concat([b.subarray(0, i), Buffer.from([v]), b.subarray(i)]), what: `0x${v.toString(16)} inserted at ${i}` };
    }
    default: { // two mutations
      const a = mutate(b, rng);
      const c = mutate(a.bytes, rng);
      return { bytes: c.bytes, what: `${a.what}; ${c.what}` };
    }
  }
}

/** The outcome of importing one mutant. */
export interface Outcome {
  readonly seed: string;
  readonly format: string;
  readonly mutation: string;
  readonly kind: 'ok' | 'refused' | 'unclear' | 'crash' | 'hang';
  /** The message the CLI would print (for refused/unclear/crash). */
  readonly message?: string;
  /** Where a mutant is kept for a failure (`keepDir`). */
  readonly kept?: string;
}

async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<'timeout'>((r) => { timer = setTimeout(() => r('timeout'), ms); });
  try {
    return await Promise.race([p, t]);
  } finally {
    clearTimeout(timer);
  }
}

/** Imports one path as the CLI would (with its format named, as `--input-format` does, or detected); returns the outcome. */
async function importOnce(format: string, path: string, named: boolean): Promise<Pick<Outcome, 'kind' | 'message'>> {
  try {
    if (format === 'llama-bench') {
      const r = await readLlamaBench(path);
      return r.refs.length > 0 ? { kind: 'ok' } : { kind: 'crash', message: 'no rows and no error' };
    }
    const { store, imported } = await openInputs([path], named ? { format } : {});
    try {
      for (const r of imported) {
        const stored = await store.count('dispatches', `WHERE capture_id = ${r.capture_id}`);
        if (stored !== r.dispatches) return { kind: 'crash', message: `reported ${r.dispatches} dispatches, stored ${stored}` };
        const cap = await store.count('captures', `WHERE capture_id = ${r.capture_id}`);
        if (cap !== 1) return { kind: 'crash', message: `capture ${r.capture_id} not stored` };
      }
    } finally {
      await store.close();
    }
    return { kind: 'ok' };
  } catch (e) {
    if (e instanceof TickwiseError) {
      if (e.code === 'reader-failed') return { kind: 'unclear', message: `tickwise: ${e.where()} (reader-failed: a raw error, caught by importInput)` };
      if (e.file === undefined) return { kind: 'unclear', message: `tickwise: ${e.where()} (no file)` };
      return { kind: 'refused', message: `tickwise: ${e.where()}` };
    }
    if (e instanceof Error && e.name === 'QueryError') return { kind: 'unclear', message: `tickwise: ${e.message.split('\n')[0]}` };
    return { kind: 'crash', message: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
}

/** Options of {@link fuzzImport}. */
export interface FuzzOptions {
  readonly seed: number;
  /** Mutants per seed input. */
  readonly perSeed: number;
  /** Per-mutant limit before it counts as a hang, ms. */
  readonly hangMs?: number;
  /** Keep failing mutants here. */
  readonly keepDir?: string;
  /** Called after each mutant. */
  readonly onOutcome?: (o: Outcome) => void;
}

/**
 * Runs the fuzzer: for each seed input, the unmutated input (must import:
 * `ok`), then `perSeed` mutants (every third one also gzip-compressed, and
 * half imported with the format named); returns every outcome.
 */
export async function fuzzImport(opts: FuzzOptions): Promise<Outcome[]> {
  const rng = seededRng(opts.seed);
  const work = join(tmpdir(), `tickwise-fuzz-${process.pid}`);
  const out: Outcome[] = [];
  try {
    for (const s of seeds()) {
      for (let k = -1; k < opts.perSeed; k++) {
        const m = k < 0 ? { bytes: s.bytes, what: 'unmutated' } : mutate(s.bytes, rng);
        const gz = k >= 0 && k % 3 === 2 && s.format !== 'tickwise-recorder' && s.format !== 'rocpd' && s.format !== 'llama-bench';
        const named = k >= 0 && k % 2 === 1;
        const dir = join(work, `${out.length}`);
        mkdirSync(dir, { recursive: true });
        let bytes = gz ? gzipSync(m.bytes) : m.bytes;
        let what = m.what;
        if (gz && k % 6 === 5) {
          // the compression itself damaged: cut short, or one byte of the deflate stream flipped
          const z = Buffer.from(bytes);
          const at = 10 + rng.int(Math.max(1, z.length - 10));
          if (rng.int(2) === 0) bytes = z.subarray(0, at);
          else { z[at] = z[at]! ^ 0xff; bytes = z; }
          what += bytes.length < z.length ? `; gzip cut at ${at}` : `; gzip byte ${at} flipped`;
        }
        const path = s.write(dir, bytes);
        const finalPath = gz && !path.endsWith('.gz') ? `${path}.gz` : path;
        if (finalPath !== path) cpSync(path, finalPath);
        const r = await withTimeout(importOnce(s.format, finalPath, named), opts.hangMs ?? 60_000);
        const res = r === 'timeout' ? { kind: 'hang' as const, message: `no outcome within ${opts.hangMs ?? 60_000} ms` } : r;
        let kept: string | undefined;
        if (res.kind !== 'ok' && res.kind !== 'refused' && opts.keepDir) {
          kept = join(opts.keepDir, `${out.length}-${s.format}`);
          mkdirSync(opts.keepDir, { recursive: true });
          cpSync(dir, kept, { recursive: true });
        }
        const o: Outcome = { seed: s.name, format: s.format, mutation: `${what}${gz ? ' (gzip)' : ''}${named ? ` (--input-format ${s.format})` : ''}`, ...res, ...(kept ? { kept } : {}) };
        out.push(o);
        opts.onOutcome?.(o);
        if (r !== 'timeout') rmSync(dir, { recursive: true, force: true });
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return out;
}

/** Whether the sqlite3 builder is usable (better-sqlite3 installed). */
export function haveSqlite(): boolean {
  return spawnSync(process.execPath, ['-e', "require('better-sqlite3')"], { cwd: join(ROOT, 'packages/capture') }).status === 0;
}
