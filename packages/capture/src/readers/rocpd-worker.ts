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

/** What the reader gives the worker: the database, the statements that number its agents and symbols, the dispatch query. */
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

type Message =
  | { batch: DispatchBatch }
  | { done: true; records: number; outOfRange: number }
  | { fallback: string }
  | { error: string; name: string };

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { module, path, setup, sql, batchRows, ubig, control } = workerData;
const ctl = new Int32Array(control);
const U64_MAX = 2n ** 64n - 1n, I64_MIN = -(2n ** 63n), I64_MAX = 2n ** 63n - 1n, I32_MIN = -(2n ** 31n), I32_MAX = 2n ** 31n - 1n;
let outOfRange = 0;
// the reader's asBig: a bigint, an integral number, or a text of digits; anything else no value
const asBig = (v) => v === null || v === undefined ? null : typeof v === 'bigint' ? v
  : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : typeof v === 'string' && /^-?\\d+$/.test(v.trim()) ? BigInt(v.trim()) : null;
const fresh = () => ({
  n: 0, rowId: new BigInt64Array(batchRows), rowIdNull: new Uint8Array(batchRows), device: new Int32Array(batchRows), noAgent: new Uint8Array(batchRows),
  u: ubig.map(() => new BigUint64Array(batchRows)), uNull: ubig.map(() => new Uint8Array(batchRows)),
  seq: new BigInt64Array(batchRows), agentK: new BigInt64Array(batchRows), agentKNull: new Uint8Array(batchRows), kernelK: new BigInt64Array(batchRows), kernelKNull: new Uint8Array(batchRows),
});
const transfer = (b) => [b.rowId, b.rowIdNull, b.device, b.noAgent, ...b.u, ...b.uNull, b.seq, b.agentK, b.agentKNull, b.kernelK, b.kernelKNull].map((a) => a.buffer);
// a raw number passed through to an integer column: the reader's appender refuses anything but an integer
const passed = (v) => v === null || typeof v === 'bigint' ? v : undefined;
let posted = 0;
const post = (b) => {
  parentPort.postMessage({ batch: b }, transfer(b));
  posted++;
  // at most three batches ahead of the appends
  for (;;) {
    const consumed = Atomics.load(ctl, 0);
    if (posted - consumed < 3) break;
    Atomics.wait(ctl, 0, consumed, 1000);
  }
};
(function run() {
try {
  const Database = require(module);
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.defaultSafeIntegers(true);
    for (const s of setup) db.exec(s);
    let b = fresh();
    let records = 0;
    for (const r of db.prepare(sql).raw(true).iterate()) {
      const i = b.n;
      const agentK = passed(r[2]), kernelK = passed(r[9]);
      if (agentK === undefined || kernelK === undefined) {
        parentPort.postMessage({ fallback: 'a number that is no integer' });
        return;
      }
      const rowId = typeof r[0] === 'bigint' ? r[0] : asBig(r[0]);
      if (rowId === null) b.rowIdNull[i] = 1;
      else if (rowId < I64_MIN || rowId > I64_MAX) { outOfRange++; b.rowIdNull[i] = 1; }
      else b.rowId[i] = rowId;
      const dev = asBig(r[1]);
      if (dev !== null && (dev < I32_MIN || dev > I32_MAX)) outOfRange++;
      b.device[i] = dev === null || dev < I32_MIN || dev > I32_MAX ? 0 : Number(dev);
      b.noAgent[i] = r[2] === null ? 1 : 0;
      for (let c = 0; c < ubig.length; c++) {
        const v = r[ubig[c]];
        // SQLite's integers are int64 (as bigints here): only the sign to look at
        if (typeof v === 'bigint') {
          if (v < 0n) b.uNull[c][i] = 1;
          else b.u[c][i] = v;
          continue;
        }
        const x = asBig(v);
        if (x === null || x < 0n) b.uNull[c][i] = 1;
        else if (x > U64_MAX) { outOfRange++; b.uNull[c][i] = 1; }
        else b.u[c][i] = x;
      }
      if (agentK === null) b.agentKNull[i] = 1;
      else if (agentK < I64_MIN || agentK > I64_MAX) { parentPort.postMessage({ fallback: 'an agent number beyond int64' }); return; }
      else b.agentK[i] = agentK;
      if (kernelK === null) b.kernelKNull[i] = 1;
      else if (kernelK < I64_MIN || kernelK > I64_MAX) { parentPort.postMessage({ fallback: 'a symbol number beyond int64' }); return; }
      else b.kernelK[i] = kernelK;
      records++;
      b.seq[i] = BigInt(records);
      if (++b.n === batchRows) {
        post(b);
        b = fresh();
      }
    }
    if (b.n > 0) post(b);
    parentPort.postMessage({ done: true, records, outOfRange });
  } finally {
    db.close();
  }
} catch (e) {
  parentPort.postMessage({ error: String(e && e.message || e), name: String(e && e.name || 'Error') });
}
})();
`;

/** The path of better-sqlite3's entry, as this process loaded it (the worker loads the same one). */
function betterSqlitePath(): string | undefined {
  const cache = createRequire(import.meta.url).cache;
  return Object.keys(cache).find((k) => /[/\\]better-sqlite3[/\\]lib[/\\]index\.js$/.test(k));
}

/**
 * Reads the dispatch rows on a worker thread: batches as they come, then
 * the count and the out-of-range values. Yields nothing and returns
 * `fallback` when the worker cannot start or stops on a value the reader
 * must refuse itself (the caller then reads the rows as before); a
 * database error is thrown as an Error named as better-sqlite3 names it.
 * Stopping the iteration early stops the worker.
 */
export async function* dispatchBatchesOnWorker(plan: DispatchReadPlan): AsyncGenerator<DispatchBatch, { records: number; outOfRange: number } | { fallback: string }> {
  const module = betterSqlitePath();
  if (module === undefined) return { fallback: 'better-sqlite3 not loaded' };
  const { Worker } = await import('node:worker_threads');
  const control = new SharedArrayBuffer(4);
  const ctl = new Int32Array(control);
  const w = new Worker(WORKER, { eval: true, execArgv: [], workerData: { ...plan, module, ubig: UBIG_COLUMNS, control } });
  const queue: Message[] = [];
  let wake: (() => void) | null = null;
  let failed: Error | null = null;
  const arrived = () => {
    const f = wake;
    wake = null;
    f?.();
  };
  w.on('message', (m: Message) => {
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
