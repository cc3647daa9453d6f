/**
 * A second opinion on a library resolution: when the program is for this
 * host, the real dynamic loader is asked (`LD_TRACE_LOADED_OBJECTS=1
 * <PT_INTERP> <program>`, as ldd does: it maps the libraries and prints where
 * each came from without running the program) and every library's path is compared with the model's.
 *
 * The model ({@link resolveLibraries}) stays the answer: it works for any
 * machine's binaries and says *why* a file was chosen. The loader's list is
 * the check that the model matches this machine's glibc (its hwcaps levels,
 * cache, defaults); a disagreement is the stale-library trap itself, so it is
 * reported name by name and never hidden.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import type { LibraryResolution } from './resolve-libs';

/** One library the model and the real loader place differently. */
export interface LoaderDifference {
  /** The needed name (DT_NEEDED, LD_PRELOAD entry). */
  name: string;
  /** The model's path (canonical); null when the model did not find it. */
  model_path: string | null;
  /** The real loader's path (canonical); null when the loader did not find it. */
  loader_path: string | null;
}

/** What the real loader said, compared with the model. */
export interface LoaderCheck {
  /** The loader that was asked. */
  loader: string;
  /** Libraries the loader listed. */
  listed: number;
  /** Libraries placed differently; empty when they agree. */
  differences: LoaderDifference[];
}

/** Why the real loader was not asked; null when it was. */
export function loaderCheckSkipReason(res: LibraryResolution): string | null {
  if (res.kind !== 'executable' || res.elf === null) return 'not a dynamically linked program';
  if (process.platform !== 'linux') return 'not on Linux';
  const hostMachine = ({ x64: 'x86-64', arm64: 'AArch64' } as Record<string, string>)[process.arch];
  if (hostMachine === undefined || res.elf.machine_name !== hostMachine || res.elf.class_bits !== 64) {
    return `the program is for ${res.elf.machine_name} (${res.elf.class_bits}-bit), not this host`;
  }
  const interp = res.elf.interpreter;
  if (interp === null || !existsSync(interp)) return `its interpreter ${interp ?? '(none)'} is not on this host`;
  return null;
}

/** Parses `ld.so --list` output: `name => path (0x...)`, `path (0x...)` for the interpreter. */
export function parseLoaderList(text: string): Map<string, string | null> {
  const out = new Map<string, string | null>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('linux-vdso') || line.startsWith('linux-gate')) continue;
    const arrow = /^(\S+) => (?:not found|(\S+) \(0x[0-9a-f]+\))$/.exec(line);
    if (arrow) {
      out.set(arrow[1]!, arrow[2] ?? null);
      continue;
    }
    const bare = /^(\/\S+) \(0x[0-9a-f]+\)$/.exec(line);
    if (bare) out.set(bare[1]!, bare[1]!);
  }
  return out;
}

function canonical(p: string | null): string | null {
  if (p === null) return null;
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}

/**
 * Asks the program's own interpreter (when it is for this host) where each
 * library comes from, with the same LD_LIBRARY_PATH / LD_PRELOAD the model
 * used, and lists the libraries placed differently. Returns null with no
 * comparison when the loader cannot be asked (see {@link loaderCheckSkipReason})
 * or fails; `notes` of `res` then say why.
 */
export function checkWithRealLoader(res: LibraryResolution, cwd: string = process.cwd()): LoaderCheck | null {
  const skip = loaderCheckSkipReason(res);
  if (skip !== null) {
    if (res.kind === 'executable') res.notes.push(`the real loader was not asked: ${skip}`);
    return null;
  }
  const loader = res.elf!.interpreter!;
  // Trace mode, as ldd does it (`--list` prints nothing when a library is missing).
  const env: Record<string, string> = { PATH: '/usr/bin:/bin', LD_TRACE_LOADED_OBJECTS: '1' };
  if (res.env.LD_LIBRARY_PATH !== null) env['LD_LIBRARY_PATH'] = res.env.LD_LIBRARY_PATH;
  if (res.env.LD_PRELOAD !== null) env['LD_PRELOAD'] = res.env.LD_PRELOAD;
  const run = spawnSync(loader, [res.executable], { cwd, env, encoding: 'utf8', timeout: 10_000, maxBuffer: 4 << 20 });
  if (run.error !== undefined || run.status === null) {
    res.notes.push(`the real loader was not asked: ${loader} (trace mode) failed (${run.error?.message ?? `signal ${run.signal}`})`);
    return null;
  }
  const listed = parseLoaderList(run.stdout);
  if (listed.size === 0) {
    res.notes.push(`the real loader was not asked: ${loader} (trace mode) printed no libraries (exit ${run.status})`);
    return null;
  }
  const differences: LoaderDifference[] = [];
  const seen = new Set<string>();
  for (const lib of res.libraries) {
    if (lib.how === 'interpreter') continue;
    const key = lib.names.find((n) => listed.has(n));
    if (key === undefined) continue;
    for (const n of lib.names) seen.add(n);
    const model = canonical(lib.path);
    const real = canonical(listed.get(key) ?? null);
    if (model !== real) differences.push({ name: key, model_path: model, loader_path: real });
  }
  for (const [name, path] of listed) {
    if (seen.has(name) || name === loader || path === loader || name.startsWith('/')) continue;
    differences.push({ name, model_path: null, loader_path: canonical(path) });
  }
  if (differences.length > 0) {
    res.notes.push(
      `the real loader (${loader} in trace mode) disagrees with the model on ${differences.length} librar${differences.length === 1 ? 'y' : 'ies'}: ` +
        differences.map((d) => `${d.name}: model ${d.model_path ?? 'not found'}, loader ${d.loader_path ?? 'not found'}`).join('; ') +
        ' (the loader is right for this host)',
    );
  }
  return { loader, listed: listed.size, differences };
}
