/**
 * `@tickwise/capture/early`: the door the CLI's entry opens before anything
 * else of the CLI loads (no DuckDB, no store, no reader, no yargs), to start
 * the scan of a large Chrome trace while the rest loads. See
 * {@link startChromeImportEarly}.
 */
export { startChromeImportEarly } from './readers/chrome-scan';
