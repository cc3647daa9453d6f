import type Database from 'better-sqlite3';
import type { ColumnBatch, Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { Diagnostic, ImportOptions, ImportResult } from './ireeperf-jsonl';
import { ROCPROF_MEMORY, createRocprofStaging, dropRocprofStaging, loadRocprofStaged } from './rocprofv3';
import { setImportMemory } from '../capture-rows';
import { sha256File, type SourceFile } from '../source-file';
import { traceMessages } from '../trace-messages';
import { dispatchBatchesOnWorker, hostBatchesOnWorker, type DispatchBatch, type HostBatch } from './rocpd-worker';

/**
 * rocprofv3's default output since ROCm 7: the rocpd SQLite database
 * (`<host>/<pid>_results.db`). Tables carry a per-process suffix
 * (`rocpd_kernel_dispatch_<uuid>`) with unsuffixed views over them; two
 * layouts exist: schema 3 keeps `start`/`end` (CLOCK_BOOTTIME ns) and the
 * agent, queue and thread inline in `rocpd_kernel_dispatch`, the newer one
 * points `start_id`/`end_id` into `rocpd_timestamp` and the rest into
 * `rocpd_track`. Both are read, through the views when present, through
 * every suffixed table otherwise.
 *
 * ```
 * .db --better-sqlite3 (read-only, 64-bit integers as bigint)--> rows
 *   --DuckDB appender--> tw_rp_kd (kernels), tw_rp_host (regions, memory copies)
 *   --loadRocprofStaged--> devices, dispatches, kernels_meta, host_events
 * ```
 */

type Sqlite = InstanceType<typeof Database>;
type SqlRow = Record<string, unknown>;

/** SQLite files start with this header. */
export const SQLITE_MAGIC = 'SQLite format 3\u0000';

/** True when the first bytes are an SQLite database (the content decides: a rocpd db has rocpd_ tables, checked at import). */
export function sniffRocpd(head: string): boolean {
  return head.startsWith(SQLITE_MAGIC);
}

/** The SQL name to read a logical rocpd table from: its view, or a UNION of its suffixed tables. */
function source(db: Sqlite, logical: string): string | null {
  const objs = db.prepare(`SELECT type, name FROM sqlite_master WHERE (type = 'view' AND name = ?) OR (type = 'table' AND (name = ? OR name LIKE ? ESCAPE '\\'))`)
    .all(logical, logical, `${logical.replaceAll('_', '\\_')}\\_%`) as { type: string; name: string }[];
  const view = objs.find((o) => o.name === logical);
  if (view) return `"${logical}"`;
  // a suffix is a uuid of hex digits and underscores; keep other look-alikes (rocpd_info_agent vs rocpd_info_agent_x) apart
  const tables = objs.filter((o) => o.type === 'table' && /^_[0-9a-f_]+$/i.test(o.name.slice(logical.length)));
  if (tables.length === 0) return null;
  if (tables.length === 1) return `"${tables[0]!.name}"`;
  return '(' + tables.map((t) => `SELECT * FROM "${t.name}"`).join(' UNION ALL ') + ')';
}

function columns(db: Sqlite, from: string): Set<string> {
  const stmt = db.prepare(`SELECT * FROM ${from} LIMIT 0`);
  return new Set(stmt.columns().map((c) => c.name));
}

function asBig(v: unknown): bigint | null {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^-?\d+$/.test(v.trim())) return BigInt(v.trim());
  return null;
}

const U64_MAX = 2n ** 64n - 1n;
const I64_LIMIT = 2n ** 63n;

function asText(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? v : String(v);
}

/**
 * A temp copy of rocpd table `from` (SQL name) in the SQLite connection,
 * each row numbered (`tw_k`) and indexed by `id`: a dispatch row carries its
 * agent's and kernel symbol's number instead of their text, which is read
 * once per agent and symbol. The texts a row cost SQLite and better-sqlite3
 * more than everything else read with them (1 M dispatches: 5.3 s with agent
 * type, agent name and kernel name a row, 3.0 s without: each crossed into
 * JS as a new string). The database stays read-only: SQLite keeps TEMP
 * tables apart.
 */
