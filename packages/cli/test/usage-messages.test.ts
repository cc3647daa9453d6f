import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { VERBS } from '../src/commands/index';
import { EXAMPLES } from '../src/examples';
import { DURATION_OPTIONS } from '../src/duration-options';

/**
 * The CLI as a user meets it (issue 18.6, 18.7, 18.11): one meaning of
 * --format (output) and --input-format (readers), suggestions for mistyped
 * verbs and options, Examples in every verb's help, <duration> options,
 * values printed exactly as stored, a missing store said in one line.
 * Everything runs the real CLI on the shipped sample.
 */
const root = resolve(import.meta.dirname, '../../..');
const tickwise = join(root, 'scripts/tickwise');
const sample = 'captures/sample/igpu-prefill.ireeperf.jsonl';

function run(args: string[]): { rc: number | null; stdout: string; stderr: string } {
  // from source: only the named verb's module loads, so a half-finished verb elsewhere in the tree cannot fail these
  const r = spawnSync(tickwise, args, { encoding: 'utf8', cwd: root, env: { ...process.env, TICKWISE_FROM_SOURCE: '1' } });
  return { rc: r.status, stdout: r.stdout, stderr: r.stderr };
}

let store = '';
beforeAll(() => {
  store = join(mkdtempSync(join(tmpdir(), 'tickwise-usage-')), 'run.duckdb');
  const r = run(['import', sample, '--db', store, '--label', 'igpu-prefill']);
  expect(r.rc, r.stderr).toBe(0);
});

