import { createRequire } from 'node:module';

/**
 * The rocpd reader's dispatch rows read on a worker thread: better-sqlite3
 * builds every row as JS values (a bigint for each 64-bit integer) and the
 * reader checks each value's range, ~half of a large import's CPU; on a
 * worker that runs beside the DuckDB appends of the main thread. The worker
 * sends columns, not rows: typed arrays (int64 values and a null flag per
 * value), moved to the main thread, not copied.
 *
 * Each value is checked as the reader does on the main thread
 * (`rocpd.ts`): a negative id or time is no value, one beyond its column
 * (int64, uint64, int32) is no value and counted. A value that is no integer
 * where the reader would have refused it (a text agent number: a corrupt
 * database) stops the worker, and the reader reads the rows itself, as
 * before, to give the same error.
 */

/** What the reader gives a worker: the database, the statements that number its agents and symbols, the query. */
export interface DispatchReadPlan {
  /** The database file. */
  path: string;
  /** SQL run first on the worker's connection (its own TEMP tables: `numberedSql`). */
  setup: string[];
  /** The dispatch query (`kdSql`): its columns in the reader's order. */
  sql: string;
  /** Rows a batch. */
  batchRows: number;
}

/** The host rows' queries (`importRocpd`'s regions, then memory copies), for {@link hostBatchesOnWorker}. */
export interface HostReadPlan {
  path: string;
  setup: string[];
  /** region: id, name, category, tid, start, end, correlation id; copy: id, name, tid, start, end, size, dst agent, src agent */
  queries: { sql: string; kind: 'region' | 'copy' }[];
  batchRows: number;
}

/** A batch of host rows (regions, memory copies), by column, as the reader stages them in tw_rp_host. */
export interface HostBatch {
  n: number;
  line: BigInt64Array;
  lineNull: Uint8Array;
  kind: string[];
  op: (string | null)[];
  name: (string | null)[];
  device: Int32Array;
  deviceNull: Uint8Array;
  /** thread id, correlation id, start, end (uint64) */
  u: BigUint64Array[];
  uNull: Uint8Array[];
  args: (string | null)[];
  /** the row's place among the host rows, from 1 */
  seq: BigInt64Array;
  /** a region's category and name by number (its op and name NULL; see the reader's tw_rp_hname) */
  opK: BigInt64Array;
  opKNull: Uint8Array;
  nameK: BigInt64Array;
  nameKNull: Uint8Array;
}

/** A batch of dispatch rows, by column (typed arrays of at least `n`; a `...Null` array holds 1 where the value is NULL). */
export interface DispatchBatch {
  n: number;
  /** row id (int64) */
  rowId: BigInt64Array;
  rowIdNull: Uint8Array;
  /** device (int32; 0 where none) */
  device: Int32Array;
  /** 1 where the row has no agent */
  noAgent: Uint8Array;
  /** queue_id, stream_id, tid, dispatch_id, correlation_id, kernel_id, start, end, wg x y z, grid x y z (uint64) */
  u: BigUint64Array[];
  uNull: Uint8Array[];
  /** the row's place among the dispatch rows, from 1 (int64) */
  seq: BigInt64Array;
  /** the agent's and the kernel symbol's numbers (int64) */
  agentK: BigInt64Array;
  agentKNull: Uint8Array;
  kernelK: BigInt64Array;
  kernelKNull: Uint8Array;
}

/** The query's columns read as uint64 (positions in `kdSql`'s select list), in {@link DispatchBatch}.u's order. */
export const UBIG_COLUMNS = [3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 15, 16, 17] as const;

type Message<B> =
  | { batch: B }
  | { done: true; records: number; outOfRange: number }
  | { fallback: string }
  | { error: string; name: string };

/**
 * What every worker runs first: the reader's value checks, `post` (a batch
 * moved to the main thread, at most three ahead of the appends) and `run`
 * (the database opened read-only, 64-bit integers as bigints, the setup
 * statements run, `body(db)`, its errors sent back by name).
 */
