import type { CommandModule } from 'yargs';

/**
 * Every verb of the CLI, in help order. A verb's module (and what it
 * imports: DuckDB, the readers, the chart libraries) is loaded only when that
 * verb runs; `tickwise --help` needs only the names and the one-line
 * descriptions here (a test checks they equal each module's own).
 */
export interface Verb {
  readonly name: string;
  readonly describe: string;
  readonly load: () => Promise<CommandModule<object, never>>;
}

const verb = (name: string, describe: string, load: () => Promise<unknown>): Verb =>
  ({ name, describe, load: load as () => Promise<CommandModule<object, never>> });

export const VERBS: readonly Verb[] = [
  verb('capture', 'run a program with the recorder preloaded: tickwise capture --backend hip,amdxdna --out run/ -- ./app args', async () => (await import('./capture')).captureCommand),
  verb('import', 'import capture files into a DuckDB store (all or nothing)', async () => (await import('./import')).importCommand),
  verb('info', 'captures, devices (declared and fitted tick rates, fit quality), row counts, diagnostics', async () => (await import('./info')).infoCommand),
  verb('sql', 'run SQL over a store or captures: tickwise sql run.duckdb "select ..."', async () => (await import('./sql')).sqlCommand),
  verb('ceiling', 'split ceiling: the best iGPU/NPU row split of a GEMM, its speedup, and the NPU tile time a target needs', async () => (await import('./ceiling')).ceilingCommand),
  verb('check', 'check captures for unit, clock, wall-clock and provenance errors (exit 1 on an error finding)', async () => (await import('./check')).checkCommand),
  verb('provenance', 'which files a program loads (resolved as ld.so does) with size, mtime, build-id, sha256 and marker counts', async () => (await import('./provenance')).provenanceCommand),
  verb('pin', 'write a pin: the build-ids, sizes, sha256 and marker counts of a program and the libraries it loads', async () => (await import('./pin')).pinCommand),
  verb('export', "write the store for other tools: Chrome trace JSON for Perfetto's UI, or Parquet for pandas/polars", async () => (await import('./export')).exportCommand),
  verb('notebook', 'notebooks: Markdown with ```sql and ```vega-lite cells (notebooks/*.md)', async () => (await import('./notebook')).notebookCommand),
  verb('report', 'one self-contained HTML report (timelines, gaps, kernels, row-group cost, split ceiling), or a Markdown summary', async () => (await import('./report')).reportCommand),
  verb('segments', 'the repetitions (prefills) in a capture: repeating kernel sequences between long host gaps (--reps N when known)', async () => (await import('./segments')).segmentsCommand),
  verb('gaps', 'busy (union of dispatches), idle and idle gaps per device and queue; gaps between submissions vs inside one', async () => (await import('./gaps')).gapsCommand),
  verb('overlap', 'time with >= 2 dispatches in flight (and from different submissions) per device; busy time shared by device pairs', async () => (await import('./overlap')).overlapCommand),
  verb('kernels', 'per kernel: count, total, share of busy time (the union), mean, median, p10/p90, min/max', async () => (await import('./kernels')).kernelsCommand),
  verb('cost', 'per-row-group cost of a kernel: group_ms = dispatch_ms x group_rows / rows_per_dispatch; with --params/--tokens a FLOP reading too', async () => (await import('./cost')).costCommand),
  verb('schedule', 'schedule model: all-iGPU, per-GEMM split, micro-batch pipelining (HEFT) and the optimum on small graphs, with error bars and energy', async () => (await import('./schedule')).scheduleCommand),
  verb('diff', 'compare two captures, segments or kernel groups: per kernel count/total/mean/median per launch with deltas and ratios; busy/idle; libraries; conditions', async () => (await import('./diff')).diffCommand),
  verb('launches', 'per launch group (kernel x work per launch): time per launch and per unit of work, latency-bound groups flagged; submit-to-start latency; NPU commands', async () => (await import('./launches')).launchesCommand),
];
