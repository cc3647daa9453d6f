/**
 * Provenance in the store: a library resolution written as `provenance`
 * rows of a capture (the executable, then every library it would load), and
 * read back as observed files (for a pin made from a store).
 *
 * ```
 * provenanceOf(exe, {env, markers}) --storeProvenance--> provenance rows (capture_id)
 * provenance rows --observedFilesFromStore--> ObservedFile[] --makePin--> tickwise-pin/1
 * ```
 */
import { basename } from 'node:path';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import type { FileFacts, LibraryResolution, ObservedFile } from './provenance/index';

/** What `provenance.role` holds. */
export const ProvenanceRole = {
  executable: 'the program (or file) provenance was taken of',
  library: 'a shared library the program loads (or would load)',
} as const;
/** Key of {@link ProvenanceRole}. */
export type ProvenanceRole = keyof typeof ProvenanceRole;

/** Writes a resolution as provenance rows of `captureId`; returns the rows written. */
export async function storeProvenance(store: Store, captureId: number, res: LibraryResolution): Promise<number> {
  const rows: { role: ProvenanceRole; name: string; path: string | null; facts: FileFacts | null; how: string | null }[] = [
    { role: 'executable', name: basename(res.executable), path: res.executable, facts: res.facts, how: 'given' },
    ...res.libraries.map((l) => ({
      role: 'library' as const,
      name: l.name,
      path: l.loader_error === null ? l.path : null,
      facts: l.facts,
      how: l.loader_error !== null ? 'loader-error' : l.path === null ? 'not-found' : l.how,
    })),
  ];
  for (const r of rows) {
    const f = r.facts;
    await store.run(
      `INSERT INTO provenance (capture_id, role, name, path, size_bytes, mtime_ns, build_id, sha256, markers, how_found)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9::JSON, $10)`,
      [captureId, r.role, r.name, r.path, f?.size_bytes ?? null, f?.mtime_ns ?? null, f?.build_id ?? null, f?.sha256 ?? null, f ? JSON.stringify(f.markers) : null, r.how],
    );
  }
  return rows.length;
}

/** Capture ids that have provenance rows, ascending. */
export async function provenanceCaptureIds(store: Store): Promise<number[]> {
  const rows = await store.query({ capture_id: 'number' }, 'SELECT DISTINCT capture_id FROM provenance ORDER BY capture_id');
  return rows.map((r) => r.capture_id);
}

/**
 * The provenance rows of one capture as observed files: the executable
 * first, then the libraries, as {@link makePin} and {@link comparePin} take
 * them. Facts a row lacks (realpath) are filled from what it has.
 */
export async function observedFilesFromStore(store: Store, captureId: number): Promise<ObservedFile[]> {
  const rows = await store.query(
    { role: 'string?', name: 'string?', path: 'string?', size_bytes: 'number?', mtime_ns: 'bigint?', build_id: 'string?', sha256: 'string?', markers: 'string?' },
    `SELECT role, name, path, size_bytes, mtime_ns, build_id, sha256, markers::VARCHAR AS markers FROM provenance WHERE capture_id = $1
     ORDER BY CASE role WHEN 'executable' THEN 0 ELSE 1 END, rowid`,
    [captureId],
  );
  if (rows.length === 0) throw new TickwiseError('no-provenance', `capture ${captureId} has no provenance rows (import it with --provenance-of <exe>)`);
  return rows.map((r) => {
    const name = r.name ?? (r.path ? basename(r.path) : '?');
    if (r.path === null || r.sha256 === null || r.size_bytes === null) return { name, path: null, facts: null };
    const mtime_ns = r.mtime_ns ?? 0n;
    const facts: FileFacts = {
      path: r.path,
      realpath: r.path,
      size_bytes: r.size_bytes,
      mtime_iso: new Date(Number(mtime_ns / 1_000_000n)).toISOString(),
      mtime_ns,
      build_id: r.build_id,
      is_elf: r.build_id !== null,
      sha256: r.sha256,
      markers: r.markers ? (JSON.parse(r.markers) as Record<string, number>) : {},
    };
    return { name, path: r.path, facts };
  });
}
