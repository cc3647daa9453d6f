import { join } from 'node:path';
import { QueryError, type DeviceKind, type Store } from '@tickwise/store';
import { NS_PER, TickwiseError, decimalToNs } from '@tickwise/time';
import type { Diagnostic, ImportOptions, ImportResult } from './ireeperf-jsonl';
import {
  baseName, cleanDuckdbMessage, insertAssumption, insertCapture, insertDevices, insertDiagnostics, ndjsonErrorLine, sourceJsonSql, sqlString, withTempDir,
} from '../capture-rows';
import { scanJsonRecords, sourceLineOf } from '../json-records';
import { sha256File, type SourceFile } from '../source-file';
import { traceMessages } from '../trace-messages';
import type {} from '../reader-options'; // its ImportOptions fields

/**
 * HeteroMosaic-style trace JSON lines: one object per executed stage of a
 * heterogeneous (CPU/iGPU/NPU) prefill, with `run_id`, `chunk_id`,
 * `layer_id`, `stage`, and `start_ts_us`/`end_ts_us` in microseconds of a
 * steady clock. Optional fields tickwise uses when present: `device` (or
 * `engine`) naming the processor, `kernel`/`op` naming what ran, `rows`
 * (the rows of the GEMM this stage covered), `queue`.
 *
 * Read as written by HeteroMosaic's runtime (UIUC-ChenLab/heteroMosaic):
 * its traces are not formally specified, so the field list above is the
 * contract; anything else a line carries is kept (every line's JSON goes to
 * raw_records, so run/chunk/layer ids survive).
 *
 * ```
 * .jsonl[.gz] --scanJsonRecords (lines mode; start/end text -> exact ns)--> NDJSON --DuckDB--> tw_hm
 *   device from `device`/`engine`, else from the stage name (npu/aie/xdna, gpu/igpu/hip, cpu/host)
 *   GPU and NPU stages --> dispatches (kernel = kernel/op/stage), the rest --> host_events
 *   steady_clock = CLOCK_MONOTONIC (Linux) --> timeline host_monotonic, recorded as an assumption
 * ```
 */

const EXACT = ['start_ts_us', 'end_ts_us'] as const;

/** Fields a line must have; a line without one stops the import with its line. */
const REQUIRED = ['stage', 'start_ts_us', 'end_ts_us'] as const;

/** SQL for the device kind of a stage: from its device/engine field, else its stage name. */
const KIND_SQL = (x: string) => `CASE
    WHEN regexp_matches(lower(${x}), 'npu|aie|xdna|\\bipu') THEN 'npu'
    WHEN regexp_matches(lower(${x}), 'gpu|radeon|gfx[0-9]|\\bhip\\b|cuda|rocm') THEN 'gpu'
    ELSE 'cpu' END`;

