/**
 * Pins: the expected identity of every file a program loads (size, build-id,
 * sha256, marker counts), written once from a known-good setup and compared
 * against what a later run would load. A difference is a `stale-library`
 * (same name, other contents) or `missing` (pinned, not found now).
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { ProvenanceError } from './errors';
import type { FileFacts } from './file-facts';
import { provenanceMessages as msg } from './messages';
import type { LibraryResolution } from './resolve-libs';

/** The pin schema tag. */
export const PIN_SCHEMA = 'tickwise-pin/1';

/** One pinned file. */
export interface PinFile {
  /** What it is known by: the needed name of a library, the file name of the executable. */
  name: string;
  /** Where it was when pinned. */
  path: string;
  /** Size in bytes (the pin schema's name for it). */
  size: number;
  /** GNU build-id (hex), null when none. */
  build_id: string | null;
  /** SHA-256, hex. */
  sha256: string;
  /** Marker string to occurrence count. */
  markers: Record<string, number>;
}

/** A pin file's contents. */
export interface Pin {
  schema: typeof PIN_SCHEMA;
  /** The executable it was made from, when made from one. */
  executable?: string;
  /** The loader environment it was made under. */
  env?: { LD_LIBRARY_PATH: string | null; LD_PRELOAD: string | null };
  files: PinFile[];
  /** Needed names that did not resolve when the pin was made. */
  unresolved?: string[];
}

/** A file as observed now: a name, where it resolved (null: not found), and its facts. */
export interface ObservedFile {
  name: string;
  /** Other names it answers to (DT_NEEDED strings, its soname); a pinned name matches any of them. */
  names?: readonly string[];
  path: string | null;
  facts: FileFacts | null;
}

/** Kinds of pin differences. */
export const PinDifferenceCode = {
  'stale-library': 'same name, different contents (build-id, sha256, size or a marker count)',
  missing: 'pinned but not found now',
  unpinned: 'found now but not in the pin',
  'marker-not-counted': 'the pin has a count for a marker that was not counted now',
} as const;
/** One of {@link PinDifferenceCode}'s keys. */
export type PinDifferenceCode = keyof typeof PinDifferenceCode;

/** One difference between a pin and what is observed. */
export interface PinDifference {
  code: PinDifferenceCode;
  /** The file's name. */
  name: string;
  /** Which field differs (stale-library, marker-not-counted). */
  field: 'build_id' | 'sha256' | 'size' | 'marker' | null;
  /** The marker, for `field: "marker"`. */
  marker: string | null;
  /** The pinned value. */
  expected: string | number | null;
  /** The observed value. */
  observed: string | number | null;
  /** Where the pinned file was. */
  expected_path: string | null;
  /** Where the file is now. */
  observed_path: string | null;
  /** One line for people. */
  message: string;
}

/**
 * The files of a resolution as {@link ObservedFile}s: the executable
 * (named by its file name) and then every library, found or not.
 */
export function observedFiles(res: LibraryResolution): ObservedFile[] {
  return [
    { name: basename(res.executable), path: res.executable, facts: res.facts },
    ...res.libraries.map((l) => ({ name: l.name, names: l.names, path: l.loader_error === null ? l.path : null, facts: l.facts })),
  ];
}

/** Makes a pin from a resolution or a list of observed files (files without facts are listed as unresolved). */
export function makePin(from: LibraryResolution | readonly ObservedFile[]): Pin {
  const files = Array.isArray(from) ? (from as readonly ObservedFile[]) : observedFiles(from as LibraryResolution);
  const pin: Pin = Array.isArray(from)
    ? { schema: PIN_SCHEMA, files: [] }
    : { schema: PIN_SCHEMA, executable: (from as LibraryResolution).executable, env: (from as LibraryResolution).env, files: [] };
  const unresolved: string[] = [];
  for (const f of files) {
    if (f.path === null || f.facts === null) {
      unresolved.push(f.name);
      continue;
    }
    pin.files.push({
      name: f.name,
      path: f.path,
      size: f.facts.size_bytes,
      build_id: f.facts.build_id,
      sha256: f.facts.sha256,
      markers: { ...f.facts.markers },
    });
  }
  if (unresolved.length) pin.unresolved = unresolved;
  return pin;
}