function numbered(db: Sqlite, from: string, name: string, setup: string[]): string {
  for (const sql of numberedSql(from, name)) {
    db.exec(sql);
    setup.push(sql);
  }
  return `temp.${name}`;
}

/** The statements {@link numbered} runs (a connection's TEMP tables are its own: the worker's runs them too). */
function numberedSql(from: string, name: string): string[] {
  return [
    `DROP TABLE IF EXISTS temp.${name}`,
    `CREATE TEMP TABLE ${name} AS SELECT row_number() OVER () AS tw_k, * FROM ${from}`,
    `CREATE INDEX temp.${name}_id ON ${name} (id)`,
  ];
}

/** A database this size or more has its dispatch rows read on a worker thread (rocpd-worker.ts): ~130k dispatches. */
const WORKER_BYTES = 16 << 20;
/** Rows a batch from the worker. */
const WORKER_BATCH_ROWS = 32768;

/** A worker's batch as the staging columns (tw_rp_kd's, as {@link importRocpd}'s kdRows fills them row by row). */
function batchColumns(b: DispatchBatch, noAgentKind: string): ColumnBatch[] {
  const u = (c: number): ColumnBatch => ({ ints: b.u[c]!, nulls: b.uNull[c]! });
  const kinds = Array.from(b.noAgent.subarray(0, b.n), (none) => (none === 1 ? noAgentKind : null));
  return [
    { ints: b.rowId, nulls: b.rowIdNull }, { ints: b.device }, { values: kinds }, { same: null },
    u(0), u(1), u(2), u(3), u(4), u(5), { same: null }, u(6), u(7),
    u(8), u(9), u(10), u(11), u(12), u(13), { same: null }, { ints: b.seq },
    { ints: b.agentK, nulls: b.agentKNull }, { ints: b.kernelK, nulls: b.kernelKNull },
  ];
}

/** A worker's host batch as tw_rp_host's columns (as {@link importRocpd}'s hostRow fills them row by row). */
function hostColumns(b: HostBatch): ColumnBatch[] {
  const u = (c: number): ColumnBatch => ({ ints: b.u[c]!, nulls: b.uNull[c]! });
  return [
    { ints: b.line, nulls: b.lineNull }, { values: b.kind }, { values: b.op }, { values: b.name }, { ints: b.device, nulls: b.deviceNull },
    u(0), u(1), u(2), u(3), { values: b.args }, { ints: b.seq }, { ints: b.opK, nulls: b.opKNull }, { ints: b.nameK, nulls: b.nameKNull },
  ];
}

/** No rows: a worker's stream for a database without host tables. */
async function* noBatches(): AsyncGenerator<never, { records: number; outOfRange: number }> {
  return { records: 0, outOfRange: 0 };
}

type Drained = { records: number; outOfRange: number } | { fallback: string };

/** A worker's batches and how to append one (see {@link drainBatches}). */
interface Drain {
  readonly gen: AsyncGenerator<unknown, Drained>;
  readonly append: (b: unknown) => Promise<number>;
}
function drain<B>(gen: AsyncGenerator<B, Drained>, append: (b: B) => Promise<number>): Drain {
  return { gen, append: (b) => append(b as B) };
}

/**
 * Appends the batches of several workers as they come, whichever is ready
 * (one connection: one append at a time), and returns each worker's last
 * word, in the order given. A failure stops every worker.
 */
