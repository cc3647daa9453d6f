/**
 * Which file each shared library of an executable resolves to, the way
 * glibc's dynamic loader (`elf/dl-load.c`, `elf/dl-deps.c`, glibc 2.36)
 * picks it, without running it:
 *
 *   executable ──PT_INTERP──▶ interpreter (already loaded, matched by soname)
 *        │
 *        ▼ breadth-first over DT_NEEDED (LD_PRELOAD objects first)
 *   name with '/' ─▶ that path ($ORIGIN etc. expanded)
 *   name loaded already (by a requested name, its soname or its file) ─▶ reused
 *   otherwise, first readable candidate of the right class/machine in:
 *     1. DT_RPATH of the needing object, then of its loader, ... up to the
 *        executable (only while the needing object has no DT_RUNPATH; an
 *        object with DT_RUNPATH has no effective DT_RPATH)
 *     2. LD_LIBRARY_PATH (':' or ';' separated)
 *     3. DT_RUNPATH of the needing object only (not inherited)
 *     4. /etc/ld.so.cache (unless DF_1_NODEFLIB keeps system dirs out)
 *     5. the default dirs (unless DF_1_NODEFLIB)
 *   Each directory of 1, 2, 3 and 5 is tried under its glibc-hwcaps
 *   subdirectories (x86-64-v4, -v3, -v2) first, then (glibc < 2.37) under
 *   the legacy hwcap subdirectories (tls/haswell/x86_64, ...), then as itself.
 *
 * `$ORIGIN` is the directory of the object whose path list it is in (for the
 * executable: its realpath's directory; for a library: the directory of the
 * path it was opened by, not canonicalized); `$LIB` and `$PLATFORM` come from
 * options with defaults for the machine ({@link loaderModel}). What this does
 * not model: secure (setuid) mode, dlopen() at run time, audit modules,
 * legacy hwcap bits of ld.so.cache entries, and legacy hwcaps off x86-64.
 */
import type { LoaderCheck } from './loader-check';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, resolve as resolvePath } from 'node:path';
import { DF_1_NODEFLIB, readElf, type ElfInfo } from './elf';
import { isProvenanceError } from './errors';
import { fileFacts, type FileFacts } from './file-facts';
import { cacheFlagsFor, readLdCache, readLdSoConf, type LdCache } from './ld-cache';
import { provenanceMessages as msg } from './messages';

/** How a library's file was found. */
export const FoundHow = {
  interpreter: 'the PT_INTERP dynamic loader itself',
  path: 'the needed name contains a slash and is used as a path',
  rpath: 'DT_RPATH of the needing object or one of its loaders',
  ld_library_path: 'LD_LIBRARY_PATH',
  runpath: 'DT_RUNPATH of the needing object',
  cache: '/etc/ld.so.cache',
  default: 'a default system directory',
  ld_so_conf: '/etc/ld.so.conf (fallback when there is no cache; ld.so itself does not read it)',
} as const;
/** One of {@link FoundHow}'s keys. */
export type FoundHow = keyof typeof FoundHow;
/** True for a {@link FoundHow} key. */
export function isFoundHow(x: unknown): x is FoundHow {
  return typeof x === 'string' && Object.hasOwn(FoundHow, x);
}

/** A candidate file the loader would open and pass over. */
export interface RejectedCandidate {
  path: string;
  reason: string;
}

/** One shared library in the resolution. */
export interface ResolvedLibrary {
  /** The name it was first needed by (DT_NEEDED string, LD_PRELOAD entry, or the interpreter's soname). */
  name: string;
  /** Every name it was asked for by (DT_NEEDED strings, LD_PRELOAD entries), then its DT_SONAME when that is another; `name` is the first. */
  names: string[];
  /** Who needed it: the paths of the objects whose DT_NEEDED named it (`LD_PRELOAD`, `PT_INTERP` for those). First is its loader. */
  needed_by: string[];
  /** The path the loader opens (as the loader spells it: `$ORIGIN/..` is not canonicalized); null when not found. */
  path: string | null;
  /** How it was found; null when not found. */
  how: FoundHow | null;
  /** The search directory it was found in (after `$ORIGIN` expansion); null for a path, the cache, the interpreter or not found. */
  search_dir: string | null;
  /** DT_SONAME of the file found. */
  soname: string | null;
  /** Breadth-first depth: 1 = needed by the executable. */
  depth: number;
  /** Files that exist at an earlier candidate path but were passed over (wrong class or machine). */
  rejected: RejectedCandidate[];
  /** A problem that would make the real loader abort here (invalid ELF header, ...); null when none. */
  loader_error: string | null;
  /** File facts of `path` (null when not found or when facts were not asked for). */
  facts: FileFacts | null;
}

