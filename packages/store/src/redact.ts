/**
 * The one redaction of secrets for everything that reaches a store: the
 * environment, command lines (the recorder's, rocprofv3's, `tickwise
 * capture`'s), host conditions. `Store.append` applies
 * {@link redactConditionRow} to every `conditions` row, and the writers of a
 * store file (`withAtomicStore`) and of an in-memory store of capture files
 * sweep the table once more before it is kept ({@link redactStoredConditions}),
 * so a reader that inserts by another path is still covered.
 *
 * What counts as a secret (docs/security.md):
 * - a variable whose NAME looks like one ({@link isSecretName}): its value is
 *   never recorded, in the environment or as `NAME=value` anywhere in text;
 * - the value of an option whose name looks like one (`--api-key X`,
 *   `--token=X`, `-p`-style short options are not guessed), also inside one
 *   shell word (`sh -c '... --api-key X'`);
 * - `Bearer X`/`Basic X` credentials, URL credentials (`scheme://user:pass@`),
 *   and well-known token shapes (`sk-...`, `ghp_...`, `hf_...`, `AKIA...`,
 *   `xox?-...`, JWTs).
 */

/** Placeholder for a withheld value. */
export const REDACTED = '<redacted>';

/**
 * A name that looks like it holds a secret: its value is never recorded.
 * Matched anywhere in the name (`AWS_SECRET_ACCESS_KEY`, `HIP_API_TOKEN`,
 * `XRT_PASSWORD`, `HIP_DB_PWD`, `LLAMA_API_KEYS`, `GGML_HF_BEARER`,
 * `XILINX_LICENSE_FILE`, `AMD_CREDS`); a bare `KEY`/`KEYS` as a word of it.
 * Deliberately wide: a harmless variable withheld costs less than a secret kept.
 */
export const SECRET_NAME = /TOKEN|SECRET|PASS|PWD|CRED|PRIVATE|COOKIE|SESSION|AUTH|SIGNATURE|BEARER|LICEN[CS]E|APIKEY|ACCESSKEY|(^|_)KEYS?($|_)|(^|_)PAT($|_)/i;

/** True when a name looks like it holds a secret. */
export function isSecretName(name: string): boolean {
  return SECRET_NAME.test(name);
}

/** An option name (`--api-key`, `-token`) whose value is withheld. */
const SECRET_OPTION_BODY = /token|secret|pass|pwd|cred|private|auth|bearer|licen[cs]e|cookie|session|signature|apikey|accesskey|(^|[-_])keys?($|[-_])/i;

/** True when an option word (`--api-key`, `--token`) names a secret. */
export function isSecretOption(word: string): boolean {
  const m = /^--?([A-Za-z0-9][A-Za-z0-9_-]*)$/.exec(word);
  return m !== null && SECRET_OPTION_BODY.test(m[1]!);
}

