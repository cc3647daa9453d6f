import { execFile } from 'node:child_process';
import { open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Store } from '@tickwise/store';
import { runJsonRead } from './capture-rows';
import { nativeScanner, nativeScannerFor } from './json-records-native';
import { processTempDir } from './source-file';

/**
 * The ireeperf stage, split by record type (see {@link stageSplit}).
 *
 * DuckDB's read_json costs about 10 ms per 300 MB for every column it is
 * asked for, whether a record holds that key or not (the parse itself is
 * ~105 ms): the 56 columns the reader needs cost ~525-600 ms, though a
 * capture is mostly `dispatch_event` records, which use 16 of them, and
 * queue events, which use few more. So:
 *
 * ```
 * file --DuckDB read_json, the dispatch columns only (both cores)--> tw_stage_main   (every record)
 *      --tw-jsonscan --split-lines (at the same time, ~35 ms CPU)--> queue.jsonl: queue_event, queue_device_event
 *                                                                    rare.jsonl: every other type but dispatch_event
 *                                                                    (each record with "_l": its record number)
 * queue.jsonl --read_json, the queue columns--> tw_stage_queue;  rare.jsonl --read_json, all columns--> tw_stage_rare
 * tw_stage_nd = queue's rows  UNION ALL  rare's other rows            (every record but the dispatches)
 * tw_stage    = main's dispatch_event rows  UNION ALL  tw_stage_nd
 * ```
 * (the three tables in {@link SPLIT_DB}, a database attached in memory; the
 * two views TEMP, made on each connection that reads them).
 * The split is checked against DuckDB's own `record_type` of every record
 * (every record of tw_stage_main that is not a dispatch is in the queue or
 * rare table, at its record number, with its type; the queue table holds
 * queue types only). When it is not, or the native scanner is not there,
 * or the input is not mostly dispatches, the caller reads the whole file
 * with every column, as before. A record's fields outside its type's
 * columns (a dispatch's `workgroup_size`, say) are not read, so not
 * range-checked either: nothing stores them.
 *
 * `TICKWISE_IREEPERF_SPLIT=0` turns the split off.
 */
export interface SplitStage {
  /** Every stage column and its DuckDB type. */
  readonly columns: Readonly<Record<string, string>>;
  /** The columns a dispatch record needs (a subset of `columns`, with `record_type`). */
  readonly dispatchColumns: readonly string[];
  /** The queue record types, and the columns they need (with `record_type`). */
  readonly queueTypes: readonly string[];
  readonly queueColumns: readonly string[];
  /** A `read_json(...)` of a plain NDJSON file with these columns (`{...}`), and a larger maximum object size when given. */
  readonly readJson: (path: string, columns: string, maxObjectBytes?: number) => string;
  /** The larger maximum object size, for a record beyond DuckDB's default buffers. */
  readonly largeObjectBytes: number;
}

/** The record type read with the narrow columns. */
const DISPATCH = 'dispatch_event';

/**
 * The split stage's tables live in a database attached in memory, not in
 * TEMP tables (a connection's own): a sibling connection reads them too
 * ({@link splitViews}), for the dispatch insert that runs beside the other
 * tables' (ireeperf-jsonl.ts).
 */
export const SPLIT_DB = 'tw_ip_mem';
/** The tables of a split stage, in {@link SPLIT_DB} (dropped with it: {@link dropSplit}). */
export const SPLIT_TABLES = ['tw_stage_main', 'tw_stage_queue', 'tw_stage_rare'] as const;

/**
 * Stages plain NDJSON file `path` split by record type and creates the views
 * `tw_stage` (`line` and every column) and `tw_stage_nd` (the same, but no dispatch_event). Returns false, with nothing left
 * behind, when the split does not apply; a DuckDB error (a bad record)
 * is thrown, for the caller's repair path, which reads the whole file.
 */
