/**
 * @tickwise/capture: getting captures into the store. One reader per input
 * format (registered in `FORMATS`), format detection by content, stdin and
 * compressed inputs, and opening a verb's inputs as a store.
 * `@tickwise/capture/open` (open.ts) is the light door for verbs that only
 * open their inputs: it does not load the readers until a capture is read.
 */
export * from './messages';
export * from './source-file';
export * from './jsonl-sanitize';
export * from './readers/ireeperf-jsonl';
export * from './format-names';
export { FORMATS, detectFormat, type FormatSpec, type Reader } from './formats';
export * from './open-inputs';
export * from './readers/llama-bench';
export * from './provenance/index';
export * from './provenance-store';
export * from './reader-options';
export * from './timelines';
export * from './trace-messages';
export * from './json-records';
export * from './readers/rocprofv3';
export * from './readers/rocprofv3-scan';
export * from './readers/rocpd';
export * from './readers/chrome-trace';
export * from './readers/chrome-scan';
export * from './readers/heteromosaic-jsonl';
export * from './readers/hrx-device-profile';
export * from './conditions';
export * from './conditions-env';
export * from './conditions-kmsg';
export * from './conditions-sysfs';
export * from './readers/recorder-dir';
export * from './recorder-import';
