import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { NdjsonPart, PairedRecords, RoutedRecords, ScanOptions, ScanResult } from './json-records';
import type { SourceFile } from './source-file';

/**
 * The C++ scanner (`native/jsonscan/tw-jsonscan`, built by `scripts/setup`):
 * the common case of {@link scanJsonRecords} (a valid document, plain or
 * gzip) at several times the speed, writing the same NDJSON byte for byte.
 * It runs as a child process, so the event loop stays free and DuckDB loads
 * part k while it scans on. On anything but the common case (a JSON error,
 * a repair, a limit, an exact text beyond its fast conversion) it exits 3
 * and the TypeScript scanner runs instead: its errors and repairs are the
 * reference.
 *
 * ```
 * plan file (paths, exact keys, parts, routes, pairs) --> tw-jsonscan <input> <plan>
 *   stdout: P (a part is complete: onPart) ... K (a host lane's category: onCategory) ... R (routed records) ... Q (begin/end pairs)
 *     ... C (a captured value's file) ... D (done: lines, counts)
 *   files: NDJSON parts, <out>.lines (u32), <out>.ends (f64), a route's out, captured (the captured values, end to end)
 * ```
 * `TICKWISE_JSONSCAN=0` turns it off; `TICKWISE_JSONSCAN=<path>` names the binary (used for
 * every size); `TICKWISE_JSONSCAN=always` starts the built one for inputs of any size.
 */

let binary: string | null | undefined;

/** The scanner binary, or null (not built, or turned off). */
export function nativeScanner(env = process.env): string | null {
  const given = env['TICKWISE_JSONSCAN'];
  if (given === '0') return null;
  if (given && given !== 'always') return existsSync(given) ? given : null;
  if (binary !== undefined) return binary;
  binary = null;
  // from this module (source: packages/capture/src; the bundled CLI: packages/cli/dist) up to the repository
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 5; up++) {
    const candidate = join(dir, 'native', 'jsonscan', 'build', 'tw-jsonscan');
    if (existsSync(candidate)) {
      binary = candidate;
      break;
    }
    dir = dirname(dir);
  }
  return binary;
}

/**
 * Inputs smaller than this (uncompressed bytes; a compressed one counts at
 * ten times its size) are scanned in this process. Starting the scanner
 * costs ~0.1 s of CPU (a fork of this process, DuckDB's memory and all):
 * more than it saves below a few MB. A 4 MB Kineto trace imports in the same
 * time either way, a 16 MB one 0.2-0.3 s faster natively; a folder of 20
 * small traces took 5.2 s with the scanner started for each, 3.1 s without.
 */
export const NATIVE_MIN_BYTES = 4 << 20;

/**
 * The scanner binary for an input of `bytes` (and `compression`), or null:
 * none built, turned off, or the input too small to be worth starting it
 * ({@link NATIVE_MIN_BYTES}). `TICKWISE_JSONSCAN=always` starts it for any size.
 */
export function nativeScannerFor(bytes: number, compression: string, env = process.env): string | null {
  const bin = nativeScanner(env);
  // named (a path, or `always`): started whatever the size
  if (bin === null || (env['TICKWISE_JSONSCAN'] ?? '') !== '') return bin;
  return (compression === 'none' ? bytes : bytes * 10) >= NATIVE_MIN_BYTES ? bin : null;
}

/** The plan file's text, or null when the options are beyond what the native scanner does. */
export function nativePlan(opts: ScanOptions, maxRecordBytes: number, capdir: string): string | null {
  if (opts.mode !== 'document') return null;
  const plain = (s: string) => !/[\t\n\r]/.test(s);
  const lanes: string[] = [];
  const lines = [`L ${maxRecordBytes} ${opts.captureLimit ?? 16 << 20} ${opts.chunkBytes ?? 4 << 20}`, `D ${capdir}`];
  if (!plain(capdir)) return null;
  for (const [i, spec] of opts.records.entries()) {
    const keys = spec.exactKeys ?? [];
    if (keys.length > 0 && spec.convert !== undefined && spec.nativeConvert === undefined) return null;
    const conv = spec.nativeConvert;
    const part = spec.partBytes === undefined || !Number.isFinite(spec.partBytes) ? 0 : Math.max(1, Math.floor(spec.partBytes));
    if (!plain(spec.out)) return null;
    lines.push(`S ${part} ${conv?.kind ?? 'none'} ${conv?.pow10 ?? 0} ${spec.out}`);
    for (const p of spec.paths) {
      if (!p.every(plain)) return null;
      lines.push(['P ' + String(i), ...p].join('\t'));
    }
    for (const k of keys) {
      if (!plain(k)) return null;
      lines.push(`X ${i}\t${k}`);
    }
    if (keys.length > 0 && spec.exactText === false) lines.push(`T ${i}`);
    const route = spec.route;
    if (route !== undefined) {
      if (![route.key, route.out, ...route.keep].every(plain)) return null;
      lines.push([`R ${i}`, route.key, route.out, ...route.keep].join('\t'));
    }
    const lane = spec.hostLane;
    if (lane !== undefined) {
      const target = opts.records[lane.to];
      // the lane's spec holds only its rows (no paths, route or lane of its own); ts and dur are this spec's exact keys
      const fits = target !== undefined && lane.to !== i && target.paths.length === 0 && target.route === undefined && target.hostLane === undefined
        && keys.includes(lane.tsKey) && keys.includes(lane.durKey);
      const fields = [lane.kindKey, lane.kind, lane.catKey, lane.nameKey, lane.pidKey, lane.tidKey, lane.argsKey, lane.corrKey, lane.tsKey, lane.durKey];
      if (fits && fields.every(plain) && fields.every((k, j) => j === 1 || k !== '')) lanes.push([`H ${i} ${lane.to}`, ...fields].join('\t'));
    }
    const pairs = spec.pairs;
    if (pairs !== undefined && keys.includes(pairs.timeKey)) {
      const fields = [pairs.kindKey, pairs.open, pairs.close, pairs.timeKey, pairs.out, ...pairs.groupKeys];
      if (fields.every((f) => plain(f) && f !== '')) lines.push([`Q ${i}`, ...fields].join('\t'));
    }
  }
  // (after every spec: a lane names a later one)
  lines.push(...lanes);
  for (const p of opts.capture ?? []) {
    if (!p.every(plain)) return null;
    lines.push(['C ', ...p].join('\t'));
  }
  return lines.join('\n') + '\n';
}

