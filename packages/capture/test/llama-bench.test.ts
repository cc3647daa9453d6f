import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { importInput, importWallRefs, parseLlamaBench, readLlamaBench } from '../src/index';
import { baseRecords, tmp, toJsonl } from './helpers';

// Shapes as llama-bench prints them (tools/llama-bench README, build 5163).
const HEADER =
  'build_commit,build_number,cpu_info,gpu_info,backends,model_filename,model_type,model_size,model_n_params,n_batch,n_ubatch,n_threads,cpu_mask,cpu_strict,poll,type_k,type_v,n_gpu_layers,split_mode,main_gpu,no_kv_offload,flash_attn,tensor_split,use_mmap,embeddings,n_prompt,n_gen,n_depth,test_time,avg_ns,stddev_ns,avg_ts,stddev_ts';
const ROW_PP =
  '"8cf427ff","5163","AMD Ryzen 7 7800X3D 8-Core Processor","NVIDIA GeForce RTX 4080","CUDA","models/Qwen2.5-7B-Instruct-Q4_K_M.gguf","qwen2 7B Q4_K - Medium","4677120000","7615616512","2048","512","8","0x0","0","50","f16","f16","99","layer","0","0","0","0.00","1","0","512","0","0","2025-04-24T11:57:09Z","70285660","982040","7285.676949","100.064434"';
const ROW_TG =
  '"8cf427ff","5163","AMD Ryzen 7 7800X3D 8-Core Processor","NVIDIA GeForce RTX 4080","CUDA","models/Qwen2.5-7B-Instruct-Q4_K_M.gguf","qwen2 7B Q4_K - Medium","4677120000","7615616512","2048","512","8","0x0","0","50","f16","f16","99","layer","0","0","0","0.00","1","0","0","128","512","2025-04-24T11:57:10Z","1067431600","3834831","119.915244","0.430617"';
const CSV = `${HEADER}\n${ROW_PP}\n${ROW_TG}\n`;

const JSON_TEXT = `[
  {
    "build_commit": "8cf427ff",
    "model_type": "qwen2 7B Q4_K - Medium",
    "model_n_params": 7615616512,
    "n_prompt": 512,
    "n_gen": 0,
    "n_depth": 0,
    "test_time": "2025-04-24T11:58:50Z",
    "avg_ns": 72135640,
    "stddev_ns": 1453752,
    "avg_ts": 7100.002165,
    "stddev_ts": 140.341520,
    "samples_ns": [ 74601900, 71632900, 71745200, 71952700, 70745500 ],
    "samples_ts": [ 6863.1, 7147.55, 7136.37, 7115.79, 7237.21 ]
  },
  {
    "build_commit": "8cf427ff",
    "model_type": "qwen2 7B Q4_K - Medium",
    "n_prompt": 512,
    "n_gen": 128,
    "n_depth": 0,
    "avg_ns": 9007199254740993,
    "stddev_ns": 0,
    "avg_ts": 118.881588,
    "stddev_ts": 1.041811
  }
]
`;

const JSONL_TEXT =
  '{"build_commit": "8cf427ff", "model_type": "qwen2 7B Q4_K - Medium", "n_prompt": 512, "n_gen": 0, "n_depth": 0, "avg_ns": 70497220, "stddev_ns": 883196, "avg_ts": 7263.609157, "stddev_ts": 90.940578, "samples_ns": [ 71551000, 71222800 ],"samples_ts": [ 7155.74, 7188.71 ]}\n' +
  '{"build_commit": "8cf427ff", "model_type": "qwen2 7B Q4_K - Medium", "n_prompt": 0, "n_gen": 128, "n_depth": 0, "avg_ns": 1068078400, "stddev_ns": 6279455, "avg_ts": 119.844681, "stddev_ts": 0.699739}\n';

const MD_TEXT = `| model                          |       size |     params | backend    | ngl |            test |                  t/s |
| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: | -------------------: |
| qwen2 7B Q4_K - Medium         |   4.36 GiB |     7.62 B | CUDA       |  99 |           pp512 |      7340.20 ± 23.45 |
| qwen2 7B Q4_K - Medium         |   4.36 GiB |     7.62 B | CUDA       |  99 |    tg128 @ d512 |        116.71 ± 0.60 |
`;

