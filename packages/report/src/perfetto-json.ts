/**
 * Chrome trace JSON ("Trace Event Format") that Perfetto's UI opens, written
 * from the store in one streaming pass.
 *
 * ```
 * devices + captures ──> one process per (capture, device), iGPU before NPU,
 *                        all on the one host timeline of the store
 * dispatches (sorted by device, time family, queue, start)
 *     ──> LaneAssigner per queue ──> one thread per queue lane
 *     ──> "X" events: ts/dur = exact decimal microseconds of the ns values
 * submissions ──> the same, on a "queue N submissions" thread
 * ```
 *
 * Times: Chrome JSON counts microseconds; every `ts`/`dur` is the exact
 * decimal text of the store's integer nanoseconds (`nsToUsDecimal`), never
 * a float, so parsing the text back gives the nanoseconds exactly. Raw ticks
 * and ids ride in `args`, as JSON numbers up to 2^53 and strings beyond.
 */
import { rename, rm } from 'node:fs/promises';
import type { Store } from '@tickwise/store';
import { nsToUsDecimal } from '@tickwise/time';
import { jsonObject } from './json-text';
import { LaneAssigner } from './lanes';
import { TextSink } from './output-file';
import { streamRecords, type StreamRecord } from './stream-rows';

/** What an export wrote. */
export interface PerfettoExportSummary {
  /** The file written. */
  readonly path: string;
  /** Dispatch slices written (category `dispatch`). */
  readonly dispatch_slices: number;
  /** Submission slices written (category `submission`). */
  readonly submission_slices: number;
  /** Processes: one per (capture, device). */
  readonly processes: number;
  /** Threads: one per queue lane (plus submission lanes). */
  readonly threads: number;
  /** Valid rows left out because they end before they start. */
  readonly negative_duration_rows: number;
  /** Bytes written. */
  readonly bytes: number;
}

/** Options of {@link exportPerfettoJson}. */
export interface PerfettoExportOptions {
  /** Also write the submissions table as slices (default true). */
  readonly submissions?: boolean;
}

const HOST_TIMED = `('host_monotonic', 'host_boottime', 'host_other')`;
const DEVICE_ORDER = `CASE kind WHEN 'gpu' THEN 0 WHEN 'npu' THEN 1 WHEN 'cpu' THEN 2 ELSE 3 END`;

/** SQL of the processes: one row per (capture, device) that has timed rows. */
export function perfettoProcessesSql(): string {
  return `WITH k AS (
      SELECT DISTINCT capture_id, device FROM dispatches WHERE valid AND start_ns IS NOT NULL AND end_ns IS NOT NULL
      UNION SELECT DISTINCT capture_id, device FROM submissions
        WHERE coalesce(valid, true) AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND device IS NOT NULL)
    SELECT k.capture_id, k.device, coalesce(d.kind, 'unknown') AS kind, d.name, d.time_base, d.tick_hz_used,
      c.label, c.path, c.timeline, c.producer, c.sha256
    FROM k LEFT JOIN devices d USING (capture_id, device) LEFT JOIN captures c USING (capture_id)
    ORDER BY ${DEVICE_ORDER}, k.capture_id, k.device`;
}

/** SQL of the dispatch slices, in the order the lanes need. */
export function perfettoDispatchSql(): string {
  return `SELECT capture_id, device, queue, time_source IN ${HOST_TIMED} AS host_timed, kernel,
      start_ns, end_ns, start_tick, end_tick, submission_id, command_buffer_id, command_index, event_id,
      executable_id, function_ordinal, workgroup_count_x, workgroup_count_y, workgroup_count_z, rows, time_source, line
    FROM dispatches
    WHERE valid AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns
    ORDER BY capture_id, device, host_timed, queue NULLS LAST, start_ns, end_ns, line`;
}