/** The whole answer for one executable. */
export interface LibraryResolution {
  /** The executable (or file) as given. */
  executable: string;
  /** What it is: a dynamically linked program (has PT_INTERP), a shared object, another ELF file, or not ELF. */
  kind: ProvenanceKind;
  /** Its ELF class, machine, interpreter and dynamic entries; null when not ELF. */
  elf: ElfSummary | null;
  /** File facts of the executable itself (null when facts were not asked for). */
  facts: FileFacts | null;
  /** The loader-relevant environment used. */
  env: { LD_LIBRARY_PATH: string | null; LD_PRELOAD: string | null };
  /** The libraries, in load order (interpreter first, then breadth-first). */
  libraries: ResolvedLibrary[];
  /** What was assumed about the loader (from options or detected); null when nothing was resolved. */
  loader: LoaderModel | null;
  /** Things to know about this answer (no cache, assumptions made, ...). */
  notes: string[];
  /** The real loader's second opinion (programs for this host only); null or absent when it was not asked. */
  loader_check?: LoaderCheck | null;
}

/** The loader facts the resolution depends on. */
export interface LoaderModel {
  /** glibc minor version read from the interpreter (`36` for 2.36); null when unknown. */
  glibc_minor: number | null;
  /** `$PLATFORM`. */
  platform: string;
  /** `$LIB`. */
  lib: string;
  /** glibc-hwcaps subdirectory names, best first. */
  hwcaps_subdirs: string[];
  /** Legacy hwcap components. */
  legacy_hwcaps: string[];
  /** Default directories. */
  default_dirs: string[];
}

/** What a file is, for provenance. */
export const ProvenanceKind = {
  executable: 'a dynamically linked program (has PT_INTERP): its libraries are resolved',
  'shared-library': 'an ELF shared object (ET_DYN without PT_INTERP)',
  elf: 'another ELF file (static program, object file, core)',
  file: 'not an ELF file',
} as const;
/** One of {@link ProvenanceKind}'s keys. */
export type ProvenanceKind = keyof typeof ProvenanceKind;

/** The loader-relevant parts of an ELF header. */
export interface ElfSummary {
  class_bits: 32 | 64;
  machine_name: string;
  type: ElfInfo['type'];
  interpreter: string | null;
  soname: string | null;
  rpath: string | null;
  runpath: string | null;
  needed: string[];
}

/** The {@link ElfSummary} of parsed ELF facts. */
export function elfSummary(elf: ElfInfo): ElfSummary {
  return {
    class_bits: elf.class_bits,
    machine_name: elf.machine_name,
    type: elf.type,
    interpreter: elf.interpreter,
    soname: elf.dynamic?.soname ?? null,
    rpath: elf.dynamic?.rpath ?? null,
    runpath: elf.dynamic?.runpath ?? null,
    needed: elf.dynamic?.needed ?? [],
  };
}

/** The kind of a parsed ELF file. */
export function elfKind(elf: ElfInfo): ProvenanceKind {
  if (elf.interpreter !== null) return 'executable';
  return elf.type === 'DYN' && elf.dynamic !== null ? 'shared-library' : 'elf';
}

/** Options of {@link resolveLibraries}. */
export interface ResolveOptions {
  /** The environment the program would run with; only LD_LIBRARY_PATH and LD_PRELOAD are read. Default: `process.env`. */
  env?: Record<string, string | undefined>;
  /** Marker strings to count in every file. */
  markers?: readonly string[];
  /** Compute file facts (sha256, markers: reads every file whole). Default true. */
  facts?: boolean;
  /** Working directory for relative paths. Default: `process.cwd()`. */
  cwd?: string;
  /** ld.so.cache to read; null for none. Default `/etc/ld.so.cache`. */
  ld_so_cache?: string | null;
  /** When there is no cache, search the dirs of this ld.so.conf (not what ld.so does; off by default). */
  ld_so_conf_fallback?: string | null;
  /** /etc/ld.so.preload-style file; null for none. Default `/etc/ld.so.preload`. */
  ld_so_preload?: string | null;
  /** The loader's default dirs. Default: by machine (Debian multiarch dirs when present). */
  default_dirs?: readonly string[];
  /** glibc-hwcaps subdirectory names in priority order. Default: x86-64 levels this CPU supports (x86-64 with glibc >= 2.33 only). */
  hwcaps_subdirs?: readonly string[];
  /**
   * Legacy hwcap subdirectory components (glibc < 2.37), e.g. `["tls", "haswell", "avx512_1", "x86_64"]`;
   * every combination is tried, largest first, as `ld.so --help` lists them. Default: derived for x86-64
   * from the interpreter's glibc version and this CPU; none elsewhere.
   */
  legacy_hwcaps?: readonly string[];
  /** Expansion of `$LIB`. Default: by machine. */
  lib?: string;
  /** Expansion of `$PLATFORM`. Default: by machine (`x86_64`, `aarch64`, ...; glibc 2.26-2.36 on x86-64 may say `haswell`). */
  platform?: string;
  /** How many files to hash at once. Default 4. */
  concurrency?: number;
}

