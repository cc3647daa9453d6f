/**
 * One entry point for "where does this come from": any file gets its facts;
 * a dynamically linked program also gets its libraries resolved as ld.so
 * would (see {@link resolveLibraries}).
 *
 *   path ─▶ ELF? ──no──▶ fileFacts                       (kind "file")
 *             │yes
 *             ├─ has PT_INTERP (or deps: "always") ─▶ resolveLibraries (kind "executable")
 *             └─ otherwise ─▶ fileFacts + ELF summary  (kind "shared-library" / "elf")
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { hasElfMagic, readElf } from './elf';
import { checkWithRealLoader } from './loader-check';
import { ProvenanceError } from './errors';
import { fileFacts } from './file-facts';
import { provenanceMessages as msg } from './messages';
import { elfKind, elfSummary, resolveLibraries, type LibraryResolution, type ResolveOptions } from './resolve-libs';

/** Options of {@link provenanceOf}. */
export interface ProvenanceOptions extends ResolveOptions {
  /** Resolve libraries: `auto` (programs with PT_INTERP only), `always` (also a shared library's own DT_NEEDED), `never`. Default `auto`. */
  deps?: 'auto' | 'always' | 'never';
  /** Ask the real loader (`<PT_INTERP>` in trace mode, as ldd does) too when the program is for this host, and note where it disagrees. Default true. */
  ask_loader?: boolean;
}

/** The provenance of one file: its facts, and for a program the libraries it would load. */
export async function provenanceOf(path: string, opts: ProvenanceOptions = {}): Promise<LibraryResolution> {
  const env = opts.env ?? process.env;
  const envUsed = { LD_LIBRARY_PATH: env['LD_LIBRARY_PATH'] ?? null, LD_PRELOAD: env['LD_PRELOAD'] ?? null };
  if (!isElfFile(path)) {
    const facts = opts.facts === false ? null : await fileFacts(path, opts.markers ?? []);
    return { executable: path, kind: 'file', elf: null, facts, loader: null, env: envUsed, libraries: [], notes: [] };
  }
  const elf = readElf(path);
  const deps = opts.deps ?? 'auto';
  const kind = elfKind(elf);
  if (deps === 'always' ? elf.dynamic !== null : deps === 'auto' && kind === 'executable') {
    const r = await resolveLibraries(path, opts);
    if (kind !== 'executable') r.notes.push(`${path} is a ${kind}: its DT_NEEDED were resolved as if it were the program (no PT_INTERP, so no interpreter row)`);
    else if (opts.ask_loader !== false && opts.ld_so_cache === undefined && opts.default_dirs === undefined && opts.hwcaps_subdirs === undefined) {
      // Only when the model ran with this host's own loader facts: with overridden facts the loader would answer another question.
      r.loader_check = checkWithRealLoader(r, opts.cwd);
    }
    return r;
  }
  const facts = opts.facts === false ? null : await fileFacts(path, opts.markers ?? [], { elf });
  return { executable: path, kind, elf: elfSummary(elf), facts, loader: null, env: envUsed, libraries: [], notes: [] };
}

function isElfFile(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  }
  try {
    const head = Buffer.alloc(4);
    const n = readSync(fd, head, 0, 4, 0);
    return hasElfMagic(head.subarray(0, n));
  } catch (e) {
    throw new ProvenanceError('unreadable', path, msg.unreadable((e as Error).message), { cause: e });
  } finally {
    closeSync(fd);
  }
}
