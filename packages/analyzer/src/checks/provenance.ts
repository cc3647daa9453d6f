/**
 * Provenance rules over the `provenance` table's rows as plain data (trap
 * 4): `stale-library` against a pin (`tickwise-pin/1`), `mixed-builds`
 * within a capture (project libraries from folders with far-apart mtimes)
 * and between the captures of a store (one library, several builds), and
 * `no-provenance`.
 */
import { formatNs } from '@tickwise/time';
import { checkMessages as msg } from './messages';
import { captureFilter } from './sql';
import { defineRule, type Finding, type PinFileLike } from './types';

/** Row shape of the provenance query. */
const PROVENANCE_SHAPE = {
  capture_id: 'number', role: 'string?', name: 'string?', path: 'string?', size_bytes: 'number?', mtime_ns: 'bigint?', build_id: 'string?',
  sha256: 'string?', markers: 'string?', how_found: 'string?',
} as const;

const provenanceSql = (scope: Parameters<typeof captureFilter>[0]) => `SELECT capture_id, role, name, path, size_bytes, mtime_ns, build_id, sha256,
    markers::VARCHAR AS markers, how_found FROM provenance WHERE ${captureFilter(scope)} ORDER BY capture_id, name, path`;

/** How a library was found when it was found through a project's own paths (not the system's). */
const PROJECT_HOW = new Set(['rpath', 'runpath', 'ld_library_path', 'path', 'LD_LIBRARY_PATH', 'RUNPATH', 'RPATH', 'preload', 'ld_preload']);

function parseMarkers(text: string | null): Record<string, number> {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const o: Record<string, number> = {};
      for (const [k, n] of Object.entries(v)) if (typeof n === 'number') o[k] = n;
      return o;
    }
  } catch {
    // a markers column that is not JSON counts nothing
  }
  return {};
}