interface Loaded {
  path: string;
  elf: ElfInfo;
  /** $ORIGIN for this object; null when unknown. */
  origin: string | null;
  loader: Loaded | null;
  names: Set<string>;
  fileKey: string | null;
  row: ResolvedLibrary | null;
}

interface Machine {
  class_bits: 32 | 64;
  machine: number;
  endian: 'little' | 'big';
  flags: number;
}

type Verdict = { ok: true; elf: ElfInfo } | { ok: false; fatal: boolean; reason: string };

/**
 * Resolves the shared libraries of `executable` as glibc's ld.so would and
 * returns each with the file it resolves to and that file's facts. Throws
 * {@link ProvenanceError} when the executable itself is unreadable or not ELF.
 */
export async function resolveLibraries(executable: string, opts: ResolveOptions = {}): Promise<LibraryResolution> {
  const env = opts.env ?? process.env;
  const run = new LoaderRun(executable, opts);
  run.loadInterpreter();
  run.loadPreloads([...splitPreload(env['LD_PRELOAD'] ?? ''), ...(opts.ld_so_preload === null ? [] : readPreloadFile(opts.ld_so_preload ?? '/etc/ld.so.preload'))]);
  run.loadNeededBreadthFirst();
  for (const r of run.rows) if (r.soname !== null && !r.names.includes(r.soname)) r.names.push(r.soname);
  const exeFacts = opts.facts === false ? null : await collectFacts(run, opts);
  return {
    executable,
    kind: elfKind(run.main.elf),
    elf: elfSummary(run.main.elf),
    facts: exeFacts,
    loader: run.model,
    env: { LD_LIBRARY_PATH: env['LD_LIBRARY_PATH'] ?? null, LD_PRELOAD: env['LD_PRELOAD'] ?? null },
    libraries: run.rows,
    notes: run.notes,
  };
}

/** File facts of the executable and of every library found (a bounded number of files at once). */
async function collectFacts(run: LoaderRun, opts: ResolveOptions): Promise<FileFacts> {
  const markers = opts.markers ?? [];
  const exe = run.main.path;
  const exeFacts = await fileFacts(run.abs(exe), markers, { elf: run.main.elf });
  exeFacts.path = exe;
  const jobs: Array<() => Promise<void>> = [];
  for (const r of run.rows) {
    if (r.path === null || r.loader_error !== null) continue;
    const p = r.path;
    jobs.push(async () => {
      const f = await fileFacts(run.abs(p), markers);
      f.path = p;
      r.facts = f;
    });
  }
  await runLimited(jobs, opts.concurrency ?? 4);
  return exeFacts;
}

type Hit = { cand: string; dir: string | null; v: Verdict; how: FoundHow };

/**
 * One simulated loader run over an executable: the loaded set, the rows in
 * load order, and the search of `dl-load.c` (RPATH chain, LD_LIBRARY_PATH,
 * RUNPATH, the cache, the default dirs; each directory under its hwcaps
 * subdirectories) and the breadth-first DT_NEEDED walk of `dl-deps.c`.
 */
class LoaderRun {
  readonly notes: string[] = [];
  readonly rows: ResolvedLibrary[] = [];
  readonly model: LoaderModel;
  readonly main: Loaded;
  private readonly loaded: Loaded[];
  private readonly cwd: string;
  private readonly env: Record<string, string | undefined>;
  private readonly target: Machine;
  private readonly subdirs: string[];
  private readonly cache: LdCache | null = null;
  private readonly confDirs: string[];
  private readonly cacheFlags: number[] | null;
  private readonly depthOf = new Map<Loaded, number>();
  private readonly queue: Loaded[] = [];