/**
 * Runs the native scanner; null when it cannot take the input (the caller
 * runs the TypeScript scanner; `emitted` says whether parts were handed to
 * `onPart` before it stopped).
 */
export async function scanNative(bin: string, src: SourceFile, opts: ScanOptions, plan: string, capdir: string): Promise<{ result: ScanResult | null; emitted: boolean; why: string }> {
  const planPath = join(capdir, 'jsonscan.plan');
  await writeFile(planPath, plan);
  const parts: NdjsonPart[][] = opts.records.map(() => []);
  const capturedAt: [number, number, string][] = [];
  let done: number[] | null = null;
  const routed: (RoutedRecords | null)[] = opts.records.map(() => null);
  const paired: (PairedRecords | null)[] = opts.records.map(() => null);
  let emitted = false;
  const child = spawn(bin, [src.path, planPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    if (stderr.length < 4096) stderr += d;
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('error', () => resolve(null));
    child.on('close', (code) => resolve(code));
  });
  for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
    const tab = line.indexOf('\t');
    if (line.startsWith('P ') && tab > 0) {
      const [spec, startByte, firstRecord, records] = line.slice(2, tab).split(' ').map(Number) as [number, number, number, number];
      const part: NdjsonPart = { path: line.slice(tab + 1), startByte, firstRecord, records };
      parts[spec]!.push(part);
      emitted = emitted || opts.records[spec]!.onPart !== undefined;
      opts.records[spec]!.onPart?.(part);
    } else if (line.startsWith('K ') && tab > 0) {
      const to = Number(line.slice(2, tab));
      for (const r of opts.records) if (r.hostLane?.to === to) r.hostLane.onCategory?.(line.slice(tab + 1));
    } else if (line.startsWith('C ') && tab > 0) {
      const [offset, length] = line.slice(2, tab).split(' ').map(Number) as [number, number];
      capturedAt.push([offset, length, line.slice(tab + 1)]);
    } else if (line.startsWith('R ') && tab > 0) {
      const [spec, records] = line.slice(2, tab).split(' ').map(Number) as [number, number];
      routed[spec] = { path: line.slice(tab + 1), records };
    } else if (line.startsWith('Q ') && tab > 0) {
      const [spec, pairs] = line.slice(2, tab).split(' ').map(Number) as [number, number];
      paired[spec] = { path: line.slice(tab + 1), pairs };
    } else if (line.startsWith('D ')) {
      done = line.slice(2).split(' ').map(Number);
    }
  }
  const code = await exited;
  if (code !== 0 || done === null) return { result: null, emitted, why: stderr.trim() || `exit ${code}` };
  const [sourceLines, ...counts] = done as number[];
  const captured = new Map<string, string>();
  const bytes = capturedAt.length > 0 ? await readFile(join(capdir, 'captured')) : Buffer.alloc(0);
  for (const [offset, length, path] of capturedAt) captured.set(path, bytes.toString('utf8', offset, offset + length));
  const array = (file: string) => new Uint8Array(readFileSync(file)).buffer; // a copy: aligned for the typed views
  return {
    result: {
      counts,
      lines: opts.records.map((s) => new Uint32Array(array(`${s.out}.lines`))),
      ends: opts.records.map((s) => new Float64Array(array(`${s.out}.ends`))),
      parts,
      captured,
      issues: [],
      sourceLines: sourceLines!,
      routed,
      paired,
    },
    emitted,
    why: '',
  };
}
