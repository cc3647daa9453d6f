/**
 * @tickwise/capture: getting captures into the store. One reader per input
 * format (registered in `FORMATS`), format detection by content, stdin and
 * compressed inputs, and opening a verb's inputs as a store.
 */
export * from './messages';
export * from './source-file';
export * from './jsonl-sanitize';
export * from './ireeperf-jsonl';
export * from './formats';
export * from './open-inputs';
export * from './llama-bench';
export * from './provenance/index';
export * from './provenance-store';
export * from './reader-options';
export * from './timelines';
export * from './trace-messages';
export * from './json-records';
export * from './rocprofv3';
export * from './rocpd';
export * from './chrome-trace';
export * from './heteromosaic-jsonl';
export * from './hrx-device-profile';
export * from './conditions';
export * from './conditions-env';
export * from './conditions-kmsg';
export * from './conditions-sysfs';
export * from './recorder-dir';
export * from './recorder-import';