  constructor(executable: string, opts: ResolveOptions) {
    this.cwd = opts.cwd ?? process.cwd();
    this.env = opts.env ?? process.env;
    const exeElf = readElf(this.abs(executable));
    if (exeElf.dynamic === null) this.notes.push(msg.notExecutable());
    this.target = { class_bits: exeElf.class_bits, machine: exeElf.machine, endian: exeElf.endian, flags: exeElf.flags };
    this.model = loaderModel(exeElf, opts);
    this.subdirs = searchSubdirs(this.model.hwcaps_subdirs, this.model.legacy_hwcaps);
    let exeReal: string | null = null;
    try {
      exeReal = realpathSync(this.abs(executable));
    } catch {
      exeReal = null;
    }
    this.main = {
      path: executable,
      elf: exeElf,
      origin: exeReal === null ? null : dirname(exeReal),
      loader: null,
      names: new Set([executable]),
      fileKey: fileKey(this.abs(executable)),
      row: null,
    };
    this.loaded = [this.main];
    this.depthOf.set(this.main, 0);
    const cachePath = opts.ld_so_cache === undefined ? '/etc/ld.so.cache' : opts.ld_so_cache;
    if (cachePath !== null) {
      this.cache = readLdCache(cachePath);
      if (this.cache === null) this.notes.push(`no ${cachePath}: ld.so searches only the default dirs after LD_LIBRARY_PATH/RUNPATH`);
    }
    this.confDirs = this.cache === null && opts.ld_so_conf_fallback ? readLdSoConf(opts.ld_so_conf_fallback) : [];
    this.cacheFlags = cacheFlagsFor(this.target.machine, this.target.class_bits, this.target.flags);
  }

  abs(p: string): string {
    return isAbsolute(p) ? p : resolvePath(this.cwd, p);
  }

  // --- dynamic string tokens and search lists ---------------------------------------------------

  /** `$ORIGIN`, `$PLATFORM`, `$LIB` expanded; null when `$ORIGIN` is unknown (the entry is dropped). */
  private expandDst(s: string, obj: Loaded): string | null {
    let dropped = false;
    const out = s.replace(/\$(\{(ORIGIN|PLATFORM|LIB)\}|(ORIGIN|PLATFORM|LIB)(?![A-Za-z0-9_]))/g, (_m, _b, curly: string | undefined, bare: string | undefined) => {
      const token = curly ?? bare;
      if (token === 'ORIGIN') {
        if (obj.origin === null) dropped = true;
        return obj.origin ?? '';
      }
      return token === 'PLATFORM' ? this.model.platform : this.model.lib;
    });
    return dropped ? null : out;
  }

  /** Directories of a path list, each with a trailing '/', "" meaning the working directory, duplicates dropped. */
  private searchList(list: string, seps: RegExp, obj: Loaded): string[] {
    const dirs: string[] = [];
    for (const part of list.split(seps)) {
      let d = part;
      if (d !== '') {
        const x = this.expandDst(d, obj);
        if (x === null || x === '') continue;
        d = x.replace(/(.)\/+$/, '$1');
        if (!d.endsWith('/')) d += '/';
      }
      if (!dirs.includes(d)) dirs.push(d);
    }
    return dirs;
  }

  // --- candidate verification (open_verify) ------------------------------------------------------

  /** null: the loader moves on silently (no such file); otherwise accepted, passed over, or fatal. */
  private verify(path: string): Verdict | null {
    const p = this.abs(path);
    let st;
    try {
      st = statSync(p);
    } catch {
      return null; // ENOENT and friends: the loader moves on
    }
    if (!st.isFile()) return null;
    const target = this.target;
    // open_verify reads sizeof (ElfW(Ehdr)) bytes first; fewer is fatal.
    if (st.size < (target.class_bits === 64 ? 64 : 52)) return { ok: false, fatal: true, reason: 'file too short' };
    let elf: ElfInfo;
    try {
      elf = readElf(p);
    } catch (e) {
      if (isProvenanceError(e) && e.code === 'unreadable') return null;
      return { ok: false, fatal: true, reason: isProvenanceError(e) && e.code === 'not-elf' ? 'invalid ELF header' : (e as Error).message };
    }
    if (elf.class_bits !== target.class_bits) return { ok: false, fatal: false, reason: `wrong ELF class: ELFCLASS${elf.class_bits}` };
    if (elf.endian !== target.endian) return { ok: false, fatal: true, reason: `ELF file data encoding not ${target.endian}-endian` };
    if (elf.osabi !== 0 && elf.osabi !== 3) return { ok: false, fatal: true, reason: `ELF file OS ABI invalid (${elf.osabi})` };
    if (elf.machine !== target.machine) return { ok: false, fatal: false, reason: `wrong machine: ${elf.machine_name}` };
    if (elf.type !== 'DYN' && elf.type !== 'EXEC') return { ok: false, fatal: true, reason: `only ET_DYN and ET_EXEC can be loaded (this is ${elf.type})` };
    return { ok: true, elf };
  }

  // --- the search (dl-load.c) ---------------------------------------------------------------------

  /** Tries one directory (hwcaps subdirs first). */
  private tryDir(dir: string, name: string, rejected: RejectedCandidate[]): Omit<Hit, 'how'> | null {
    for (const sub of this.subdirs) {
      const cand = dir + sub + name;
      const v = this.verify(cand);
      if (v === null) continue;
      if (v.ok || v.fatal) return { cand, dir: dir + sub, v };
      rejected.push({ path: cand, reason: v.reason });
    }
    return null;
  }