const PRELUDE = `
const { parentPort, workerData } = require('node:worker_threads');
const { module, path, setup, batchRows, control } = workerData;
const ctl = new Int32Array(control);
const U64_MAX = 2n ** 64n - 1n, I64_MIN = -(2n ** 63n), I64_MAX = 2n ** 63n - 1n, I32_MIN = -(2n ** 31n), I32_MAX = 2n ** 31n - 1n;
let outOfRange = 0;
// the reader's asBig: a bigint, an integral number, or a text of digits; anything else no value
const asBig = (v) => v === null || v === undefined ? null : typeof v === 'bigint' ? v
  : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : typeof v === 'string' && /^-?\\d+$/.test(v.trim()) ? BigInt(v.trim()) : null;
// the reader's asText
const asText = (v) => v === null || v === undefined ? null : typeof v === 'string' ? v : String(v);
// a uint64 column's value into (values, nulls) at i: negative is no value, beyond uint64 no value and counted
const putU = (vals, nulls, i, v) => {
  // SQLite's integers are int64 (bigints here): only the sign to look at
  if (typeof v === 'bigint') {
    if (v < 0n) nulls[i] = 1;
    else vals[i] = v;
    return;
  }
  const x = asBig(v);
  if (x === null || x < 0n) nulls[i] = 1;
  else if (x > U64_MAX) { outOfRange++; nulls[i] = 1; }
  else vals[i] = x;
};
// an int64 (i64) or int32 (i32) value, or null (beyond its column: null and counted)
const i64 = (v) => { const x = typeof v === 'bigint' ? v : asBig(v); if (x !== null && (x < I64_MIN || x > I64_MAX)) { outOfRange++; return null; } return x; };
const i32 = (v) => { const x = asBig(v); if (x !== null && (x < I32_MIN || x > I32_MAX)) { outOfRange++; return null; } return x; };
let posted = 0;
const post = (b, buffers) => {
  parentPort.postMessage({ batch: b }, buffers);
  posted++;
  for (;;) {
    const consumed = Atomics.load(ctl, 0);
    if (posted - consumed < 3) break;
    Atomics.wait(ctl, 0, consumed, 1000);
  }
};
const run = (body) => {
  try {
    const Database = require(module);
    const db = new Database(path, { readonly: true, fileMustExist: true });
    try {
      db.defaultSafeIntegers(true);
      for (const s of setup) db.exec(s);
      body(db);
    } finally {
      db.close();
    }
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e), name: String(e && e.name || 'Error') });
  }
};
`;

