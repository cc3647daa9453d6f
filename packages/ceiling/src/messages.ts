/** Catalog of the ceiling package's user-facing messages. */
export const ceilingMessages = {
  notPositive: (what: string, value: unknown) => `${what} must be a positive number, got ${String(value)}`,
  notNonNegative: (what: string, value: unknown) => `${what} must be zero or more, got ${String(value)}`,
  notWholeRows: (what: string, value: unknown) => `${what} must be a whole number of rows (1 or more), got ${String(value)}`,
  tooManyRows: (what: string, value: unknown, max: number) =>
    `${what} ${String(value)} is beyond the model's range: at most ${max} rows (2^50), where every count stays exact`,
  fractionRange: (value: unknown) => `splittable fraction must lie in [0, 1] (e.g. 0.6 or 60%), got ${String(value)}`,
  targetTooLow: (value: unknown) => `target speedup must be above 1 (e.g. 1.15), got ${String(value)}`,
  fewerRowsThanGroup: (rows: number, groupRows: number) =>
    `${rows} rows is less than one ${groupRows}-row group: nothing can go to the NPU (lower --group-rows or raise --rows)`,
  quantileOrder: (what: string, p10: number, mid: number, p90: number) =>
    `${what}: expected p10 <= value <= p90, got p10 ${p10}, value ${mid}, p90 ${p90}`,
  curveEmpty: () => 'a cost curve needs at least one measured point',
  curveDuplicateRows: (rows: number) => `cost curve: two points at ${rows} rows (give one per row count)`,
  csvNoHeader: () => 'cost CSV: no header line (expected "rows,ms"; optional columns p10_ms, p90_ms; or "rows,total_ms")',
  csvMissingColumn: (have: readonly string[]) =>
    `cost CSV: header ${JSON.stringify(have.join(','))} lacks a rows column and a cost column (write "rows,ms": ms per group at that many rows, or "rows,total_ms": the whole GEMM)`,
  csvBadCell: (column: string, text: string) => `cost CSV: ${column} "${text}" is not a number`,
  csvFieldCount: (want: number, got: number) => `cost CSV: expected ${want} fields, got ${got}`,
} as const;
