/**
 * `@tickwise/capture/open`: the package's light door, for every verb that
 * opens its inputs. Opening a store, the names of the input formats and
 * clocks, and `importInput`/`openInputs`, whose readers load on the first
 * capture they read. A verb given a `.duckdb` store loads none of the
 * readers (~300 KB of bundle, ~20 ms of each start-up); `@tickwise/capture`
 * exports all of this too, with the readers themselves.
 */
export { expandInputs, importInput, isStorePath, openInputs, type SkippedInput } from './open-inputs';
export { FORMAT_NAMES, isFormatName, type FormatName } from './format-names';
export { TraceClock, isTraceClock } from './reader-options';
export { STDIN_ARG } from './stdin';
export type { ImportOptions, ImportResult } from './readers/ireeperf-jsonl';