/** Compares what is observed now against a pin; an empty list means it matches. */
export function comparePin(pin: Pin, observed: LibraryResolution | readonly ObservedFile[]): PinDifference[] {
  const now = Array.isArray(observed) ? (observed as readonly ObservedFile[]) : observedFiles(observed as LibraryResolution);
  const byName = new Map<string, ObservedFile>();
  for (const o of now) for (const n of [o.name, ...(o.names ?? [])]) if (!byName.has(n)) byName.set(n, o);
  const out: PinDifference[] = [];
  const base = (p: PinFile, o: ObservedFile | undefined) => ({ name: p.name, expected_path: p.path, observed_path: o?.path ?? null });
  for (const p of pin.files) {
    const o = byName.get(p.name);
    if (!o || o.path === null || o.facts === null) {
      out.push({ code: 'missing', ...base(p, o), field: null, marker: null, expected: p.path, observed: null, message: `${p.name}: pinned (${p.path}) but not found now` });
      continue;
    }
    const f = o.facts;
    const stale = (field: 'build_id' | 'sha256' | 'size', label: string, expected: string | number | null, seen: string | number | null) => {
      if (expected === seen) return;
      out.push({
        code: 'stale-library',
        ...base(p, o),
        field,
        marker: null,
        expected,
        observed: seen,
        message: `${p.name}: ${label} ${seen ?? 'none'} loaded from ${o.path}, pinned ${expected ?? 'none'} (${p.path})`,
      });
    };
    stale('build_id', 'build-id', p.build_id, f.build_id);
    stale('sha256', 'sha256', p.sha256, f.sha256);
    stale('size', 'size (bytes)', p.size, f.size_bytes);
    for (const [marker, expected] of Object.entries(p.markers)) {
      const seen = Object.hasOwn(f.markers, marker) ? f.markers[marker]! : undefined;
      if (seen === undefined) {
        out.push({ code: 'marker-not-counted', ...base(p, o), field: 'marker', marker, expected, observed: null, message: `${p.name}: the pin counts marker "${marker}" but it was not counted now (pass it as a marker)` });
      } else if (seen !== expected) {
        out.push({ code: 'stale-library', ...base(p, o), field: 'marker', marker, expected, observed: seen, message: `${p.name}: marker "${marker}" occurs ${seen} times in ${o.path}, pinned ${expected} (${p.path})` });
      }
    }
  }
  const pinned = new Set(pin.files.map((p) => p.name));
  for (const u of pin.unresolved ?? []) pinned.add(u);
  for (const o of now) {
    if (o.path === null || [o.name, ...(o.names ?? [])].some((n) => pinned.has(n))) continue;
    out.push({ code: 'unpinned', name: o.name, expected_path: null, observed_path: o.path, field: null, marker: null, expected: null, observed: o.path, message: `${o.name}: loaded from ${o.path} but not in the pin` });
  }
  return out;
}

/** Checks parsed JSON is a pin; throws {@link ProvenanceError} naming `path` otherwise. */
export function parsePin(json: unknown, path = '<pin>'): Pin {
  const fail = (d: string): never => {
    throw new ProvenanceError('bad-pin', path, msg.badPin(d));
  };
  if (typeof json !== 'object' || json === null) return fail('not a JSON object');
  const o = json as Record<string, unknown>;
  if (o['schema'] !== PIN_SCHEMA) return fail(`schema is ${JSON.stringify(o['schema'])}, expected "${PIN_SCHEMA}"`);
  if (!Array.isArray(o['files'])) return fail('"files" is not an array');
  (o['files'] as unknown[]).forEach((f, i) => {
    const r = f as Record<string, unknown>;
    if (typeof f !== 'object' || f === null) fail(`files[${i}] is not an object`);
    if (typeof r['name'] !== 'string') fail(`files[${i}].name is not a string`);
    if (typeof r['path'] !== 'string') fail(`files[${i}].path is not a string`);
    if (typeof r['size'] !== 'number') fail(`files[${i}].size is not a number`);
    if (r['build_id'] !== null && typeof r['build_id'] !== 'string') fail(`files[${i}].build_id is not a string or null`);
    if (typeof r['sha256'] !== 'string') fail(`files[${i}].sha256 is not a string`);
    const m = r['markers'];
    if (typeof m !== 'object' || m === null || Object.values(m).some((v) => typeof v !== 'number')) fail(`files[${i}].markers is not an object of counts`);
  });
  return json as Pin;
}

/** Reads and checks a pin file. */
export function readPin(path: string): Pin {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ProvenanceError('bad-pin', path, msg.badPin(`not JSON (${(e as Error).message})`), { cause: e });
  }
  return parsePin(json, path);
}
