/**
 * Issue 17.6: no planted secret reaches the store file, on any path into it
 * (the host environment of `import --conditions-from-host`, rocprofv3's
 * recorded command, the recorder's command line and the conditions.json
 * `tickwise capture` writes). The test greps the .duckdb file's bytes; for
 * each path a harmless marker written beside the secret must be found in
 * the same bytes, so the grep can see that field at all.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const FIX = join(ROOT, 'packages/capture/test/fixtures');

function tickwise(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(join(ROOT, 'scripts/tickwise'), args, { encoding: 'utf8', cwd: ROOT, env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** A recorder capture the native tests left (native/build*\/test-captures), if any. */
function recorderCapture(): string | null {
  for (const b of ['build', 'build-asan']) {
    const dir = join(ROOT, 'native', b, 'test-captures');
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const d = join(dir, name);
      if (existsSync(join(d, 'records.twr')) && existsSync(join(d, 'meta.json'))) return d;
    }
  }
  return null;
}

describe('secrets never reach the store file (issue 17.6)', () => {
  it('greps the .duckdb bytes for every planted secret', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tw-secrets-'));
    const db = join(dir, 's.duckdb');
    const secrets: string[] = [];
    const marks: string[] = [];
    const plant = (s: string) => (secrets.push(s), s);
    const mark = (s: string) => (marks.push(s), s);

    // rocprofv3 JSON: the profiled command, a secret inside one sh -c word
    // (edited as text: the file's 64-bit integers must keep their digits)
    const rpText = readFileSync(join(FIX, 'rocprofv3/results.json'), 'utf8');
    const command = JSON.stringify(['sh', '-c', `llama-server --api-key ${plant('PLANTEDrocprofApiKey1')} -m m.gguf`,
      `HIP_DB_PWD=${plant('PLANTEDrocprofPwd2')}`, mark('VISIBLEmarkRocprof')]);
    expect(rpText).toMatch(/"command": *\[[^\]]*\]/);
    writeFileSync(join(dir, 'results.json'), rpText.replace(/"command": *\[[^\]]*\]/, `"command": ${command}`));
    const inputs = [join(FIX, 'hrx/npu_profile.json'), join(dir, 'results.json')];

    // a recorder capture: its meta.json command line and a conditions.json as `tickwise capture` writes it
    const rec = recorderCapture();
    if (rec) {
      const cap = join(dir, 'rec');
      cpSync(rec, cap, { recursive: true });
      const meta = JSON.parse(readFileSync(join(cap, 'meta.json'), 'utf8'));
      meta.command_line = ['./app', '--token', plant('PLANTEDrecorderToken3'), `--password=${plant('PLANTEDrecorderPw4')}`, mark('VISIBLEmarkRecorder')];
      writeFileSync(join(cap, 'meta.json'), JSON.stringify(meta));
      writeFileSync(join(cap, 'conditions.json'), JSON.stringify({ conditions: [
        { key: 'command.line', value: `sh -c 'x --api-key ${plant('PLANTEDcondApiKey5')}' ${mark('VISIBLEmarkCond')}`, unit: null, note: null },
        { key: 'env.LLAMA_API_KEYS', value: plant('PLANTEDcondEnvKeys6'), unit: null, note: null },
      ] }));
      inputs.push(cap);
    } else {
      console.warn('secrets-store: no recorder capture under native/build*/test-captures (run native/test.sh); the recorder path is not covered here');
    }

    // the host environment sampled by --conditions-from-host: allowlisted names that look like secrets
    const env = {
      HIP_DB_PWD: plant('PLANTEDenvPwd7'), LLAMA_API_KEYS: plant('PLANTEDenvKeys8'), GGML_HF_BEARER: plant('PLANTEDenvBearer9'),
      XILINX_LICENSE_FILE: plant('PLANTEDenvLicense10'), AMD_CREDS: plant('PLANTEDenvCreds11'), HSA_PASSWD: plant('PLANTEDenvPass12'),
      LLAMA_ARG_EXTRA: `--api-key ${plant('PLANTEDenvInner13')} ${mark('VISIBLEmarkEnv')}`,
    };
    const r = tickwise(['import', ...inputs, '--db', db, '--conditions-from-host'], env);
    expect(r.stderr).not.toMatch(/internal error/);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(`${db}.wal`)).toBe(false);
    const bytes = readFileSync(db).toString('latin1');
    for (const m of marks) expect(bytes.includes(m), `marker ${m} is in the file (the grep sees that field)`).toBe(true);
    for (const s of secrets) expect(bytes.includes(s), `secret ${s} leaked into the store file`).toBe(false);
    // and the rows say what was withheld
    const q = tickwise(['sql', db, "SELECT key, value, note FROM conditions WHERE key IN ('env.HIP_DB_PWD', 'command.line') ORDER BY key", '--format', 'json']);
    expect(q.code, q.stderr).toBe(0);
    const rows = JSON.parse(q.stdout) as { key: string; value: string | null; note: string | null }[];
    expect(rows.find((x) => x.key === 'env.HIP_DB_PWD')).toMatchObject({ value: null, note: expect.stringMatching(/^redacted/) });
    expect(rows.some((x) => x.key === 'command.line' && /--api-key <redacted>/.test(x.value ?? ''))).toBe(true);
  }, 120_000);
});
