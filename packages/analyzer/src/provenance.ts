/**
 * The one-line provenance header printed before any number about a capture:
 * id, source path or label, format, producer, sha256 prefix, timeline, and
 * how many library/file provenance rows the store holds for it.
 */
import type { Store } from '@tickwise/store';
import { CAPTURE_SHAPE } from './shapes';
import { sqlInt } from './sql/quote';

/** `# capture 1: path (format, producer ..., sha256 0123456789ab, timeline host_monotonic)`. */
export async function provenanceLine(store: Store, captureId: number): Promise<string> {
  const c = (await store.query(CAPTURE_SHAPE, `SELECT capture_id, path, label, format, producer, sha256, timeline, schema_version FROM captures WHERE capture_id = $1`, [captureId]))[0];
  if (!c) return `# capture ${captureId}: (not in this store)`;
  const libs = Number(await store.scalar(`SELECT count(*) FROM provenance WHERE capture_id = $1`, [captureId]));
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
  const rows = await store.query(CAPTURE_SHAPE, `SELECT capture_id, path, label, format, producer, sha256, timeline, schema_version FROM captures WHERE capture_id IN (${ids.map((i) => sqlInt(i)).join(', ')}) ORDER BY capture_id`);
  return rows.map((c) => ({ capture_id: c.capture_id, path: c.path, label: c.label, format: c.format, producer: c.producer, sha256: c.sha256, timeline: c.timeline }));
}
