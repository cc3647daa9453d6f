/**
 * The Examples section of every verb's `--help` (issue 18.7), in one place
 * so each verb shows at least one and a test can hold every verb to it.
 * They use the shipped samples (`S=captures/sample`) and the README's store
 * `run.duckdb`, so they run as written.
 */

/** Per verb: [command, what it does]. */
export const EXAMPLES: Readonly<Record<string, readonly (readonly [string, string])[]>> = {
  capture: [
    ['$0 capture --backend hip,amdxdna --out run/ --db run.duckdb -- ./llama-bench -p 2048', 'record a program and import what it wrote'],
  ],
  import: [
    ['$0 import $S/igpu-prefill.ireeperf.jsonl --db run.duckdb --wall $S/llama-bench.csv', 'a capture and its wall-clock reference'],
    ['$0 import $S/npu-tiles.ireeperf.jsonl --db run.duckdb --device-kind npu', 'an NPU capture (the source does not say NPU)'],
    ['$0 import trace.json --db run.duckdb --input-format chrome-trace', 'name the input format instead of detecting it'],
  ],
  info: [
    ['$0 info run.duckdb', 'captures, devices, clock fits, diagnostics'],
    ['$0 info run.duckdb --format json', 'the same as JSON'],
  ],
  sql: [
    ['$0 sql run.duckdb "select kernel, count(*) from dispatches group by 1"', 'a table on stdout'],
    ['$0 sql run.duckdb "select * from kernel_stats" --format csv', 'CSV, values exactly as stored'],
    ['$0 sql run.duckdb "select * from dispatches" --out dispatches.parquet', 'write a file instead'],
  ],
  ceiling: [
    ['$0 ceiling --gpu-group-ms 0.40 --npu-tile-ms 6.0 --rows 8192', 'the split ceiling from two costs'],
    ['$0 ceiling --gpu-group-ms 0.40 --npu-tile-ms 6.0 --rows 8192 --format md', 'a Markdown block'],
  ],
  check: [
    ['$0 check run.duckdb', 'unit, clock and provenance checks (exit 1 on an error)'],
    ['$0 check run.duckdb --wall $S/llama-bench.csv', 'also against a wall-clock reference'],
  ],
  provenance: [
    ['$0 provenance ./llama-bench --env LD_LIBRARY_PATH=/opt/build/lib --marker gemm_v2', 'the libraries a program loads'],
  ],
  pin: [
    ['$0 pin ./llama-bench --out pin.json', 'pin a program\'s libraries'],
    ['$0 pin run.duckdb --capture 1 --out pin.json', 'pin what a capture recorded'],
  ],
  export: [
    ['$0 export run.duckdb --format perfetto-json --out trace.json', 'open in ui.perfetto.dev'],
    ['$0 export run.duckdb --format parquet --out tables/', 'one Parquet file per table'],
  ],
  notebook: [
    ['$0 notebook run notebooks/idle-anatomy.md --db run.duckdb --out idle.html', 'run a notebook into one HTML page'],
  ],
  report: [
    ['$0 report run.duckdb --out report.html', 'the HTML report'],
    ['$0 report run.duckdb --format md > summary.md', 'a Markdown summary to paste into an issue'],
  ],
  segments: [
    ['$0 segments run.duckdb --capture 1', 'the prefills in a capture'],
    ['$0 segments run.duckdb --reps 4', 'when the number of repetitions is known'],
  ],
  gaps: [
    ['$0 gaps run.duckdb --capture 1 --min-gap 200us --segment steady', 'idle and long gaps of the warm prefills'],
    ['$0 gaps run.duckdb --format json', 'the same as JSON'],
  ],
  overlap: [
    ['$0 overlap run.duckdb', 'within each device, and between devices that ran together'],
  ],
  kernels: [
    ['$0 kernels run.duckdb --capture 1 --segment steady', 'per-kernel statistics of the warm prefills'],
  ],
  cost: [
    ['$0 cost run.duckdb --capture 1 --kernel \'*dispatch_6_matmul*\' --rows-per-dispatch 512', 'ms per 256-row group of a GEMM'],
  ],
  schedule: [
    ['$0 schedule $S/igpu-prefill.ireeperf.jsonl --npu $S/npu-tiles.ireeperf.jsonl --microbatch 512', 'pipelining the iGPU and NPU'],
  ],
  diff: [
    ['$0 diff a.ireeperf.jsonl b.ireeperf.jsonl --segment steady', 'two captures, kernel by kernel'],
  ],
  launches: [
    ['$0 launches run.duckdb --capture 1', 'time per launch, latency-bound groups, launch delay'],
  ],
};

/** The line under a verb's examples: what `$S` is. */
export const EXAMPLES_NOTE = 'S=captures/sample (the shipped samples); run.duckdb: a store made by tickwise import';