function dirOf(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

function baseOf(p: string): string {
  return p.slice(p.lastIndexOf('/') + 1);
}

function isoOf(mtime: bigint | null): string {
  return mtime === null ? 'mtime unknown' : new Date(Number(mtime / 1_000_000n)).toISOString().replace('.000Z', 'Z');
}

/** `stale-library`: each pinned file against the capture's recorded one of that name. */
export const staleLibrary = defineRule({
  code: 'stale-library',
  worst: 'error',
  shape: PROVENANCE_SHAPE,
  sql: provenanceSql,
  evaluate: (rows, ctx) => {
    const pin = ctx.pin;
    if (!pin) return [];
    const out: Finding[] = [];
    for (const capture of ctx.captureIds) {
      const mine = rows.filter((r) => r.capture_id === capture);
      if (mine.length === 0) continue; // no-provenance says so
      const byName = new Map<string, (typeof mine)[number]>();
      for (const r of mine) {
        for (const key of [r.name, r.path ? baseOf(r.path) : null]) if (key && !byName.has(key)) byName.set(key, r);
      }
      for (const p of pin.files) {
        const r = byName.get(p.name) ?? byName.get(baseOf(p.path));
        if (!r || r.path === null) {
          out.push({
            code: 'stale-library', severity: 'warning', capture_id: capture, message: msg.pinnedMissing(capture, p.name, p.path),
            advice: msg.pinnedMissingAdvice(), name: p.name, pinned_path: p.path,
          });
          continue;
        }
        const diffs = compareFile(p, r);
        const notCounted = Object.keys(p.markers).filter((m) => !Object.hasOwn(parseMarkers(r.markers), m));
        if (diffs.list.length > 0) {
          out.push({
            code: 'stale-library', severity: 'error', capture_id: capture,
            message: msg.staleLibrary(capture, p.name, r.path, diffs.list, p.path), advice: msg.staleLibraryAdvice(),
            name: p.name, path: r.path, pinned_path: p.path, build_id: r.build_id, pinned_build_id: p.build_id,
            size_bytes: r.size_bytes, pinned_size_bytes: p.size, mtime_ns: r.mtime_ns, sha256: r.sha256, pinned_sha256: p.sha256,
            how_found: r.how_found, differs: diffs.fields.join(','),
          });
        }
        for (const m of notCounted) {
          out.push({
            code: 'stale-library', severity: 'warning', capture_id: capture, message: msg.markerNotCounted(capture, p.name, m),
            advice: msg.markerNotCountedAdvice(m), name: p.name, marker: m, pinned_marker_count: p.markers[m] ?? null,
          });
        }
      }
    }
    return out;
  },
});

function compareFile(p: PinFileLike, r: { build_id: string | null; sha256: string | null; size_bytes: number | null; mtime_ns: bigint | null; markers: string | null }): { list: string[]; fields: string[] } {
  const list: string[] = [];
  const fields: string[] = [];
  if ((p.build_id ?? null) !== (r.build_id ?? null)) {
    list.push(`build-id ${r.build_id ?? 'none'} (${isoOf(r.mtime_ns)}), pinned ${p.build_id ?? 'none'}`);
    fields.push('build_id');
  }
  if (r.sha256 !== null && p.sha256 !== r.sha256) {
    list.push(`sha256 ${r.sha256.slice(0, 12)}..., pinned ${p.sha256.slice(0, 12)}...`);
    fields.push('sha256');
  }
  if (r.size_bytes !== null && p.size !== r.size_bytes) {
    list.push(`size ${r.size_bytes} bytes, pinned ${p.size}`);
    fields.push('size');
  }
  const seen = parseMarkers(r.markers);
  for (const [m, expected] of Object.entries(p.markers)) {
    if (Object.hasOwn(seen, m) && seen[m] !== expected) {
      list.push(`marker "${m}" occurs ${seen[m]} times, pinned ${expected}`);
      fields.push(`marker:${m}`);
    }
  }
  return { list, fields };
}

/** `mixed-builds`: within a capture (project libraries from several folders, mtimes far apart) and between captures. */
export const mixedBuilds = defineRule({
  code: 'mixed-builds',
  worst: 'warning',
  shape: PROVENANCE_SHAPE,
  sql: provenanceSql,
  evaluate: (rows, ctx) => {
    const t = ctx.thresholds;
    const out: Finding[] = [];
    for (const capture of ctx.captureIds) {
      const libs = rows.filter((r) => r.capture_id === capture && r.path !== null && r.role !== 'executable' && r.how_found !== null && PROJECT_HOW.has(r.how_found));
      const dirs = new Set(libs.map((r) => dirOf(r.path!)));
      const mtimes = libs.map((r) => r.mtime_ns).filter((m): m is bigint => m !== null);
      if (dirs.size < 2 || mtimes.length < 2) continue;
      const lo = mtimes.reduce((a, b) => (b < a ? b : a));
      const hi = mtimes.reduce((a, b) => (b > a ? b : a));
      const spread = hi - lo;
      if (spread <= t.mixed_builds_mtime_spread_ns) continue;
      const listed = [...libs]
        .sort((a, b) => (a.mtime_ns ?? 0n) < (b.mtime_ns ?? 0n) ? 1 : -1)
        .map((r) => `${r.name ?? baseOf(r.path!)} from ${r.path} (${r.how_found}, ${isoOf(r.mtime_ns)})`);
      out.push({
        code: 'mixed-builds', severity: 'warning', capture_id: capture, message: msg.mixedFolders(capture, listed, formatAge(spread)), advice: msg.mixedFoldersAdvice(),
        folders: dirs.size, libraries: libs.length, mtime_spread_ns: spread,
      });
    }
    // between captures: one name, several contents
    const byName = new Map<string, Map<string, number[]>>();
    for (const r of rows) {
      if (!r.name || r.role === 'executable') continue;
      const id = r.build_id ?? r.sha256;
      if (!id) continue;
      let builds = byName.get(r.name);
      if (!builds) byName.set(r.name, (builds = new Map()));
      const caps = builds.get(id) ?? [];
      if (!caps.includes(r.capture_id)) caps.push(r.capture_id);
      builds.set(id, caps);
    }
    for (const [name, builds] of [...byName].sort((a, b) => a[0].localeCompare(b[0]))) {
      if (builds.size < 2) continue;
      const listed = [...builds].map(([id, caps]) => `${id.slice(0, 16)} in capture${caps.length > 1 ? 's' : ''} ${caps.join(', ')}`);
      out.push({
        code: 'mixed-builds', severity: 'warning', capture_id: null, message: msg.mixedCaptures(name, listed), advice: msg.mixedCapturesAdvice(),
        name, builds: builds.size,
      });
    }
    return out;
  },
});

function formatAge(ns: bigint): string {
  const h = Number(ns) / 3.6e12;
  if (h >= 48) return `${(h / 24).toFixed(1)} days`;
  if (h >= 1) return `${h.toFixed(1)} hours`;
  return formatNs(ns);
}

/** `no-provenance`: a capture with no provenance rows (a warning when a pin was given). */
export const noProvenance = defineRule({
  code: 'no-provenance',
  worst: 'warning',
  shape: { capture_id: 'number', path: 'string', n: 'number' },
  sql: (scope) => `SELECT c.capture_id, c.path, (SELECT count(*) FROM provenance p WHERE p.capture_id = c.capture_id) AS n
    FROM captures c WHERE ${captureFilter(scope, 'c')} ORDER BY c.capture_id`,
  evaluate: (rows, ctx) =>
    rows
      .filter((r) => r.n === 0)
      .map((r): Finding => ({
        code: 'no-provenance', severity: ctx.pin ? 'warning' : 'info', capture_id: r.capture_id,
        message: msg.noProvenance(r.capture_id, r.path), advice: msg.noProvenanceAdvice(),
      })),
});
