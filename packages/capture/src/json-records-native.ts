import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
 *   stdout: P (a part is complete: onPart) ... K (a host lane's category: onCategory) ... R (routed records, their longest line) ... Q (begin/end pairs)
 *     ... C (a captured value's file) ... D (done: lines, counts)
 *   files: NDJSON parts, <out>.lines (u32), <out>.ends (f64), a route's out, captured (the captured values, end to end)
 * ```
 * `TICKWISE_JSONSCAN=0` turns it off; `TICKWISE_JSONSCAN=<path>` names the binary (used for
 * every size); `TICKWISE_JSONSCAN=always` starts the built one for inputs of any size.
 *
 * A scan may start early ({@link startNativeEarly}: the CLI starts a large
 * trace's scan while DuckDB's library loads and the store is opened): its
 * output lines wait in memory, and {@link scanNative} takes the run over when
 * the reader asks for the same plan on the same version of the same file; any
 * other plan or version, and the early run is stopped and the scan starts
 * afresh. `TICKWISE_SCAN_EARLY=0` never starts one.
 */

/** A running scanner: its stdout lines as they come (kept until read), its stderr's start, its exit. */
interface NativeRun {
  readonly child: ReturnType<typeof spawn>;
  readonly lines: string[];
  closed: boolean;
  wake: (() => void) | null;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function startNative(bin: string, path: string, planPath: string): NativeRun {
  const child = spawn(bin, [path, planPath], { stdio: ['ignore', 'pipe', 'pipe'] });
  const run: NativeRun = {
    child,
    lines: [],
    closed: false,
    wake: null,
    stderr: '',
    exited: new Promise<number | null>((resolve) => {
      child.on('error', () => resolve(null));
      child.on('close', (code) => resolve(code));
    }),
  };
  const woken = () => {
    const w = run.wake;
    run.wake = null;
    w?.();
  };
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (d: string) => {
    if (run.stderr.length < 4096) run.stderr += d;
  });
  const rl = createInterface({ input: child.stdout!, crlfDelay: Infinity });
  rl.on('line', (line) => {
    run.lines.push(line);
    woken();
  });
  rl.on('close', () => {
    run.closed = true;
    woken();
  });
  child.on('error', () => {
    run.closed = true;
    woken();
  });
  return run;
}

/** The run's lines, the ones that came before this was called first, each once. */
async function* linesOf(run: NativeRun): AsyncGenerator<string> {
  let i = 0;
  for (;;) {
    while (i < run.lines.length) {
      const line = run.lines[i]!;
      run.lines[i++] = ''; // read: not kept
      yield line;
    }
    if (run.closed) return;
    await new Promise<void>((resolve) => {
      run.wake = resolve;
    });
  }
}

/** A scan started before its reader asked for it: of which file (and version), with what plan, in which folder. */
interface EarlyScan {
  readonly path: string;
  readonly version: string;
  readonly bin: string;
  readonly plan: string;
  readonly dir: string;
  readonly run: NativeRun;
}

const early = new Map<string, EarlyScan>();

function versionOf(path: string): string | null {
  try {
    const st = statSync(path, { bigint: true });
    return `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}`;
  } catch {
    return null;
  }
}

/**
 * Starts the scan of `src` with `plan` now, its output going to `capdir`
 * (a folder the caller made for it; removed by {@link discardEarlyScans} when
 * no reader takes the run). One early scan per file.
 */
export function startNativeEarly(bin: string, src: SourceFile, plan: string, capdir: string): boolean {
  const version = versionOf(src.path);
  if (version === null || early.has(src.path) || process.env['TICKWISE_SCAN_EARLY'] === '0') return false;
  const planPath = join(capdir, 'jsonscan.plan');
  writeFileSync(planPath, plan);
  early.set(src.path, { path: src.path, version, bin, plan, dir: capdir, run: startNative(bin, src.path, planPath) });
  return true;
}

/** The folder of the early scan of `path`, if one runs (its reader writes there, so the plan can match). */
export function earlyScanDir(path: string): string | undefined {
  return early.get(path)?.dir;
}

/** Stops an early scan and waits for it to exit (nothing writes its folder after). */
async function stopEarly(e: EarlyScan): Promise<void> {
  early.delete(e.path);
  if (e.run.child.exitCode === null && e.run.child.signalCode === null) e.run.child.kill('SIGKILL');
  await e.run.exited;
}

/** Stops every early scan no reader took, and removes its folder. */
export async function discardEarlyScans(): Promise<void> {
  for (const e of [...early.values()]) {
    if (process.env['TICKWISE_TRACE_SCAN']) process.stderr.write(`tw-jsonscan: the early scan of ${e.path} stopped (no reader took it)\n`);
    await stopEarly(e);
    rmSync(e.dir, { recursive: true, force: true });
  }
}

let exitHook = false;

/**
 * At this process's exit, whatever ends it first, every early scan no reader
 * took is killed and its folder removed: for a scan started before the CLI
 * parsed its arguments (`startScanFromEntry`), whose import may never
 * run (a usage error exits before {@link discardEarlyScans} would).
 */
export function stopEarlyScansAtExit(): void {
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const e of early.values()) {
      if (process.env['TICKWISE_TRACE_SCAN']) process.stderr.write(`tw-jsonscan: the early scan of ${e.path} stopped at exit (no reader took it)\n`);
      if (e.run.child.exitCode === null && e.run.child.signalCode === null) e.run.child.kill('SIGKILL');
      rmSync(e.dir, { recursive: true, force: true, maxRetries: 3 });
    }
    early.clear();
  });
}

/** The early run of this scan (the same binary, plan and file version), taken over; any other early run of the file stopped. */
async function takeEarly(bin: string, src: SourceFile, plan: string): Promise<NativeRun | null> {
  const e = early.get(src.path);
  if (e === undefined) return null;
  const same = e.bin === bin && e.plan === plan && e.version === versionOf(src.path);
  if (process.env['TICKWISE_TRACE_SCAN']) {
    process.stderr.write(`tw-jsonscan: the early scan of ${src.displayPath} ${same ? 'taken over' : 'stopped (another plan, or the file changed)'}\n`);
  }
  if (same) {
    early.delete(src.path);
    return e.run;
  }
  await stopEarly(e);
  return null;
}

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

/**
 * The native scanner's read size: its outputs are written after each read
 * (tw-jsonscan.cpp, Out::flush), so a read's bytes are parsed, and its
 * outputs copied into the page cache, while they are still in the CPU's
 * cache. The 174 MB Kineto trace, the scanner alone, 6 alternating runs:
 * 0.65-0.89 -> 0.58 s of CPU (system time 0.11-0.35 -> 0.06-0.08 s) against
 * 4 MiB reads and 4 MiB writes; 256 KiB reads cost more user time than they
 * saved.
 */
const NATIVE_CHUNK_BYTES = 1 << 20;

/** The plan file's text, or null when the options are beyond what the native scanner does. */
export function nativePlan(opts: ScanOptions, maxRecordBytes: number, capdir: string): string | null {
  if (opts.mode !== 'document') return null;
  const plain = (s: string) => !/[\t\n\r]/.test(s);
  const lanes: string[] = [];
  const lines = [`L ${maxRecordBytes} ${opts.captureLimit ?? 16 << 20} ${opts.chunkBytes ?? NATIVE_CHUNK_BYTES}`, `D ${capdir}`];
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
  let run = await takeEarly(bin, src, plan);
  if (run === null) {
    const planPath = join(capdir, 'jsonscan.plan');
    await writeFile(planPath, plan);
    run = startNative(bin, src.path, planPath);
  }
  const parts: NdjsonPart[][] = opts.records.map(() => []);
  const capturedAt: [number, number, string][] = [];
  let done: number[] | null = null;
  const routed: (RoutedRecords | null)[] = opts.records.map(() => null);
  const paired: (PairedRecords | null)[] = opts.records.map(() => null);
  let emitted = false;
  for await (const line of linesOf(run)) {
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
      const [spec, records, longestLineBytes] = line.slice(2, tab).split(' ').map(Number) as [number, number, number];
      routed[spec] = { path: line.slice(tab + 1), records, longestLineBytes };
    } else if (line.startsWith('Q ') && tab > 0) {
      const [spec, pairs] = line.slice(2, tab).split(' ').map(Number) as [number, number];
      paired[spec] = { path: line.slice(tab + 1), pairs };
    } else if (line.startsWith('D ')) {
      done = line.slice(2).split(' ').map(Number);
    }
  }
  const code = await run.exited;
  if (code !== 0 || done === null) return { result: null, emitted, why: run.stderr.trim() || `exit ${code}` };
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