async function drainBatches(streams: readonly Drain[]): Promise<Drained[]> {
  const results: Drained[] = [];
  const pending = new Map<number, Promise<{ i: number; r: IteratorResult<unknown, Drained> }>>();
  const ask = (i: number) => {
    const p = streams[i]!.gen.next().then((r) => ({ i, r }));
    p.catch(() => undefined); // (raced below; a rejection left behind by an earlier failure is not unhandled)
    pending.set(i, p);
  };
  streams.forEach((_, i) => ask(i));
  try {
    while (pending.size > 0) {
      const { i, r } = await Promise.race(pending.values());
      pending.delete(i);
      if (r.done === true) results[i] = r.value;
      else {
        await streams[i]!.append(r.value);
        ask(i);
      }
    }
  } finally {
    for (const x of streams) void x.gen.return({ fallback: 'stopped' }).catch(() => undefined);
  }
  return results;
}

/**
 * The row id that splits a dispatch table's ids in two halves (its smallest
 * and largest ids' midpoint), for two workers to read a half each; null when
 * the ids are not integers or span fewer than `minSpan`.
 */
function splitId(db: Sqlite, kd: string, minSpan: number): bigint | null {
  const [lo, hi] = db.prepare(`SELECT min(id), max(id) FROM ${kd}`).raw(true).get() as unknown[];
  const l = typeof lo === 'bigint' ? lo : typeof lo === 'number' ? BigInt(lo) : null;
  const h = typeof hi === 'bigint' ? hi : typeof hi === 'number' ? BigInt(hi) : null;
  if (l === null || h === null || h - l < BigInt(minSpan)) return null;
  return l + (h - l) / 2n;
}

/** A device kind from an agent's type (rocpd's `CPU`, `GPU`, `AIE`...): none or another is a GPU. */
function kindOfAgentType(type: unknown): string {
  const t = asText(type)?.toUpperCase() ?? '';
  return t.includes('CPU') ? 'cpu' : t.includes('AIE') || t.includes('NPU') ? 'npu' : 'gpu';
}

/**
 * Imports a rocpd database. Rows are read with 64-bit integers as bigint
 * (timestamps exceed 2^53) and appended to the shared rocprofv3 staging.
 */
