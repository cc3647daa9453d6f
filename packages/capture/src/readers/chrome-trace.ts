import { statSync } from 'node:fs';
import { QueryError, type DeviceKind, type Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { Diagnostic, ImportOptions, ImportResult } from './ireeperf-jsonl';
import {
  baseName, cleanDuckdbMessage, insertAssumption, insertCapture, insertCondition, insertDevices, insertDiagnostics,
  setImportMemory, sourceJsonText, sqlString, withTempDir,
} from '../capture-rows';
import { STAGE_PART_BYTES, maxRecordBytesOf, scanJsonRecords, type NdjsonPart, type RoutedRecords } from '../json-records';
import { earlyScanDir } from '../json-records-native';
import { EXACT, chromeScanOptions, chromeStreaming } from './chrome-scan';
import { pickRecords } from '../pick-records';
import { PartLoader } from '../part-loader';
import { lineText, sha256File, type SourceFile } from '../source-file';
import { traceMessages } from '../trace-messages';
import type {} from '../reader-options'; // its ImportOptions fields

/**
 * Chrome trace JSON (the Trace Event Format: Perfetto's JSON, chrome://tracing,
 * PyTorch profiler / Kineto `*.pt.trace.json[.gz]`). Either `{"traceEvents":
 * [...], ...}` or a bare `[...]` of events (its closing `]` optional). `ts`,
 * `dur` are MICROseconds, often with a fraction; they are converted to ns
 * from their decimal text (never through a double), rounding half away from
 * zero at the nanosecond. `displayTimeUnit` only says how to display.
 *
 * ```
 * file (.json/.json.gz) --scanJsonRecords: events to NDJSON parts, ts/dur text -> exact ns (decimalToNs)
 *   --DuckDB read_json, part by part as the scan goes (HostSpanStream)-->
 *     X spans whose category makes them host spans --> host_events at once (the clock shift added after the scan)
 *     the rest --> tw_ct (rec = the event's index)
 *   X (ts+dur) and B/E (paired per pid/tid) --> spans
 *     kernels (cat "kernel", or any span in a GPU/NPU process) --> dispatches
 *     gpu_memcpy/gpu_memset --> host_events (kind = cat, device set)
 *     other spans, instants --> host_events;  C --> metric_samples
 *     M, flows, async, objects, unmatched E --> raw_records (nothing dropped)
 *   (the native scanner routes a flow, async or other untabled event past tw_ct: its own file
 *    --read_csv, the text as written--> raw_records; insertRouted)
 * ```
 * The clock: Kineto's `baseTimeNanoseconds` makes the timeline CLOCK_REALTIME;
 * otherwise the trace does not say, and `traceClock` names it (else the
 * capture is on its own `unknown` timeline).
 */

/**
 * SQL: a staged ns text with a fraction as HUGEINT femtoseconds, from its
 * integer and fraction digits (the staged text is `-?\d+(\.\d{1,6})?`).
 * Not a DECIMAL(38,6) cast: that took ~20 us a value (1.5 s for the 73 k
 * fractional durations of the 150 MB bench trace).
 */
const FS_OF = (x: string) =>
  `(TRY_CAST(split_part(${x}, '.', 1) AS HUGEINT) * 1000000 + CASE WHEN starts_with(${x}, '-') THEN -1 ELSE 1 END * TRY_CAST(rpad(split_part(${x}, '.', 2), 6, '0') AS HUGEINT))`;

/** SQL: HUGEINT fs to ns, rounded half away from zero. */
const ROUND_FS = (fs: string) => `(CASE WHEN ${fs} < 0 THEN -((500000 - ${fs}) // 1000000) ELSE (${fs} + 500000) // 1000000 END)`;

/** SQL: a staged ns text (integer, or with a fraction) as HUGEINT ns, rounded half away from zero. */
const NS_OF = (x: string) =>
  `CASE WHEN strpos(${x}, '.') = 0 THEN TRY_CAST(${x} AS HUGEINT) ELSE ${ROUND_FS(FS_OF(x))} END`;

/** How the staged ns texts are converted: {@link NS_OF} and {@link NS_SUM}, or plain casts when no text has a fraction. */
interface NsSql {
  of(x: string): string;
  sum(a: string, b: string, aNs: string, bNs: string): string;
}

/**
 * SQL: round(a + b) of two staged ns texts, exact; `aNs`, `bNs` are their
 * {@link NS_OF} values, already computed (the sum of two whole ns texts).
 */
const NS_SUM = (a: string, b: string, aNs: string, bNs: string) =>
  `CASE WHEN strpos(${a}, '.') = 0 AND strpos(${b}, '.') = 0 THEN ${aNs} + ${bNs}
    ELSE ${ROUND_FS(`(${FS_OF(a)} + ${FS_OF(b)})`)} END`;

/**
 * The conversions for a stage: the exact ones when some staged time has a
 * fraction of a ns (a us with 4 or more decimals), else plain casts, which
 * give the same values for texts without a point (the first branch of each
 * CASE). A trace of whole ns (Kineto writes at most 3 decimals of us) then
 * plans its statements without the fraction's branch, 4 expressions deep and
 * repeated: the span tables of 20 small traces 313-341 -> 137-162 ms.
 */
const nsSql = (fractional: boolean): NsSql => (fractional
  ? { of: NS_OF, sum: NS_SUM }
  : { of: (x) => `TRY_CAST(${x} AS HUGEINT)`, sum: (_a, _b, aNs, bNs) => `${aNs} + ${bNs}` });

/**
 * read_json's maximum_object_size: the scanner's record limit (64 MiB, or
 * TICKWISE_MAX_RECORD_BYTES) plus the fields it appends. DuckDB holds a
 * buffer of twice this per thread, so it bounds memory_limit from below
 * (the former fixed 256 MiB failed under a 1 GB limit; see setImportMemory).
 */
const maxEventBytes = () => maxRecordBytesOf({}) + 4096;
/** read_csv's longest line unless raised (its max_line_size; its buffers are sized by it). */
const READ_CSV_LINE_BYTES = 2_000_000;

/**
 * read_csv over a file the native scanner wrote (a host lane part, the B/E pairs, the routed events): fields split
 * at `delim` (SQL) as they are, nothing quoted or escaped, no header, nothing sniffed, typed by `columns`; `extra`:
 * more options, each followed by `, `.
 */
function scannerCsv(path: string, delim: string, columns: Record<string, string>, extra = ''): string {
  return `read_csv(${sqlString(path)}, delim = ${delim}, quote = '', escape = '', header = false, auto_detect = false, ${extra}columns = {${
    Object.entries(columns).map(([k, t]) => `'${k}': '${t}'`).join(', ')}})`;
}

/** The staged events' columns (`_line`: the source line; `_ts`/`_dur`: ns text, exact). */
const STAGED = {
  _line: 'BIGINT', ph: 'VARCHAR', name: 'VARCHAR', cat: 'VARCHAR', pid: 'VARCHAR', tid: 'VARCHAR',
  _ts: 'VARCHAR', _dur: 'VARCHAR', args: 'JSON',
} as const;

/** A host lane row's ts and dur as ns: whole and under 2^62 (see HostSpanStream.loadLane). */
const LANE_NS: NsSql = { of: (x) => `TRY_CAST(${x} AS BIGINT)`, sum: (_a, _b, aNs, bNs) => `${aNs} + ${bNs}` };

/**
 * A host lane row's columns (tw-jsonscan.cpp, HostLane): `h` the host args
 * JSON as HOST_ARGS makes it, `corr` the correlation's digits, or `?` when
 * it is read from the args.
 */
const LANE_ROW = {
  _line: 'BIGINT', name: 'VARCHAR', cat: 'VARCHAR', pid: 'VARCHAR', tid: 'VARCHAR', _ts: 'VARCHAR', _dur: 'VARCHAR', corr: 'VARCHAR', h: 'VARCHAR',
} as const;

/**
 * SQL: a device kind from a process's own words (its name, labels and the
 * name Kineto's `deviceProperties` gives its device id): 'npu', 'gpu', or
 * 'other' for an accelerator tickwise does not model (MTIA, TPU, Gaudi/HPU,
 * XPU, or any process whose pid is a `deviceProperties` id and is not a
 * CPU); NULL for host processes.
 */
const KIND_OF = (x: string, isDeviceId: string) =>
  `CASE WHEN regexp_matches(lower(coalesce(${x}, '')), 'npu|aie|xdna|\\bipu') THEN 'npu'
    WHEN regexp_matches(lower(coalesce(${x}, '')), 'gpu|radeon|gfx[0-9]|\\bhip\\b|cuda|nvidia|instinct|\\bmi[0-9]{3}') THEN 'gpu'
    WHEN regexp_matches(lower(coalesce(${x}, '')), 'mtia|\\btpu|\\bhpu|gaudi|\\bxpu|accelerator') THEN 'other'
    WHEN ${isDeviceId} AND NOT regexp_matches(lower(coalesce(${x}, '')), '\\bcpu\\b|overhead') THEN 'other' END`;

/**
 * Kineto's `cuda_sync` (and ROCm's `hip_sync`) events: "Event Sync",
 * "Context Sync", "Stream Sync", "Stream Wait Event". Host-visible waits on
 * a stream or event, not device work: kept as host_events of kind
 * `cuda_sync` with their device and stream, never dispatches.
 */
const SYNC_CAT = `regexp_matches(lcat, '(^|[_ ,])(cuda|hip|gpu)_sync($|[ ,])')`;

/** Categories that are not device kernels even inside a device process. */
const NOT_KERNEL = `memcpy|memset|annotation|runtime|driver|cpu_op|python|user|ac2g|flow|overhead|trace`;

/**
 * SQL: what a span's lowercased category `lcat` makes it: 'sync', 'copy',
 * 'kernel' (cat "kernel" and its spellings), 'device' (a kernel when its
 * process is a device's, else host), or 'host'.
 */
export const CAT_CLASS = `CASE WHEN ${SYNC_CAT} THEN 'sync'
  WHEN regexp_matches(lcat, 'memcpy|memset') THEN 'copy'
  WHEN list_has_any(string_split(replace(lcat, ' ', ''), ','), ['kernel', 'kernels', 'gpu_kernel', 'npu_kernel']) THEN 'kernel'
  WHEN NOT regexp_matches(lcat, '${NOT_KERNEL}') THEN 'device'
  ELSE 'host' END`;

/**
 * A trace has a few distinct categories (a 174 MB Kineto trace: 8): up to
 * this many are judged once each and looked up per span by a CASE on the
 * text (four regular expressions a span cost ~0.2 s of CPU on 375k spans);
 * more, and every span is judged by {@link CAT_CLASS}.
 */
const MAX_LOOKED_UP_CATS = 256;

/**
 * SQL: a host event's `args` column, `{"pid":…,"tid":…,"args":…}`, put
 * together as text: the same text `json_object` writes (pid and tid are
 * staged as text, so they are JSON strings; `args` is already JSON text),
 * without parsing every event's args again (~0.4 us an event).
 */
const HOST_ARGS = `('{"pid":' || coalesce(to_json(pid)::VARCHAR, 'null') || ',"tid":' || coalesce(to_json(tid)::VARCHAR, 'null') || ',"args":' || coalesce(args::VARCHAR, 'null') || '}')::JSON`;

/**
 * The fields of a span's `args` the tables read (as `args->>key` and
 * `args->'grid'->>i` read them), extracted with one parse of its args into
 * the span table's `ax`, not one parse per field and use (a Kineto cpu_op's
 * args are ~150 bytes; a kernel's grid read apart cost its dispatches insert
 * ~60 of ~175 ms for 43k kernels).
 */
const ARG_KEYS = ['correlation', 'device', 'stream', 'wait_on_stream', 'grid[0]', 'grid[1]', 'grid[2]'] as const;
type ArgField = (typeof ARG_KEYS)[number];
const ARG_FIELDS = (args: string) => `json_extract_string(${args}, [${ARG_KEYS.map((k) => `'$.${k}'`).join(', ')}])`;
/** SQL: one of ARG_KEYS of a span-table row (its `ax`), as text. */
const ARG = (k: ArgField) => `ax[${ARG_KEYS.indexOf(k) + 1}]`;

/** The in-memory database the span tables live in while an import runs (shared by its two connections). */
const SHARED = 'tw_ct_mem';

/**
 * Runs two lists of statements: at once, `a` on this connection and `b` on a
 * second one (see Store.sibling), each on one thread, when `balanced` (each
 * has work enough to keep a core busy while the other runs); else `a` then
 * `b` on this connection with all its threads. A table two threads insert
 * into is written twice (the checkpoint rewrites it: 331k host events, 1.7-2.1
 * s of CPU against 1.0 s on one thread), and two one-thread inserts side by
 * side take about as long as one two-thread insert; but one insert alone on
 * one thread takes ~1.6x as long. `TICKWISE_CHROME_LANES=1` or `2` forces one
 * way (to compare; the rows are the same).
 */
async function twoLanes(store: Store, balanced: boolean, a: (s: Store) => Promise<void>, b: (s: Store) => Promise<void>, bFirst = false): Promise<void> {
  const lanes = process.env['TICKWISE_CHROME_LANES'];
  if (lanes === '1' || (lanes !== '2' && !balanced)) {
    for (const lane of bFirst ? [b, a] : [a, b]) await lane(store);
    return;
  }
  const restoreThreads = await store.holdOneThread();
  const second = await store.sibling();
  try {
    const done = await Promise.allSettled([a(store), b(second)]);
    for (const d of done) if (d.status === 'rejected') throw d.reason;
  } finally {
    await second.close();
    await restoreThreads();
  }
}

/**
 * The stage is dropped once the span table is built when the events it
 * still has to give (all but X and B) are at most this share of it.
 */
const REST_TO_DROP = 0.25;

/**
 * Fewer rows than this in the larger lane: one lane. The inserts take tens of
 * ms then, and a second connection and two changes of DuckDB's thread count
 * (each restarts its threads and trims the heap) cost as much.
 */
const LANE_MIN_ROWS = 50_000;

/**
 * The time source of the trace's rows, from the options alone: a clock named
 * (`traceClock`, with `boottimeOffsetNs` for boottime), else `host_other`
 * whatever the trace says (Kineto's realtime, or a clock unknown). The host
 * spans written while the scan runs need it before the trace's metadata is read.
 */
function timeSourceOf(opts: ImportOptions): string {
  if (opts.traceClock === 'monotonic') return 'host_monotonic';
  if (opts.traceClock === 'boottime') return opts.boottimeOffsetNs !== undefined ? 'host_monotonic' : 'host_boottime';
  return 'host_other';
}

/** Host spans written before the clock shift was known that the shift put out of BIGINT's range (stored NULL, valid = false). */
interface OutOfRange {
  count: number;
  line: number | null;
}

/**
 * The share of a trace's events staged (not written as they come) beyond
 * which the trace is stage-heavy: a B/E trace stages all its spans (their
 * ends may come later), and DuckDB gets the stage's bound (see
 * importChromeTrace).
 */
const STAGE_HEAVY_SHARE = 0.25;

/**
 * Events (or bytes of parts) loaded before the share is judged once a host
 * lane part has come: the lane's parts and the others' come in their own
 * order (a 174 MB Kineto trace's first kernels part, 6.5k events, came after
 * a lane part of 9.9k spans: 40% staged, and the trace was taken for a B/E
 * one, 139 MB for DuckDB where 348 MB were due). Without lane parts (a B/E
 * trace, or the TypeScript scanner) the share is judged at each part, as
 * before: a B/E trace judged after its second part was ~0.2 s slower.
 */
const STAGE_HEAVY_MIN = { events: 1 << 16, bytes: 2 * STAGE_PART_BYTES };

/** SQL: a part's facts: a time with a fraction of a ns, the smallest X ts (exact), its events. */
const PART_FACTS = `bool_or(strpos(_ts, '.') > 0 OR strpos(_dur, '.') > 0) AS frac, min(${NS_OF('_ts')}) FILTER (WHERE ph = 'X') AS min_x, count(*) AS n`;

/**
 * DuckDB's bound while a trace's host spans are written as the scan goes:
 * 0.6 of its size, at least 150 MB (the loader raises it for a part with a
 * larger event). DuckDB keeps the blocks it has written cached up to its
 * bound: under the trace's size (1x, as before) it filled it. The 174 MB
 * Kineto trace gets the floor (its peak 298-313 MB of RSS, against 314-326
 * MB under 174 MB), a 1 GB trace 600 MB. Not lower: real traces of a few MB
 * ran out of memory under a 100 MB floor (a part, its host spans' row group
 * and the routed events' insert beside them need ~150 MB whatever the size).
 */
const STREAMED = { minMb: 150, capMb: 700, perInput: 0.6 };

/** |ns| up to this (2^62) is written while scanning: any shift up to it keeps the sum in BIGINT's range. */
const STREAM_NS_MAX = 1n << 62n;

/**
 * Writes a Chrome trace's host spans to host_events part by part, as the
 * scan hands the parts over, and stages the rest (`tw_ct`, each event with
 * its index `rec`) for the statements after the scan. A 174 MB Kineto trace
 * is 89% host spans (cpu_op, python_function, runtime calls: 331k of 375k
 * staged events, all the args text); staging them all and building a span
 * table of them held ~250 MB in DuckDB at once.
 *
 * Written as they come: X events whose category alone makes them host spans
 * (the class `CAT_CLASS` gives 'host'; a category that needs the process's
 * kind, kernels, copies and sync markers wait for the whole trace), with a
 * ts, a dur and ts <= end, both within 2^62 ns. What needs the whole trace is
 * kept out of those rows: the clock shift (Kineto writes
 * `baseTimeNanoseconds` after the events) is added by one UPDATE after the
 * scan ({@link shift}), before any other row of the capture is written;
 * whether any time has a fraction of a ns, and the smallest X ts (an old
 * Kineto trace's epoch), are gathered per part. Every other event is staged
 * as before, and the statements after the scan read only those.
 *
 * Most of them come from the native scanner's host lane ({@link loadLane}):
 * rows of their own, not NDJSON parts, inserted with one statement each
 * part; the others from a part's X events (a host span the lane does not
 * take, or every one when the TypeScript scanner runs). The lane's parts
 * load on a connection of their own (`lane`), in a transaction of their
 * own, beside the staged parts: it commits (its last row group compressed
 * and written, ~0.2 s of a 174 MB Kineto trace) while the statements after
 * the scan build the span table, and its rows are stored after the staged
 * parts' host spans. A lane row the SQL does not take ("a stray") is staged
 * from its part's file after the scan, on this connection.
 *
 * The rows are those the span table would give (compare with
 * `TICKWISE_CHROME_STREAM=0`, which stages every event); they are stored
 * before the capture's other host events, in the order their parts are
 * loaded (line order when the lane takes them all, or none). Used for a
 * trace of several parts; a smaller one is staged whole (`on` false: every
 * part to the stage).
 */
class HostSpanStream {
  /** A staged time has a fraction of a ns (the exact conversions are needed after the scan). */
  fractional = false;
  private minXTs: bigint | null = null;
  private written = 0;
  /** The parts' transaction is open (and the lane's, on its connection). */
  private open = false;
  /** Connections whose parts' transaction a failed statement rolled back already. */
  private readonly rolledBack = new Set<Store>();
  /** The smallest start the lane wrote (null: none), read in its transaction before it commits (see {@link commit}). */
  private laneMin: Promise<bigint | null> | null = null;
  /** The lane's transaction committing. */
  private laneDone: Promise<void> | null = null;
  /** This connection's statements run in a transaction begun before the lane's commit (see {@link commit}). */
  private aside = false;
  /** Lane parts holding rows the SQL did not take (staged after the scan). */
  private strayParts: NdjsonPart[] = [];
  private readonly classes = new Map<string, string>();
  /** The host lane's categories not judged yet (see {@link laneCategory}). */
  private laneCats: string[] = [];

  /** Events loaded, of all parts, and the parts' bytes. */
  private loaded = 0;
  private loadedBytes = 0;
  /** A host lane part has been loaded. */
  private laned = false;
  /** Whether a host lane part has been loaded (its commit then runs on the lane's connection after the scan). */
  get hasLaneRows(): boolean {
    return this.laned;
  }
  private heavy = false;
  /** Parts go straight into the stage (see {@link noteStageHeavy}). */
  private direct = false;

  /**
   * `onStageHeavy`: called once the stage holds more than {@link STAGE_HEAVY_SHARE} of the events loaded (DuckDB's
   * stage bound), with the connection to set it on (the one of the part that found it: two connections' statements
   * run side by side, one connection's one at a time).
   */
  /** `lane`: the host lane's connection (this store's sibling), or the store itself. */
  constructor(
    private readonly store: Store, private readonly captureId: number, private readonly timeSource: string, private readonly on: boolean,
    private readonly onStageHeavy: (on: Store) => Promise<void>, private readonly lane: Store = store,
  ) {}

  /**
   * Creates the stage (empty) and opens the transaction the parts are
   * written in. One transaction, not one per part: a part's ~35k host spans
   * committed alone went through the write-ahead log, and a checkpoint every
   * other part (host_events' inserts 1.2 s for the 174 MB trace, 0.85 s in
   * one transaction, where each full row group is written to the file as it
   * fills). It also leaves nothing behind when the import fails.
   */
  async begin(): Promise<void> {
    await this.store.run(`CREATE OR REPLACE TEMP TABLE tw_ct (rec BIGINT, ${Object.entries(STAGED).map(([k, t]) => `${k} ${t}`).join(', ')})`);
    await this.beginParts();
  }

  private async beginParts(): Promise<void> {
    if (!this.on) return;
    await this.store.run('BEGIN TRANSACTION');
    if (this.lane !== this.store) await this.lane.run('BEGIN TRANSACTION');
    this.open = true;
  }

  /**
   * The parts' transaction on `conn` rolled back at once (a statement failed
   * there: an aborted transaction refuses the next statements). The other
   * connection's is left to {@link rollBack}: its loads may be running (the
   * loader runs no more parts after a failure).
   */
  private async rollBackOn(conn: Store): Promise<void> {
    if (!this.open || this.rolledBack.has(conn)) return;
    this.rolledBack.add(conn);
    await conn.run('ROLLBACK').catch(() => undefined);
  }

  /** Both transactions rolled back (a failed scan, a failed import; every load done). */
  private async rollBack(): Promise<void> {
    if (!this.open) return;
    for (const conn of this.lane === this.store ? [this.store] : [this.store, this.lane]) await this.rollBackOn(conn);
    this.open = false;
    this.rolledBack.clear();
  }

  /**
   * The scan is done and every part loaded: the lane's strays staged, the
   * parts' rows committed; the lane's commit goes on on its connection
   * meanwhile ({@link laneCommitted}).
   */
  async commit(): Promise<void> {
    if (!this.open) return;
    try {
      await this.stageStrays();
    } catch (e) {
      await this.rollBack();
      throw e;
    }
    this.open = false;
    await this.store.run('COMMIT');
    if (this.lane === this.store) return;
    const lane = this.lane;
    // this connection's statements until the shift in a transaction begun now: the lane's commit holds the
    // database's transaction lock, which a statement starting a transaction would wait for
    await this.store.run('BEGIN TRANSACTION');
    await this.store.run('SELECT count(*) FROM host_events WHERE false');
    this.aside = true;
    // (its smallest start read in its transaction first: an old Kineto trace's epoch test, looksEpoch)
    this.laneMin = lane.scalar(`SELECT min(start_ns) FROM host_events WHERE capture_id = ${this.captureId}`)
      .then((min) => (typeof min === 'bigint' ? min : null));
    this.laneDone = this.laneMin.then(async () => lane.run('COMMIT'));
    this.laneMin.catch(() => undefined); // awaited by looksEpoch, or through laneDone
    this.laneDone.catch(() => undefined); // awaited by laneCommitted
  }

  /**
   * The transaction this connection's statements ran in beside the lane's
   * commit (see {@link commit}), rolled back when the import failed before
   * {@link shift} committed it (it wrote only temp tables and tw_ct_mem).
   */
  async endAside(): Promise<void> {
    if (!this.aside) return;
    this.aside = false;
    await this.store.run('ROLLBACK').catch(() => undefined);
  }

  /** The lane's rows are in the store (its commit done; its failure thrown here). */
  async laneCommitted(): Promise<void> {
    await this.laneDone;
  }

  /**
   * One part (`read`: its read_json SELECT): its host spans to host_events,
   * the rest to the stage. A failed statement rolls the transaction back at
   * once (an aborted transaction would refuse the loader's next statements,
   * and the part's error is the one to tell).
   */
  async load(read: string, part: NdjsonPart): Promise<void> {
    this.loadedBytes += sizeOf(part.path);
    try {
      await this.loadPart(read, part);
    } catch (e) {
      await this.rollBackOn(this.store);
      throw e;
    }
  }

  private async loadPart(read: string, part: NdjsonPart): Promise<void> {
    const s = this.store;
    if (this.direct) {
      // the stage holds most events (a B/E trace): a part goes straight into it, numbered in the order read on the
      // loads' one thread (a part table and its copy cost ~100 ms a part of 150k B/E events), its facts read back
      await s.run(`INSERT INTO tw_ct SELECT ${part.firstRecord} + row_number() OVER () - 1, * FROM (${read})`);
      this.note((await s.query({ frac: 'boolean?', min_x: 'bigint?', n: 'bigint' },
        `SELECT ${PART_FACTS} FROM tw_ct WHERE rec >= ${part.firstRecord}`))[0]!);
      return;
    }
    await s.run(`CREATE OR REPLACE TEMP TABLE tw_ct_part AS ${read}`);
    // the part's facts and its X spans' categories (as a JSON list) in one statement
    const f = (await s.query({ frac: 'boolean?', min_x: 'bigint?', r0: 'bigint?', r1: 'bigint?', n: 'bigint', nx: 'bigint', cats: 'string?' },
      `SELECT ${PART_FACTS}, min(rowid) AS r0, max(rowid) AS r1, count(*) FILTER (WHERE ph = 'X') AS nx,
         to_json(list(DISTINCT lower(coalesce(cat, ''))) FILTER (WHERE ph = 'X'))::VARCHAR AS cats FROM tw_ct_part`))[0]!;
    if (f.n > 0n && f.r1! - f.r0! + 1n !== f.n) throw new Error('internal: a part\'s row ids are not contiguous');
    const r0 = f.r0 ?? 0n;
    const fractional = f.frac === true;
    this.note(f);
    // a part without X events (a B/E trace's) is staged as it is
    if (!this.on || f.nx === 0n) {
      await s.run(`INSERT INTO tw_ct SELECT ${part.firstRecord} + (rowid - ${r0}), * FROM tw_ct_part`);
      await this.noteStageHeavy();
      return;
    }
    await this.judge(JSON.parse(f.cats ?? '[]') as string[]);
    const { derived, pick } = this.hostSql(`SELECT rowid - ${r0} AS i, * FROM tw_ct_part`, fractional);
    // (read after the insert: `written += await ...` would read it before, and lose what the lane's loads add meanwhile)
    const n = await this.insertHost(derived, pick);
    this.written += n;
    await s.run(`INSERT INTO tw_ct SELECT ${part.firstRecord} + i, ${Object.keys(STAGED).join(', ')} FROM (${derived}) WHERE NOT coalesce(${pick}, false)`);
    await this.noteStageHeavy();
  }

  /** A category of the host lane (`HostLaneSpec.onCategory`; ASCII only): judged before the next lane part loads. */
  laneCategory(cat: string): void {
    this.laneCats.push(cat.toLowerCase());
  }

  /**
   * One part of the host lane: rows of X events the native scanner's rule
   * put there (tw-jsonscan.cpp, HostLane), read with read_csv and inserted
   * into host_events at once: no JSON parsed again but the host args' check,
   * no part table, no facts read back. Each row is checked as a part's X
   * event is (its category's class by the SQL, its times); one that fails
   * goes to the stage as its event would have (its `rec` NULL: no pair, no
   * raw event can be an X's), and its facts are read.
   */
  async loadLane(part: NdjsonPart): Promise<void> {
    if (part.records === 0) return;
    this.laned = true;
    try {
      // (lowercased by laneCategory: the lane's categories are ASCII, which JS lowercases as DuckDB's lower does)
      const fresh = this.laneCats;
      this.laneCats = [];
      await this.judge(fresh, this.lane);
      const { derived, pick } = this.laneSql(part);
      // the correlation the scanner was sure of, else read from the args as a staged event's is
      const corr = `CASE corr WHEN '?' THEN TRY_CAST(json_extract_string(h, '$.args.correlation') AS UBIGINT) ELSE TRY_CAST(corr AS UBIGINT) END`;
      const n = await this.insertHost(derived, pick, { args: 'h::JSON', corr }, this.lane);
      // its bytes counted with its events, once loaded: a part still loading counted in bytes alone made the share
      // judged on its bytes, over the events loaded so far (the staged parts', when they load beside it: LaneFirst)
      this.written += n;
      this.loaded += part.records;
      this.loadedBytes += sizeOf(part.path);
      if (n < part.records) this.strayParts.push(part);
      await this.noteStageHeavy(this.lane);
    } catch (e) {
      await this.rollBackOn(this.lane);
      throw e;
    }
  }

  /** A lane part's rows as staged X events (`derived`), and which of them are host spans written as they come (`pick`). */
  private laneSql(part: NdjsonPart): { derived: string; pick: string } {
    // a lane row's ts and dur are whole ns under 2^62 (the scanner's `smallWhole`): BIGINTs, and their sum one too
    const read = `SELECT 'X' AS ph, * FROM ${scannerCsv(part.path, "'\t'", LANE_ROW, "nullstr = '\\N', ")}`;
    return this.hostSql(read, LANE_NS);
  }

  /**
   * The lane rows the SQL did not take (strays: no dur, a negative one, a
   * time beyond 2^62 ns), staged as their events would have been (`rec`
   * NULL: no pair or raw event can be an X's), with their facts: read again
   * from their parts' files, in part order, on this connection (the stage is
   * its temp table). A category is judged once, so the SQL picks as the
   * lane's insert did.
   */
  private async stageStrays(): Promise<void> {
    const parts = this.strayParts;
    this.strayParts = [];
    for (const part of parts) {
      const { derived, pick } = this.laneSql(part);
      const stray = `SELECT * REPLACE (json_extract(h, '$.args') AS h) FROM (${derived}) WHERE NOT coalesce(${pick}, false)`;
      await this.store.run(`INSERT INTO tw_ct SELECT NULL, ${Object.keys(STAGED).map((k) => (k === 'args' ? 'h' : k)).join(', ')} FROM (${stray})`);
      const f = (await this.store.query({ frac: 'boolean?', min_x: 'bigint?', n: 'bigint' }, `SELECT ${PART_FACTS} FROM (${stray})`))[0]!;
      this.note({ ...f, n: 0n });
    }
  }

  /** Categories (lowercased) seen: each new one judged by CAT_CLASS, up to MAX_LOOKED_UP_CATS (then '': each span judged). */
  private async judge(lcats: readonly string[], on: Store = this.store): Promise<void> {
    const fresh = [...new Set(lcats)].filter((l) => !this.classes.has(l));
    if (fresh.length > 0 && this.classes.size + fresh.length <= MAX_LOOKED_UP_CATS) {
      const judged = await on.query({ lcat: 'string', cls: 'string' },
        `SELECT lcat, ${CAT_CLASS} AS cls FROM (VALUES ${fresh.map((c) => `(${sqlString(c)})`).join(', ')}) t(lcat)`);
      for (const j of judged) this.classes.set(j.lcat, j.cls);
    } else if (fresh.length > 0) for (const c of fresh) this.classes.set(c, '');
  }

  /**
   * SQL over staged events `from`: `derived`, the events with their ns
   * (`ts`, `dur`, `te`) and lowercased category; `pick`, true for the
   * host spans written as they come (see the class comment).
   */
  private hostSql(from: string, fractional: boolean | NsSql): { derived: string; pick: string } {
    // up to MAX_LOOKED_UP_CATS categories, a lookup; more, each span judged (as the span table does)
    const host = this.classes.size <= MAX_LOOKED_UP_CATS
      ? `lcat IN (${[...this.classes].filter(([, c]) => c === 'host').map(([l]) => sqlString(l)).join(', ') || 'NULL'})`
      : `(${CAT_CLASS}) = 'host'`;
    const ns = typeof fractional === 'boolean' ? nsSql(fractional) : fractional;
    const derived = `SELECT *, ${ns.sum('_ts', '_dur', 'ts', 'dur')} AS te FROM (
      SELECT *, ${ns.of('_ts')} AS ts, ${ns.of('_dur')} AS dur, lower(coalesce(cat, '')) AS lcat FROM (${from}))`;
    const max = STREAM_NS_MAX.toString();
    const pick = `ph = 'X' AND ${host} AND ts IS NOT NULL AND dur IS NOT NULL AND te IS NOT NULL AND te >= ts
      AND ts BETWEEN -${max} AND ${max} AND te BETWEEN -${max} AND ${max}`;
    return { derived, pick };
  }

  /**
   * Inserts the picked rows of `derived` into host_events; how many. `from`:
   * the host args and correlation when the rows hold them already (the host
   * lane's), else made of a staged event's pid, tid and args.
   */
  private async insertHost(derived: string, pick: string, from?: { args: string; corr: string }, on: Store = this.store): Promise<number> {
    const corr = from?.corr ?? `TRY_CAST(json_extract_string(args, '$.correlation') AS UBIGINT)`;
    return Number(await on.scalar(`INSERT INTO host_events
      SELECT ${this.captureId}, NULL, NULL, 'slice', cat, name, ${corr}, NULL, NULL, NULL,
        TRY_CAST(tid AS BIGINT), ts::BIGINT, te::BIGINT, (te - ts)::BIGINT, '${this.timeSource}', true, ${from?.args ?? HOST_ARGS}, _line
      FROM (${derived}) WHERE ${pick}`));
  }

  /** A part's facts ({@link PART_FACTS}) into the trace's. */
  private note(f: { frac: boolean | null; min_x: bigint | null; n: bigint }): void {
    this.fractional ||= f.frac === true;
    if (f.min_x !== null && (this.minXTs === null || f.min_x < this.minXTs)) this.minXTs = f.min_x;
    this.loaded += Number(f.n);
  }

  private async noteStageHeavy(on: Store = this.store): Promise<void> {
    const judged = !this.laned || this.loaded >= STAGE_HEAVY_MIN.events || this.loadedBytes >= STAGE_HEAVY_MIN.bytes;
    if (this.on && !this.heavy && judged && this.loaded - this.written > STAGE_HEAVY_SHARE * this.loaded) {
      this.heavy = true;
      await this.onStageHeavy(on);
      // the next parts straight into the stage, when the loads run on one thread (the parts numbered as read);
      // TICKWISE_CHROME_DIRECT=0 keeps the part table, to compare
      this.direct = process.env['TICKWISE_CHROME_DIRECT'] !== '0' && String(await on.scalar(`SELECT current_setting('threads')`)) === '1';
    }
  }

  /** The stage holds more than {@link STAGE_HEAVY_SHARE} of the events loaded (a B/E trace: its spans wait for their ends). */
  get stageHeavy(): boolean {
    return this.heavy;
  }

  /**
   * Old Kineto traces (no baseTimeNanoseconds) carry epoch microseconds: an X
   * ts beyond 2001-09-09. The host lane's parts have no facts read: their
   * smallest ts is the smallest start written (asked only here, before the
   * shift, when a trace has no base time: 20 ms for a 174 MB trace's 331k rows).
   */
  async looksEpoch(): Promise<boolean> {
    if (this.written > 0) {
      const min = await this.store.scalar(`SELECT min(start_ns) FROM host_events WHERE capture_id = ${this.captureId}`);
      if (typeof min === 'bigint') this.note({ frac: null, min_x: min, n: 0n });
      const laneMin = await this.laneMin;
      if (typeof laneMin === 'bigint') this.note({ frac: null, min_x: laneMin, n: 0n });
    }
    return this.minXTs !== null && this.minXTs > 1_000_000_000_000_000_000n;
  }

  /**
   * Adds `shift` ns to the host spans written (the rows of the capture in
   * host_events: run before any other is written). A shift beyond 2^62 may put
   * a time out of BIGINT's range: that row's times become NULL and it is not
   * valid, as the span table's TRY_CAST does; how many, and the first line.
   */
  async shift(shift: bigint): Promise<OutOfRange> {
    const none: OutOfRange = { count: 0, line: null };
    if (this.aside) {
      this.aside = false;
      await this.store.run('COMMIT');
    }
    await this.laneCommitted();
    if (this.written === 0 || shift === 0n) return none;
    const where = `WHERE capture_id = ${this.captureId}`;
    if (shift >= -STREAM_NS_MAX && shift <= STREAM_NS_MAX) {
      await this.store.run(`UPDATE host_events SET start_ns = start_ns + ${shift}, end_ns = end_ns + ${shift} ${where}`);
      return none;
    }
    const sh = (c: string) => `TRY_CAST(${c}::HUGEINT + ${shift}::HUGEINT AS BIGINT)`;
    const out = (await this.store.query({ n: 'number', line: 'number?' },
      `SELECT count(*)::INTEGER AS n, min(line) AS line FROM host_events ${where} AND (${sh('start_ns')} IS NULL OR ${sh('end_ns')} IS NULL)`))[0]!;
    await this.store.run(`UPDATE host_events SET start_ns = ${sh('start_ns')}, end_ns = ${sh('end_ns')}, dur_ns = ${sh('end_ns')} - ${sh('start_ns')},
      valid = ${sh('start_ns')} IS NOT NULL AND ${sh('end_ns')} IS NOT NULL ${where}`);
    return { count: out.n, line: out.line };
  }

  /** The scan failed: the host spans written and the stage are void (the transaction rolled back). */
  async abandon(): Promise<void> {
    await this.rollBack();
    await this.laneDone?.catch(() => undefined);
    this.laneDone = null;
    this.laneMin = null;
    this.strayParts = [];
    await this.store.run('DELETE FROM tw_ct');
    this.fractional = false;
    this.minXTs = null;
    this.written = 0;
    this.loaded = 0;
    this.loadedBytes = 0;
    this.laned = false;
    this.heavy = false;
    this.direct = false;
    this.laneCats = [];
  }

  /** The scan starts over (`ScanOptions.onRestart`): what it wrote is void, and the parts go into a new transaction. */
  async restart(): Promise<void> {
    await this.abandon();
    await this.beginParts();
  }
}

/** A file's size, 0 when it cannot be read (read_json names the problem). */
function sizeOf(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function unquote(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'bigint' ? text : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The staged parts' loads held back while the host lane's are behind (a
 * lane part queued or loading), while the scan runs: the lane is the
 * import's longest chain of loads (one part after another, in one
 * transaction), and on two cores the scanner, the lane and the staged
 * parts' loads took turns, the lane falling behind; its last parts then
 * loaded alone after the scan, one core idle. Held, the staged parts load
 * once the lane catches up, or when the scan ends, beside the lane's last
 * parts. In scan order either way (one chain). `on` false: as they come.
 */
class LaneFirst {
  private pending = 0;
  private held: NdjsonPart[] = [];
  private scanning = true;
  constructor(private readonly loadStaged: (part: NdjsonPart) => void, private readonly on: boolean) {}

  /** A staged part (ScanOptions' onPart). */
  staged(part: NdjsonPart): void {
    if (this.on && this.scanning && (this.pending > 0 || this.held.length > 0)) this.held.push(part);
    else this.loadStaged(part);
  }

  /** A lane part is queued (its load calls {@link laneLoaded} when done, whatever happened). */
  laneQueued(): void {
    this.pending++;
  }

  laneLoaded(): void {
    this.pending = Math.max(0, this.pending - 1);
    if (this.pending === 0) this.release();
  }

  /** The scan is over (done or failed): nothing is held after. */
  scanEnded(): void {
    this.scanning = false;
    this.release();
  }

  /** The scan starts over, or failed: what it sent is void. */
  discard(): void {
    this.held = [];
    this.pending = 0;
  }

  private release(): void {
    const held = this.held;
    this.held = [];
    for (const part of held) this.loadStaged(part);
  }
}

/**
 * Imports a Chrome trace JSON file (plain or gzip). See the module comment
 * for the mapping; every problem with an event becomes a diagnostic with its
 * line, and the event is kept (valid = false, or in raw_records).
 */
export async function importChromeTrace(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  const diags: Diagnostic[] = [];
  const sha = sha256File(src.path);
  sha.catch(() => undefined);
  opts.onProgress?.('scanning');
  return withTempDir('tickwise-chrome-', async (dir) => {
    // the connections opened here (the host lane's): closed whatever happens
    const opened: Store[] = [];
    // DuckDB's thread count the part loader set down to one while scanning, held at one after the scan (see below)
    let heldThreads: (() => Promise<void>) | undefined;
    const restoreThreads = async () => {
      const restore = heldThreads;
      heldThreads = undefined;
      await restore?.();
    };
    try {
      // DuckDB's memory bounded by the trace's size, 700 MB at most (a 1 GB trace peaked at 1.7 GB RSS under 1GB,
      // ~1.45 GB under 700MB, as fast), and at least read_json's buffers on two threads and 50 MB. While the host
      // spans are written part by part DuckDB holds a part and what is staged: the trace's size, at least 150 MB (the
      // loader raises it for a part with a larger event), until the stage holds more than a quarter of the events
      const wide = { minMb: Math.max(300, (4 * maxEventBytes()) / 1e6 + 50), capMb: 700 };
      // a trace of one part (a few MB) is staged whole: writing its spans as it loads saves no memory, and its extra
      // statements and the memory bounds set twice cost ~30 ms a file (20 small traces: 2.2-2.9 -> 3.3-3.5 s).
      // TICKWISE_CHROME_STREAM=1 streams any trace, =0 none (to compare: the rows are the same)
      const { streamOn, laneOn } = chromeStreaming(src);
      await setImportMemory(store, src, streamOn ? STREAMED : wide);
      // DuckDB loads each part of the staged events while the scanner writes the next; tw_ct's rec is the event's index
      const loader = await PartLoader.start(store, maxEventBytes(), src);
      const captureId = await store.nextCaptureId();
      // A stage-heavy trace (B/E: every span waits for its end) holds its stage from there to the end: DuckDB gets
      // 0.8 of the trace's size and spills the rest, not twice it. The 150 MB B/E trace: peak RSS 452-463 MB (3.1x)
      // under the wide bound, 277-287 MB (1.9x) under this, 5-15% slower (a Kineto trace, whose host spans are written
      // as they come, is not stage-heavy: under this bound too it was 6% slower, and it peaks during the scan anyway)
      const staged = { minMb: 120, capMb: 700, perInput: 0.8 };
      // the host lane's parts load on a connection of their own (see HostSpanStream); TICKWISE_CHROME_LANE_CONN=0 loads
      // them on this one, to compare (the rows are the same, stored in the order the parts come)
      const laneConn = laneOn && process.env['TICKWISE_CHROME_LANE_CONN'] !== '0' ? await store.sibling() : store;
      if (laneConn !== store) opened.push(laneConn);
      const streamer = new HostSpanStream(store, captureId, timeSourceOf(opts), streamOn, (on) => setImportMemory(store, src, staged, on), laneConn);
      await streamer.begin();
      const columns = Object.entries(STAGED).map(([k, t]) => `${k}: '${t}'`).join(', ');
      // TICKWISE_CHROME_LANE_FIRST=0 loads the staged parts as they come, to compare (the rows are the same)
      const order = new LaneFirst(loader.each(0, columns, (read, part) => streamer.load(read, part)), laneOn && process.env['TICKWISE_CHROME_LANE_FIRST'] !== '0');
      let scan;
      try {
        const laneLoad = loader.each(1, columns, async (_read, part) => {
          try {
            await streamer.loadLane(part);
          } finally {
            order.laneLoaded();
          }
        }, laneConn);
        scan = await scanJsonRecords(src, chromeScanOptions(dir, opts, laneOn, {
          onPart: (part) => order.staged(part),
          onLanePart: (part) => {
            order.laneQueued();
            laneLoad(part);
          },
          onCategory: (c) => streamer.laneCategory(c),
          onRestart: () => {
            order.discard();
            loader.restart(() => streamer.restart());
          },
        }));
        order.scanEnded();
        // after the scan, while the lane's commit and the routed events' insert run on connections of their own,
        // every statement on one thread (three connections on two cores): DuckDB's threads back once both are done
        if (process.env['TICKWISE_CHROME_HOLD_THREADS'] !== '0' && (streamer.hasLaneRows || (scan.routed?.[0]?.records ?? 0) >= LANE_MIN_ROWS)) {
          heldThreads = loader.holdThreads();
        }
      } catch (e) {
        order.discard();
        await loader.settle();
        await streamer.abandon().catch(() => undefined); // no host event of a failed import left in the store
        throw e;
      } finally {
        await loader.settle(); // never leave a load running on the store (the scan may have failed)
      }
      try {
        await loader.finish(scan.lines, src.displayPath);
      } catch (e) {
        await streamer.abandon().catch(() => undefined);
        throw e;
      }
      // every part is loaded: the events the scanner routed go to raw_records on a connection of their own while this
      // one builds the span table (the insert takes ~0.35 s of one core for a 174 MB Kineto trace's 171k flows), once
      // the host lane has committed (beside this connection's statements too: the three at once made the peak, 355-365
      // MB of RSS for the 174 MB trace, against 294-313 MB). Beside the last parts' loads, where it ran before the host
      // lane, it made the import's peak too. TICKWISE_CHROME_ROUTED_LATE=1 inserts them after the spans, to compare
      let routedDone: Promise<void> = Promise.resolve();
      try {
        await store.run('DROP TABLE IF EXISTS tw_ct_part');
        await streamer.commit();
        if (streamOn && process.env['TICKWISE_CHROME_ROUTED_LATE'] !== '1') {
          routedDone = streamer.laneCommitted().catch(() => undefined)
            .then(() => insertRoutedAside(store, captureId, scan.routed?.[0] ?? null, src.displayPath));
          routedDone.catch(() => undefined); // awaited below
        }
        await setImportMemory(store, src, streamer.stageHeavy ? staged : wide);
      } catch (e) {
        await routedDone.catch(() => undefined);
        throw e;
      }
      for (const i of scan.issues) diags.push(i);
      const routed = scan.routed?.[0] ?? null;
      const records = scan.counts[0]! + (scan.counts[1] ?? 0) + (routed?.records ?? 0);
      if (records === 0) {
        await routedDone.catch(() => undefined);
        await streamer.endAside();
        throw new TickwiseError('empty-input', traceMessages.noEvents(), { file: src.displayPath, line: 1 });
      }
      const meta = (k: string) => scan.captured.get(k);
      const displayUnit = unquote(meta('displayTimeUnit'));
      const baseText = unquote(meta('baseTimeNanoseconds'));
      const base = baseText !== undefined && /^-?\d+$/.test(baseText) ? BigInt(baseText) : undefined;
      const kineto = base !== undefined || meta('deviceProperties') !== undefined || meta('distributedInfo') !== undefined || /pytorch|kineto/i.test(meta('traceName') ?? '');

      try {
        opts.onProgress?.('reading events');
        // TICKWISE_CHROME_EXACT_SQL=1 keeps the fraction's branch for every trace, to compare (the rows are the same)
        const nsText = nsSql(process.env['TICKWISE_CHROME_EXACT_SQL'] === '1' || streamer.fractional);

        // ---- the clock ----
        let timeline: string;
        let timeSource: string;
        let shift = 0n; // added to every ts
        // the clock's assumptions and conditions, written after the shift (this connection writes no table of the store
        // until then: see HostSpanStream.commit)
        const clockRows: (() => Promise<void>)[] = [];
        const clock = opts.traceClock ?? (kineto && (base !== undefined || await streamer.looksEpoch()) ? 'realtime' : undefined);
        if (opts.traceClock) {
          const given = opts.traceClock;
          clockRows.push(() => insertAssumption(store, captureId, null, 'trace_clock', given, traceMessages.traceClockGiven(given)));
        }
        if (base !== undefined) {
          shift += base;
          clockRows.push(() => insertAssumption(store, captureId, null, 'clock_relation', `host_ns = ts_ns + ${base}`, traceMessages.kinetoBase(base.toString())));
        }
        if (clock === 'monotonic') {
          timeline = 'host_monotonic';
          // (timeSourceOf says the same before the scan, for the host spans written while it runs)
          timeSource = 'host_monotonic';
        } else if (clock === 'boottime') {
          if (opts.boottimeOffsetNs !== undefined) {
            shift -= opts.boottimeOffsetNs;
            timeline = 'host_monotonic';
            timeSource = 'host_monotonic';
            const off = opts.boottimeOffsetNs.toString();
            clockRows.push(() => insertAssumption(store, captureId, null, 'clock_relation', `host_monotonic_ns = host_boottime_ns - ${off}`, traceMessages.boottimeShifted(off)));
          } else {
            timeline = 'boottime';
            timeSource = 'host_boottime';
            diags.push({ severity: 'info', code: 'boottime-unaligned', message: traceMessages.boottimeUnaligned() });
          }
        } else if (clock === 'realtime') {
          timeline = 'realtime';
          timeSource = 'host_other';
          if (base === undefined && !opts.traceClock) {
            clockRows.push(() => insertAssumption(store, captureId, null, 'trace_clock', 'realtime', 'Kineto trace without baseTimeNanoseconds: ts taken as microseconds since the Unix epoch'));
          }
        } else {
          timeline = 'unknown';
          timeSource = 'host_other';
          diags.push({ severity: 'info', code: 'trace-clock-unknown', message: traceMessages.traceClockUnknown() });
        }
        if (opts.traceTimeUnit && opts.traceTimeUnit !== 'us') {
          const unit = opts.traceTimeUnit;
          clockRows.push(() => insertAssumption(store, captureId, null, 'trace_time_unit', unit, traceMessages.traceTimeUnitGiven(unit)));
        }
        if (displayUnit !== undefined) {
          const shown = displayUnit;
          clockRows.push(() => insertCondition(store, captureId, 'trace.display_time_unit', shown, null, 'Trace Event Format displayTimeUnit (display only)'));
          if (displayUnit !== 'ms' && !opts.traceTimeUnit) diags.push({ severity: 'info', code: 'display-time-unit', message: traceMessages.displayTimeUnit(displayUnit) });
        }
        if (timeSource !== timeSourceOf(opts)) throw new Error(`internal: the host spans written while scanning have time source ${timeSourceOf(opts)}, the trace ${timeSource}`);
        // x: ns (HUGEINT) of the span table, or an event's staged ns text (text = true)
        const ns = (x: string, text = false) => `TRY_CAST(${text ? nsText.of(x) : `TRY_CAST(${x} AS HUGEINT)`} + ${shift.toString()}::HUGEINT AS BIGINT)`;

        // ---- spans: X, and B/E paired per (pid, tid) by nesting depth ----
        opts.onProgress?.('pairing spans');
        const props = deviceProperties(meta('deviceProperties'));
        await store.run(`CREATE OR REPLACE TEMP TABLE tw_ct_devprop (id VARCHAR, name VARCHAR)`);
        if (props.length > 0) {
          await store.run(`INSERT INTO tw_ct_devprop VALUES ${props.map((p) => `(${sqlString(p.id)}, ${p.name === null ? 'NULL' : sqlString(p.name)})`).join(', ')}`);
        }
        // a process's device kind judged once per process (three regexps), not once per event. Every pid of a span
        // gets a row, NULL but for its pid where the trace has no metadata for it: DuckDB's LEFT JOIN emits a chunk's
        // unmatched rows after its matched ones, so spans of a pid without a row landed out of file order
        await store.run(`CREATE OR REPLACE TEMP TABLE tw_ct_proc AS
          SELECT *, ${KIND_OF('coalesce(pname, \'\') || \' \' || coalesce(plabels, \'\') || \' \' || coalesce(dpname, \'\')', 'is_dev_id')} AS pkind FROM (
          SELECT p.pid, p.pname, p.plabels, CASE WHEN p.meta THEN dp.name END AS dpname, CASE WHEN p.meta THEN dp.id IS NOT NULL END AS is_dev_id FROM (
            SELECT pid, bool_or(ph = 'M') AS meta, max(CASE WHEN ph = 'M' AND name = 'process_name' THEN args->>'name' END) AS pname,
              max(CASE WHEN ph = 'M' AND name = 'process_labels' THEN args->>'labels' END) AS plabels
            FROM tw_ct WHERE ph IN ('M', 'X', 'B') GROUP BY pid) p
          LEFT JOIN tw_ct_devprop dp ON dp.id = p.pid)`);
        // B/E pairs per (pid, tid), as a stack over the thread's events in time order (file order among equal
        // times) pairs them: an E closes the innermost open B, an E with none open pairs with nothing. With the
        // nesting depth (B +1, E -1), a B's level is the depth after it and an E's the depth before it; the E
        // that closes a B is the next event of the B's level, and only that one can be (the events between lie
        // deeper), so each B takes its `lead` at its level when that is an E. The depth from two row numbers, n
        // in the thread and m among its own kind: after a B, 2m - n; before an E, n - 2m + 1 (a running sum
        // took 0.7 s more for 1M pairs; rank-matching B's and E's per level, two more windows and a join)
        const paired = scan.paired?.[0] ?? null;
        if (paired !== null && process.env['TICKWISE_TRACE_SCAN']) process.stderr.write(`tw-jsonscan: ${paired.pairs} B/E pairs from the scan\n`);
        // the scan's pairs are a stack per thread over its events in time order: the same pairs, without sorting 2 M events three times
        if (paired !== null) {
          await store.run(`CREATE OR REPLACE TEMP TABLE tw_ct_pair (b_rec BIGINT, e_rec BIGINT, e_ns HUGEINT)`);
          if (paired.pairs > 0) {
            await store.run(`INSERT INTO tw_ct_pair SELECT b_rec, e_rec, ${nsText.of('_ts')} FROM ${scannerCsv(paired.path, "'\t'", { b_rec: 'BIGINT', e_rec: 'BIGINT', _ts: 'VARCHAR' })}`);
          }
        } else await store.run(`CREATE OR REPLACE TEMP TABLE tw_ct_pair AS
          SELECT rec AS b_rec, e_rec, e_ns FROM (
            SELECT rec, is_b, lead(rec) OVER w AS e_rec, lead(is_b) OVER w AS e_is_b, lead(ts_ns) OVER w AS e_ns FROM (
              SELECT rec, is_b, pid, tid, ts_ns, CASE WHEN is_b THEN 2 * m - n ELSE n - 2 * m + 1 END AS level FROM (
                SELECT rec, is_b, pid, tid, ts_ns, row_number() OVER (PARTITION BY pid, tid ORDER BY ts_ns, rec) AS n,
                  row_number() OVER (PARTITION BY pid, tid, is_b ORDER BY ts_ns, rec) AS m
                FROM (SELECT rec, ph = 'B' AS is_b, pid, tid, ${nsText.of('_ts')} AS ts_ns FROM tw_ct WHERE ph IN ('B', 'E'))
                WHERE ts_ns IS NOT NULL))
            WINDOW w AS (PARTITION BY pid, tid, level ORDER BY ts_ns, rec))
          WHERE is_b AND NOT e_is_b`);
        // each staged time is converted once, in the innermost select: DuckDB does not share a conversion between
        // the expressions that use it (5 of the start's), and sharing them saved 60 ms on the 375k spans of a 174 MB trace
        // the spans, their devices and the view over both live in an attached in-memory database, not in TEMP tables
        // (which are this connection's own): the final inserts below run on two connections at once
        await store.run(`DETACH DATABASE IF EXISTS ${SHARED}`);
        await store.run(`ATTACH ':memory:' AS ${SHARED}`);
        const cats = await store.query({ lcat: 'string', cls: 'string' },
          `SELECT lcat, ${CAT_CLASS} AS cls FROM (SELECT DISTINCT lower(coalesce(cat, '')) AS lcat FROM tw_ct WHERE ph IN ('X', 'B')) ORDER BY lcat`);
        // TICKWISE_CHROME_CAT_LOOKUP=0 judges every span (to compare; the rows are the same)
        const lookUp = cats.length <= MAX_LOOKED_UP_CATS && process.env['TICKWISE_CHROME_CAT_LOOKUP'] !== '0';
        const catClass = lookUp ? `CASE lcat ${cats.map((c) => `WHEN ${sqlString(c.lcat)} THEN '${c.cls}'`).join(' ')} END` : CAT_CLASS;
        // Paired B events go to host_events straight from the stage and their pairs, not through the span table, when
        // of a host category, or of one whose class is the process's ('device') on a process that is no device's. A
        // B/E trace: ~1M spans were copied whole into the span table, args and all, then read back (0.7 s, ~100 MB).
        // Only those whose row is plain: an end not before the start, both within BIGINT after the shift (no
        // diagnostic of the span table's can be theirs); the others, and every X, take the span table. They are stored
        // first, in file order, then the span table's host spans (X events among them, which stay one run in file
        // order). TICKWISE_CHROME_DIRECT=0 sends them all through the span table, to compare (the rows are the same)
        const catsOf = (cls: string) => (lookUp ? cats.filter((c) => c.cls === cls).map((c) => sqlString(c.lcat)) : []);
        const hostCats = catsOf('host');
        const deviceCats = catsOf('device');
        const directOn = hostCats.length + deviceCats.length > 0 && process.env['TICKWISE_CHROME_DIRECT'] !== '0';
        // which ones, over a B's start and end (HUGEINT ns: its staged ts, its pair's e_ns) and its process's kind
        // (`pr`, tw_ct_proc)
        const inCats = (list: string[]) => (list.length === 0 ? 'false' : `lower(coalesce(c.cat, '')) IN (${list.join(', ')})`);
        const direct = (ts: string, te: string) => `(${inCats(hostCats)} OR (${inCats(deviceCats)} AND pr.pkind IS NULL))
          AND ${te} >= ${ts} AND ${ns(ts)} IS NOT NULL AND ${ns(te)} IS NOT NULL`;
        // a kernel's args are read only for the fields of `ax` (made here): the table does not keep them (a Kineto
        // kernel's args are ~1 KB: 43k kernels' copied in and read past by every statement after)
        const spanClass = `CASE WHEN cc = 'device' THEN CASE WHEN pkind IS NOT NULL THEN 'kernel' ELSE 'host' END ELSE cc END`;
        await store.run(`CREATE OR REPLACE TABLE ${SHARED}.tw_ct_span AS SELECT * EXCLUDE (cc, args),
            ${spanClass} AS class, CASE WHEN ${spanClass} <> 'kernel' THEN args END AS args FROM (
          SELECT line, ph, pid, tid, name, cat, args, ax, ts, ${cats.length === 0 ? "'host'" : catClass} AS cc,
            CASE WHEN ph = 'X' THEN ${nsText.sum('_ts', '_dur', 'ts', 'dur')} ELSE e_ns END AS te,
            CASE WHEN ph = 'X' THEN dur ELSE e_ns - ts END AS src_dur,
            _ts IS NULL OR ts IS NULL AS no_ts, ph = 'X' AND (_dur IS NULL OR dur IS NULL) AS no_dur,
            ph = 'B' AND b_rec IS NULL AND ts IS NOT NULL AS unmatched,
            pkind, pname, dpname, lcat
          FROM (
            SELECT c._line AS line, c.ph, c.pid, c.tid, c.name, c.cat, c.args, ${ARG_FIELDS('c.args')} AS ax, c._ts, c._dur,
              ${nsText.of('c._ts')} AS ts, ${nsText.of('c._dur')} AS dur, p.e_ns, p.b_rec,
              pr.pkind, coalesce(pr.plabels, pr.pname) AS pname, pr.dpname, lower(coalesce(c.cat, '')) AS lcat
            FROM tw_ct c LEFT JOIN tw_ct_pair p ON p.b_rec = c.rec LEFT JOIN tw_ct_proc pr ON pr.pid IS NOT DISTINCT FROM c.pid
            WHERE c.ph IN ('X', 'B')${directOn ? ` AND NOT coalesce(c.ph = 'B' AND ${direct(nsText.of('c._ts'), 'p.e_ns')}, false)` : ''}))`);
        // the host spans written while scanning are shifted now, before any other row of this capture is in
        // host_events (the host lane's committed by then: its commit ran beside the statements above)
        const shifted = await streamer.shift(shift);
        for (const write of clockRows) await write();
        let directRows = 0;
        if (directOn) {
          directRows = Number(await store.scalar(`INSERT INTO host_events
            SELECT ${captureId}, NULL, NULL, 'slice', cat, name, TRY_CAST(json_extract_string(args, '$.correlation') AS UBIGINT), NULL, NULL, NULL,
              TRY_CAST(tid AS BIGINT), s_ns, e_ns, e_ns - s_ns, '${timeSource}', true, ${HOST_ARGS}, _line
            FROM (SELECT *, ${ns('ts')} AS s_ns, ${ns('te')} AS e_ns FROM (
                SELECT c.*, ${nsText.of('c._ts')} AS ts, p.e_ns AS te FROM tw_ct c JOIN tw_ct_pair p ON p.b_rec = c.rec WHERE c.ph = 'B') c
              LEFT JOIN tw_ct_proc pr ON pr.pid IS NOT DISTINCT FROM c.pid
              WHERE ${direct('ts', 'te')})`));
        }
        // the span table holds every X and B event: when the stage's other events (instants, counters, metadata, E's,
        // events without ph) are few, they are kept with their index and the stage is dropped before the final inserts,
        // which held both (the staged events are ~126 MB in DuckDB for a 174 MB Kineto trace, 99% spans). When they are
        // many (a B/E trace: half its events are E's), copying them cost more than the memory saved (0.42 s for 1M E's)
        // and the stage stays, read through a view. TICKWISE_CHROME_KEEP_STAGE=1 always keeps it, to compare
        // (and whether every E closes a B: then none is unmatched, and the raw events' query needs no anti-join of
        // the E's against the pairs, 250 ms for 1M of them)
        const { staged, spanned, ends, paired: pairedEnds } = (await store.query({ staged: 'number', spanned: 'number', ends: 'number', paired: 'number' },
          `SELECT (SELECT count(*) FROM tw_ct)::BIGINT AS staged, (SELECT count(*) FROM ${SHARED}.tw_ct_span)::BIGINT AS spanned,
            (SELECT count(*) FILTER (WHERE ph = 'E') FROM tw_ct)::BIGINT AS ends, (SELECT count(*) FROM tw_ct_pair)::BIGINT AS paired`))[0]!;
        const unmatchedEnd = ends === pairedEnds ? 'false' : `(ph = 'E' AND rec NOT IN (SELECT e_rec FROM tw_ct_pair))`;
        const rest = `SELECT * FROM tw_ct WHERE ph IS NULL OR ph NOT IN ('X', 'B')`;
        if (process.env['TICKWISE_CHROME_KEEP_STAGE'] !== '1' && staged - spanned - directRows <= staged * REST_TO_DROP) {
          await store.run(`CREATE OR REPLACE TEMP TABLE tw_ct_rest AS ${rest}`);
          await store.run('DROP TABLE tw_ct');
        } else await store.run(`CREATE OR REPLACE TEMP VIEW tw_ct_rest AS ${rest}`);

        // ---- devices: one per process holding kernels (args.device when every kernel has one) ----
        const allDev = Number(await store.scalar(`SELECT count(*) FILTER (WHERE TRY_CAST(${ARG('device')} AS INTEGER) IS NULL) FROM ${SHARED}.tw_ct_span WHERE class = 'kernel'`)) === 0;
        // a row per pid of a span: a device index, kind and names for the pids holding kernels, copies or sync markers,
        // NULL for the others. The others have a row too: the inserts below read the spans through this lookup, and
        // spans that matched no row came out of file order (90 of 332k in a 174 MB Kineto trace, differently each import)
        const held = `class IN ('kernel', 'copy', 'sync')`;
        await store.run(`CREATE OR REPLACE TABLE ${SHARED}.tw_ct_dev AS
          SELECT pid, CASE WHEN dev THEN (dense_rank() OVER (PARTITION BY dev ORDER BY TRY_CAST(pid AS BIGINT) NULLS LAST, pid) - 1)::INTEGER END AS dev_index,
            pkind, pname, dpname FROM (
            SELECT pid, bool_or(${held}) AS dev, max(pkind) FILTER (WHERE ${held}) AS pkind, max(pname) FILTER (WHERE ${held}) AS pname,
              max(dpname) FILTER (WHERE ${held}) AS dpname
            FROM ${SHARED}.tw_ct_span GROUP BY pid)`);
        const device = allDev ? `TRY_CAST(s.${ARG('device')} AS INTEGER)` : 'd.dev_index';
        await store.run(`CREATE OR REPLACE VIEW ${SHARED}.tw_ct_k AS
          SELECT s.*, ${device} AS device, d.pkind AS dkind, d.pname AS dname, d.dpname AS ddpname,
            coalesce(TRY_CAST(s.${ARG('stream')} AS INTEGER), TRY_CAST(s.tid AS INTEGER)) AS queue,
            ${ns('s.ts')} AS s_ns, ${ns('s.te')} AS e_ns
          FROM ${SHARED}.tw_ct_span s LEFT JOIN ${SHARED}.tw_ct_dev d ON d.pid IS NOT DISTINCT FROM s.pid`);
        // kind and name from the trace's own metadata: the process's name/labels, and deviceProperties[id = args.device, else pid].name
        const devices = await store.query({ device: 'number', kind: 'string?', name: 'string?', model: 'string?', pid: 'string?', kernels: 'number' },
          `SELECT k.device, max(k.dkind) AS kind, max(k.dname) AS name, coalesce(max(dp.name), max(k.ddpname)) AS model, min(k.pid) AS pid,
              count(*) FILTER (WHERE k.class = 'kernel')::INTEGER AS kernels
            FROM ${SHARED}.tw_ct_k k LEFT JOIN tw_ct_devprop dp ON ${allDev ? 'dp.id = k.device::VARCHAR' : 'false'}
            WHERE k.class IN ('kernel', 'copy', 'sync') AND k.device IS NOT NULL GROUP BY k.device ORDER BY k.device`);
        await insertDevices(store, devices.map((d) => {
          const kind: DeviceKind = opts.deviceKind ?? (d.kind === 'npu' || d.kind === 'gpu' || d.kind === 'other' ? d.kind : 'gpu');
          const where = d.name ?? (d.pid !== null ? `pid ${d.pid}` : null);
          const name = d.model !== null && where !== null && where !== d.model ? `${d.model} (${where})` : d.model ?? where;
          if (kind === 'other' && !opts.deviceKind) {
            diags.push({ severity: 'info', code: 'other-device', message: traceMessages.otherDevice(d.device, name ?? `device ${d.device}`, d.kernels) });
          }
          return { capture_id: captureId, device: d.device, kind, name, time_base: timeSource };
        }));

        opts.onProgress?.('loading tables');
        const grid = (i: 0 | 1 | 2) => `TRY_CAST(${ARG(`grid[${i}]`)} AS UINTEGER)`;
        // copies/memsets and sync markers keep their device and stream; a sync marker's stream is the one it is on,
        // else the one it waits on (Event Sync, Context Sync: stream -1). A zero-length host span is valid (a call or
        // wait shorter than the trace's resolution: Kineto writes whole microseconds); only a negative one is not
        const stream = (k: ArgField) => `CASE WHEN TRY_CAST(${ARG(k)} AS BIGINT) >= 0 THEN TRY_CAST(${ARG(k)} AS INTEGER) END`;
        // (the host spans written while scanning and the routed events are in by now: what is left is the spans that
        // needed the whole trace, kernels among them.)
        // two lanes (host spans, instants, counters, staged raw events | kernels, routed raw events when inserted late) when the smaller
        // has half the rows of the larger or more: 174 MB Kineto (331k host spans | 40k kernels, 171k flows), 5
        // alternating runs, 0.3-1.1 s faster each, ~0.5 s less CPU; a B/E trace (1M host spans | nothing), 1.2-1.7 s
        // slower in 2 of 3. Each table is written by one statement on one connection: host_events split in two
        // halves written at once took 0.4 s less to insert and 0.5 s more to checkpoint
        const spans = (await store.query({ kernels: 'number', host: 'number' },
          `SELECT count(*) FILTER (WHERE class = 'kernel')::INTEGER AS kernels, count(*) FILTER (WHERE class <> 'kernel')::INTEGER AS host FROM ${SHARED}.tw_ct_span`))[0]!;
        const late = !streamOn || process.env['TICKWISE_CHROME_ROUTED_LATE'] === '1' ? routed : null;
        // the routed events' insert (its own connection) may still run: the kernels' lane goes on beside it (first, when
        // the lanes run one after the other on this connection), the host spans' lane waits for it (all three at once
        // made the peak: 347-355k KiB in 2 of 14 runs, session 41). The 174 MB Kineto trace (its lanes unbalanced: one
        // after the other): the statements after the scan 742 -> 656 ms (medians of 8 alternating runs, 6 faster), peak
        // 291-314k -> 294-326k KiB. TICKWISE_CHROME_ROUTED_OVERLAP=0 waits for it before both, to compare
        const overlap = process.env['TICKWISE_CHROME_ROUTED_OVERLAP'] !== '0';
        if (!overlap) await routedDone;
        const laneB = spans.kernels + (late?.records ?? 0);
        const hostRows = spans.host + directRows; // (the direct B's, written: the lanes weighed as before them)
        let kernelsIn = false;
        await twoLanes(store, Math.min(laneB, hostRows) >= 0.5 * Math.max(laneB, hostRows) && Math.max(laneB, hostRows) >= LANE_MIN_ROWS, async (a) => {
          // beside the kernels' insert, after the routed events' (three at once made the peak); after the kernels'
          // (the lanes one after the other), beside the routed events' insert if it still runs
          if (overlap && !kernelsIn) await routedDone;
          // not sorted by line: the span table's LEFT JOINs leave a few rows of a chunk late (18 of 332k in a 174 MB
          // Kineto trace), and sorting these wide rows cost 2.5 s and 280 MB more RSS on a 1 GB trace
          await a.run(`INSERT INTO host_events
            SELECT ${captureId}, CASE WHEN class IN ('copy', 'sync') THEN device END,
              CASE WHEN class = 'copy' THEN queue WHEN class = 'sync' THEN coalesce(${stream('stream')}, ${stream('wait_on_stream')}) END,
              CASE WHEN class IN ('copy', 'sync') THEN lcat ELSE 'slice' END, cat, name,
              TRY_CAST(${ARG('correlation')} AS UBIGINT), NULL, NULL, NULL, TRY_CAST(tid AS BIGINT),
              s_ns, e_ns, e_ns - s_ns, '${timeSource}', s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns >= s_ns,
              ${HOST_ARGS}, line
            FROM ${SHARED}.tw_ct_k WHERE class <> 'kernel'`);
          await a.run(`INSERT INTO host_events
            SELECT ${captureId}, NULL, NULL, 'instant', cat, name, NULL, NULL, NULL, NULL, TRY_CAST(tid AS BIGINT),
              ${ns('_ts', true)} AS s_ns, s_ns, 0, '${timeSource}', s_ns IS NOT NULL, ${HOST_ARGS}, _line
            FROM tw_ct_rest WHERE ph IN ('i', 'I', 'R')`);
          await a.run(`INSERT INTO metric_samples
            SELECT ${captureId}, NULL, NULL, NULL, name || CASE WHEN k = 'value' THEN '' ELSE '.' || k END, NULL, 'chrome_counter',
              ${ns('_ts', true)} AS t_ns, t_ns, TRY_CAST(args->>k AS DOUBLE), _line
            FROM (SELECT *, unnest(json_keys(args)) AS k FROM tw_ct_rest WHERE ph = 'C' AND args IS NOT NULL) ORDER BY _line`);

          // ---- what has no table: metadata, flows, async, objects, unmatched E, events without ph ----
          await a.run(`CREATE OR REPLACE TEMP TABLE tw_ct_raw AS
            SELECT rec, _line, coalesce(ph, '?') AS ph FROM tw_ct_rest
            WHERE ph IS NULL OR ph NOT IN ('X', 'B', 'E', 'i', 'I', 'R', 'C')
               OR ${unmatchedEnd}
               OR (ph = 'C' AND args IS NULL)
            ORDER BY rec`);
          const rawCount = await a.count('tw_ct_raw');
          if (rawCount > 0) {
            // only those events' staged records are read again (by their index: one source line can hold every
            // event of a minified trace), and turned back into the source's text here, not in SQL
            // tw_ct_raw is sorted by rec (the NOT IN is a join, whose output need not keep the scan's order: unsorted, 41k
            // of 171k raw events of a 174 MB Kineto trace were stored with another event's text), and so are the texts
            // appended: rows pair by position
            const recs = await a.numbers('SELECT rec FROM tw_ct_raw');
            await a.run('CREATE OR REPLACE TEMP TABLE tw_ct_rawj (j JSON)');
            let appended = 0;
            await pickRecords(scan.parts[0]!, scan.ends[0]!, recs, async (texts) => {
              appended += await a.appendTemp('tw_ct_rawj', texts.map((t) => [sourceJsonText(t, EXACT)]));
            });
            if (appended !== recs.length) throw new Error(`internal: ${appended} raw events read back of ${recs.length}`);
            await a.run(`INSERT INTO raw_records SELECT ${captureId}, 'chrome:' || r.ph, r._line, j.j FROM tw_ct_raw r POSITIONAL JOIN tw_ct_rawj j`);
          }
        }, async (b) => {
          await b.run(`INSERT INTO dispatches
            SELECT ${captureId}, device, queue, NULL, NULL, NULL, TRY_CAST(${ARG('correlation')} AS UBIGINT), NULL, NULL, coalesce(name, 'unknown'),
              s_ns, e_ns, e_ns - s_ns, NULL, NULL, TRY_CAST(src_dur AS BIGINT), '${timeSource}',
              s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns > s_ns, ${grid(0)}, ${grid(1)}, ${grid(2)}, NULL, line
            FROM ${SHARED}.tw_ct_k WHERE class = 'kernel' ORDER BY line`);
          if (late !== null && late.records > 0) await insertRouted(b, captureId, late, src.displayPath);
          kernelsIn = true;
        }, overlap && late === null);
        // (the diagnostics count raw_records' rows: the routed events' too)
        await routedDone;
        await restoreThreads();
        await eventDiagnostics(store, captureId, diags, nsText, shifted);

        const traceSchema = unquote(meta('schemaVersion'));
        if (traceSchema !== undefined) await insertCondition(store, captureId, 'trace.schema_version', traceSchema);
        const schemaVersion = Number(unquote(meta('schemaVersion')));
        await insertCapture(store, {
          // captures.schema_version is an INTEGER: another value (2^64-1, 1.5) is kept only as the condition's text above
          capture_id: captureId, path: src.displayPath, format: 'chrome-trace', schema_version: Number.isInteger(schemaVersion) && Math.abs(schemaVersion) <= 2147483647 ? schemaVersion : null,
          sha256: await sha, size_bytes: src.sizeBytes, producer: kineto ? 'PyTorch profiler (Kineto) Chrome trace' : 'Chrome trace JSON',
          label: opts.label ?? baseName(src.displayPath), timeline, record_count: records,
        });
        const dispatches = await store.count('dispatches', `WHERE capture_id = ${captureId}`);
        if (dispatches === 0) {
          const what = devices.length > 0 ? 'its devices hold copies or sync markers only' : 'no kernel (cat "kernel") and no span on a device process (GPU, NPU, MTIA, deviceProperties id)';
          diags.push({ severity: 'error', code: 'no-dispatches', message: traceMessages.noDispatches(what) });
        }
        await insertDiagnostics(store, captureId, src.displayPath, diags);
        return { capture_id: captureId, format: 'chrome-trace', records, dispatches, diagnostics: diags.length };
      } finally {
        await streamer.endAside(); // (a failed import's: nothing of the store's written in it)
        await routedDone.catch(() => undefined); // (a failed import's rows are the caller's to discard: discardCapture)
        await streamer.laneCommitted().catch(() => undefined);
        await store.run('DROP VIEW IF EXISTS tw_ct_rest').catch(() => undefined);
        for (const t of ['tw_ct', 'tw_ct_part', 'tw_ct_rest', 'tw_ct_rawj', 'tw_ct_devprop', 'tw_ct_proc', 'tw_ct_pair', 'tw_ct_raw']) await store.run(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
        await store.run(`DETACH DATABASE IF EXISTS ${SHARED}`).catch(() => undefined);
      }
    } finally {
      await restoreThreads().catch(() => undefined);
      for (const c of opened) await c.close().catch(() => undefined);
    }
  }, earlyScanDir(src.path)); // an early scan's folder (the plan names it): see startChromeScanEarly
}

/** Kineto's `deviceProperties` (a JSON array of {id, name, ...}): ids as text (they are matched to pids), names. */
function deviceProperties(text: string | undefined): { id: string; name: string | null }[] {
  if (text === undefined) return [];
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return [];
  }
  if (!Array.isArray(v)) return [];
  const out: { id: string; name: string | null }[] = [];
  for (const p of v) {
    if (p === null || typeof p !== 'object') continue;
    const o = p as Record<string, unknown>;
    if (typeof o['id'] !== 'number' && typeof o['id'] !== 'string') continue;
    out.push({ id: String(o['id']), name: typeof o['name'] === 'string' ? o['name'] : null });
  }
  return out;
}


/** {@link insertRouted} on a second connection of `store` (this one goes on with the import), closed after. */
async function insertRoutedAside(store: Store, captureId: number, routed: RoutedRecords | null, file: string): Promise<void> {
  if (routed === null || routed.records === 0) return;
  const side = await store.sibling();
  try {
    await insertRouted(side, captureId, routed, file);
  } finally {
    await side.close();
  }
}

/**
 * Inserts the events the scanner routed away from the stage (phases with
 * no table) into raw_records: each line is `<line>\x1f<ph>\x1f<the event's
 * text>` (RecordSpec.route), read with read_csv split at 0x1f (which no
 * field holds), so the event's text is stored as it was written (a parse
 * would round numbers). 0.21 -> 0.16 s for a 174 MB Kineto trace's 171k
 * flow events against read_json_objects over `{"_line":..,"_v":..,"_j":..}`
 * lines taken apart with substr (the text parsed once more there, and cut
 * four times).
 */
async function insertRouted(store: Store, captureId: number, routed: RoutedRecords, file: string): Promise<void> {
  // read_csv's lines are 2 MB at most unless raised, and its buffers grow with the bound: raised only for a longer one
  const lineBytes = routed.longestLineBytes > READ_CSV_LINE_BYTES ? `max_line_size = ${routed.longestLineBytes + 64}, ` : '';
  const read = scannerCsv(routed.path, 'chr(31)', { line: 'BIGINT', ph: 'VARCHAR', j: 'VARCHAR' }, `nullstr = chr(1), new_line = '\\n', ${lineBytes}`);
  try {
    await store.run(`INSERT INTO raw_records SELECT ${captureId}, 'chrome:' || ph, line, j FROM ${read}`);
  } catch (e) {
    // an event the scanner passed and DuckDB did not: invalid UTF-8 (read_csv's error names the routed line, whose
    // first field is its source line), or a text DuckDB's JSON does not take (a lone surrogate's escape: the first
    // line whose cast fails); DuckDB out of memory (an event of tens of MB) is the caller's to word
    if (!(e instanceof QueryError) || /Out of Memory/i.test(e.message)) throw e;
    const at = Number(/CSV Error on Line: (\d+)/.exec(e.message)?.[1]) || undefined;
    const text = at === undefined ? undefined : await lineText(routed.path, at);
    let line = text === undefined ? undefined : Number(/^(\d+)\x1f/.exec(text)?.[1]) || undefined;
    if (at === undefined) line = Number(await store.scalar(`SELECT min(line) FROM ${read} WHERE TRY_CAST(j AS JSON) IS NULL`).catch(() => null)) || undefined;
    const detail = /Invalid unicode/i.test(e.message) ? 'invalid UTF-8' : cleanDuckdbMessage(e.message);
    throw new TickwiseError('bad-record', traceMessages.badRecord(detail), { file, line, cause: e });
  }
}

/** The events' problems as diagnostics, each with its first line (after tw_ct_raw: the unmatched E events are its E rows). */
async function eventDiagnostics(store: Store, captureId: number, diags: Diagnostic[], nsText: NsSql, shifted: OutOfRange): Promise<void> {
  const r = (await store.query(
    {
      no_ph: 'number', no_ph_line: 'number?', no_ts: 'number', no_ts_line: 'number?', no_dur: 'number', no_dur_line: 'number?',
      k_nonpos: 'number', k_nonpos_line: 'number?', h_nonpos: 'number', h_nonpos_line: 'number?', range: 'number', range_line: 'number?',
      unmatched_b: 'number', unmatched_b_line: 'number?', unmatched_e: 'number', unmatched_e_line: 'number?',
    },
    // one pass over each table (the staged events but spans, the spans, the unmatched ones), not a scan per figure;
    // a span's no_ts is the stage's bad ts of its X or B event
    `SELECT * EXCLUDE (rest_no_ts, rest_no_ts_line, span_no_ts, span_no_ts_line), (rest_no_ts + span_no_ts)::INTEGER AS no_ts,
         least(rest_no_ts_line, span_no_ts_line) AS no_ts_line FROM
       (SELECT count(*) FILTER (WHERE ph IS NULL)::INTEGER AS no_ph, min(_line) FILTER (WHERE ph IS NULL) AS no_ph_line,
          count(*) FILTER (WHERE bad_ts) AS rest_no_ts, min(_line) FILTER (WHERE bad_ts) AS rest_no_ts_line
        FROM (SELECT ph, _line, ph IN ('E', 'i', 'I', 'C') AND ${nsText.of('_ts')} IS NULL AS bad_ts FROM tw_ct_rest)),
       (SELECT count(*) FILTER (WHERE no_ts) AS span_no_ts, min(line) FILTER (WHERE no_ts) AS span_no_ts_line,
          count(*) FILTER (WHERE no_dur AND NOT no_ts)::INTEGER AS no_dur, min(line) FILTER (WHERE no_dur AND NOT no_ts) AS no_dur_line,
          count(*) FILTER (WHERE class = 'kernel' AND te <= ts)::INTEGER AS k_nonpos, min(line) FILTER (WHERE class = 'kernel' AND te <= ts) AS k_nonpos_line,
          count(*) FILTER (WHERE class <> 'kernel' AND te < ts)::INTEGER AS h_nonpos, min(line) FILTER (WHERE class <> 'kernel' AND te < ts) AS h_nonpos_line,
          (count(*) FILTER (WHERE ts IS NOT NULL AND te IS NOT NULL AND (s_ns IS NULL OR e_ns IS NULL)) + ${shifted.count})::INTEGER AS range,
          least(min(line) FILTER (WHERE ts IS NOT NULL AND te IS NOT NULL AND (s_ns IS NULL OR e_ns IS NULL)), ${shifted.line ?? 'NULL'}) AS range_line,
          count(*) FILTER (WHERE unmatched)::INTEGER AS unmatched_b, min(line) FILTER (WHERE unmatched) AS unmatched_b_line
        FROM ${SHARED}.tw_ct_k),
       (SELECT count(*)::INTEGER AS unmatched_e, min(_line) AS unmatched_e_line FROM tw_ct_raw WHERE ph = 'E')`,
  ))[0]!;
  const at = (l: number | null) => l ?? undefined;
  if (r.no_ph > 0) diags.push({ severity: 'warning', code: 'missing-field', message: `${traceMessages.missingField('ph', `${r.no_ph} event(s)`)}: kept in raw_records`, line: at(r.no_ph_line) });
  if (r.no_ts > 0) diags.push({ severity: 'warning', code: 'missing-timestamp', message: traceMessages.badTimestamp('event(s)', r.no_ts, '"ts" (a number of microseconds)'), line: at(r.no_ts_line) });
  if (r.no_dur > 0) diags.push({ severity: 'warning', code: 'missing-field', message: `${traceMessages.missingField('dur', `${r.no_dur} complete ("X") event(s)`)}: kept with valid = false`, line: at(r.no_dur_line) });
  if (r.k_nonpos > 0) diags.push({ severity: 'warning', code: 'non-positive-duration', message: traceMessages.nonPositiveDuration('dispatch(es)', r.k_nonpos), line: at(r.k_nonpos_line) });
  if (r.h_nonpos > 0) diags.push({ severity: 'warning', code: 'non-positive-duration', message: traceMessages.negativeDuration('host event(s)', r.h_nonpos), line: at(r.h_nonpos_line) });
  if (r.range > 0) diags.push({ severity: 'warning', code: 'time-out-of-range', message: traceMessages.outOfRange('event(s)', r.range), line: at(r.range_line) });
  if (r.unmatched_b > 0) diags.push({ severity: 'warning', code: 'unmatched-begin', message: traceMessages.unmatchedBeginEnd(r.unmatched_b, 'B'), line: at(r.unmatched_b_line) });
  if (r.unmatched_e > 0) diags.push({ severity: 'warning', code: 'unmatched-end', message: traceMessages.unmatchedBeginEnd(r.unmatched_e, 'E'), line: at(r.unmatched_e_line) });
  const raw = await store.query({ ph: 'string', n: 'number', line: 'number' },
    `SELECT substr(record_type, 8) AS ph, count(*)::INTEGER AS n, min(line) AS line FROM raw_records
      WHERE capture_id = ${captureId} AND record_type NOT IN ('chrome:M', 'chrome:E', 'chrome:C', 'chrome:?') GROUP BY ph ORDER BY ph`);
  if (raw.length > 0) {
    diags.push({
      severity: 'info', code: 'raw-events',
      message: traceMessages.rawPhases(raw.map((x) => `"${x.ph}"`).join(', '), raw.reduce((a, x) => a + x.n, 0)),
      line: Math.min(...raw.map((x) => x.line)),
    });
  }
}