describe('mistakes get a suggestion and the verb\'s own --help', () => {
  it('a mistyped verb: did you mean `gaps`?', () => {
    const r = run(['gap', store]);
    expect(r.rc).toBe(2);
    expect(r.stderr).toBe('tickwise: unknown verb `gap`: did you mean `gaps`? (tickwise gaps --help shows its options and examples)\n');
  });

  it('a word that is no verb at all', () => {
    const r = run(['frobnicate', store]);
    expect(r.rc).toBe(2);
    expect(r.stderr).toContain('unknown verb `frobnicate` (tickwise --help lists the verbs)');
  });

  it('a mistyped option: did you mean --min-gap? and no camelCase duplicate', () => {
    const r = run(['gaps', store, '--min-gpa', '1ms']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toBe('tickwise: unknown option --min-gpa: did you mean --min-gap?\n(tickwise gaps --help lists its options, with examples)\n');
    expect(r.stderr).not.toMatch(/minGpa/);
  });

  it('a verb without its inputs says what it needs', () => {
    const r = run(['gaps']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toBe('tickwise: gaps needs its inputs: a .duckdb store or capture files (- for stdin), e.g. tickwise gaps run.duckdb\n(tickwise gaps --help lists its options, with examples)\n');
  });

  it('an option missing its value is named', () => {
    const r = run(['gaps', store, '--min-gap']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toContain('--min-gap needs a value');
    expect(r.stderr).not.toMatch(/internal error|YError/);
  });

  it('a capture id that is no number says so (it said NaN)', () => {
    const r = run(['gaps', store, '--capture', 'x']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toBe('tickwise: --capture: not a number: write a capture number, a whole number >= 0 (tickwise info lists them)\n');
  });

  it('a duration without a unit is refused with the option named', () => {
    const r = run(['gaps', store, '--min-gap', '200']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: --min-gap: /);
  });
});

describe('--format is the output format, --input-format the readers\'', () => {
  it('gaps store --format json prints JSON (it printed a table before)', () => {
    const r = run(['gaps', store, '--format', 'json']);
    expect(r.rc, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as { scopes: unknown[]; threshold_ns: number };
    expect(j.scopes.length).toBeGreaterThan(0);
    expect(j.threshold_ns).toBe(200000);
  });

  it('on a capture file too (it said unknown format "json")', () => {
    const r = run(['kernels', sample, '--format', 'json']);
    expect(r.rc, r.stderr).toBe(0);
    expect((JSON.parse(r.stdout) as { kernels: unknown[] }).kernels.length).toBeGreaterThan(0);
  });

  it('an unknown output format is refused with the list (it was ignored)', () => {
    const r = run(['gaps', store, '--format', 'foo']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toContain('tickwise: --format foo: not one of text, json (--format is the output format; the input format is --input-format)');
  });

  it('an unknown input format is refused with the list', () => {
    const r = run(['gaps', sample, '--input-format', 'foo']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: --input-format foo: not an input format; one of ireeperf-jsonl, .*chrome-trace/);
  });

  it('--input-format names the reader', () => {
    const r = run(['gaps', sample, '--input-format', 'ireeperf-jsonl', '--json']);
    expect(r.rc, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveProperty('scopes');
  });

  it('sql keeps --format table|csv|json and refuses others with the list', () => {
    const r = run(['sql', store, 'select 1 AS x', '--format', 'xml']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toContain('--format xml: not one of table, csv, json');
  });
});

describe('values as stored', () => {
  it('sql --format csv and the table print every digit (no 6-significant-digit rounding)', () => {
    const q = 'select 4703.284998::DOUBLE AS ms, 0.1::DOUBLE + 0.2::DOUBLE AS sum, 123456789012::BIGINT AS n';
    const csv = run(['sql', store, q, '--format', 'csv']);
    expect(csv.rc, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('ms,sum,n\n4703.284998,0.30000000000000004,123456789012\n');
    const table = run(['sql', store, q]);
    expect(table.stdout).toContain('4703.284998');
    expect(table.stdout).toContain('0.30000000000000004');
  });

  it('a missing store: "no such store: PATH", exit 2', () => {
    const missing = join(tmpdir(), 'tickwise-no-such-dir', 'nope.duckdb');
    for (const args of [['sql', missing, 'select 1'], ['gaps', missing], ['info', missing]]) {
      const r = run(args);
      expect(r.rc, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toBe(`tickwise: no such store: ${missing}\n`);
    }
  });
});

describe('help', () => {
  it('every verb has examples', () => {
    for (const v of VERBS) expect(EXAMPLES[v.name]?.length ?? 0, v.name).toBeGreaterThan(0);
  });

  it('a verb\'s --help has an Examples section; duration options show <duration>, not [string]', () => {
    for (const verb of ['gaps', 'import', 'ceiling', 'capture', 'notebook run']) {
      const r = run([...verb.split(' '), '--help']);
      expect(r.rc, verb).toBe(0);
      expect(r.stdout, verb).toContain('\nExamples:\n');
      expect(r.stdout, verb).toContain(`tickwise ${verb} `);
    }
    const gaps = run(['gaps', '--help']).stdout;
    const minGap = gaps.slice(gaps.indexOf('--min-gap'), gaps.indexOf('Examples:'));
    expect(minGap).toContain('<duration>');
    expect(minGap).not.toContain('[string]');
  });

  it('every duration option of every verb shows <duration>, not [string], and stays text when parsed', () => {
    // the option's help entry: its line and the wrapped lines under it (up to the next option)
    const entry = (help: string, key: string) => {
      const lines = help.split('\n');
      const i = lines.findIndex((l) => l.trimStart().startsWith(`--${key} `));
      if (i < 0) return null;
      const rest = lines.slice(i + 1);
      const end = rest.findIndex((l) => /^\s+--?\w/.test(l) || l.trim() === '');
      return [lines[i]!, ...rest.slice(0, end < 0 ? rest.length : end)].join('\n');
    };
    const seen: string[] = [];
    for (const verb of ['gaps', 'diff', 'import', 'ceiling', 'schedule', 'report']) {
      const help = run([verb, '--help']).stdout;
      for (const key of DURATION_OPTIONS) {
        const e = entry(help, key);
        if (e === null) continue;
        seen.push(`${verb} --${key}`);
        expect(e, `${verb} --${key}`).toContain('<duration>');
        expect(e, `${verb} --${key}`).not.toContain('[string]');
      }
    }
    expect(seen).toEqual(expect.arrayContaining(['gaps --min-gap', 'ceiling --sync-overhead', 'schedule --handoff', 'report --min-gap', 'import --lock-wait']));
    const r = run(['ceiling', '--gpu-group-ms', '0.4', '--npu-tile-ms', '6', '--rows', '8192', '--sync-overhead', '50']);
    expect(r.rc).toBe(2);
    expect(r.stderr).toMatch(/^tickwise: --sync-overhead: invalid duration: 50 \(write a unit/);
  });
});

describe('device kind (issue 18.12)', () => {
  const npuSample = 'captures/sample/npu-tiles.ireeperf.jsonl';

  it('an npu_ capture read as gpu: a warning names --device-kind npu, in check and above every analysis', () => {
    const r = run(['check', npuSample, '--json']);
    expect(r.rc, r.stderr).toBe(0);
    const { findings } = JSON.parse(r.stdout) as { findings: { code: string; severity: string; message: string; suggested_option?: string }[] };
    const hint = findings.find((x) => x.code === 'device-kind-npu-names');
    expect(hint).toMatchObject({ severity: 'warning', suggested_option: '--device-kind npu' });
    expect(hint!.message).toBe('capture 1 device 0: every kernel (1 name, e.g. npu_prefill_dispatch_6_matmul_256x8192x3072_bf16) carries an NPU marker (npu_), but the device\'s kind is gpu: if it is an NPU, import it with --device-kind npu');
    const k = run(['kernels', npuSample]);
    expect(k.stdout.split('\n')[1]).toMatch(/^!! warning device-kind-npu-names: .*--device-kind npu$/);
  });

  it('told --device-kind npu, or a GPU capture: no such warning', () => {
    const told = run(['check', npuSample, '--device-kind', 'npu', '--json']);
    expect((JSON.parse(told.stdout) as { findings: { code: string }[] }).findings.map((x) => x.code)).not.toContain('device-kind-npu-names');
    const gpu = run(['kernels', sample]);
    expect(gpu.stdout).not.toContain('device-kind-npu-names');
  });
});

describe('check --wall when the reference agrees (issue 18.9)', () => {
  it('prints the wall ratio the README quotes (1.0027); --json lists every check that ran, with its figure', () => {
    const text = run(['check', sample, '--wall', 'captures/sample/llama-bench.csv']);
    expect(text.rc, text.stderr).toBe(0);
    expect(text.stdout).toContain('wall-clock-mismatch passed: capture 1 device 0: llama-bench pp2048 avg 907.530 ms is 1.0027x the capture\'s steady segment span 905.084 ms (agrees: within 0.8x..1.25x)');
    const j = run(['check', sample, '--wall', 'captures/sample/llama-bench.csv', '--json']);
    const { checks, findings } = JSON.parse(j.stdout) as { findings: { code: string }[]; checks: { code: string; findings: number; figures: Record<string, unknown>[] }[] };
    expect(findings.map((f) => f.code)).not.toContain('wall-clock-mismatch');
    expect(checks.length).toBeGreaterThanOrEqual(16);
    expect(new Set(checks.map((c) => c.code)).size).toBe(checks.length);
    const wall = checks.find((c) => c.code === 'wall-clock-mismatch')!;
    expect(wall.findings).toBe(0);
    expect(wall.figures).toEqual([{
      capture_id: 1, device: 0, test: 'pp2048', wall_avg_ns: 907529924, span_ns: 905084043, wall_over_span_ratio: 1.0027, agrees: true,
      range: '0.8x..1.25x', file: 'captures/sample/llama-bench.csv', line: 2,
    }]);
    expect(checks.find((c) => c.code === 'tick-frequency-mismatch')).toMatchObject({ findings: 1, worst: 'info' });
  });
});

describe('overlap compares only devices that ran together (issue 18.1)', () => {
  const matmul = join(root, '../shared/fixtures/iree/local_task_matmul.ireeperf.jsonl');
  it.skipIf(!existsSync(matmul))('the iGPU and NPU samples (one run) are compared; an IREE capture of another run is not', () => {
    const db = join(mkdtempSync(join(tmpdir(), 'tickwise-overlap-')), 'runs.duckdb');
    for (const args of [[sample], ['captures/sample/npu-tiles.ireeperf.jsonl', '--device-kind', 'npu'], [matmul]]) {
      const r = run(['import', ...args, '--db', db]);
      expect(r.rc, r.stderr).toBe(0);
    }
    const r = run(['overlap', db]);
    expect(r.rc, r.stderr).toBe(0);
    const table = r.stdout.slice(r.stdout.indexOf('overlap across devices'));
    expect(table.split('\n').filter((l) => /^capture \d/.test(l))).toEqual([expect.stringMatching(/^capture 1 device 0 \(gpu\)\s+capture 2 device 0 \(npu\)\s+235\.388 ms/)]);
    expect(r.stdout).toContain('2 pairs of devices that never ran at the same time (different runs) not compared; --json lists them');
    expect((JSON.parse(run(['overlap', db, '--json']).stdout) as { device_pairs: unknown[] }).device_pairs).toHaveLength(3);
  });
});

describe('an input whose format cannot be told', () => {
  it('names --input-format (not --format, the output format)', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tickwise-junk-')), 'junk.txt');
    writeFileSync(file, 'hello, not a capture\n');
    const r = run(['gaps', file]);
    expect(r.rc).toBe(2);
    expect(r.stderr).toMatch(/cannot tell the format of this input \(known: ireeperf-jsonl, .*\); pass --input-format NAME/);
  });
});

describe('schedule prints a float-noise residual as 0 (issue 18.11)', () => {
  it('the model-vs-capture residual of the samples reads 0 ms, never -5.68e-12 ms', () => {
    const r = run(['schedule', sample, '--npu', 'captures/sample/npu-tiles.ireeperf.jsonl', '--microbatch', '512']);
    expect(r.rc, r.stderr).toBe(0);
    const line = r.stdout.split('\n').find((l) => /\bresidual$/.test(l));
    expect(line?.trim()).toMatch(/^(?:0 ms|[+-]\d+(?:\.\d+)? (?:ms|us|ns))\s+residual$/);
    expect(r.stdout).not.toMatch(/\de-\d+ ms/);
  });
});
