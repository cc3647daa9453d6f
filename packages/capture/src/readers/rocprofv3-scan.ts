/**
 * rocprofv3 JSON's scan: the record kinds read, the plan, the sniff, and the
 * scan's start before the store opens. Light on purpose (no DuckDB, no
 * store), like chrome-scan.ts: the CLI's entry starts the scan through
 * `@tickwise/capture/early`, and {@link importRocprofJson} in rocprofv3.ts
 * takes the run over.
 */
import { join } from 'node:path';
import { STAGE_PART_BYTES, startScanEarly, type NdjsonPart, type ScanOptions } from '../json-records';
import type { SourceFile } from '../source-file';

/** The top-level key of rocprofv3's JSON: one entry per profiled process. */
export const ROCPROF_TOOL = 'rocprofiler-sdk-tool';

/** The buffer-record kinds of results.json that become host events, with the host_events kind they get. */
export const JSON_HOST_KINDS = {
  hip_api: 'hip_api',
  hsa_api: 'hsa_api',
  marker_api: 'marker_api',
  rccl_api: 'rccl_api',
  memory_copy: 'memory_copy',
} as const;

/** The record arrays the import reads, in the scan's spec order: kernel dispatches, agents, kernel symbols, then the host kinds. */
export const ROCPROF_RECORDS: readonly { readonly name: string; readonly path: readonly string[] }[] = [
  { name: 'kd', path: [ROCPROF_TOOL, '[]', 'buffer_records', 'kernel_dispatch', '[]'] },
  { name: 'agents', path: [ROCPROF_TOOL, '[]', 'agents', '[]'] },
  { name: 'syms', path: [ROCPROF_TOOL, '[]', 'kernel_symbols', '[]'] },
  ...Object.keys(JSON_HOST_KINDS).map((k) => ({ name: k, path: [ROCPROF_TOOL, '[]', 'buffer_records', k, '[]'] })),
];

/** The scan of a rocprofv3 JSON into `dir` (one plan whoever starts it); `onPart(i)`: where spec i's parts go. */
export function rocprofScanOptions(dir: string, onPart: (i: number) => ((part: NdjsonPart) => void) | undefined, onRestart?: () => void): ScanOptions {
  return {
    mode: 'document',
    records: ROCPROF_RECORDS.map((k, i) => {
      const to = onPart(i);
      return { paths: [k.path], out: join(dir, `${k.name}.ndjson`), partBytes: STAGE_PART_BYTES, ...(to ? { onPart: to } : {}) };
    }),
    capture: [[ROCPROF_TOOL, '[]', 'metadata'], [ROCPROF_TOOL, '[]', 'strings', 'buffer_records']],
    ...(onRestart ? { onRestart } : {}),
  };
}

/**
 * Starts the native scan of a rocprofv3 JSON before the store is open (the
 * reader takes it over: the same plan in the same folder). Nothing starts
 * for a file the TypeScript scanner would read, or when a scan of the file
 * already runs.
 */
export async function startRocprofScanEarly(src: SourceFile): Promise<void> {
  await startScanEarly(src, 'rocprof', (dir) => rocprofScanOptions(dir, () => undefined));
}

/** True when a file's first bytes look like rocprofv3's JSON output. */
export function sniffRocprofJson(head: string): boolean {
  return /^\s*\{\s*"rocprofiler-sdk-tool"\s*:/.test(head);
}
