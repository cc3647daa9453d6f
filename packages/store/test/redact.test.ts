import { describe, expect, it } from 'vitest';
import { REDACTED, isSecretName, redactArgv, redactConditionRow, redactText } from '@tickwise/store';

describe('one redaction for every path into the store (issue 17.6)', () => {
  it('secret-looking names, allowlisted ones included', () => {
    for (const n of ['HIP_DB_PWD', 'LLAMA_API_KEYS', 'GGML_HF_BEARER', 'XRT_PASSWORD', 'AMD_CREDS', 'XILINX_LICENSE_FILE', 'HIP_API_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'GGML_KEY', 'HSA_PASSPHRASE']) {
      expect(isSecretName(n), n).toBe(true);
    }
    for (const n of ['LD_LIBRARY_PATH', 'HIP_VISIBLE_DEVICES', 'OMP_NUM_THREADS', 'GGML_N_THREADS', 'HSA_KEYBOARD_X']) expect(isSecretName(n), n).toBe(false);
  });

  it('inside one shell word, as NAME=value, options, bearer and URL credentials', () => {
    const cases: [string, string][] = [
      ["sh -c 'llama-server --api-key S1 -m model.gguf'", "sh -c 'llama-server --api-key <redacted> -m model.gguf'"],
      ['AWS_SECRET_ACCESS_KEY=S2 ./run', 'AWS_SECRET_ACCESS_KEY=<redacted> ./run'],
      ['run --password=S3 --threads 4', 'run --password=<redacted> --threads 4'],
      ['env HIP_DB_PWD=S4 LLAMA_API_KEYS=S5 GGML_HF_BEARER=S6 x -p 2048', 'env HIP_DB_PWD=<redacted> LLAMA_API_KEYS=<redacted> GGML_HF_BEARER=<redacted> x -p 2048'],
      ['curl -H "Authorization: Bearer S7abcdef" https://u:S8@host/x', 'curl -H "Authorization: Bearer <redacted>" https://<redacted>@host/x'],
      ['hf download --token hf_abcdefghijklmnopqrstuvwxyz', 'hf download --token <redacted>'],
      ['tool -p 2048 -n 128 --model x', 'tool -p 2048 -n 128 --model x'],
    ];
    for (const [given, want] of cases) {
      expect(redactText(given), given).toBe(want);
      expect(redactText(redactText(given)), 'idempotent').toBe(want);
    }
  });

  it('argv: the word after a secret option, NAME=value words, numbers kept', () => {
    expect(redactArgv(['sh', '-c', 'x --api-key S1', '--token', 'S2', '-p', 2048, 'HIP_DB_PWD=S3'])).toEqual(
      ['sh', '-c', `x --api-key ${REDACTED}`, '--token', REDACTED, '-p', '2048', `HIP_DB_PWD=${REDACTED}`]);
  });

  it('condition rows: env values by name, every other value by text', () => {
    expect(redactConditionRow({ key: 'env.LLAMA_API_KEYS', value: 'S1', note: null }).value).toBeNull();
    expect(redactConditionRow({ key: 'env.GGML_HF_BEARER@123', value: 'S1', note: null }).value).toBeNull();
    expect(redactConditionRow({ key: 'command_line', value: 'x --api-key S2', note: null }).value).toBe('x --api-key <redacted>');
    const plain = { key: 'env.OMP_NUM_THREADS', value: '8', note: null };
    expect(redactConditionRow(plain)).toBe(plain);
  });
});
