/**
 * Test captures for the checks: a writer of small ireeperf-jsonl streams
 * (schema 15) whose true timeline is known, each knob one of the traps, and
 * an importer that runs the real CLI (`tickwise import`) into a store file.
 * The analyzer may not import @tickwise/capture, so the import runs in a
 * child process, as a user would run it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Store } from '@tickwise/store';

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, '../../..');

/** A fresh temporary directory. */
export function tmp(prefix = 'tickwise-checks-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs the CLI from source. */
export function tickwise(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, TZ: 'America/Los_Angeles' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The knobs of a synthetic capture; each default is the clean case. */
export interface SynthSpec {
  /** True device tick rate. */
  tick_hz?: number;
  /** `timestamp_frequency_hz` written on the device record; null: none written. */
  declared_hz?: number | null;
  /** Clock-correlation samples, evenly over the capture; 0: none. */
  clock_samples?: number;
  /** Host time added to the middle sample's bracket (a clock jump: the fit cannot follow it). */
  clock_jump_ns?: number;
  /** Passes (segments), separated by `pass_gap_ns`. */
  passes?: number;
  dispatches_per_pass?: number;
  /** Each dispatch's length in ticks. */
  dur_ticks?: number;
  /** Idle ticks between dispatches of a pass. */
  gap_ticks?: number;
  /** Idle ticks between dispatches of the first pass (a cold pass idles more). */
  first_pass_gap_ticks?: number;
  pass_gap_ns?: number;
  /** Trap 1: write duration_ns as the tick count. */
  duration_ns_as_ticks?: boolean;
  /** Dispatches marked `valid: false` (the last ones). */
  invalid?: number;
  /** A producer record reporting this many dropped records. */
  dropped_records?: number;
}

/** A written capture and its true numbers. */
export interface SynthCapture {
  readonly text: string;
  /** True span of each pass, ns. */
  readonly pass_span_ns: readonly number[];
  readonly dispatches: number;
}

const V = 15;
/** Host time of tick 0, ns. */
const HOST_AT_TICK0_NS = 5_000_000_000;
const FIRST_TICK = 1_000_000;

/** Writes a capture. */
export function synthCapture(spec: SynthSpec = {}): SynthCapture {
  const hz = spec.tick_hz ?? 100e6;
  const nsPerTick = 1e9 / hz;
  const host = (tick: number) => Math.round(HOST_AT_TICK0_NS + tick * nsPerTick);
  const passes = spec.passes ?? 3;
  const perPass = spec.dispatches_per_pass ?? 12;
  const dur = spec.dur_ticks ?? 50_000;
  const gap = spec.gap_ticks ?? 2_000;
  const firstGap = spec.first_pass_gap_ticks ?? gap;
  const passGapTicks = Math.round((spec.pass_gap_ns ?? 50_000_000) / nsPerTick);
  const records: unknown[] = [
    { schema_version: V, record_type: 'schema', format: 'ireeperf-jsonl', contract: 'schema_versioned_interchange' },
    { schema_version: V, record_type: 'session', event: 'begin', session_id: 1, session_status: 'OK' },
    {
      schema_version: V, record_type: 'device', physical_device_ordinal: 0, queue_count: 1,
      ...(spec.declared_hz === undefined || spec.declared_hz === null ? {} : { timestamp_frequency_hz: spec.declared_hz }),
    },
    { schema_version: V, record_type: 'queue', physical_device_ordinal: 0, queue_ordinal: 0, stream_id: 1 },
    { schema_version: V, record_type: 'executable_function', executable_id: 1, function_ordinal: 0, name: 'matmul_512x3072x3072', workgroup_size: [256, 1, 1] },
  ];
  const dispatches: Record<string, unknown>[] = [];
  const pass_span_ns: number[] = [];
  let t = FIRST_TICK;
  let eventId = 0;
  for (let p = 0; p < passes; p++) {
    const passStart = t;
    const g = p === 0 ? firstGap : gap;
    for (let i = 0; i < perPass; i++) {
      const start = t;
      const end = t + dur;
      dispatches.push({
        schema_version: V, record_type: 'dispatch_event', physical_device_ordinal: 0, queue_ordinal: 0, event_id: ++eventId,
        submission_id: p * perPass + i + 1, command_buffer_id: 1, command_index: 0, executable_id: 1, function_ordinal: 0, key: null,
        workgroup_count: [24, 4, 1], start_tick: start, end_tick: end, duration_ticks: dur, valid: true,
        duration_ns: spec.duration_ns_as_ticks ? dur : host(end) - host(start),
      });
      t = end + (i === perPass - 1 ? 0 : g);
    }
    pass_span_ns.push(host(t) - host(passStart));
    t += passGapTicks;
  }
  for (let k = 0; k < (spec.invalid ?? 0) && k < dispatches.length; k++) dispatches[dispatches.length - 1 - k]!['valid'] = false;
  const lastTick = t;
  const n = spec.clock_samples ?? 6;
  const samples: unknown[] = [];
  for (let i = 0; i < n; i++) {
    const tick = Math.round(FIRST_TICK - 1_000 + ((lastTick - FIRST_TICK + 2_000) * i) / Math.max(1, n - 1));
    const jump = i === Math.floor(n / 2) ? (spec.clock_jump_ns ?? 0) : 0;
    samples.push({
      schema_version: V, record_type: 'clock_correlation', sample_id: i + 1, physical_device_ordinal: 0, device_tick: tick,
      host_time_begin_ns: host(tick) - 200 + jump, host_time_end_ns: host(tick) + 200 + jump, host_time_domain: 'iree_host_time_ns',
    });
  }
  records.push(...samples, ...dispatches);
  if (spec.dropped_records) records.push({ schema_version: V, record_type: 'dropped_records', dropped_record_count: spec.dropped_records });
  records.push({ schema_version: V, record_type: 'session', event: 'end', session_id: 1, session_status: 'OK' });
  return { text: records.map((r) => JSON.stringify(r)).join('\n') + '\n', pass_span_ns, dispatches: dispatches.length };
}

/** llama-bench CSV (the fields the reader needs, as llama-bench names them) with one prefill test. */
export function benchCsv(avg_ns: number, n_prompt = 512): string {
  return 'model_type,n_prompt,n_gen,n_depth,avg_ns,stddev_ns,avg_ts,stddev_ts\n' +
    `"llama 3B F16","${n_prompt}","0","0","${Math.round(avg_ns)}","1000","${((n_prompt * 1e9) / avg_ns).toFixed(6)}","0.100000"\n`;
}

/** Writes captures to a temporary folder and imports them with the CLI into a store; returns the store (read-write) and the folder. */
export async function importSynth(
  captures: readonly SynthCapture[],
  extraArgs: readonly string[] = [],
): Promise<{ store: Store; dir: string; db: string }> {
  const dir = tmp();
  const files = captures.map((c, i) => {
    const f = join(dir, `c${i + 1}.ireeperf.jsonl`);
    writeFileSync(f, c.text);
    return f;
  });
  const db = join(dir, 'run.duckdb');
  const r = tickwise(['import', ...files, '--db', db, ...extraArgs]);
  if (r.status !== 0) throw new Error(`tickwise import failed (${r.status}): ${r.stderr}`);
  return { store: await Store.open(db), dir, db };
}

/** Inserts a provenance row (as `import --provenance-of` or the recorder would write it). */
export async function addProvenance(
  store: Store,
  row: { capture_id: number; role?: string; name: string; path: string; size_bytes?: number; mtime_ns?: bigint; build_id?: string | null; sha256?: string; markers?: Record<string, number>; how_found?: string },
): Promise<void> {
  await store.run(
    `INSERT INTO provenance (capture_id, role, name, path, size_bytes, mtime_ns, build_id, sha256, markers, how_found) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::JSON, $10)`,
    [
      row.capture_id, row.role ?? 'library', row.name, row.path, row.size_bytes ?? 1000, row.mtime_ns ?? 1_768_000_000_000_000_000n,
      row.build_id ?? null, row.sha256 ?? 'ab'.repeat(32), JSON.stringify(row.markers ?? {}), row.how_found ?? 'ld_library_path',
    ],
  );
}

/**
 * Counts the statements a store sends to DuckDB from now on (its connection's
 * run, runAndReadAll and stream): `n()` since the last `reset()`.
 */
export function statementCounter(store: Store): { n: () => number; reset: () => void } {
  const conn = (store as unknown as { conn: Record<string, (...a: unknown[]) => unknown> }).conn;
  let statements = 0;
  for (const m of ['run', 'runAndReadAll', 'stream']) {
    const orig = conn[m]!.bind(conn);
    conn[m] = (...a: unknown[]) => {
      statements++;
      return orig(...a);
    };
  }
  return { n: () => statements, reset: () => void (statements = 0) };
}