const SQL_TEXT = `CREATE TABLE IF NOT EXISTS test (
  build_commit TEXT,
  model_type TEXT,
  n_prompt INTEGER,
  n_gen INTEGER,
  avg_ns INTEGER,
  stddev_ns INTEGER,
  avg_ts REAL,
  stddev_ts REAL
);

INSERT INTO test (build_commit, model_type, n_prompt, n_gen, avg_ns, stddev_ns, avg_ts, stddev_ts) VALUES ('8cf427ff', 'qwen2 7B Q4_K - Medium', '512', '0', '69905000', '519516', '7324.546977', '54.032613');
INSERT INTO test (build_commit, model_type, n_prompt, n_gen, avg_ns, stddev_ns, avg_ts, stddev_ts) VALUES ('8cf427ff', 'it''s a model', '0', '128', '1063608780', '4464130', '120.346696', '0.504647');
`;

function thrown(f: () => unknown): TickwiseError {
  try {
    f();
  } catch (e) {
    if (e instanceof TickwiseError) return e;
    throw e;
  }
  throw new Error('expected a TickwiseError');
}

describe('llama-bench: every output layout', () => {
  it('csv: both rows, exact ns, test names as llama-bench prints them', () => {
    const { layout, refs } = parseLlamaBench(CSV, 'bench.csv');
    expect(layout).toBe('csv');
    expect(refs.map((r) => [r.line, r.model, r.test, r.n_prompt, r.n_gen, r.avg_ns, r.stddev_ns, r.avg_ts, r.stddev_ts])).toEqual([
      [2, 'qwen2 7B Q4_K - Medium', 'pp512', 512, 0, 70_285_660n, 982_040n, 7285.676949, 100.064434],
      [3, 'qwen2 7B Q4_K - Medium', 'tg128 @ d512', 0, 128, 1_067_431_600n, 3_834_831n, 119.915244, 0.430617],
    ]);
    expect(refs[0]!.raw['build_commit']).toBe('8cf427ff');
    expect(refs[0]!.avg_ns_derived).toBe(false);
  });

  it('json: line of each object, integers beyond 2^53 exact, pp+tg name', () => {
    const { layout, refs } = parseLlamaBench(JSON_TEXT, 'bench.json');
    expect(layout).toBe('json');
    expect(refs.map((r) => [r.line, r.test, r.avg_ns])).toEqual([
      [2, 'pp512', 72_135_640n],
      [17, 'pp512+tg128', 9_007_199_254_740_993n],
    ]);
    expect(refs[0]!.raw['samples_ns']).toEqual([74601900, 71632900, 71745200, 71952700, 70745500]);
    expect(refs[1]!.raw['avg_ns']).toBe('9007199254740993');
  });

  it('jsonl', () => {
    const { layout, refs } = parseLlamaBench(JSONL_TEXT, 'bench.jsonl');
    expect(layout).toBe('jsonl');
    expect(refs.map((r) => [r.line, r.test, r.avg_ns])).toEqual([[1, 'pp512', 70_497_220n], [2, 'tg128', 1_068_078_400n]]);
  });

  it('markdown: avg_ns derived from t/s and marked so', () => {
    const { layout, refs } = parseLlamaBench(MD_TEXT, 'bench.md');
    expect(layout).toBe('md');
    expect(refs.map((r) => [r.line, r.test, r.n_prompt, r.n_gen, r.avg_ns, r.avg_ts, r.stddev_ts, r.avg_ns_derived, r.model])).toEqual([
      [3, 'pp512', 512, 0, BigInt(Math.round((512 * 1e9) / 7340.2)), 7340.2, 23.45, true, 'qwen2 7B Q4_K - Medium'],
      [4, 'tg128 @ d512', 0, 128, BigInt(Math.round((128 * 1e9) / 116.71)), 116.71, 0.6, true, 'qwen2 7B Q4_K - Medium'],
    ]);
  });

  it('sql: INSERT rows, quotes unescaped', () => {
    const { layout, refs } = parseLlamaBench(SQL_TEXT, 'bench.sql');
    expect(layout).toBe('sql');
    expect(refs.map((r) => [r.line, r.model, r.test, r.avg_ns])).toEqual([
      [12, 'qwen2 7B Q4_K - Medium', 'pp512', 69_905_000n],
      [13, "it's a model", 'tg128', 1_063_608_780n],
    ]);
  });

  it('gzip files are read as they are', async () => {
    const dir = tmp();
    const p = join(dir, 'bench.csv.gz');
    writeFileSync(p, gzipSync(CSV));
    const { refs } = await readLlamaBench(p);
    expect(refs).toHaveLength(2);
  });
});