  private inDirs(dirs: readonly string[], name: string, how: FoundHow, rejected: RejectedCandidate[]): Hit | null {
    for (const d of dirs) {
      const r = this.tryDir(d, name, rejected);
      if (r) return { ...r, how };
    }
    return null;
  }

  private static effectiveRpath(o: Loaded): string | null {
    return o.elf.dynamic?.runpath != null ? null : (o.elf.dynamic?.rpath ?? null);
  }

  /** The RPATH chain: the loader's, its loaders', then the executable's (only when the loader has no RUNPATH). */
  private searchRpaths(name: string, loader: Loaded, rejected: RejectedCandidate[]): Hit | null {
    if (loader.elf.dynamic?.runpath != null) return null;
    let didMain = false;
    for (let l: Loaded | null = loader; l; l = l.loader) {
      const rp = LoaderRun.effectiveRpath(l);
      if (rp === null) continue;
      const hit = this.inDirs(this.searchList(rp, /:/, l), name, 'rpath', rejected);
      if (hit) return hit;
      if (l === this.main) didMain = true;
    }
    const mainRp = LoaderRun.effectiveRpath(this.main);
    return !didMain && mainRp !== null ? this.inDirs(this.searchList(mainRp, /:/, this.main), name, 'rpath', rejected) : null;
  }

  /** ld.so.cache (or the ld.so.conf fallback when asked), honouring DF_1_NODEFLIB. */
  private searchCache(name: string, nodeflib: boolean, rejected: RejectedCandidate[]): Hit | null {
    const defaultDirs = this.model.default_dirs;
    if (this.cache !== null) {
      const cached = cacheLookup(this.cache, name, this.cacheFlags, this.model.hwcaps_subdirs);
      if (cached !== null && !(nodeflib && defaultDirs.some((d) => cached.startsWith(d.endsWith('/') ? d : `${d}/`)))) {
        const v = this.verify(cached);
        if (v !== null && (v.ok || v.fatal)) return { cand: cached, dir: null, v, how: 'cache' };
        if (v !== null) rejected.push({ path: cached, reason: v.reason });
      }
      return null;
    }
    return this.confDirs.length > 0 ? this.inDirs(withSlash(this.confDirs), name, 'ld_so_conf', rejected) : null;
  }

  private search(name: string, loader: Loaded, rejected: RejectedCandidate[]): Hit | null {
    const rp = this.searchRpaths(name, loader, rejected);
    if (rp) return rp;
    const llp = this.env['LD_LIBRARY_PATH'];
    if (llp !== undefined && llp !== '') {
      const hit = this.inDirs(this.searchList(llp, /[:;]/, this.main), name, 'ld_library_path', rejected);
      if (hit) return hit;
    }
    const runpath = loader.elf.dynamic?.runpath;
    if (runpath != null) {
      const hit = this.inDirs(this.searchList(runpath, /:/, loader), name, 'runpath', rejected);
      if (hit) return hit;
    }
    const nodeflib = ((loader.elf.dynamic?.flags_1 ?? 0) & DF_1_NODEFLIB) !== 0;
    const cached = this.searchCache(name, nodeflib, rejected);
    if (cached) return cached;
    return nodeflib ? null : this.inDirs(withSlash(this.model.default_dirs), name, 'default', rejected);
  }

  // --- the loaded set -------------------------------------------------------------------------------

  private findLoaded(name: string): Loaded | undefined {
    for (const l of this.loaded) if (l.names.has(name)) return l;
    for (const l of this.loaded) if (l.elf.dynamic?.soname === name) return l;
    return undefined;
  }

  /** The PT_INTERP row, first. */
  loadInterpreter(): void {
    const interp = this.main.elf.interpreter;
    if (interp === null) return;
    const v = this.verify(interp);
    const soname = v?.ok ? v.elf.dynamic?.soname ?? null : null;
    const row: ResolvedLibrary = {
      name: soname ?? basename(interp),
      names: soname === null ? [basename(interp)] : [soname],
      needed_by: ['PT_INTERP'],
      path: v?.ok ? interp : null,
      how: v?.ok ? 'interpreter' : null,
      search_dir: null,
      soname,
      depth: 0,
      rejected: [],
      loader_error: v && !v.ok ? v.reason : null,
      facts: null,
    };
    this.rows.push(row);
    if (v?.ok) {
      this.loaded.push({ path: interp, elf: v.elf, origin: dirname(this.abs(interp)), loader: null, names: new Set([interp]), fileKey: fileKey(this.abs(interp)), row });
    } else if (v === null) {
      this.notes.push(`the interpreter ${interp} does not exist on this machine`);
    }
  }