export async function stageSplit(store: Store, path: string, stage: SplitStage, env = process.env): Promise<boolean> {
  if (env['TICKWISE_IREEPERF_SPLIT'] === '0') return false;
  // a small capture is read whole: starting the splitter costs more than it saves (TICKWISE_IREEPERF_SPLIT=1: any size)
  const bin = env['TICKWISE_IREEPERF_SPLIT'] === '1' ? nativeScanner(env) : nativeScannerFor((await stat(path)).size, 'none', env);
  if (bin === null || !(await mostlyDispatches(path))) return false;
  const dir = await processTempDir('split');
  const files = { queue: join(dir, 'queue.jsonl'), rare: join(dir, 'rare.jsonl') };
  /** read_json's `columns` of `names`, and the copies' `_l` (their record number) first when `copy`. */
  const cols = (names: readonly string[], copy = true) => `{${[...(copy ? ["'_l': 'BIGINT'"] : []), ...names.map((c) => `'${c}': '${stage.columns[c]}'`)].join(', ')}}`;
  const all = Object.keys(stage.columns);
  const queueTypes = stage.queueTypes.map((t) => `'${t}'`).join(', ');
  const [main, queue, rare] = SPLIT_TABLES.map((t) => `${SPLIT_DB}.${t}`) as [string, string, string];
  try {
    const split = splitLines(bin, path, files.queue, stage.queueTypes, files.rare);
    split.catch(() => undefined);
    await store.run(`DETACH DATABASE IF EXISTS ${SPLIT_DB}`);
    await store.run(`ATTACH ':memory:' AS ${SPLIT_DB}`);
    try {
      await createFromJson(store, main, (size) => stage.readJson(path, cols(stage.dispatchColumns, false), size), stage.largeObjectBytes);
    } catch (e) {
      await split.catch(() => undefined);
      throw e;
    }
    const copied = await split.catch(() => null);
    if (copied === null) return await giveUp(store);
    for (const [table, file, names, n] of [[queue, files.queue, stage.queueColumns, copied.queue], [rare, files.rare, all, copied.rare]] as const) {
      if (n === 0) {
        await store.run(`CREATE TABLE ${table} AS SELECT NULL::BIGINT AS _l, ${names.map((c) => `NULL::${stage.columns[c]} AS "${c}"`).join(', ')} LIMIT 0`);
      } else {
        await createFromJson(store, table, (size) => stage.readJson(file, cols(names), size), stage.largeObjectBytes);
      }
    }
    const check = (await store.rows(`WITH copied AS (
        SELECT _l, record_type FROM ${queue} UNION ALL SELECT _l, record_type FROM ${rare} WHERE record_type IS DISTINCT FROM '${DISPATCH}')
      SELECT
        (SELECT count(*) FROM ${main} WHERE record_type IS DISTINCT FROM '${DISPATCH}') AS want,
        (SELECT count(*) FROM copied) AS have,
        (SELECT count(*) FROM copied r JOIN (SELECT rowid + 1 AS line, record_type FROM ${main}) m
          ON m.line = r._l AND m.record_type IS NOT DISTINCT FROM r.record_type) AS matched,
        (SELECT count(*) FROM ${queue} WHERE record_type IS NULL OR record_type NOT IN (${queueTypes})) AS misplaced`))[0]!;
    if (!(check['want'] === check['have'] && check['have'] === check['matched'] && Number(check['misplaced']) === 0)) return await giveUp(store);
    await splitViews(store, stage);
    return true;
  } catch (e) {
    await dropSplit(store).catch(() => undefined);
    throw e;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Creates the views `tw_stage` and `tw_stage_nd` over a split stage on
 * connection `store` (TEMP views: each connection that reads the stage
 * creates its own).
 */
export async function splitViews(store: Store, stage: Pick<SplitStage, 'columns' | 'dispatchColumns' | 'queueColumns'>): Promise<void> {
  const all = Object.keys(stage.columns);
  const narrow = (names: readonly string[]) => {
    const has = new Set(names);
    return all.map((c) => (has.has(c) ? `"${c}"` : `NULL::${stage.columns[c]} AS "${c}"`)).join(', ');
  };
  await store.run(`CREATE TEMP VIEW tw_stage_nd AS
    SELECT _l AS line, ${narrow(stage.queueColumns)} FROM ${SPLIT_DB}.tw_stage_queue
    UNION ALL SELECT _l AS line, ${narrow(all)} FROM ${SPLIT_DB}.tw_stage_rare WHERE record_type IS DISTINCT FROM '${DISPATCH}'`);
  await store.run(`CREATE TEMP VIEW tw_stage AS
    SELECT rowid + 1 AS line, ${narrow(stage.dispatchColumns)} FROM ${SPLIT_DB}.tw_stage_main WHERE record_type = '${DISPATCH}'
    UNION ALL SELECT * FROM tw_stage_nd`);
}

/** Drops a split stage's views and tables (its database). */
export async function dropSplit(store: Store): Promise<void> {
  await store.run('DROP VIEW IF EXISTS tw_stage');
  await store.run('DROP VIEW IF EXISTS tw_stage_nd');
  await store.run(`DETACH DATABASE IF EXISTS ${SPLIT_DB}`);
}

async function giveUp(store: Store): Promise<false> {
  await dropSplit(store);
  return false;
}

/** CREATE TEMP TABLE `table` from a read_json (`read(maxObjectBytes?)`), larger buffers only when needed (runJsonRead). */
export async function createTempFromJson(store: Store, table: string, read: (maxObjectBytes?: number) => string, large: number): Promise<void> {
  await createFromJson(store, table, read, large, 'TEMP ');
}

/** {@link createTempFromJson}, a TABLE of the name given (`temp`: 'TEMP ' for a temp table). */
async function createFromJson(store: Store, table: string, read: (maxObjectBytes?: number) => string, large: number, temp = ''): Promise<void> {
  await runJsonRead(store, (size) => `CREATE ${temp}TABLE ${table} AS SELECT * FROM ${read(size)}`, large);
}

/** Runs `tw-jsonscan --split-lines`: the records copied to each file, or a rejection (the split does not apply). */
function splitLines(bin: string, path: string, queue: string, queueTypes: readonly string[], rare: string): Promise<{ queue: number; rare: number }> {
  return new Promise((resolve, reject) => {
    execFile(bin, ['--split-lines', path, DISPATCH, queue, queueTypes.join(','), rare], { encoding: 'utf8' }, (err, stdout) => {
      const m = /^D (\d+) (\d+) (\d+)$/m.exec(stdout);
      if (err || !m) reject(err ?? new Error('tw-jsonscan --split-lines: no result'));
      else resolve({ queue: Number(m[2]), rare: Number(m[3]) });
    });
  });
}

/**
 * True when at least `minShare` of the bytes of the file's first
 * `sampleBytes` are lines holding a dispatch record near their start: only
 * then does the narrow read save more than the second one costs.
 */
export async function mostlyDispatches(path: string, sampleBytes = 4 << 20, minShare = 0.5): Promise<boolean> {
  const mark = Buffer.from(`"record_type":"${DISPATCH}"`);
  const fh = await open(path, 'r');
  try {
    const size = Math.min(sampleBytes, (await fh.stat()).size);
    const read = await fh.read(Buffer.allocUnsafe(size), 0, size, 0);
    const buf = read.buffer.subarray(0, read.bytesRead);
    let dispatchBytes = 0;
    let seen = 0;
    for (let start = 0; start < buf.length;) {
      const nl = buf.indexOf(10, start);
      if (nl < 0) break;
      // the mark is looked for near the line's start only: a search to the end of the sample from every line
      // was quadratic (70 ms for an 80 KB capture of few dispatches, most of its import's time)
      if (buf.subarray(start, Math.min(nl, start + 96 + mark.length)).includes(mark)) dispatchBytes += nl + 1 - start;
      seen += nl + 1 - start;
      start = nl + 1;
    }
    return seen > 0 && dispatchBytes >= minShare * seen;
  } finally {
    await fh.close();
  }
}
