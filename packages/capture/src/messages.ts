/** Catalog of the capture package's user-facing messages. */
export const captureMessages = {
  emptyFile: () => 'the file is empty: no records to import',
  notJson: (detail: string) => `not a JSON record: ${detail}`,
  missingSchema: () => 'no "schema" record: this is not an ireeperf-jsonl stream (the first record should have record_type "schema")',
  wrongFormat: (format: string) => `schema record says format "${format}", expected "ireeperf-jsonl"`,
  unknownSchemaVersion: (v: string, known: readonly number[]) =>
    `unknown ireeperf-jsonl schema_version ${v} (tickwise reads ${known.join(', ')}); refusing to guess field meanings`,
  mixedSchemaVersion: (v: string, first: string) => `record has schema_version ${v} but the stream declared ${first}`,
  badValue: (detail: string) => `a field cannot be read as its type (out of range, wrong type, or negative where unsigned): ${detail}`,
  truncatedLastLine: () => 'the last line is cut off (the writer stopped mid-record); it was dropped',
  nonFinite: (token: string) => `bare ${token} is not JSON; read as null`,
  invalidUtf8: () => 'invalid UTF-8 bytes; replaced with U+FFFD',
  noSessionEnd: () => 'the stream ends without a session "end" record: the capture may be incomplete',
  sessionNotOk: (status: string) => `session ended with status ${status}`,
  unknownRecordType: (t: string, n: number) => `${n} record(s) of unknown type "${t}" kept in raw_records`,
  noTimeBase: (device: number) =>
    `device ${device}: dispatch ticks have neither clock_correlation samples nor a declared frequency; *_ns left NULL (pass --tick-hz to assume one)`,
  declaredOnly: (device: number, hz: number) =>
    `device ${device}: no clock_correlation samples; ticks scaled by the declared ${hz} Hz on a relative timeline (starts at 0, not aligned with host events)`,
  oneSample: (device: number) => `device ${device}: only one clock sample; a fit needs two`,
  invalidEvents: (table: string, n: number) => `${n} ${table} row(s) marked invalid by the producer (kept, valid = false)`,
  endBeforeStart: (table: string, n: number) => `${n} ${table} row(s) end before they start (kept, valid = false)`,
  producerDiagnostic: (msg: string) => `producer diagnostic: ${msg}`,
  droppedRecords: (n: string) => `producer reports ${n} dropped record(s)`,
  unreadable: (detail: string) => `cannot read the file: ${detail}`,
} as const;