  /** One needed name: reused when already loaded (by name, soname or file identity), else searched and queued. */
  private need(name: string, loader: Loaded, neededBy: string, depth: number): void {
    const reuse = (obj: Loaded) => {
      obj.names.add(name);
      if (!obj.row) return;
      if (!obj.row.names.includes(name)) obj.row.names.push(name);
      if (!obj.row.needed_by.includes(neededBy)) obj.row.needed_by.push(neededBy);
    };
    const already = this.findLoaded(name);
    if (already) {
      reuse(already);
      return;
    }
    const rejected: RejectedCandidate[] = [];
    let hit: Hit | null;
    if (name.includes('/')) {
      const p = this.expandDst(name, loader);
      const v = p === null ? null : this.verify(p);
      hit = p !== null && v !== null ? { cand: p, dir: null, v, how: 'path' } : null;
      if (v && !v.ok && !v.fatal) {
        rejected.push({ path: p!, reason: v.reason });
        hit = null;
      }
    } else {
      hit = this.search(name, loader, rejected);
    }
    const row: ResolvedLibrary = {
      name,
      names: [name],
      needed_by: [neededBy],
      path: hit ? hit.cand : null,
      how: hit ? hit.how : null,
      search_dir: hit?.dir ? hit.dir.replace(/(.)\/$/, '$1') : null,
      soname: hit?.v.ok ? hit.v.elf.dynamic?.soname ?? null : null,
      depth,
      rejected,
      loader_error: hit && !hit.v.ok ? hit.v.reason : null,
      facts: null,
    };
    if (hit?.v.ok) {
      // The same file under another name is the same object (_dl_file_id_match_p).
      const key = fileKey(this.abs(hit.cand));
      const same = key === null ? undefined : this.loaded.find((l) => l.fileKey === key);
      if (same) {
        reuse(same);
        return;
      }
      const obj: Loaded = { path: hit.cand, elf: hit.v.elf, origin: dirname(this.abs(hit.cand)), loader, names: new Set([name, hit.cand]), fileKey: key, row };
      this.loaded.push(obj);
      this.queue.push(obj);
      this.depthOf.set(obj, depth);
    }
    this.rows.push(row);
  }

  /** LD_PRELOAD entries and /etc/ld.so.preload, needed by the executable at depth 1. */
  loadPreloads(preloads: readonly string[]): void {
    for (const p of preloads) this.need(p, this.main, 'LD_PRELOAD', 1);
  }

  /** DT_NEEDED breadth-first from the executable (after the preloads, which are searched in turn). */
  loadNeededBreadthFirst(): void {
    const bfs: Loaded[] = [this.main, ...this.queue];
    this.queue.length = 0;
    for (let i = 0; i < bfs.length; i++) {
      const obj = bfs[i]!;
      const depth = (this.depthOf.get(obj) ?? 0) + 1;
      for (const n of obj.elf.dynamic?.needed ?? []) {
        this.need(n, obj, obj.path, depth);
        bfs.push(...this.queue);
        this.queue.length = 0;
      }
    }
  }
}

function withSlash(dirs: readonly string[]): string[] {
  return dirs.map((d) => (d.endsWith('/') ? d : `${d}/`));
}

/**
 * The subdirectories ld.so tries under each search directory, in order:
 * `glibc-hwcaps/<level>/` for each level, then every combination of the
 * legacy components (largest first, as a binary count down), then the
 * directory itself (`""`).
 */
export function searchSubdirs(hwcaps: readonly string[], legacy: readonly string[]): string[] {
  const out = hwcaps.map((h) => `glibc-hwcaps/${h}/`);
  const n = legacy.length;
  for (let mask = (1 << n) - 1; mask > 0; mask--) {
    const parts = legacy.filter((_, i) => (mask & (1 << (n - 1 - i))) !== 0);
    out.push(parts.join('/') + '/');
  }
  out.push('');
  return out;
}