export async function importRocpd(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  if (src.compression !== 'none') {
    throw new TickwiseError('unreadable-input', 'a compressed rocpd database cannot be opened in place: decompress it first', { file: src.displayPath });
  }
  const diags: Diagnostic[] = [];
  const sha = sha256File(src.path);
  sha.catch(() => undefined);
  let db: Sqlite;
  try {
    // loaded here, not at start-up: only a rocpd import needs SQLite
    const { default: SqliteDatabase } = await import('better-sqlite3');
    db = new SqliteDatabase(src.path, { readonly: true, fileMustExist: true });
  } catch (e) {
    throw new TickwiseError('unreadable-input', traceMessages.unreadable((e as Error).message), { file: src.displayPath, cause: e });
  }
  db.defaultSafeIntegers(true);
  try {
    const kd = source(db, 'rocpd_kernel_dispatch');
    if (!kd) throw new TickwiseError('wrong-format', 'an SQLite database, but not rocpd: it has no rocpd_kernel_dispatch table', { file: src.displayPath });
    const agent = source(db, 'rocpd_info_agent');
    const sym = source(db, 'rocpd_info_kernel_symbol');
    const str = source(db, 'rocpd_string');
    const ts = source(db, 'rocpd_timestamp');
    const track = source(db, 'rocpd_track');
    const event = source(db, 'rocpd_event');
    const region = source(db, 'rocpd_region');
    const copy = source(db, 'rocpd_memory_copy');
    const meta = source(db, 'rocpd_metadata');
    const node = source(db, 'rocpd_info_node');
    const kdCols = columns(db, kd);
    const inline = kdCols.has('start') && kdCols.has('end');
    if (!inline && !(kdCols.has('start_id') && ts)) {
      throw new TickwiseError('wrong-format', 'rocpd_kernel_dispatch has neither start/end nor start_id/end_id with rocpd_timestamp: unknown rocpd layout', { file: src.displayPath });
    }
    const agentCols = agent ? columns(db, agent) : new Set<string>();
    const agentIndex = ['logical_index', 'absolute_index', 'type_index'].find((c) => agentCols.has(c));
    const agentName = ['product_name', 'name', 'model_name'].filter((c) => agentCols.has(c)).map((c) => `nullif(A.${c}, '')`);
    const symCols = sym ? columns(db, sym) : new Set<string>();
    const symName = ['display_name', 'kernel_name'].filter((c) => symCols.has(c)).map((c) => `nullif(S.${c}, '')`);
    const eventCols = event ? columns(db, event) : new Set<string>();
    const hasCorr = event !== null && eventCols.has('correlation_id') && kdCols.has('event_id');
    // A merged database holds several processes' rows (one guid each): ids repeat across them, so joins match the guid too.
    const guid = new Map<string | null, boolean>([[null, false]]);
    for (const t of [kd, agent, sym, str, ts, track, event, region, copy]) if (t) guid.set(t, columns(db, t).has('guid'));
    const g = (a: string, ta: string | null, b: string, tb: string | null) => (guid.get(ta) && guid.get(tb) ? ` AND ${a}.guid = ${b}.guid` : '');

    // the agents and kernel symbols numbered, for the dispatch rows to point at (see numbered)
    const setup: string[] = [];
    const agentN = agent ? numbered(db, agent, 'tw_rp_agent', setup) : null;
    const symN = sym ? numbered(db, sym, 'tw_rp_sym', setup) : null;

    // Where the agent, queue, thread and times of a dispatch live in each layout.
    const t = inline ? 'K' : 'T';
    const start = inline ? 'K."start"' : 'TS.value';
    const end = inline ? 'K."end"' : 'TE.value';
    const joins = [
      inline ? '' : `LEFT JOIN ${track} T ON T.id = K.track_id${g('T', track, 'K', kd)} LEFT JOIN ${ts} TS ON TS.id = K.start_id${g('TS', ts, 'K', kd)}
        LEFT JOIN ${ts} TE ON TE.id = K.end_id${g('TE', ts, 'K', kd)}`,
      agentN ? `LEFT JOIN ${agentN} A ON A.id = ${t}.agent_id${g('A', agent, 'K', kd)}` : '',
      symN ? `LEFT JOIN ${symN} S ON S.id = K.kernel_id${g('S', sym, 'K', kd)}` : '',
      hasCorr ? `LEFT JOIN ${event} E ON E.id = K.event_id${g('E', event, 'K', kd)}` : '',
    ].join(' ');
    // in row id order, the order the store keeps (line, seq): SQLite reads them so without a sort (by start time, a
    // sort of every row: 1 M dispatches read in 3.3 s against 2.6), and the copy to dispatches needs none either.
    // Rows of one id (a merged database's processes) by start, as before
    const kdSelect = `SELECT K.id AS row_id, ${agentIndex ? `coalesce(A.${agentIndex}, ${t}.agent_id)` : `${t}.agent_id`} AS device,
        ${agentN ? 'A.tw_k' : 'NULL'} AS agent_k,
        ${t}.queue_id AS queue_id, ${t}.stream_id AS stream_id, ${t}.tid AS tid, K.dispatch_id AS dispatch_id,
        ${hasCorr ? 'E.correlation_id' : 'NULL'} AS correlation_id, K.kernel_id AS kernel_id,
        ${symN ? 'S.tw_k' : 'NULL'} AS kernel_k, ${start} AS start_ns, ${end} AS end_ns,
        K.workgroup_size_x AS wg_x, K.workgroup_size_y AS wg_y, K.workgroup_size_z AS wg_z,
        K.grid_size_x AS grid_x, K.grid_size_y AS grid_y, K.grid_size_z AS grid_z
      FROM ${kd} K ${joins}`;
    const kdOrder = ` ORDER BY K.id, ${start}`;
    const kdSql = kdSelect + kdOrder;

    await setImportMemory(store, src, ROCPROF_MEMORY);
    await createRocprofStaging(store);
    opts.onProgress?.('reading dispatches');
    // Staging column ranges: UBIGINT ids and times (a negative one is no value), BIGINT row ids, INTEGER agents;
    // a value beyond its column (a corrupt database) is kept as NULL and counted for one diagnostic
    let outOfRange = 0;
    const inRange = (v: unknown, lo: bigint, hi: bigint, negativeIsNull = false): bigint | null => {
      const x = asBig(v);
      if (x === null || (negativeIsNull && x < 0n)) return null;
      if (x < lo || x > hi) {
        outOfRange++;
        return null;
      }
      return x;
    };
    const ubig = (v: unknown) => inRange(v, 0n, U64_MAX, true);
    const i64 = (v: unknown) => inRange(v, -I64_LIMIT, I64_LIMIT - 1n);
    const i32 = (v: unknown) => inRange(v, -(2n ** 31n), 2n ** 31n - 1n);
    let records = 0;
    // each agent's kind (by its type) and name, each symbol's name, by number (1, 2, ...: SQLite's row_number): the
    // dispatch rows point at them (tw_rp_kd's agent_k, kernel_k), and the loader reads them back through tw_rp_kd_v
    if (agentN) {
      const type = agentCols.has('type') ? 'A.type' : 'NULL';
      const name = agentName.length ? `coalesce(${agentName.join(', ')})` : 'NULL';
      await store.appendTemp('tw_rp_agent', (db.prepare(`SELECT A.tw_k, ${type}, ${name} FROM ${agentN} A ORDER BY A.tw_k`).raw(true).all() as unknown[][])
        .map((r) => [r[0], kindOfAgentType(r[1]), asText(r[2])]));
    }
    if (symN && symName.length) {
      await store.appendTemp('tw_rp_kname', (db.prepare(`SELECT S.tw_k, coalesce(${symName.join(', ')}) FROM ${symN} S ORDER BY S.tw_k`).raw(true).all() as unknown[][])
        .map((r) => [r[0], asText(r[1])]));
    }
    const noAgentKind = kindOfAgentType(null);
    // rows as arrays in kdSql's column order (an object a row cost 1.5 s more for 1M dispatches)
    const kdRows = function* (): Generator<unknown[]> {
      for (const r of db.prepare(kdSql).raw(true).iterate() as IterableIterator<unknown[]>) {
        records++;
        yield [
          // row_id, device (no agent: device 0, as the CSV and JSON readers do), its kind (a GPU when it has no agent) and name by agent_k
          i64(r[0]), i32(r[1]) ?? 0n, r[2] === null ? noAgentKind : null, null,
          ubig(r[3]), ubig(r[4]), ubig(r[5]), ubig(r[6]), // queue_id, stream_id, tid, dispatch_id
          ubig(r[7]), ubig(r[8]), null, // correlation_id, kernel_id, kernel (by kernel_k)
          ubig(r[10]), ubig(r[11]), // start_ns, end_ns
          ubig(r[12]), ubig(r[13]), ubig(r[14]), ubig(r[15]), ubig(r[16]), ubig(r[17]), null, records, // wg_x..z, grid_x..z; kind: a CSV's Kind column (every rocpd row is a dispatch)
          r[2], r[9], // agent_k, kernel_k
        ];
      }
    };
    // Host side: regions (HIP/HSA API calls, markers) and memory copies: their queries (region: id, name, category,
    // tid, s, e, corr; copy: id, name, tid, s, e, size, dst, src), in row id order as the dispatches (kdSql): the
    // order the store keeps, which SQLite reads without a sort and the copy to host_events then needs none (by start
    // time, 1 M regions were sorted twice: 0.33 s in SQLite, again in DuckDB); rows of one id (a merged database's
    // processes) by start
    const hostQueries: { sql: string; kind: 'region' | 'copy' }[] = [];
    let hostRows = 0;
    const hostRow = (line: bigint | null, kind: string, op: string | null, name: string | null, device: bigint | null, tid: bigint | null, corr: bigint | null, s: bigint | null, e: bigint | null, args: string | null, opK: unknown = null, nameK: unknown = null): unknown[] => {
      hostRows++;
      return [i64(line), kind, op, name, i32(device), ubig(tid), ubig(corr), ubig(s), ubig(e), args, hostRows, opK, nameK];
    };
    {
      if (region && str) {
        const rc = columns(db, region);
        const inlineR = rc.has('start') && rc.has('end');
        if (inlineR || (rc.has('start_id') && ts)) {
          // a region's name and category by number into the string table (see numbered), read back by the loader
          // (tw_rp_host_v): rocpd names each once, and a text a row crossed into JS and back for every region
          const strN = numbered(db, str, 'tw_rp_str', setup);
          await store.appendTemp('tw_rp_hname', (db.prepare(`SELECT S.tw_k, S.string FROM ${strN} S ORDER BY S.tw_k`).raw(true).all() as unknown[][])
            .map((r) => [r[0], asText(r[1])]));
          const cat = event && eventCols.has('category_id') && rc.has('event_id');
          const rsql = `SELECT R.id AS id, NS.tw_k AS name_k, ${cat ? 'CS.tw_k' : 'NULL'} AS category_k, ${inlineR ? 'R.tid' : 'T.tid'} AS tid,
              ${inlineR ? 'R."start"' : 'TS.value'} AS s, ${inlineR ? 'R."end"' : 'TE.value'} AS e, ${hasCorr && rc.has('event_id') ? 'E.correlation_id' : 'NULL'} AS corr
            FROM ${region} R LEFT JOIN ${strN} NS ON NS.id = R.name_id${g('NS', str, 'R', region)}
            ${inlineR ? '' : `LEFT JOIN ${track} T ON T.id = R.track_id${g('T', track, 'R', region)} LEFT JOIN ${ts} TS ON TS.id = R.start_id${g('TS', ts, 'R', region)}
              LEFT JOIN ${ts} TE ON TE.id = R.end_id${g('TE', ts, 'R', region)}`}
            ${event && rc.has('event_id') ? `LEFT JOIN ${event} E ON E.id = R.event_id${g('E', event, 'R', region)}` : ''}
            ${cat ? `LEFT JOIN ${strN} CS ON CS.id = E.category_id${g('CS', str, 'R', region)}` : ''}
            ORDER BY R.id, s`;
          hostQueries.push({ sql: rsql, kind: 'region' });
        }
      }
      if (copy) {
        const cc = columns(db, copy);
        const inlineC = cc.has('start') && cc.has('end');
        if (inlineC || (cc.has('start_id') && ts)) {
          const csql = `SELECT C.id AS id, ${str && cc.has('name_id') ? 'NS.string' : 'NULL'} AS name, ${inlineC ? 'C.tid' : 'T.tid'} AS tid,
              ${inlineC ? 'C."start"' : 'TS.value'} AS s, ${inlineC ? 'C."end"' : 'TE.value'} AS e, C.size AS size,
              ${agent && cc.has('dst_agent_id') ? (agentIndex ? `coalesce(DA.${agentIndex}, C.dst_agent_id)` : 'C.dst_agent_id') : 'NULL'} AS dst,
              ${agent && cc.has('src_agent_id') ? (agentIndex ? `coalesce(SA.${agentIndex}, C.src_agent_id)` : 'C.src_agent_id') : 'NULL'} AS src
            FROM ${copy} C ${str && cc.has('name_id') ? `LEFT JOIN ${str} NS ON NS.id = C.name_id${g('NS', str, 'C', copy)}` : ''}
            ${inlineC ? '' : `LEFT JOIN ${track} T ON T.id = C.track_id${g('T', track, 'C', copy)} LEFT JOIN ${ts} TS ON TS.id = C.start_id${g('TS', ts, 'C', copy)}
              LEFT JOIN ${ts} TE ON TE.id = C.end_id${g('TE', ts, 'C', copy)}`}
            ${agent && cc.has('dst_agent_id') ? `LEFT JOIN ${agent} DA ON DA.id = C.dst_agent_id${g('DA', agent, 'C', copy)}` : ''}
            ${agent && cc.has('src_agent_id') ? `LEFT JOIN ${agent} SA ON SA.id = C.src_agent_id${g('SA', agent, 'C', copy)}` : ''}
            ORDER BY C.id, s`;
          hostQueries.push({ sql: csql, kind: 'copy' });
        }
      }
    }
    const num = (v: unknown) => asBig(v)?.toString() ?? 'null';
    const hostRowsOf = function* (): Generator<unknown[]> {
      for (const q of hostQueries) {
        for (const r of db.prepare(q.sql).raw(true).iterate() as IterableIterator<unknown[]>) {
          if (q.kind === 'region') yield hostRow(asBig(r[0]), 'region', null, null, null, asBig(r[3]), asBig(r[6]), asBig(r[4]), asBig(r[5]), null, r[2], r[1]);
          else {
            const args = `{"bytes":${num(r[5])},"src_device":${num(r[7])},"dst_device":${num(r[6])}}`;
            yield hostRow(asBig(r[0]), 'memory_copy', 'MEMORY_COPY', asText(r[1]), asBig(r[6]), asBig(r[2]), null, asBig(r[3]), asBig(r[4]), args);
          }
        }
      }
    };

    // A large database's rows are read on worker threads, the dispatches on one and the host rows on another, beside
    // the appends here (TICKWISE_ROCPD_WORKER=0: all here, =1: on workers whatever the size; the rows are the same).
    // Without host rows, the dispatches are read by two workers, the ids up to the midpoint by one and the rest by
    // the other (appended to a table of their own, copied after the first half): one worker was the import's
    // bottleneck, the main thread's appends half as busy (TICKWISE_ROCPD_SPLIT=0: one worker, =1: two whatever
    // the database's size)
    const workerEnv = process.env['TICKWISE_ROCPD_WORKER'];
    const splitEnv = process.env['TICKWISE_ROCPD_SPLIT'];
    let kdDone = false;
    let hostDone = false;
    if (workerEnv === '1' || (workerEnv !== '0' && src.sizeBytes >= WORKER_BYTES)) {
      const mid = splitEnv === '0' || (splitEnv !== '1' && hostQueries.length > 0) ? null : splitId(db, kd, splitEnv === '1' ? 1 : 4 * WORKER_BATCH_ROWS);
      // the first half: NULL ids and those up to mid; the second the rest (SQLite's order of ids: NULL, numbers, texts)
      const halves = mid === null ? [kdSql] : [`${kdSelect} WHERE K.id <= ${mid} OR K.id IS NULL${kdOrder}`, `${kdSelect} WHERE K.id > ${mid}${kdOrder}`];
      if (halves.length > 1) await store.run('CREATE OR REPLACE TEMP TABLE tw_rp_kd_b AS SELECT * FROM tw_rp_kd LIMIT 0');
      const [host, ...kdHalves] = await drainBatches([
        drain(hostQueries.length === 0 ? noBatches() : hostBatchesOnWorker({ path: src.path, setup, queries: hostQueries, batchRows: WORKER_BATCH_ROWS }),
          (b: HostBatch) => store.appendTempColumns('tw_rp_host', hostColumns(b), b.n)),
        ...halves.map((sql, i) => drain(dispatchBatchesOnWorker({ path: src.path, setup, sql, batchRows: WORKER_BATCH_ROWS }),
          (b: DispatchBatch) => store.appendTempColumns(i === 0 ? 'tw_rp_kd' : 'tw_rp_kd_b', batchColumns(b, noAgentKind), b.n))),
      ]);
      const read = kdHalves.filter((k): k is { records: number; outOfRange: number } => !('fallback' in k));
      if (read.length < kdHalves.length) {
        // a value the reader refuses itself (with its error): the rows read again, here
        await store.run('DELETE FROM tw_rp_kd');
      } else {
        if (halves.length > 1) {
          // the second half after the first, its places among the rows after the first half's
          await store.run(`INSERT INTO tw_rp_kd SELECT * REPLACE (seq + ${read[0]!.records} AS seq) FROM tw_rp_kd_b`);
        }
        records = read.reduce((n, k) => n + k.records, 0);
        outOfRange += read.reduce((n, k) => n + k.outOfRange, 0);
        kdDone = true;
      }
      await store.run('DROP TABLE IF EXISTS tw_rp_kd_b');
      if ('fallback' in host!) await store.run('DELETE FROM tw_rp_host');
      else {
        hostRows = host.records;
        outOfRange += host.outOfRange;
        hostDone = true;
      }
    }
    if (!kdDone) await store.appendTemp('tw_rp_kd', kdRows());
    if (!hostDone) await store.appendTemp('tw_rp_host', hostRowsOf());
    if (records === 0 && hostRows === 0) throw new TickwiseError('empty-input', traceMessages.noDispatches('the database has no kernel dispatch, region or memory copy rows'), { file: src.displayPath });
    if (outOfRange > 0) diags.push({ severity: 'warning', code: 'value-out-of-range', message: traceMessages.outOfRangeValues(outOfRange, 'the rocpd rows') });

    let schemaVersion: number | null = null;
    const conditions: [string, string | null][] = [];
    if (meta) {
      for (const r of db.prepare(`SELECT tag, value FROM ${meta}`).all() as SqlRow[]) {
        const tag = asText(r['tag']);
        const value = asText(r['value']);
        if (tag === 'schema_version' && value !== null) {
          // captures.schema_version is an INTEGER: another value (2^64, found by the import fuzz) is kept as text only
          const v = Number.parseInt(value, 10);
          if (Number.isInteger(v) && v !== 0 && Math.abs(v) <= 2147483647) schemaVersion = v;
          else conditions.push(['rocpd.schema_version', value]);
        } else if (tag && tag !== 'uuid' && tag !== 'guid') conditions.push([`rocpd.${tag}`, value]);
      }
    }
    if (node) {
      const hosts = db.prepare(`SELECT DISTINCT hostname FROM ${node} WHERE hostname IS NOT NULL`).all() as SqlRow[];
      if (hosts.length === 1) conditions.push(['host.hostname', asText(hosts[0]!['hostname'])]);
    }
    // `line` of a rocpd row is its row id in its table (there are no file lines).
    opts.onProgress?.('loading tables');
    return await loadRocprofStaged(store, src, opts, {
      format: 'rocpd', producer: 'rocprofv3 (rocpd SQLite)', schemaVersion, records: records + hostRows, conditions,
    }, diags, sha);
  } catch (e) {
    // better-sqlite3's errors (a view over a missing table, a malformed page): the database is not readable rocpd
    // (read inside the appender's row generator they arrive wrapped, as the cause of a QueryError)
    const sq = e instanceof Error && e.name === 'SqliteError' ? e : e instanceof Error && (e.cause as Error | undefined)?.name === 'SqliteError' ? (e.cause as Error) : null;
    if (sq) throw new TickwiseError('bad-record', traceMessages.unreadableDatabase(sq.message), { file: src.displayPath, cause: e });
    throw e;
  } finally {
    db.close();
    await dropRocprofStaging(store).catch(() => undefined);
  }
}