/** SQL of the submission slices, in the order the lanes need. */
export function perfettoSubmissionSql(): string {
  return `SELECT capture_id, device, queue, time_source IN ${HOST_TIMED} AS host_timed, op,
      start_ns, end_ns, start_tick, end_tick, submission_id, command_buffer_id, event_id, operation_count, time_source, line
    FROM submissions
    WHERE coalesce(valid, true) AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns >= start_ns AND device IS NOT NULL
    ORDER BY capture_id, device, host_timed, queue NULLS LAST, start_ns, end_ns, line`;
}

type Rec = Record<string, unknown>;

function big(v: StreamRecord[string]): bigint {
  return typeof v === 'bigint' ? v : BigInt(v as number);
}

const KIND_NAME: Record<string, string> = { gpu: 'iGPU', npu: 'NPU', cpu: 'CPU', unknown: 'device' };

function processName(p: Rec): string {
  const kind = KIND_NAME[String(p['kind'])] ?? String(p['kind']);
  const capture = p['label'] ?? (typeof p['path'] === 'string' ? p['path'].split('/').pop() : null) ?? `capture ${String(p['capture_id'])}`;
  const name = p['name'] ? ` ${String(p['name'])}` : '';
  return `${kind}${name} · device ${String(p['device'])} · ${String(capture)} (capture ${String(p['capture_id'])})`;
}

/**
 * Writes the store's dispatches (and submissions) as Chrome trace JSON for
 * Perfetto's UI, streaming, into a temporary file renamed into place at the
 * end (a failed export leaves no partial file). One event per line; see the
 * module comment for the track layout and the exact-time rule.
 */