/** The loader facts for this program: options first, else detected from its interpreter and this machine. */
export function loaderModel(exe: ElfInfo, opts: ResolveOptions = {}): LoaderModel {
  const m: Machine = { class_bits: exe.class_bits, machine: exe.machine, endian: exe.endian, flags: exe.flags };
  const glibcMinor = exe.interpreter === null ? null : glibcMinorOf(exe.interpreter);
  const platform = opts.platform ?? defaultPlatform(m);
  const x86Host = m.machine === 62 && m.class_bits === 64 && process.arch === 'x64';
  let legacy: string[] = [];
  if (opts.legacy_hwcaps) legacy = [...opts.legacy_hwcaps];
  else if (x86Host && glibcMinor !== null && glibcMinor < 37) {
    const cpu = cpuInfo();
    const intel = cpu?.vendor === 'GenuineIntel';
    const has = (xs: string[]) => cpu !== null && xs.every((x) => cpu.flags.has(x));
    // sysdeps/x86: HWCAP_X86_AVX512_1 on Intel with AVX512CD, BW, DQ, VL but not ER; "tls" always; the
    // platform always: "haswell"/"xeon_phi" where glibc names one (Intel), else the kernel's AT_PLATFORM
    // ("x86_64", as on AMD CPUs: LD_DEBUG=libs shows tls/x86_64/x86_64 there)
    const avx512 = intel && has(['avx512cd', 'avx512bw', 'avx512dq', 'avx512vl']) && !has(['avx512er']);
    legacy = ['tls', ...(platform ? [platform] : []), ...(avx512 ? ['avx512_1'] : []), 'x86_64'];
  }
  const hwcaps = opts.hwcaps_subdirs ? [...opts.hwcaps_subdirs]
    : glibcMinor !== null && glibcMinor < 33 ? []
    : (x86Host && exe.interpreter !== null ? loaderHwcaps(exe.interpreter) : null) ?? defaultHwcaps(m);
  return {
    glibc_minor: glibcMinor,
    platform,
    lib: opts.lib ?? defaultLib(m),
    hwcaps_subdirs: hwcaps,
    legacy_hwcaps: legacy,
    default_dirs: [...(opts.default_dirs ?? defaultDirsFor(m))],
  };
}

/** The glibc minor version an interpreter says it is ("... release version 2.36."), or null. */
function glibcMinorOf(interp: string): number | null {
  try {
    const text = readFileSync(interp).toString('latin1');
    const v = /release version 2\.(\d+)/.exec(text);
    return v ? Number(v[1]) : null;
  } catch {
    return null;
  }
}

/**
 * The cache's answer for `name` as `_dl_load_cache_lookup` gives it: the
 * entry of the best-priority glibc-hwcaps subdirectory this machine supports,
 * else the first plain entry with acceptable flags.
 */
export function cacheLookup(cache: LdCache, name: string, flags: number[] | null, hwcaps: readonly string[]): string | null {
  let best: string | null = null;
  let bestPrio = -1;
  for (const e of cache.entries) {
    if (e.name !== name) continue;
    if (flags !== null && !flags.includes(e.flags)) continue;
    if (e.hwcaps !== null) {
      const idx = hwcaps.indexOf(e.hwcaps);
      if (idx < 0) continue;
      const prio = hwcaps.length - idx;
      if (prio > bestPrio) {
        bestPrio = prio;
        best = e.path;
      }
    } else if (bestPrio < 0 && best === null && e.legacy_hwcap === 0n) {
      best = e.path;
    }
  }
  return best;
}

function splitPreload(s: string): string[] {
  return s.split(/[ :]+/).filter((x) => x !== '');
}

function readPreloadFile(path: string): string[] {
  try {
    return readFileSync(path, 'utf8')
      .split(/[ \t\n:]+/)
      .filter((x) => x !== '');
  } catch {
    return [];
  }
}

function fileKey(p: string): string | null {
  try {
    const st = statSync(p, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch {
    return null;
  }
}

async function runLimited(jobs: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const job = jobs[next++]!;
      await job();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, jobs.length)) }, worker));
}

const TRIPLETS: Record<number, (m: Machine) => string | null> = {
  62: (m) => (m.class_bits === 64 ? 'x86_64-linux-gnu' : 'x86_64-linux-gnux32'),
  3: () => 'i386-linux-gnu',
  183: () => 'aarch64-linux-gnu',
  40: (m) => ((m.flags & 0x400) !== 0 ? 'arm-linux-gnueabihf' : 'arm-linux-gnueabi'),
  21: (m) => (m.endian === 'little' ? 'powerpc64le-linux-gnu' : 'powerpc64-linux-gnu'),
  22: (m) => (m.class_bits === 64 ? 's390x-linux-gnu' : null),
  243: (m) => (m.class_bits === 64 ? 'riscv64-linux-gnu' : null),
  258: () => 'loongarch64-linux-gnu',
};

/** Debian's multiarch triplet for the machine, or null. */
export function multiarchTriplet(m: Machine): string | null {
  return TRIPLETS[m.machine]?.(m) ?? null;
}

/** The default search dirs: the multiarch ones when this system has them (Debian, Ubuntu), else lib64 or lib. */
export function defaultDirsFor(m: Machine): string[] {
  const t = multiarchTriplet(m);
  if (t !== null && (existsSync(`/lib/${t}`) || existsSync(`/usr/lib/${t}`))) return [`/lib/${t}`, `/usr/lib/${t}`, '/lib', '/usr/lib'];
  if (m.class_bits === 64) return ['/lib64', '/usr/lib64'];
  return ['/lib', '/usr/lib'];
}

