/**
 * Catalog of the user-facing messages of the rocprofv3, rocpd, Chrome trace,
 * HeteroMosaic and hrx readers and of the timeline check (one place, each a
 * function, so wording stays consistent and tests can match it).
 */
export const traceMessages = {
  // input shape
  emptyFile: () => 'the file is empty: no records to import',
  zstdUnsupported: () => 'zstd-compressed input is not supported by this reader: decompress it first (zstd -d)',
  unreadable: (detail: string) => `cannot read the file: ${detail}`,
  notJsonDocument: () => 'not a JSON document: the first character should be { or [',
  notJsonObjectLine: () => 'not a JSON object: each line should hold one {...} record',
  badJson: (detail: string) => `malformed JSON: ${detail}`,
  trailingData: () => 'malformed JSON: data after the end of the document',
  truncatedDocument: () => 'the JSON document ends early (cut off?)',
  tooDeep: (levels: number) => `malformed JSON: arrays and objects nested more than ${levels} deep outside the records (no trace is; memory would grow with each level)`,
  truncatedRecord: () => 'the last record is cut off (the writer stopped mid-record); it was dropped',
  unterminatedArray: () => 'the event array has no closing ]: read to the end of the file (the Trace Event Format allows this)',
  captureTooLarge: (path: string, bytes: number) => `metadata value ${path} is ${bytes} bytes; too large to keep, skipped`,
  badRecord: (detail: string) => `bad record: ${detail}`,
  missingField: (field: string, what: string) => `${what} has no "${field}" field`,
  missingColumns: (cols: readonly string[], have: readonly string[]) =>
    `not a rocprofv3 kernel trace: missing column(s) ${cols.join(', ')} (the header has ${have.join(', ')})`,

  // units and values
  nonPositiveDuration: (what: string, n: number) => `${n} ${what} have a zero or negative duration (end <= start): kept with valid = false`,
  negativeDuration: (what: string, n: number) => `${n} ${what} end before they start: kept with valid = false`,
  badTimestamp: (what: string, n: number, field: string) => `${n} ${what} have no usable ${field}: kept with valid = false and NULL times`,
  outOfRange: (what: string, n: number) => `${n} ${what} have times beyond the int64 nanosecond range: kept with valid = false`,
  unmatchedBeginEnd: (n: number, kind: 'B' | 'E') =>
    kind === 'B' ? `${n} "B" event(s) have no matching "E" on their thread: kept as host events with valid = false` : `${n} "E" event(s) have no matching "B" on their thread: kept in raw_records`,
  rawPhases: (phases: string, n: number) => `${n} event(s) of phase(s) ${phases} have no table of their own: kept in raw_records`,
  noEvents: () => 'no trace events in this file (expected a traceEvents array or a JSON array of events)',
  notCaptured: (kind: string, n: number) => `${n} ${kind} record(s) have no table of their own: kept in raw_records`,

  // clocks and timelines
  boottimeUnaligned: () =>
    'timestamps are CLOCK_BOOTTIME ns; kept on their own "boottime" timeline (not aligned with host_monotonic captures). Pass the recorder\'s boottime_minus_monotonic_ns as --boottime-offset to place them on host_monotonic',
  boottimeShifted: (offset: string) => `CLOCK_BOOTTIME shifted onto CLOCK_MONOTONIC: monotonic_ns = boottime_ns - ${offset}`,
  traceClockUnknown: () =>
    'the trace does not say which clock its timestamps come from: kept on its own timeline. Pass --trace-clock monotonic|boottime|realtime to place it beside other captures',
  traceClockGiven: (clock: string) => `timestamps taken as ${clock} (given with --trace-clock)`,
  kinetoBase: (base: string) => `PyTorch/Kineto trace: ts are microseconds after baseTimeNanoseconds = ${base} (CLOCK_REALTIME); added exactly`,
  displayTimeUnit: (unit: string) =>
    `displayTimeUnit "${unit}" is a display hint: ts and dur are read as microseconds as the Trace Event Format defines them (pass --trace-time-unit ${unit} if this producer wrote ${unit})`,
  traceTimeUnitGiven: (unit: string) => `ts and dur read as ${unit} (given with --trace-time-unit), not the format's microseconds`,
  steadyClock: () => 'start_ts_us/end_ts_us come from std::chrono::steady_clock, which is CLOCK_MONOTONIC on Linux (libstdc++ and libc++): placed on host_monotonic',
  declaredOnly: (device: number, hz: number) =>
    `device ${device}: ticks scaled by the declared frequency_hz ${hz} on a relative timeline (starts at 0, not aligned with host events)`,
  noFrequency: (device: number) => `device ${device}: the profile has no frequency_hz; *_ns left NULL (pass --tick-hz to assume one)`,
  otherDevice: (device: number, name: string, n: number) =>
    `device ${device} (${name}) is an accelerator tickwise does not model: its ${n} device span(s) imported as dispatches of a device of kind "other" (pass --device-kind to name its kind)`,
  noDispatches: (what: string) => `the capture holds no dispatches: ${what}`,
  wideWorkgroup: (n: number) => `${n} dispatch(es) have a workgroup or grid size beyond 32 bits (HSA's are 32-bit): those sizes are left NULL`,
  outOfRangeValues: (n: number, table: string) => `${n} value(s) of ${table} are beyond the range of their column (64-bit ids and times, 32-bit agents): kept as NULL`,
  unreadableDatabase: (detail: string) => `the rocpd database cannot be read as rocpd: ${detail}`,
  queueHandles: (n: number, example: string) =>
    `Queue_Id holds ${n} queue handle(s) (pointers such as ${example}), wider than the queue column: each handle is numbered queue 1, 2, ... of its device in order of first use and kept exactly in conditions (queue_handle.<device>.<queue>)`,
  unknownDeviceKind: (device: number) => `device ${device}: the profile does not say what kind of device it is; recorded as unknown (pass --device-kind)`,

  // timeline compatibility
  noCaptures: () => 'no captures in the store',
  unknownCapture: (id: number) => `no capture ${id} in the store`,
  timelineNotShared: (id: number, label: string, timeline: string) => `capture ${id} (${label}) is on the ${timeline} timeline, which no other capture can share (${timelineHint(timeline)})`,
  timelinesDiffer: (list: string) => `captures are on different timelines (${list}); times cannot be compared across them`,
  hostsDiffer: (list: string) => `captures come from different hosts (${list}); their clocks cannot be compared`,
  refused: (what: string, reason: string) => `${what} needs all captures on one timeline: ${reason}`,
} as const;

function timelineHint(timeline: string): string {
  switch (timeline) {
    case 'relative':
      return 'ticks scaled by a declared or assumed frequency start at 0: there is no clock correlation';
    case 'ticks-only':
      return 'device ticks with no time base';
    case 'unknown':
      return 'pass --trace-clock to say which clock its timestamps come from';
    default:
      return 'its clock is private to it';
  }
}
