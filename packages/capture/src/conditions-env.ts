/**
 * Which environment variables and command-line words a capture may record.
 * The environment holds secrets (API tokens, cloud keys), so nothing is
 * recorded unless it is on {@link ENV_ALLOWLIST}; and a variable whose NAME
 * looks like a secret ({@link SECRET_NAME}) is never recorded, even when its
 * prefix is allowed (`HIP_API_TOKEN`): its row says it was redacted, with no
 * value.
 */

/**
 * The variables that shape a run on this SoC, and nothing else: exact names
 * and prefixes (a name ending in `_` is a prefix). Documented in
 * docs/conditions.md; extend it there and here together.
 */
export const ENV_ALLOWLIST = [
  // the loader: which libraries a run really loads (trap 4, a stale library)
  'LD_LIBRARY_PATH', 'LD_PRELOAD', 'LD_BIND_NOW',
  // ROCm / HIP / HSA runtime settings
  'HIP_', 'HSA_', 'ROCR_', 'ROCM_', 'HCC_', 'AMD_', 'GPU_', 'HIPBLASLT_', 'ROCBLAS_', 'TENSILE_', 'MIOPEN_',
  // the NPU: XRT and the amdxdna stack
  'XRT_', 'XDNA_', 'XILINX_',
  // runtimes and apps of this field
  'GGML_', 'LLAMA_', 'HRX_', 'IREE_', 'TICKWISE_',
  // threading
  'OMP_NUM_THREADS', 'OMP_PROC_BIND', 'OMP_PLACES', 'OMP_WAIT_POLICY', 'GOMP_CPU_AFFINITY', 'MKL_NUM_THREADS', 'OPENBLAS_NUM_THREADS',
  // NVIDIA (the recorder's cuda backend)
  'CUDA_VISIBLE_DEVICES', 'CUDA_LAUNCH_BLOCKING', 'CUDA_DEVICE_ORDER', 'CUDA_MODULE_LOADING', 'CUDA_INJECTION64_PATH', 'NVIDIA_VISIBLE_DEVICES',
] as const;

/** Variables recorded as absent when unset: their absence is itself a condition (trap 4). */
export const ENV_ALWAYS = ['LD_LIBRARY_PATH', 'LD_PRELOAD'] as const;

/** Version tag of the allowlist, recorded with every capture (`conditions.env_allowlist`). */
export const ENV_ALLOWLIST_VERSION = 'tickwise-env-allowlist/1';

/** The one redaction (in @tickwise/store, applied to every condition stored), re-exported. */
export { SECRET_NAME, isSecretName, redactArgv } from '@tickwise/store';
import { isSecretName, redactText, REDACTED_NAME_NOTE } from '@tickwise/store';

/** True when `name` is on {@link ENV_ALLOWLIST} (exact, or under an allowed prefix). */
export function isAllowedEnvName(name: string): boolean {
  return ENV_ALLOWLIST.some((a) => (a.endsWith('_') ? name.startsWith(a) && name.length > a.length : name === a));
}

/** One recorded variable. */
export interface EnvCondition {
  readonly name: string;
  /** null: unset (note `absent`) or withheld (note `redacted`). */
  readonly value: string | null;
  readonly note: string | null;
}

/**
 * The allowlisted variables of an environment, sorted by name: each set one
 * with its value (secrets inside it cut out: `redactText`), each secret-looking one with no
 * value and a `redacted` note, and {@link ENV_ALWAYS} as `absent` when unset.
 * Nothing else of `env` is looked at twice.
 */
export function allowedEnv(env: Readonly<Record<string, string | undefined>>): EnvCondition[] {
  const out: EnvCondition[] = [];
  for (const name of Object.keys(env).sort()) {
    const v = env[name];
    if (v === undefined || !isAllowedEnvName(name)) continue;
    if (isSecretName(name)) out.push({ name, value: null, note: REDACTED_NAME_NOTE });
    else out.push({ name, value: redactText(v), note: null });
  }
  for (const name of ENV_ALWAYS) {
    if (env[name] === undefined) out.push({ name, value: null, note: 'absent: not set' });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** A command line as one shell-quoted string. */
export function shellJoin(argv: readonly string[]): string {
  return argv.map((w) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`)).join(' ');
}