/** The dispatch rows (see {@link DispatchBatch}). */
const DISPATCH_WORKER = PRELUDE + `
const { sql, ubig } = workerData;
const fresh = () => ({
  n: 0, rowId: new BigInt64Array(batchRows), rowIdNull: new Uint8Array(batchRows), device: new Int32Array(batchRows), noAgent: new Uint8Array(batchRows),
  u: ubig.map(() => new BigUint64Array(batchRows)), uNull: ubig.map(() => new Uint8Array(batchRows)),
  seq: new BigInt64Array(batchRows), agentK: new BigInt64Array(batchRows), agentKNull: new Uint8Array(batchRows), kernelK: new BigInt64Array(batchRows), kernelKNull: new Uint8Array(batchRows),
});
const buffers = (b) => [b.rowId, b.rowIdNull, b.device, b.noAgent, ...b.u, ...b.uNull, b.seq, b.agentK, b.agentKNull, b.kernelK, b.kernelKNull].map((a) => a.buffer);
// a raw number passed through to an integer column: the reader's appender refuses anything but an integer
const passed = (v) => v === null || typeof v === 'bigint' ? v : undefined;
run((db) => {
  let b = fresh();
  let records = 0;
  for (const r of db.prepare(sql).raw(true).iterate()) {
    const i = b.n;
    const agentK = passed(r[2]), kernelK = passed(r[9]);
    if (agentK === undefined || kernelK === undefined) {
      parentPort.postMessage({ fallback: 'a number that is no integer' });
      return;
    }
    if ((agentK !== null && (agentK < I64_MIN || agentK > I64_MAX)) || (kernelK !== null && (kernelK < I64_MIN || kernelK > I64_MAX))) {
      parentPort.postMessage({ fallback: 'an agent or symbol number beyond int64' });
      return;
    }
    const rowId = i64(r[0]);
    if (rowId === null) b.rowIdNull[i] = 1;
    else b.rowId[i] = rowId;
    const dev = i32(r[1]);
    b.device[i] = dev === null ? 0 : Number(dev);
    b.noAgent[i] = r[2] === null ? 1 : 0;
    for (let c = 0; c < ubig.length; c++) putU(b.u[c], b.uNull[c], i, r[ubig[c]]);
    if (agentK === null) b.agentKNull[i] = 1;
    else b.agentK[i] = agentK;
    if (kernelK === null) b.kernelKNull[i] = 1;
    else b.kernelK[i] = kernelK;
    records++;
    b.seq[i] = BigInt(records);
    if (++b.n === batchRows) {
      post(b, buffers(b));
      b = fresh();
    }
  }
  if (b.n > 0) post(b, buffers(b));
  parentPort.postMessage({ done: true, records, outOfRange });
});
`;

/** The host rows: each query's rows as `importRocpd`'s hostRow makes them (see {@link HostBatch}). */
const HOST_WORKER = PRELUDE + `
const { queries } = workerData;
const fresh = () => ({
  n: 0, line: new BigInt64Array(batchRows), lineNull: new Uint8Array(batchRows), kind: [], op: [], name: [], device: new Int32Array(batchRows),
  deviceNull: new Uint8Array(batchRows), u: [0, 1, 2, 3].map(() => new BigUint64Array(batchRows)), uNull: [0, 1, 2, 3].map(() => new Uint8Array(batchRows)),
  args: [], seq: new BigInt64Array(batchRows),
  opK: new BigInt64Array(batchRows), opKNull: new Uint8Array(batchRows), nameK: new BigInt64Array(batchRows), nameKNull: new Uint8Array(batchRows),
});
const buffers = (b) => [b.line, b.lineNull, b.device, b.deviceNull, ...b.u, ...b.uNull, b.seq, b.opK, b.opKNull, b.nameK, b.nameKNull].map((a) => a.buffer);
// a string-table number (SQLite's row_number through a join): an integer or NULL
const putK = (arr, nulls, i, v) => {
  if (v === null) nulls[i] = 1;
  else if (typeof v === 'bigint') arr[i] = v;
  else throw new Error('internal: a string number that is no integer');
};
const num = (v) => { const x = asBig(v); return x === null ? 'null' : x.toString(); };
run((db) => {
  let b = fresh();
  let records = 0;
  // one host row: line, kind, op, name, device, then tid, correlation, start, end, then args, then op and name by number
  const add = (line, kind, op, name, device, tid, corr, s, e, args, opK = null, nameK = null) => {
    const i = b.n;
    const l = i64(line);
    if (l === null) b.lineNull[i] = 1;
    else b.line[i] = l;
    b.kind.push(kind);
    b.op.push(op);
    b.name.push(name);
    const d = i32(device);
    if (d === null) b.deviceNull[i] = 1;
    else b.device[i] = Number(d);
    putU(b.u[0], b.uNull[0], i, tid);
    putU(b.u[1], b.uNull[1], i, corr);
    putU(b.u[2], b.uNull[2], i, s);
    putU(b.u[3], b.uNull[3], i, e);
    b.args.push(args);
    putK(b.opK, b.opKNull, i, opK);
    putK(b.nameK, b.nameKNull, i, nameK);
    records++;
    b.seq[i] = BigInt(records);
    if (++b.n === batchRows) {
      post(b, buffers(b));
      b = fresh();
    }
  };
  for (const q of queries) {
    for (const r of db.prepare(q.sql).raw(true).iterate()) {
      if (q.kind === 'region') add(asBig(r[0]), 'region', null, null, null, asBig(r[3]), asBig(r[6]), asBig(r[4]), asBig(r[5]), null, r[2], r[1]);
      else add(asBig(r[0]), 'memory_copy', 'MEMORY_COPY', asText(r[1]), asBig(r[6]), asBig(r[2]), null, asBig(r[3]), asBig(r[4]),
        '{"bytes":' + num(r[5]) + ',"src_device":' + num(r[7]) + ',"dst_device":' + num(r[6]) + '}');
    }
  }
  if (b.n > 0) post(b, buffers(b));
  parentPort.postMessage({ done: true, records, outOfRange });
});
`;