function defaultLib(m: Machine): string {
  const t = multiarchTriplet(m);
  if (t !== null && (existsSync(`/lib/${t}`) || existsSync(`/usr/lib/${t}`))) return `lib/${t}`;
  return m.class_bits === 64 ? 'lib64' : 'lib';
}

/**
 * `$PLATFORM` as ld.so sets it: AT_PLATFORM from the kernel, which glibc's
 * x86 `init_cpu_features` (2.26+) overrides on Intel CPUs with "haswell"
 * (AVX2, FMA, BMI1, BMI2, LZCNT, MOVBE, POPCNT) or "xeon_phi"; AMD keeps "x86_64".
 */
function defaultPlatform(m: Machine): string {
  switch (m.machine) {
    case 62: {
      if (m.class_bits !== 64 || process.arch !== 'x64') return 'x86_64';
      const cpu = cpuInfo();
      if (cpu === null || cpu.vendor !== 'GenuineIntel') return 'x86_64';
      const has = (xs: string[]) => xs.every((x) => cpu.flags.has(x));
      if (has(['avx512cd', 'avx512er', 'avx512pf'])) return 'xeon_phi';
      if (has(['avx2', 'fma', 'bmi1', 'bmi2', 'abm', 'movbe', 'popcnt'])) return 'haswell';
      return 'x86_64';
    }
    case 3:
      return 'i686';
    case 183:
      return 'aarch64';
    case 40:
      return 'v7l';
    default:
      return multiarchTriplet(m)?.split('-')[0] ?? 'unknown';
  }
}

/** Vendor and flags of the first CPU in /proc/cpuinfo; null when unreadable. */
function cpuInfo(): { vendor: string; flags: Set<string> } | null {
  try {
    const info = readFileSync('/proc/cpuinfo', 'utf8');
    const flags = /^flags\s*:(.*)$/m.exec(info)?.[1] ?? '';
    return { vendor: /^vendor_id\s*:\s*(\S+)/m.exec(info)?.[1] ?? '', flags: new Set(flags.trim().split(/\s+/)) };
  } catch {
    return null;
  }
}

const loaderHwcapsSeen = new Map<string, string[] | null>();

/**
 * The glibc-hwcaps subdirectories interpreter `interp` says it searches on
 * this machine (`ld.so --help`, glibc >= 2.33: "x86-64-v3 (supported,
 * searched)"), best first; null when it cannot be asked. Its own answer
 * comes before /proc/cpuinfo's flags: a virtual machine's kernel may leave a
 * flag out (no "abm" for LZCNT on one AMD EPYC guest whose loader searched
 * x86-64-v3 and -v4).
 */
function loaderHwcaps(interp: string): string[] | null {
  let dirs = loaderHwcapsSeen.get(interp);
  if (dirs !== undefined) return dirs;
  dirs = null;
  const run = spawnSync(interp, ['--help'], { encoding: 'utf8', timeout: 5_000, maxBuffer: 1 << 20 });
  const section = run.status === 0 ? /glibc-hwcaps directories, in priority order:\n((?:[ \t]+\S.*\n?)*)/.exec(run.stdout ?? '') : null;
  if (section) dirs = [...section[1]!.matchAll(/^\s+(\S+) \(supported, searched\)\s*$/gm)].map((x) => x[1]!);
  loaderHwcapsSeen.set(interp, dirs);
  return dirs;
}

/** x86-64 ISA levels this CPU supports (from /proc/cpuinfo), best first, as glibc-hwcaps names. */
function defaultHwcaps(m: Machine): string[] {
  if (m.machine !== 62 || m.class_bits !== 64 || process.arch !== 'x64') return [];
  const cpu = cpuInfo();
  if (cpu === null) return [];
  const flags = cpu.flags;
  const all = (xs: string[]) => xs.every((x) => flags.has(x));
  const v2 = all(['cx16', 'lahf_lm', 'popcnt', 'pni', 'sse4_1', 'sse4_2', 'ssse3']);
  const v3 = v2 && all(['avx', 'avx2', 'bmi1', 'bmi2', 'f16c', 'fma', 'abm', 'movbe', 'xsave']);
  const v4 = v3 && all(['avx512f', 'avx512bw', 'avx512cd', 'avx512dq', 'avx512vl']);
  return [...(v4 ? ['x86-64-v4'] : []), ...(v3 ? ['x86-64-v3'] : []), ...(v2 ? ['x86-64-v2'] : [])];
}