export async function exportPerfettoJson(store: Store, path: string, opts: PerfettoExportOptions = {}): Promise<PerfettoExportSummary> {
  const procs = await store.rows(perfettoProcessesSql());
  const negative = Number(await store.scalar(
    `SELECT count(*) FROM dispatches WHERE valid AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND end_ns < start_ns`,
  ));
  const captures = await store.rows(`SELECT capture_id, path, format, producer, label, sha256, timeline FROM captures ORDER BY capture_id`);
  const pidOf = new Map<string, number>();
  procs.forEach((p, i) => pidOf.set(`${String(p['capture_id'])}:${String(p['device'])}`, i + 1));

  const tmp = `${path}.partial-${process.pid}`;
  const sink = new TextSink(tmp);
  let threads = 0;
  let dispatchSlices = 0;
  let submissionSlices = 0;
  try {
    const other = [
      `"producer":"tickwise export --format perfetto-json"`,
      `"time_unit":"ts and dur are microseconds, the exact decimal of the store's integer nanoseconds"`,
      `"captures":[${captures.map((c) => jsonObject(Object.entries(c))).join(',')}]`,
    ];
    // no displayTimeUnit: older trace processors read "ns" there as the unit of ts (google/perfetto#106)
    await sink.write(`{"otherData":{${other.join(',')}},\n"traceEvents":[\n`);
    let first = true;
    const emit = async (text: string) => {
      await sink.write((first ? '' : ',\n') + text);
      first = false;
    };
    for (const [i, p] of procs.entries()) {
      const pid = i + 1;
      await emit(`{"ph":"M","name":"process_name","pid":${pid},"tid":0,"args":{"name":${JSON.stringify(processName(p))}}}`);
      await emit(`{"ph":"M","name":"process_sort_index","pid":${pid},"tid":0,"args":{"sort_index":${pid}}}`);
      await emit(`{"ph":"M","name":"process_labels","pid":${pid},"tid":0,"args":{"labels":${JSON.stringify(
        `capture_id=${String(p['capture_id'])} device=${String(p['device'])} kind=${String(p['kind'])} time_base=${String(p['time_base'] ?? '?')}`,
      )}}}`);
    }

    const passes = [
      { cat: 'dispatch', sql: perfettoDispatchSql(), suffix: '' },
      ...(opts.submissions === false ? [] : [{ cat: 'submission', sql: perfettoSubmissionSql(), suffix: ' submissions' }]),
    ] as const;
    for (const pass of passes) {
      const lanesOf = new Map<string, { assigner: LaneAssigner; tids: number[] }>();
      for await (const chunk of streamRecords(store, pass.sql)) {
        for (const r of chunk) {
          const pid = pidOf.get(`${String(r['capture_id'])}:${String(r['device'])}`)!;
          const key = `${pid}|${String(r['host_timed'])}|${String(r['queue'])}`;
          let lanes = lanesOf.get(key);
          if (!lanes) { lanes = { assigner: new LaneAssigner(), tids: [] }; lanesOf.set(key, lanes); }
          const start = big(r['start_ns']);
          const end = big(r['end_ns']);
          const lane = lanes.assigner.assign(start, end);
          let tid = lanes.tids[lane];
          if (tid === undefined) {
            tid = ++threads;
            lanes.tids[lane] = tid;
            const q = r['queue'] === null ? 'queue ?' : `queue ${String(r['queue'])}`;
            const name = `${q}${pass.suffix}${r['host_timed'] ? ' · host-timed' : ''}${lane > 0 ? ` · lane ${lane + 1}` : ''}`;
            await emit(`{"ph":"M","name":"thread_name","pid":${pid},"tid":${tid},"args":{"name":${JSON.stringify(name)}}}`);
            await emit(`{"ph":"M","name":"thread_sort_index","pid":${pid},"tid":${tid},"args":{"sort_index":${(pass.cat === 'submission' ? 0 : 1_000_000) + tid}}}`);
          }
          const args = pass.cat === 'dispatch'
            ? jsonObject([
              ['kernel', r['kernel']], ['submission_id', r['submission_id']], ['command_buffer_id', r['command_buffer_id']],
              ['command_index', r['command_index']], ['event_id', r['event_id']], ['executable_id', r['executable_id']],
              ['function_ordinal', r['function_ordinal']], ['start_tick', r['start_tick']], ['end_tick', r['end_tick']],
              ['start_ns', start], ['end_ns', end], ['dur_ns', end - start], ['time_source', r['time_source']],
              ['workgroup_count', r['workgroup_count_x'] === null ? null : `${String(r['workgroup_count_x'])}x${String(r['workgroup_count_y'])}x${String(r['workgroup_count_z'])}`],
              ['rows', r['rows']], ['line', r['line']],
            ])
            : jsonObject([
              ['submission_id', r['submission_id']], ['command_buffer_id', r['command_buffer_id']], ['op', r['op']],
              ['operation_count', r['operation_count']], ['event_id', r['event_id']], ['start_tick', r['start_tick']], ['end_tick', r['end_tick']],
              ['start_ns', start], ['end_ns', end], ['dur_ns', end - start], ['time_source', r['time_source']], ['line', r['line']],
            ]);
          const name = pass.cat === 'dispatch'
            ? String(r['kernel'] ?? 'dispatch')
            : `submission ${r['submission_id'] === null ? '?' : String(r['submission_id'])}`;
          await emit(`{"ph":"X","cat":"${pass.cat}","name":${JSON.stringify(name)},"pid":${pid},"tid":${tid},"ts":${nsToUsDecimal(start)},"dur":${nsToUsDecimal(end - start)},"args":${args}}`);
          if (pass.cat === 'dispatch') dispatchSlices++;
          else submissionSlices++;
        }
      }
    }
    await sink.write('\n]}\n');
    await sink.close();
    await rename(tmp, path);
  } catch (e) {
    await sink.close().catch(() => undefined);
    await rm(tmp, { force: true });
    throw e;
  }
  return {
    path,
    dispatch_slices: dispatchSlices,
    submission_slices: submissionSlices,
    processes: procs.length,
    threads,
    negative_duration_rows: negative,
    bytes: sink.bytes,
  };
}
