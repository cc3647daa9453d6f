import type { Argv, CommandModule } from 'yargs';
import { TickwiseError } from '@tickwise/time';
import { provenanceOf, type LibraryResolution, type ResolvedLibrary } from '@tickwise/capture';
import { withJson } from '../options';
import { formatJson, formatTable, log, out } from '../output';

/** Arguments shared by `provenance` and `pin`. */
export interface ProvenanceArgs {
  file: string;
  env?: string[] | undefined;
  marker?: string[] | undefined;
  deps?: boolean | undefined;
  json?: boolean | undefined;
}

/** A repeatable string option's value(s) as a list. */
function toList(v: unknown): string[] {
  return (Array.isArray(v) ? v : [v]).map(String);
}

/** The loader variables the resolver reads. */
const LOADER_VARS = ['LD_LIBRARY_PATH', 'LD_PRELOAD'] as const;

/** Adds `--env K=V ...`, `--marker STR ...` and `--deps` to a verb. */
export function withProvenanceOptions<T>(y: Argv<T>): Argv<T & ProvenanceArgs> {
  return y
    // Repeated flags, not `array: true`: an array option would swallow the positional file after it.
    .option('env', {
      type: 'string',
      requiresArg: true,
      coerce: toList,
      describe: 'loader environment as the program will run, K=V (LD_LIBRARY_PATH, LD_PRELOAD); default: this shell\'s; K= clears one',
    })
    .option('marker', { type: 'string', requiresArg: true, coerce: toList, describe: 'count the occurrences of this string in every file (e.g. a kernel-generation tag)' })
    .option('deps', {
      type: 'boolean',
      describe: 'resolve the libraries of a shared library too (default: only for programs, which have PT_INTERP)',
    }) as unknown as Argv<T & ProvenanceArgs>;
}

/**
 * The loader environment: this process's LD_LIBRARY_PATH / LD_PRELOAD, with
 * `--env K=V` on top (as `ldd` would see it, so a harness's setting can be
 * replayed). Other variables are ignored with a note on stderr.
 */
export function loaderEnv(pairs: readonly string[] | undefined, base: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const k of LOADER_VARS) env[k] = base[k];
  for (const pair of pairs ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new TickwiseError('bad-env', `--env ${pair}: expected K=V (e.g. --env LD_LIBRARY_PATH=/opt/rocm/lib)`);
    const k = pair.slice(0, eq);
    const v = pair.slice(eq + 1);
    if (!(LOADER_VARS as readonly string[]).includes(k)) {
      log(`tickwise: --env ${k}: ignored (the resolver reads ${LOADER_VARS.join(' and ')})`);
      continue;
    }
    env[k] = v === '' ? undefined : v;
  }
  return env;
}

/** Resolves a verb's file with its options. */
export function provenanceFromArgs(args: ProvenanceArgs): Promise<LibraryResolution> {
  return provenanceOf(args.file, { env: loaderEnv(args.env), markers: args.marker ?? [], deps: args.deps ? 'always' : 'auto' });
}

/** One table row per file: the program (or file) first, then each library. */
export function provenanceRows(res: LibraryResolution, markers: readonly string[]): Record<string, unknown>[] {
  const row = (name: string, how: string, path: string | null, f: ResolvedLibrary['facts'], extra: Partial<Record<string, unknown>> = {}) => {
    const r: Record<string, unknown> = {
      name,
      how,
      path: path ?? 'not found',
      mtime: f ? f.mtime_iso.replace(/\.\d+Z$/, 'Z') : null,
      size_bytes: f?.size_bytes ?? null,
      build_id: f?.build_id ?? null,
      sha256: f ? f.sha256.slice(0, 12) : null,
      ...extra,
    };
    for (const m of markers) r[`"${m}"`] = f ? (f.markers[m] ?? null) : null;
    return r;
  };
  return [
    row(res.executable.split('/').pop() ?? res.executable, res.kind, res.executable, res.facts),
    ...res.libraries.map((l) => row(l.name, l.loader_error ? `error: ${l.loader_error}` : (l.how ?? '-'), l.path, l.facts)),
  ];
}

/** The human report of `tickwise provenance`. */
export function formatProvenance(res: LibraryResolution, markers: readonly string[]): string {
  const lines: string[] = [];
  const e = res.elf;
  lines.push(`${res.executable}: ${res.kind}${e ? ` (ELF${e.class_bits} ${e.machine_name}${e.interpreter ? `, interpreter ${e.interpreter}` : ''})` : ''}`);
  if (e?.rpath) lines.push(`  DT_RPATH   ${e.rpath}`);
  if (e?.runpath) lines.push(`  DT_RUNPATH ${e.runpath}`);
  if (res.kind === 'executable' || res.libraries.length > 0) {
    for (const k of LOADER_VARS) lines.push(`  ${k}=${res.env[k] ?? ''}${res.env[k] === null ? ' (unset)' : ''}`);
  }
  const m = res.loader;
  if (m) {
    lines.push(`  loader: glibc ${m.glibc_minor === null ? 'version unknown' : `2.${m.glibc_minor}`}, $PLATFORM=${m.platform}, $LIB=${m.lib}, default dirs ${m.default_dirs.join(':')}`);
  }
  const cols = ['name', 'how', 'path', 'mtime', 'size_bytes', 'build_id', 'sha256', ...markers.map((m) => `"${m}"`)];
  lines.push('', formatTable(cols, provenanceRows(res, markers)));
  const notFound = res.libraries.filter((l) => l.path === null);
  if (notFound.length) lines.push('', `not found: ${notFound.map((l) => `${l.name} (needed by ${l.needed_by[0]})`).join(', ')}`);
  for (const l of res.libraries) for (const r of l.rejected) lines.push(`passed over ${r.path}: ${r.reason}`);
  for (const l of res.libraries) if (l.loader_error) lines.push(`loader error: ${l.path}: ${l.loader_error} (ld.so stops here: the program would not start)`);
  for (const n of res.notes) lines.push(`note: ${n}`);
  return lines.join('\n');
}

/**
 * `tickwise provenance <file-or-exe> [--env K=V ...] [--marker STR ...] [--json]`:
 * path, size, mtime, build-id, sha256 and marker counts of a file; for a
 * program, of every library the dynamic loader would load, and how each was
 * found (rpath, ld_library_path, runpath, cache, default).
 */
export const provenanceCommand: CommandModule<object, ProvenanceArgs> = {
  command: 'provenance <file>',
  describe: 'which files a program loads (resolved as ld.so does) with size, mtime, build-id, sha256 and marker counts',
  builder: (y) =>
    withJson(withProvenanceOptions(y.positional('file', { type: 'string', describe: 'a program, shared library or any file', demandOption: true }))) as never,
  handler: async (args) => {
    const res = await provenanceFromArgs(args);
    if (args.json) out(formatJson(res));
    else out(formatProvenance(res, args.marker ?? []));
  },
};