describe('llama-bench: bad rows stop with file and line (exit 2)', () => {
  it('csv: a row with a missing field', () => {
    const e = thrown(() => parseLlamaBench(`${HEADER}\n${ROW_PP}\n${ROW_TG.replace(',"0.430617"', '')}\n`, 'bench.csv'));
    expect(e.where()).toBe('bench.csv:3: row has 32 fields, the header has 33');
    expect(e.exitCode).toBe(2);
  });

  it('csv: avg_ns not an integer', () => {
    const e = thrown(() => parseLlamaBench(`${HEADER}\n${ROW_PP.replace('"70285660"', '"7.03e7"')}\n`, 'bench.csv'));
    expect(e.where()).toBe('bench.csv:2: avg_ns is not a non-negative integer: "7.03e7"');
  });

  it('csv: no avg_ns column at all (not llama-bench)', () => {
    const e = thrown(() => parseLlamaBench('a,b\n1,2\n', 'x.csv'));
    expect(e.where()).toBe('x.csv:1: not llama-bench output: the header has no avg_ns field (fields: a, b)');
  });

  it('csv: a quoted field left open names the line it opened on', () => {
    const e = thrown(() => parseLlamaBench(`${HEADER}\n${ROW_PP}\n"8cf427ff,5163\n`, 'bench.csv'));
    expect(e.where()).toBe('bench.csv:3: a quoted CSV field is not closed before the end of the file');
  });

  it('json: a row without avg_ns names the line the object starts on', () => {
    const e = thrown(() => parseLlamaBench('[\n  {"n_prompt": 512, "n_gen": 0, "avg_ns": 5},\n  {"n_prompt": 512,\n   "n_gen": 0}\n]\n', 'b.json'));
    expect(e.where()).toBe('b.json:3: row has no avg_ns');
  });

  it('json: broken syntax names its line', () => {
    const e = thrown(() => parseLlamaBench('[\n  {"n_prompt": 512,\n   "avg_ns": 12 "x": 1}\n]\n', 'b.json'));
    expect(e.where()).toBe('b.json:3: not valid JSON: expected "}" but found "\\""');
  });

  it('jsonl: avg_ns 0', () => {
    const e = thrown(() => parseLlamaBench('{"n_prompt": 512, "n_gen": 0, "avg_ns": 10}\n{"n_prompt": 512, "n_gen": 0, "avg_ns": 0}\n', 'b.jsonl'));
    expect(e.where()).toBe('b.jsonl:2: avg_ns is 0: the test has no timed repetitions');
  });

  it('markdown: an unreadable rate', () => {
    const e = thrown(() => parseLlamaBench(MD_TEXT.replace('7340.20 ± 23.45', 'fast'), 'b.md'));
    expect(e.where()).toBe('b.md:3: cannot read t/s "fast" (expected "1234.56 ± 7.89")');
  });

  it('an empty file', () => {
    expect(thrown(() => parseLlamaBench('\n\n', 'e.csv')).where()).toBe('e.csv: no llama-bench results in this file (expected its -o csv, json, jsonl, md or sql output)');
  });
});

describe('importWallRefs', () => {
  it('stores the rows tied to a capture; all or nothing', async () => {
    const dir = tmp();
    const cap = join(dir, 'c.ireeperf.jsonl');
    writeFileSync(cap, toJsonl(baseRecords()));
    const bench = join(dir, 'bench.csv');
    writeFileSync(bench, CSV);
    const store = await Store.open(':memory:');
    try {
      const { capture_id } = await importInput(store, cap);
      const { refs } = await importWallRefs(store, bench, capture_id);
      expect(refs).toHaveLength(2);
      const rows = await store.rows(`SELECT capture_id, source_path, line, model, test, n_prompt, n_gen, avg_ns, stddev_ns, avg_ts, raw->>'build_commit' AS commit FROM wall_refs ORDER BY line`);
      expect(rows).toEqual([
        { capture_id, source_path: bench, line: 2n, model: 'qwen2 7B Q4_K - Medium', test: 'pp512', n_prompt: 512n, n_gen: 0n, avg_ns: 70_285_660n, stddev_ns: 982_040n, avg_ts: 7285.676949, commit: '8cf427ff' },
        { capture_id, source_path: bench, line: 3n, model: 'qwen2 7B Q4_K - Medium', test: 'tg128 @ d512', n_prompt: 0n, n_gen: 128n, avg_ns: 1_067_431_600n, stddev_ns: 3_834_831n, avg_ts: 119.915244, commit: '8cf427ff' },
      ]);
      const bad = join(dir, 'bad.csv');
      writeFileSync(bad, `${HEADER}\n${ROW_PP}\n${ROW_TG.replace('"1067431600"', '"-1"')}\n`);
      await expect(importWallRefs(store, bad, capture_id)).rejects.toThrow('avg_ns is not a non-negative integer: "-1"');
      expect(await store.count('wall_refs')).toBe(2);
      await expect(importWallRefs(store, bench, 99)).rejects.toThrow('capture 99 is not in the store');
    } finally {
      await store.close();
    }
  });
});