/** Imports a HeteroMosaic-style trace (JSON lines, plain or gzip). */
export async function importHeteroMosaic(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  const diags: Diagnostic[] = [];
  const sha = sha256File(src.path);
  sha.catch(() => undefined);
  opts.onProgress?.('scanning');
  return withTempDir('tickwise-hm-', async (dir) => {
    const out = join(dir, 'stages.ndjson');
    const scan = await scanJsonRecords(src, {
      mode: 'lines',
      records: [{ paths: [[]], out, exactKeys: EXACT, convert: (_k, text) => decimalToNs(text, NS_PER.us)?.toString() ?? null }],
    });
    for (const i of scan.issues) diags.push(i);
    const records = scan.counts[0]!;
    if (records === 0) throw new TickwiseError('empty-input', traceMessages.emptyFile(), { file: src.displayPath });
    try {
      await store.run('DROP TABLE IF EXISTS tw_hm');
      try {
        await store.run(`CREATE TEMP TABLE tw_hm AS SELECT * FROM read_json(${sqlString(out)}, format = 'newline_delimited',
          columns = {_line: 'BIGINT', run_id: 'VARCHAR', chunk_id: 'VARCHAR', layer_id: 'VARCHAR', stage: 'VARCHAR', device: 'VARCHAR', engine: 'VARCHAR',
            kernel: 'VARCHAR', op: 'VARCHAR', rows: 'VARCHAR', queue: 'VARCHAR', _start_ts_us: 'VARCHAR', _start_ts_us_text: 'VARCHAR',
            _end_ts_us: 'VARCHAR', _end_ts_us_text: 'VARCHAR'})`);
      } catch (e) {
        if (!(e instanceof QueryError)) throw e;
        throw new TickwiseError('bad-record', traceMessages.badRecord(cleanDuckdbMessage(e.message)), {
          file: src.displayPath, line: sourceLineOf(scan.lines[0]!, await ndjsonErrorLine(e.message, out)), cause: e,
        });
      }
      for (const f of REQUIRED) {
        const col = f === 'stage' ? 'stage' : `_${f}_text`;
        const missing = await store.scalar(`SELECT min(_line) FROM tw_hm WHERE ${col} IS NULL`);
        if (missing !== null) {
          throw new TickwiseError('missing-field', traceMessages.missingField(f, 'this trace line'), { file: src.displayPath, line: Number(missing) });
        }
      }
      const captureId = await store.nextCaptureId();

      // The clock: steady_clock is CLOCK_MONOTONIC on Linux, unless the user says otherwise.
      const clock = opts.traceClock ?? 'monotonic';
      let shift = 0n;
      let timeline = 'host_monotonic';
      let timeSource = 'host_monotonic';
      if (opts.traceClock === undefined) {
        await insertAssumption(store, captureId, null, 'trace_clock', 'monotonic', traceMessages.steadyClock());
      } else {
        await insertAssumption(store, captureId, null, 'trace_clock', clock, traceMessages.traceClockGiven(clock));
        if (clock === 'boottime') {
          if (opts.boottimeOffsetNs !== undefined) {
            shift = -opts.boottimeOffsetNs;
            const off = opts.boottimeOffsetNs.toString();
            await insertAssumption(store, captureId, null, 'clock_relation', `host_monotonic_ns = host_boottime_ns - ${off}`, traceMessages.boottimeShifted(off));
          } else {
            timeline = 'boottime';
            timeSource = 'host_boottime';
          }
        } else if (clock === 'realtime') {
          timeline = 'realtime';
          timeSource = 'host_other';
        }
      }
      const ns = (x: string) => `TRY_CAST(TRY_CAST(${x} AS HUGEINT) + ${shift.toString()}::HUGEINT AS BIGINT)`;

      await store.run(`CREATE OR REPLACE TEMP VIEW tw_hm_k AS
        SELECT *, ${KIND_SQL('coalesce(device, engine, stage)')} AS kind, coalesce(device, engine, ${KIND_SQL('stage')}) AS dlabel,
          ${ns('_start_ts_us')} AS s_ns, ${ns('_end_ts_us')} AS e_ns
        FROM tw_hm`);
      const devices = await store.query({ label: 'string', kind: 'string' },
        `SELECT dlabel AS label, min(kind) AS kind FROM tw_hm_k WHERE kind <> 'cpu' GROUP BY dlabel
         ORDER BY CASE min(kind) WHEN 'gpu' THEN 0 ELSE 1 END, dlabel`);
      await store.run(`CREATE OR REPLACE TEMP TABLE tw_hm_dev (label VARCHAR, device INTEGER)`);
      // one append each (a statement per device took 28 s for 5000 device labels)
      await store.appendTemp('tw_hm_dev', devices.map((d, i) => [d.label, i]));
      await insertDevices(store, devices.map((d, i) => ({ capture_id: captureId, device: i, kind: (opts.deviceKind ?? d.kind) as DeviceKind, name: d.label, time_base: timeSource })));
      opts.onProgress?.('loading tables');
      await store.run(`INSERT INTO dispatches
        SELECT ${captureId}, d.device, TRY_CAST(k.queue AS INTEGER), NULL, NULL, NULL, NULL, NULL, NULL, coalesce(k.kernel, k.op, k.stage),
          k.s_ns, k.e_ns, k.e_ns - k.s_ns, NULL, NULL, NULL, '${timeSource}', k.s_ns IS NOT NULL AND k.e_ns IS NOT NULL AND k.e_ns > k.s_ns,
          NULL, NULL, NULL, TRY_CAST(k.rows AS BIGINT), k._line
        FROM tw_hm_k k JOIN tw_hm_dev d ON d.label = k.dlabel WHERE k.kind <> 'cpu' ORDER BY k._line`);
      await store.run(`INSERT INTO host_events
        SELECT ${captureId}, NULL, NULL, 'stage', stage, coalesce(kernel, op, stage), NULL, NULL, NULL, NULL, NULL,
          s_ns, e_ns, e_ns - s_ns, '${timeSource}', s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns > s_ns,
          json_object('run_id', run_id, 'chunk_id', chunk_id, 'layer_id', layer_id), _line
        FROM tw_hm_k WHERE kind = 'cpu' ORDER BY _line`);
      await store.run(`INSERT INTO raw_records
        SELECT ${captureId}, 'heteromosaic', (j->>'_line')::BIGINT, ${sourceJsonSql('j', EXACT)}
        FROM read_json_objects(${sqlString(out)}, format = 'newline_delimited') AS t(j) ORDER BY 3`);

      const bad = (await store.query(
        { nonpos: 'number', nonpos_line: 'number?', unparsable: 'number', unparsable_line: 'number?' },
        `SELECT count(*) FILTER (WHERE s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns <= s_ns)::INTEGER AS nonpos,
           min(_line) FILTER (WHERE s_ns IS NOT NULL AND e_ns IS NOT NULL AND e_ns <= s_ns) AS nonpos_line,
           count(*) FILTER (WHERE s_ns IS NULL OR e_ns IS NULL)::INTEGER AS unparsable,
           min(_line) FILTER (WHERE s_ns IS NULL OR e_ns IS NULL) AS unparsable_line
         FROM tw_hm_k`,
      ))[0]!;
      if (bad.nonpos > 0) diags.push({ severity: 'warning', code: 'non-positive-duration', message: traceMessages.nonPositiveDuration('stage(s)', bad.nonpos), line: bad.nonpos_line ?? undefined });
      // present but out of range (a number whose ns is beyond int64, 1e400, -1e300) is said so, apart from missing or non-numeric ones
      const numeric = (c: string) => `(${c}_text IS NOT NULL AND regexp_full_match(trim(${c}_text), '-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?'))`;
      const range = (await store.query({ n: 'number', line: 'number?' },
        `SELECT count(*)::INTEGER AS n, min(_line) AS line FROM tw_hm_k
         WHERE (s_ns IS NULL AND ${numeric('_start_ts_us')}) OR (e_ns IS NULL AND ${numeric('_end_ts_us')})`))[0]!;
      if (range.n > 0) {
        diags.push({ severity: 'warning', code: 'timestamp-out-of-range', line: range.line ?? undefined,
          message: `${range.n} stage(s) have a start_ts_us/end_ts_us that is present but out of range (beyond int64 ns from the epoch): kept with valid = false and NULL times` });
      }
      const unparsable = bad.unparsable - range.n;
      if (unparsable > 0) {
        const first = range.n > 0 ? Number(await store.scalar(`SELECT min(_line) FROM tw_hm_k WHERE (s_ns IS NULL OR e_ns IS NULL)
          AND NOT ((s_ns IS NULL AND ${numeric('_start_ts_us')}) OR (e_ns IS NULL AND ${numeric('_end_ts_us')}))`)) : bad.unparsable_line;
        diags.push({ severity: 'warning', code: 'missing-timestamp', message: traceMessages.badTimestamp('stage(s)', unparsable, 'start_ts_us/end_ts_us (a number of microseconds)'), line: first ?? undefined });
      }

      await insertCapture(store, {
        capture_id: captureId, path: src.displayPath, format: 'heteromosaic-jsonl', sha256: await sha, size_bytes: src.sizeBytes,
        producer: 'HeteroMosaic trace JSONL', label: opts.label ?? baseName(src.displayPath), timeline, record_count: records,
      });
      await insertDiagnostics(store, captureId, src.displayPath, diags);
      const dispatches = await store.count('dispatches', `WHERE capture_id = ${captureId}`);
      return { capture_id: captureId, format: 'heteromosaic-jsonl', records, dispatches, diagnostics: diags.length };
    } finally {
      await store.run('DROP VIEW IF EXISTS tw_hm_k').catch(() => undefined);
      for (const t of ['tw_hm', 'tw_hm_dev']) await store.run(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
    }
  });
}

/** True when the first line looks like a HeteroMosaic trace record. */
export function sniffHeteroMosaic(head: string): boolean {
  const first = head.split('\n').find((l) => l.trim() !== '') ?? '';
  return /^\s*\{/.test(first) && /"start_ts_us"\s*:/.test(first) && /"end_ts_us"\s*:/.test(first) && /"stage"\s*:/.test(first);
}