const URL_CREDENTIALS = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@'"]+:[^/\s@'"]+@/gi;
const AUTH_SCHEME = /\b(Bearer|Basic|Token)(\s+|=|:)([A-Za-z0-9._~+/=-]{6,})/g;
const TOKEN_SHAPES = /\b(sk-[A-Za-z0-9_-]{16,}|gh[pousr]_[A-Za-z0-9]{20,}|hf_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[abprs]-[A-Za-z0-9-]{10,}|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})/g;
/** `NAME=value` anywhere: after start, blank, quote, `;`, `&`, `|`, `(` or `,`. */
const ASSIGNMENT = /(^|[\s'"`;&|(,])([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|'[^']*'|[^\s'"`;&|),]*)/g;
/** An option word anywhere in a text (its value is looked at after it, not consumed, so quoted scripts are searched too). */
const OPTION_WORD = /(^|[\s'"`;&|(])(--?[A-Za-z0-9][A-Za-z0-9_-]*)/g;
/** The value after a secret option: `=v`, ` v`, quoted or bare. */
const OPTION_VALUE_AFTER = /^(=|\s+)("[^"]*"|'[^']*'|[^\s'"`;&|)]+)/;

function redactOptionValues(text: string): string {
  let out = '';
  let from = 0;
  OPTION_WORD.lastIndex = 0;
  let m: RegExpExecArray | null;
  while ((m = OPTION_WORD.exec(text)) !== null) {
    if (!isSecretOption(m[2]!)) continue;
    const end = m.index + m[0].length;
    const v = OPTION_VALUE_AFTER.exec(text.slice(end));
    if (!v || v[2]!.startsWith('-') || v[2] === REDACTED) continue;
    out += text.slice(from, end) + v[1] + REDACTED;
    from = end + v[0].length;
    OPTION_WORD.lastIndex = from;
  }
  return out + text.slice(from);
}

/**
 * A text with every secret this module recognises replaced by
 * {@link REDACTED}; inside words too (a whole `sh -c '...'` script).
 * Idempotent.
 */
export function redactText(text: string): string {
  let t = text.replace(URL_CREDENTIALS, `$1${REDACTED}@`);
  t = t.replace(AUTH_SCHEME, (_m, scheme: string, sep: string) => `${scheme}${sep}${REDACTED}`);
  t = t.replace(TOKEN_SHAPES, REDACTED);
  t = t.replace(ASSIGNMENT, (m, pre: string, name: string) => (isSecretName(name) ? `${pre}${name}=${REDACTED}` : m));
  return redactOptionValues(t);
}

/**
 * A command line as it may be recorded: `NAME=value` words with a
 * secret-looking name, and the values of secret-looking options
 * (`--api-key X`, `--token=X`), become `<redacted>`; then every word goes
 * through {@link redactText} (secrets inside one word, URL credentials).
 */
export function redactArgv(argv: readonly unknown[]): string[] {
  const out: string[] = [];
  let hideNext = false;
  for (const given of argv) {
    const word = String(given); // a caller may hand over numbers ("-p 2048" parsed by an option parser)
    if (hideNext) {
      out.push(REDACTED);
      hideNext = false;
      continue;
    }
    const assign = /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(word);
    if (assign && isSecretName(assign[1]!)) {
      out.push(`${assign[1]}=${REDACTED}`);
      continue;
    }
    const eq = word.indexOf('=');
    if (word.startsWith('-') && eq > 0 && isSecretOption(word.slice(0, eq))) {
      out.push(`${word.slice(0, eq)}=${REDACTED}`);
      continue;
    }
    if (isSecretOption(word)) {
      out.push(word);
      hideNext = true;
      continue;
    }
    out.push(redactText(word));
  }
  return out;
}

/** A `conditions` row as written. */
export interface ConditionValues {
  readonly key: string;
  readonly value: string | null;
  readonly note: string | null;
}

/** The note of an environment variable withheld for its name. */
export const REDACTED_NAME_NOTE = 'redacted: the name looks like a secret; its value is never recorded';

/**
 * A condition row as it may be stored: an `env.NAME` row whose name looks
 * like a secret loses its value; every other value goes through
 * {@link redactText}.
 */
export function redactConditionRow<R extends ConditionValues>(row: R): R {
  const env = /^env\.([^@]+)(@.*)?$/.exec(row.key);
  if (env && isSecretName(env[1]!)) {
    return row.value === null ? row : { ...row, value: null, note: REDACTED_NAME_NOTE };
  }
  if (row.value === null) return row;
  const value = redactText(row.value);
  return value === row.value ? row : { ...row, value };
}

/** What {@link redactStoredConditions} needs of a store. */
interface Queryable {
  rows(sql: string, params?: readonly unknown[]): Promise<Record<string, unknown>[]>;
  run(sql: string, params?: readonly unknown[]): Promise<void>;
}

/**
 * Sweeps a store's `conditions` once more with {@link redactConditionRow}
 * (every path into the store, also one that inserted by SQL); returns how
 * many rows changed.
 */
export async function redactStoredConditions(store: Queryable): Promise<number> {
  const rows = await store.rows(`SELECT rowid AS rid, key, value, note FROM conditions`);
  let changed = 0;
  for (const r of rows) {
    const before = { key: String(r['key']), value: r['value'] === null ? null : String(r['value']), note: r['note'] === null ? null : String(r['note']) };
    const after = redactConditionRow(before);
    if (after === before) continue;
    await store.run(`UPDATE conditions SET value = $1, note = $2 WHERE rowid = $3`, [after.value, after.note, r['rid']]);
    changed++;
  }
  return changed;
}
