/**
 * A llama-bench-style wall-clock reference (`-o csv` and `-o json`) for a
 * synthetic capture: one pp test whose samples are the capture's steady
 * prefill span plus the host work llama-bench's timer also covers (batch
 * preparation before the first submission, the final synchronize after the
 * last), with a little rep-to-rep noise.
 *
 * Field names and order follow llama-bench's `test::get_fields()` of a
 * late-2025 build (build_commit ... fit_min_ctx, n_prompt, n_gen, n_depth,
 * test_time, avg_ns, stddev_ns, avg_ts, stddev_ts; JSON adds samples_ns and
 * samples_ts). avg/stddev are computed as llama-bench does: uint64 ns
 * (integer mean, integer-arithmetic stdev), double tokens/s per sample.
 */
import type { Rng } from './rng';

/** What the reference describes. */
export interface LlamaBenchInput {
  readonly n_prompt: number;
  readonly n_batch: number;
  readonly n_ubatch: number;
  /** The capture's steady prefill span, true ns. */
  readonly steady_span_ns: number;
  /** Host time inside llama-bench's timer outside the device span. */
  readonly host_outside_span_ns: number;
  readonly repetitions: number;
  /** Relative rep-to-rep noise (1 sigma). */
  readonly noise: number;
  readonly model_n_params: number;
  readonly model_size: number;
}

/** The reference, as llama-bench would print it, and the numbers behind it. */
export interface LlamaBenchReference {
  csv: string;
  json: string;
  samples_ns: number[];
  avg_ns: number;
  stddev_ns: number;
  avg_ts: number;
  stddev_ts: number;
}

const FIXED: ReadonlyArray<readonly [string, string | number | boolean]> = [
  ['build_commit', 'c4f2a1e8'],
  ['build_number', 6931],
  ['cpu_info', 'AMD RYZEN AI MAX+ 395 w/ Radeon 8060S'],
  ['gpu_info', 'AMD Radeon 8060S Graphics (gfx1151)'],
  ['backends', 'IREE'],
  ['model_filename', 'models/Llama-3.2-3B-Instruct-F16.gguf'],
  ['model_type', 'llama 3B F16'],
];

/** Builds the CSV and JSON texts (deterministic in rng). */
export function llamaBench(input: LlamaBenchInput, rng: Rng): LlamaBenchReference {
  const samples_ns: number[] = [];
  for (let i = 0; i < input.repetitions; i++) {
    samples_ns.push(Math.round((input.steady_span_ns + input.host_outside_span_ns) * (1 + input.noise * rng.normal())));
  }
  // llama-bench: avg<uint64_t>, stdev<uint64_t> (integer arithmetic), then tokens/s per sample in double.
  const n = BigInt(samples_ns.length);
  const big = samples_ns.map((s) => BigInt(s));
  const sum = big.reduce((a, b) => a + b, 0n);
  const mean = sum / n;
  let stddev_ns = 0;
  if (samples_ns.length > 1) {
    const sq = big.reduce((a, b) => a + b * b, 0n);
    const v = sq / (n - 1n) - (mean * mean * n) / (n - 1n);
    stddev_ns = Math.floor(Math.sqrt(Number(v)));
  }
  const ts = samples_ns.map((s) => (1e9 * input.n_prompt) / s);
  const avg_ts = ts.reduce((a, b) => a + b, 0) / ts.length;
  let stddev_ts = 0;
  if (ts.length > 1) {
    const sq = ts.reduce((a, b) => a + b * b, 0);
    stddev_ts = Math.sqrt(sq / (ts.length - 1) - (avg_ts * avg_ts * ts.length) / (ts.length - 1));
  }
  const avg_ns = Number(mean);

  const fields: [string, string | number | boolean][] = [
    ...FIXED.map(([k, v]) => [k, v] as [string, string | number | boolean]),
    ['model_size', input.model_size],
    ['model_n_params', input.model_n_params],
    ['n_batch', input.n_batch],
    ['n_ubatch', input.n_ubatch],
    ['n_threads', 16],
    ['cpu_mask', '0x0'],
    ['cpu_strict', false],
    ['poll', 50],
    ['type_k', 'f16'],
    ['type_v', 'f16'],
    ['n_gpu_layers', 99],
    ['n_cpu_moe', 0],
    ['split_mode', 'layer'],
    ['main_gpu', 0],
    ['no_kv_offload', false],
    ['flash_attn', 1],
    ['devices', 'auto'],
    ['tensor_split', '0.00'],
    ['tensor_buft_overrides', 'none'],
    ['use_mmap', true],
    ['use_direct_io', false],
    ['embeddings', false],
    ['no_op_offload', 0],
    ['no_host', false],
    ['fit_target', 0],
    ['fit_min_ctx', 0],
    ['n_prompt', input.n_prompt],
    ['n_gen', 0],
    ['n_depth', 0],
    ['test_time', '2026-01-14T10:21:37Z'],
    ['avg_ns', avg_ns],
    ['stddev_ns', stddev_ns],
    ['avg_ts', avg_ts],
    ['stddev_ts', stddev_ts],
  ];

  // CSV: every value quoted; bools as 0/1; doubles with 6 decimals (std::to_string).
  const csvValue = (k: string, v: string | number | boolean): string => {
    if (typeof v === 'boolean') return v ? '1' : '0';
    if (k === 'avg_ts' || k === 'stddev_ts') return (v as number).toFixed(6);
    return String(v);
  };
  const csv =
    fields.map(([k]) => k).join(',') + '\n' + fields.map(([k, v]) => `"${csvValue(k, v)}"`).join(',') + '\n';

  // JSON: an array of objects, 2-space indent, samples arrays on one line.
  const jsonValue = (k: string, v: string | number | boolean): string => {
    if (typeof v === 'string') return JSON.stringify(v);
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (k === 'avg_ts' || k === 'stddev_ts') return v.toFixed(6);
    return String(v);
  };
  const lines = fields.map(([k, v]) => `    "${k}": ${jsonValue(k, v)}`);
  lines.push(`    "samples_ns": [ ${samples_ns.join(', ')} ]`);
  lines.push(`    "samples_ts": [ ${ts.map(cppDefaultDouble).join(', ')} ]`);
  const json = '[\n  {\n' + lines.join(',\n') + '\n  }\n]\n';
  return { csv, json, samples_ns, avg_ns, stddev_ns, avg_ts, stddev_ts };
}

/** A double as C++ streams print it by default (6 significant digits, no trailing zeros). */
function cppDefaultDouble(x: number): string {
  const s = x.toPrecision(6);
  if (s.includes('e')) return String(Number(s));
  return s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}
