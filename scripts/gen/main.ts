/**
 * Command line of the capture generators (run through scripts/gen-sample).
 *
 *   scripts/gen-sample                      iGPU sample set into captures/sample/
 *   scripts/gen-sample --npu                NPU companion pair into captures/sample/
 *   scripts/gen-sample --all                both
 *   scripts/gen-sample --out-dir DIR ...    write into DIR instead
 *   scripts/gen-sample --big OUT.jsonl --mb 600 [--seed N] [--truth OUT.truth.json]
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeBigIreeperf, writeSampleSet } from './ireeperf';

const USAGE = `usage: scripts/gen-sample [--npu | --all] [--out-dir DIR]
       scripts/gen-sample --big OUT.jsonl --mb N [--seed N] [--truth OUT.truth.json]`;

function fail(message: string): never {
  process.stderr.write(`gen-sample: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function main(argv: string[]): void {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
  let outDir = join(repo, 'captures', 'sample');
  let npu = false;
  let all = false;
  let big: string | null = null;
  let mb: number | null = null;
  let seed: number | undefined;
  let truth: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    switch (a) {
      case '--npu': npu = true; break;
      case '--all': all = true; break;
      case '--out-dir': outDir = resolve(value()); break;
      case '--big': big = resolve(value()); break;
      case '--mb': {
        const v = value();
        mb = Number(v);
        if (!Number.isFinite(mb) || mb <= 0) fail(`--mb wants a positive number of megabytes (10^6 bytes), got ${v}`);
        break;
      }
      case '--seed': {
        const v = value();
        seed = Number(v);
        if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) fail(`--seed wants an integer 0..4294967295, got ${v}`);
        break;
      }
      case '--truth': truth = resolve(value()); break;
      case '-h': case '--help': process.stdout.write(USAGE + '\n'); return;
      default: fail(`unknown argument ${a}`);
    }
  }
  if (big !== null) {
    if (mb === null) fail('--big needs --mb N');
    const t0 = process.hrtime.bigint();
    const r = writeBigIreeperf({ path: big, mb, seed, truth_path: truth });
    const s = Number(process.hrtime.bigint() - t0) / 1e9;
    process.stderr.write(
      `gen-sample: wrote ${r.path}: ${(r.bytes / 1e6).toFixed(1)} MB, ${r.counts['dispatch_event'] ?? 0} dispatch_event rows, ${r.prefills} prefills in ${s.toFixed(1)} s (${(r.bytes / 1e6 / s).toFixed(0)} MB/s)\n`,
    );
    return;
  }
  if (mb !== null || truth !== undefined || seed !== undefined) fail('--mb, --seed and --truth go with --big (the sample set has fixed seeds)');
  const written = writeSampleSet(outDir, { igpu: all || !npu, npu: all || npu });
  for (const p of written) process.stderr.write(`gen-sample: wrote ${p}\n`);
}

main(process.argv.slice(2));
