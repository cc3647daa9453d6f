/**
 * The names of the import formats, apart from their readers: the CLI lists
 * and checks `--input-format` with these without loading every reader (a
 * verb given a store never needs one). `FORMATS` (formats.ts) must have an
 * entry for each name and no other: its type says so.
 */
export const FORMAT_NAMES = [
  'ireeperf-jsonl',
  'rocprofv3-csv',
  'rocprofv3-json',
  'rocpd',
  'chrome-trace',
  'heteromosaic-jsonl',
  'tickwise-recorder',
  'hrx-device-profile',
] as const;

/** Name of an import format. */
export type FormatName = (typeof FORMAT_NAMES)[number];

/** True when `s` names an import format. */
export function isFormatName(s: string): s is FormatName {
  return (FORMAT_NAMES as readonly string[]).includes(s);
}
