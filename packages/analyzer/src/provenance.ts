/**
 * The one-line provenance header printed before any number about a capture:
 * id, source path or label, format, producer, sha256 prefix, timeline, and
 * how many library/file provenance rows the store holds for it.
 */
import type { RowOf, Store } from '@tickwise/store';
import { readOnce } from './read-memo';
import { CAPTURE_SHAPE } from './shapes';

/** Every capture row of the store by id (one query per read-only store). */
export function storeCaptures(store: Store): Promise<Map<number, RowOf<typeof CAPTURE_SHAPE>>> {
  return readOnce(store, 'captures', async () => new Map((await store.query(CAPTURE_SHAPE,
    `SELECT capture_id, path, label, format, producer, sha256, timeline, schema_version FROM captures`)).map((c) => [c.capture_id, c])));
}

/** `# capture 1: path (format, producer ..., sha256 0123456789ab, timeline host_monotonic)`. */
export async function provenanceLine(store: Store, captureId: number): Promise<string> {
  const c = (await storeCaptures(store)).get(captureId);
  if (!c) return `# capture ${captureId}: (not in this store)`;
  const libs = (await readOnce(store, 'provenance-counts', async () => new Map((await store.query({ capture_id: 'number', n: 'number' },
    `SELECT capture_id, count(*) AS n FROM provenance GROUP BY capture_id`)).map((r) => [r.capture_id, r.n])))).get(captureId) ?? 0;
  const parts = [
    c.format + (c.schema_version !== null ? ` v${c.schema_version}` : ''),
    `producer ${c.producer ?? 'unknown'}`,
    `sha256 ${c.sha256 ? c.sha256.slice(0, 12) : 'unknown'}`,
    `timeline ${c.timeline}`,
  ];
  if (libs > 0) parts.push(`${libs} provenance row${libs === 1 ? '' : 's'} (tickwise info)`);
  const name = c.label && c.label !== c.path && !c.path.endsWith(c.label) ? `${c.path} [${c.label}]` : c.path;
  return `# capture ${c.capture_id}: ${name} (${parts.join(', ')})`;
}

/** Provenance lines of several captures, one per line. */
export async function provenanceLines(store: Store, captureIds: Iterable<number>): Promise<string> {
  const lines: string[] = [];
  for (const id of [...new Set(captureIds)].sort((a, b) => a - b)) lines.push(await provenanceLine(store, id));
  return lines.join('\n');
}

/** A capture's provenance as data, for JSON output beside the numbers. */
export interface CaptureFacts {
  readonly capture_id: number;
  readonly path: string;
  readonly label: string | null;
  readonly format: string;
  readonly producer: string | null;
  readonly sha256: string | null;
  readonly timeline: string;
}

/** {@link CaptureFacts} of several captures, by id. */
export async function captureFacts(store: Store, captureIds: Iterable<number>): Promise<CaptureFacts[]> {
  const ids = [...new Set(captureIds)].sort((a, b) => a - b);
  if (ids.length === 0) return [];
  const all = await storeCaptures(store);
  const rows = ids.flatMap((id) => { const c = all.get(id); return c ? [c] : []; });
  return rows.map((c) => ({ capture_id: c.capture_id, path: c.path, label: c.label, format: c.format, producer: c.producer, sha256: c.sha256, timeline: c.timeline }));
}