/** The path of better-sqlite3's entry, as this process loaded it (the worker loads the same one). */
function betterSqlitePath(): string | undefined {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).find((k) => /[/\\]better-sqlite3[/\\]lib[/\\]index\.js$/.test(k));
}

/**
 * Runs `code` (a worker of this file) on a worker thread: its batches as
 * they come, then its count and out-of-range values, or `fallback` when it
 * cannot start or hands the rows back. A database error is thrown as an
 * Error named as better-sqlite3 names it. Stopping the iteration early
 * stops the worker.
 */
async function* batchesOnWorker<B>(code: string, data: Record<string, unknown>): AsyncGenerator<B, { records: number; outOfRange: number } | { fallback: string }> {
  const module = betterSqlitePath();
  if (module === undefined) return { fallback: 'better-sqlite3 not loaded' };
  const { Worker } = await import('node:worker_threads');
  const control = new SharedArrayBuffer(4);
  const ctl = new Int32Array(control);
  const w = new Worker(code, { eval: true, execArgv: [], workerData: { ...data, module, control } });
  const queue: Message<B>[] = [];
  let wake: (() => void) | null = null;
  let failed: Error | null = null;
  const arrived = () => {
    const f = wake;
    wake = null;
    f?.();
  };
  w.on('message', (m: Message<B>) => {
    queue.push(m);
    arrived();
  });
  w.on('error', (e) => {
    failed = e;
    arrived();
  });
  w.on('exit', () => {
    failed ??= new Error('the rocpd reading thread stopped');
    arrived();
  });
  try {
    for (;;) {
      const m = queue.shift();
      if (m === undefined) {
        if (failed !== null) throw failed;
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      if ('batch' in m) {
        yield m.batch;
        Atomics.add(ctl, 0, 1);
        Atomics.notify(ctl, 0);
      } else if ('done' in m) return { records: m.records, outOfRange: m.outOfRange };
      else if ('fallback' in m) return { fallback: m.fallback };
      else {
        const e = new Error(m.error);
        e.name = m.name;
        throw e;
      }
    }
  } finally {
    w.removeAllListeners();
    void w.terminate();
  }
}

/**
 * Reads the dispatch rows on a worker thread (see {@link batchesOnWorker});
 * `fallback` when a value is one the reader must refuse itself (the caller
 * then reads the rows as before).
 */
export function dispatchBatchesOnWorker(plan: DispatchReadPlan): AsyncGenerator<DispatchBatch, { records: number; outOfRange: number } | { fallback: string }> {
  return batchesOnWorker<DispatchBatch>(DISPATCH_WORKER, { ...plan, ubig: UBIG_COLUMNS });
}

/** Reads the host rows (regions, then memory copies) on a worker thread (see {@link batchesOnWorker}). */
export function hostBatchesOnWorker(plan: HostReadPlan): AsyncGenerator<HostBatch, { records: number; outOfRange: number } | { fallback: string }> {
  return batchesOnWorker<HostBatch>(HOST_WORKER, { ...plan });
}
