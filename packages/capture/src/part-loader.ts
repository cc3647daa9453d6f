import { statSync } from 'node:fs';
import { QueryError, sqlString, type Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { cleanDuckdbMessage, ndjsonErrorLine, shownLimitAgain } from './capture-rows';
import { STAGE_PART_BYTES, sourceLineOf, spansParts, type NdjsonPart } from './json-records';
import { traceMessages } from './trace-messages';

/**
 * read_json's maximum_object_size for a part: no record of it is longer than
 * the part, so its size (or `max`, the reader's limit, when smaller).
 * DuckDB sizes its read buffers by it (16 MiB at least; see
 * {@link readBufferBytes}): a part of ordinary events no longer reserves what
 * the largest event allowed (64 MiB) would need.
 */
function objectBytesOf(path: string, max: number): number {
  let size = max;
  try {
    size = statSync(path).size;
  } catch {
    // read_json names the missing file
  }
  return Math.min(max, size + 1);
}

/** A part this large (1.5 parts) holds an event far larger than most: see {@link PartLoader.each}. */
const LARGE_PART_BYTES = STAGE_PART_BYTES * 1.5;

/** True for a part read with a raised memory bound (see {@link LARGE_PART_BYTES}): it loads alone. */
function isLarge(part: NdjsonPart, maxObjectBytes: number): boolean {
  return objectBytesOf(part.path, maxObjectBytes) > LARGE_PART_BYTES;
}

/**
 * What read_json allocates at once to read objects of up to `objectBytes`:
 * eight times the next power of two (a part holding a 50 MB event failed
 * under a 400 MB bound, asking for 512 MiB), and 64 MB for the rest.
 */
function readBufferBytes(objectBytes: number): number {
  return 8 * 2 ** Math.ceil(Math.log2(objectBytes)) + 64e6;
}

/** Bytes of a memory setting as DuckDB shows it ("139.6 MiB", "1.2 GB"); 0 when it cannot be read. */
function bytesOfSetting(text: string): number {
  const m = /^([\d.]+)\s*([KMGT]?i?B|bytes)?$/i.exec(text.trim());
  if (m === null) return 0;
  const unit = (m[2] ?? 'B').toUpperCase();
  const base = unit.includes('I') ? 1024 : 1000;
  const pow = { B: 0, BYTES: 0, K: 1, M: 2, G: 3, T: 4 }[unit === 'BYTES' ? 'BYTES' : unit[0] === 'B' ? 'B' : unit[0]!] ?? 0;
  return Number(m[1]) * base ** pow;
}

/**
 * Loads the NDJSON parts `scanJsonRecords` writes (`partBytes`, `onPart`)
 * into staging tables while the scan goes on: DuckDB parses part k while
 * the scanner writes part k + 1. A spec's parts load in order, one at a
 * time, so a table's rowid is its record's index in the spec's output; the
 * parts of specs loaded on different connections load side by side (one
 * connection's loads, of any spec, one at a time, in the order the parts
 * come: a connection runs one statement at a time). During the scan
 * DuckDB runs one thread (the scanner has a core to itself); {@link finish}
 * gives the store its own setting back.
 *
 * ```
 * scanner --part k--> loader: CREATE TEMP TABLE t AS read_json(part 0) | INSERT INTO t read_json([part k, ..., part m]) (into: the parts waiting)
 * ```
 */
export class PartLoader {
  /** Per connection, its loads in order. */
  private readonly chains = new Map<Store, Promise<void>>();
  private failed: { spec: number; part: NdjsonPart; error: QueryError } | undefined;
  /** Gives the store its thread count back, while the loader holds it at one (Store.holdOneThread). */
  private restoreThreads: (() => Promise<void>) | undefined;
  /** Tables whose first part is loaded (the next parts insert). */
  private readonly created = new Set<string>();
  /** Per spec of an {@link into}, its parts written and not yet loaded. */
  private queued = new Map<number, NdjsonPart[]>();
  private constructor(private readonly store: Store, private readonly maxObjectBytes: number) {}

  /**
   * Starts a loader: the store down to one thread until {@link finish} when
   * the input `src` is large enough to be staged in several parts (see
   * {@link spansParts}); a smaller one keeps the store's threads (its one part
   * loads after the scan anyway, and each change of DuckDB's thread count
   * restarts its threads and trims the process's heap: 2-16 ms, four a file).
   */
  static async start(store: Store, maxObjectBytes: number, src: { readonly sizeBytes: number; readonly compression: string }): Promise<PartLoader> {
    const l = new PartLoader(store, maxObjectBytes);
    if (spansParts(src)) l.restoreThreads = await store.holdOneThread();
    return l;
  }

  /**
   * The `onPart` of spec number `spec`: its parts go to temp table `table`,
   * read with `columns` (the body of read_json's `columns = {...}`). The
   * parts written by the time a load starts go in one statement, one
   * read_json over their files in order: DuckDB keeps the files' order, and
   * one statement over nine 17 MB parts took 530 ms on one thread against
   * 750-840 ms for nine (a CLI's loads wait for DuckDB to load, and the scan
   * is done by then: every part is waiting).
   */
  into(spec: number, table: string, columns: string): (part: NdjsonPart) => void {
    return this.batched(spec, columns, async (read) => {
      if (!this.created.has(table)) {
        await this.store.run(`DROP TABLE IF EXISTS ${table}`);
        await this.store.run(`CREATE TEMP TABLE ${table} AS ${read}`);
        this.created.add(table); // after: a batch refused is loaded again part by part (see batched)
      } else {
        await this.store.run(`INSERT INTO ${table} ${read}`);
      }
    });
  }

  /**
   * The `onPart` of spec number `spec` for a reader that does more with a
   * part than stage it: `load` gets the part's read_json SELECT (with
   * `columns`) and runs whatever it needs, parts in order, one at a time. A
   * QueryError of its statements is the part's error (its source line, by
   * DuckDB's message, from {@link finish}); the reader's own tables are its
   * to undo on {@link restart} (its `more`). `on`: the connection `load`
   * runs its statements on (the loader's own for a part, too: one
   * connection's statements run one at a time).
   */
  each(spec: number, columns: string, load: (read: string, part: NdjsonPart) => Promise<void>, on: Store = this.store): (part: NdjsonPart) => void {
    return (part) => this.chain(on, async () => this.load(on, spec, [part], columns, (read, parts) => load(read, parts[0]!)));
  }

  /**
   * The `onPart` of an {@link into}: each part queued, and each load takes
   * the parts queued by then (up to a large one, which goes alone): one
   * statement for them, its parts in order. The queue is the loader's at
   * the part's time: a {@link restart} starts new ones.
   */
  private batched(spec: number, columns: string, load: (read: string) => Promise<void>): (part: NdjsonPart) => void {
    return (part) => {
      let queue = this.queued.get(spec);
      if (queue === undefined) this.queued.set(spec, queue = []);
      queue.push(part);
      const q = queue;
      this.chain(this.store, async () => {
        const large = (p: NdjsonPart) => isLarge(p, this.maxObjectBytes);
        let n = Math.min(1, q.length);
        if (n === 1 && !large(q[0]!)) while (n < q.length && !large(q[n]!)) n++;
        const parts = q.splice(0, n);
        if (parts.length === 0) return; // an earlier load took this part
        await this.load(this.store, spec, parts, columns, (read) => load(read), true);
      });
    };
  }

  /** Runs `step` after the connection's earlier loads. */
  private chain(on: Store, step: () => Promise<void>): void {
    this.chains.set(on, (this.chains.get(on) ?? Promise.resolve()).then(step));
  }

  /**
   * Loads `parts` (one spec's, in order) on connection `on` with `load`, given their
   * read_json SELECT. A QueryError fails the loader (its part named); for a
   * batch (`oneByOne`), once the statement is refused (and undone), its parts
   * are loaded again one at a time to name the part that fails.
   */
  private async load(on: Store, spec: number, parts: readonly NdjsonPart[], columns: string, load: (read: string, parts: readonly NdjsonPart[]) => Promise<void>, oneByOne = false): Promise<void> {
    if (this.failed) return;
    const objectBytes = Math.max(...parts.map((p) => objectBytesOf(p.path, this.maxObjectBytes)));
    const files = parts.length === 1 ? sqlString(parts[0]!.path) : `[${parts.map((p) => sqlString(p.path)).join(', ')}]`;
    const read = `SELECT * FROM read_json(${files}, format = 'newline_delimited', columns = {${columns}}, maximum_object_size = ${objectBytes})`;
    let limit: string | undefined;
    try {
      // a part far beyond the usual size holds an event as large: DuckDB's bound raised for its read buffer, and
      // set back after
      if (objectBytes > LARGE_PART_BYTES) {
        limit = String(await on.scalar(`SELECT current_setting('memory_limit')`));
        await on.run(`SET memory_limit = '${Math.ceil((bytesOfSetting(limit) + readBufferBytes(objectBytes)) / 1e6)}MB'`);
      }
      try {
        await load(read, parts);
      } finally {
        if (limit !== undefined) await on.run(`SET memory_limit = ${sqlString(shownLimitAgain(limit))}`).catch(() => undefined);
      }
    } catch (e) {
      if (!(e instanceof QueryError)) throw e;
      if (oneByOne && parts.length > 1) {
        for (const p of parts) await this.load(on, spec, [p], columns, load);
        return;
      }
      this.failed ??= { spec, part: parts[0]!, error: e };
    }
  }

  /** Every load issued so far, done (rejected when one threw beyond a QueryError). */
  private all(): Promise<void> {
    return Promise.all([...this.chains.values()]).then(() => undefined);
  }

  /**
   * The parts loaded so far are void (the scan starts over: `ScanOptions.onRestart`):
   * once the loads issued are done, their tables are dropped (and `more` run: an {@link each} reader's undoing)
   * and the next part of each creates it again.
   */
  restart(more?: () => Promise<void>): void {
    this.queued = new Map(); // the loads issued keep their own queues, of the parts before
    const undo = this.all().catch(() => undefined).then(async () => {
      for (const t of this.created) await this.store.run(`DROP TABLE IF EXISTS ${t}`);
      await more?.();
      this.created.clear();
      this.failed = undefined;
    });
    // every connection's next load waits for the undoing
    for (const on of [...this.chains.keys()]) this.chains.set(on, undo);
    if (this.chains.size === 0) this.chains.set(this.store, undo);
  }

  /**
   * What gives the store its thread count back, taken from the loader:
   * {@link settle} no longer calls it, the caller does (undefined when the
   * loader did not change the count).
   */
  holdThreads(): (() => Promise<void>) | undefined {
    const restore = this.restoreThreads;
    this.restoreThreads = undefined;
    return restore;
  }

  /** Waits for every load issued, whatever happened (for a `finally`: nothing is left running on the store). */
  async settle(): Promise<void> {
    await this.all().catch(() => undefined);
    await this.holdThreads()?.();
  }

  /**
   * Waits for every load; a record DuckDB refused is one error with its
   * source line (`lines[spec]`: the scan's source line per written record).
   */
  async finish(lines: readonly Uint32Array[], file: string): Promise<void> {
    await this.settle();
    await this.all();
    if (this.failed) {
      const { spec, part, error } = this.failed;
      const at = await ndjsonErrorLine(error.message, part.path);
      throw new TickwiseError('bad-record', traceMessages.badRecord(cleanDuckdbMessage(error.message)), {
        file, line: sourceLineOf(lines[spec]!, at === undefined ? undefined : part.firstRecord + at), cause: error,
      });
    }
  }
}
