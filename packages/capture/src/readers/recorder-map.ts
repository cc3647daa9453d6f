import type { ClockFit } from '@tickwise/time';
import type { DeviceKind, Severity } from '@tickwise/store';
import { RECORD_LAYOUT, type FieldType, type RecorderKindName } from './recorder-layout';
import type {
  RecorderClockSampleRow, RecorderConditionRow, RecorderDeviceRow, RecorderDiagnosticRow, RecorderDispatchRow, RecorderHostEventRow,
  RecorderProcess, RecorderProvenanceRow,
} from './recorder-dir';

/** What the per-backend mappers (recorder-hip, -amdxdna, -cuda) share while one capture is read. */

/** Where a mapper puts the rows of a large table: an array, or the importer's {@link RowColumns}. */
export interface RowList<R> {
  push(row: R): void;
  readonly length: number;
}

/** The rows of a capture, appended to by every mapper. */
export interface RecorderRows {
  readonly devices: RecorderDeviceRow[];
  readonly clock_samples: RecorderClockSampleRow[];
  readonly dispatches: RowList<RecorderDispatchRow>;
  readonly host_events: RowList<RecorderHostEventRow>;
  readonly provenance: RecorderProvenanceRow[];
  readonly diagnostics: RecorderDiagnosticRow[];
  readonly conditions: RecorderConditionRow[];
}

/** One process being mapped. */
export interface ProcessContext {
  readonly capture_id: number;
  readonly p: RecorderProcess;
  readonly pid: number;
  /** Its records.twr (for diagnostics). */
  readonly file: string;
  readonly rows: RecorderRows;
  /** Queue numbers by `<backend>:<pid>:<queue key>`, capture-wide. */
  readonly queueIndex: Map<string, number>;
  diag(severity: Severity, code: string, message: string, file: string): void;
  /** Counts a span whose end precedes its start (stored valid = false, dur_ns NULL). */
  inverted(what: string): void;
  /** Hands the rows so far to the reader's `onBatch` when there are enough of them (mappers call it as they go). */
  flushIfFull(): Promise<void>;
}

/** How many records a mapper maps between two {@link ProcessContext.flushIfFull} calls. */
export const FLUSH_EVERY = 256;

/**
 * The duration of a span from `start` to `end`, or null when the end precedes
 * the start (counted: the row keeps both raw bounds, valid = false, never a
 * negative dur_ns).
 */
export function span(ctx: ProcessContext, what: string, start: bigint, end: bigint): bigint | null {
  if (end >= start) return end - start;
  ctx.inverted(what);
  return null;
}

/** A `devices` row from its identity and its clock fit (or none). */
export function deviceRow(
  capture_id: number, device: number, kind: DeviceKind, name: string, tick_hz_declared: number | null, fit: ClockFit | null, clock_samples: number,
): RecorderDeviceRow {
  return {
    capture_id, device, kind, name, tick_hz_declared, tick_hz_fitted: fit?.tick_hz_fitted ?? null, tick_hz_used: null, time_base: 'host_monotonic',
    fit_method: fit?.method ?? null, fit_domain: fit ? 'CLOCK_MONOTONIC' : null,
    fit_residual_max_ns: fit?.residual_max_ns ?? null, fit_residual_rms_ns: fit?.residual_rms_ns ?? null,
    fit_uncertainty_ns: fit?.uncertainty_ns ?? null, fit_slope_uncertainty_ppm: fit?.slope_uncertainty_ppm ?? null,
    fit_bracket_min_ns: fit?.bracket_min_ns ?? null, fit_bracket_max_ns: fit?.bracket_max_ns ?? null,
    fit_base_tick: fit?.base_tick ?? null, fit_base_ns: fit?.base_ns ?? null, fit_ns_per_tick_num: fit?.ns_per_tick_num ?? null,
    clock_samples,
  };
}

/** The fields of a kind that go into a row's `args` JSON, precomputed once per kind. */
export interface ArgsFields {
  readonly names: readonly string[];
  /** `"name":` of each field, with the comma before all but the first. */
  readonly keys: readonly string[];
  readonly offsets: Int32Array;
  readonly types: readonly FieldType[];
}

/** A kind's fields from byte 8 on (not kind/aux/tid), less those `skip` names. */
export function argsFields(kind: RecorderKindName, skip: (name: string) => boolean): ArgsFields {
  const list = Object.entries(RECORD_LAYOUT[kind].fields as Record<string, readonly [number, FieldType]>)
    .filter(([n, [o, t]]) => o >= 8 && !t.startsWith('char') && !skip(n));
  return {
    names: list.map(([n]) => n),
    keys: list.map(([n], i) => `${i ? ',' : ''}"${n}":`),
    offsets: Int32Array.from(list.map(([, [o]]) => o)),
    types: list.map(([, [, t]]) => t),
  };
}

const TWO_32 = 4294967296;
const SAFE_HI = 0x200000; // |hi| below 2^21: hi * 2^32 + lo is below 2^53, exact as a double

/** Decimal text of the 64-bit integer at `o`, through a double when exact (no BigInt allocated). */
function int64Text(dv: DataView, o: number, signed: boolean): string {
  const lo = dv.getUint32(o, true);
  const hi = signed ? dv.getInt32(o + 4, true) : dv.getUint32(o + 4, true);
  if (hi < SAFE_HI && hi >= -SAFE_HI) return String(hi * TWO_32 + lo);
  return signed ? dv.getBigInt64(o, true).toString() : dv.getBigUint64(o, true).toString();
}

/**
 * `args` JSON text of the record at `at`: its fields in layout order, 64-bit
 * integers as decimal strings, then `extra` (JSON members text, may be '').
 */
export function argsText(dv: DataView, at: number, f: ArgsFields, extra: string): string {
  let s = '{';
  const n = f.keys.length;
  for (let i = 0; i < n; i++) {
    const o = at + f.offsets[i]!;
    switch (f.types[i]) {
      case 'u8': s += f.keys[i]! + dv.getUint8(o); break;
      case 'u16': s += f.keys[i]! + dv.getUint16(o, true); break;
      case 'u32': s += f.keys[i]! + dv.getUint32(o, true); break;
      case 'i32': s += f.keys[i]! + dv.getInt32(o, true); break;
      case 'u64': s += `${f.keys[i]!}"${int64Text(dv, o, false)}"`; break;
      default: s += `${f.keys[i]!}"${int64Text(dv, o, true)}"`;
    }
  }
  if (extra) s += n ? `,${extra}` : extra;
  return `${s}}`;
}

/** A column of a {@link RowColumns} batch: integers in a typed array of the store column's width (a 1 in `nulls` for NULL), or values as the rows gave them. */
export type BatchColumn =
  | { readonly name: string; readonly ints: Int32Array | BigInt64Array | BigUint64Array; readonly nulls: Uint8Array }
  | { readonly name: string; readonly values: readonly unknown[] };

/** Rows handed over as columns: `n` rows, one {@link BatchColumn} per column asked for. */
export interface ColumnarRows {
  readonly n: number;
  readonly columns: readonly BatchColumn[];
}

/** The typed array and range of an integer column type (the others are kept as values). */
const INT_COLUMNS: Readonly<Record<string, { readonly make: (n: number) => Int32Array | BigInt64Array | BigUint64Array; readonly lo: bigint; readonly hi: bigint }>> = {
  INTEGER: { make: (n) => new Int32Array(n), lo: -(2n ** 31n), hi: 2n ** 31n - 1n },
  BIGINT: { make: (n) => new BigInt64Array(n), lo: -(2n ** 63n), hi: 2n ** 63n - 1n },
  UBIGINT: { make: (n) => new BigUint64Array(n), lo: 0n, hi: 2n ** 64n - 1n },
};

/**
 * Rows of one table gathered as columns while a capture is read (the
 * importer's batches): `push` copies a row's values into typed arrays (and
 * the rest into plain ones) and keeps nothing of the row, so a row object
 * dies young. Held as objects until a batch was handed over, 16k rows of
 * each table survived every young collection: the recorder import spent
 * ~0.5 s of ~2.7 s collecting them. An integer that does not fit its column
 * is refused here, as the appender refuses it.
 */
export class RowColumns<R extends object> {
  private n = 0;
  private ints: (Int32Array | BigInt64Array | BigUint64Array | null)[] = [];
  private nulls: (Uint8Array | null)[] = [];
  private values: (unknown[] | null)[] = [];
  private readonly write: (row: R, i: number, self: RowColumns<R>) => void;
  /** Per integer column its range, as bigints and as the safe numbers inside it (null for the other columns). */
  private readonly ranges: ({ lo: bigint; hi: bigint; loN: number; hiN: number; small: boolean } | null)[];

  /** `columns`: each column's name (a key of the rows) and store type (`tableColumns`). */
  constructor(private readonly table: string, private readonly columns: readonly { readonly name: string; readonly type: string }[], private capacity = 4096) {
    for (const c of columns) if (!/^[a-z_][a-z0-9_]*$/.test(c.name)) throw new Error(`internal: column ${c.name}`);
    this.ranges = columns.map((c) => {
      const r = INT_COLUMNS[c.type];
      if (!r) return null;
      const clamp = (b: bigint) => Number(b < BigInt(Number.MIN_SAFE_INTEGER) ? BigInt(Number.MIN_SAFE_INTEGER) : b > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : b);
      return { lo: r.lo, hi: r.hi, loN: clamp(r.lo), hiN: clamp(r.hi), small: c.type === 'INTEGER' };
    });
    this.reset();
    // one function that reads each column by its name (a load per property of one or a few row shapes, not a keyed load per value)
    const body = columns.map((c, k) => (INT_COLUMNS[c.type]
      ? `v = row.${c.name}; if (v === null || v === undefined) s.nulls[${k}][i] = 1; else s.ints[${k}][i] = s.int(${k}, v);`
      : `s.values[${k}][i] = row.${c.name} ?? null;`)).join('\n');
    this.write = new Function('row', 'i', 's', `let v;\n${body}`) as (row: R, i: number, self: RowColumns<R>) => void;
  }

  get length(): number {
    return this.n;
  }

  push(row: R): void {
    if (this.n === this.capacity) this.grow();
    this.write(row, this.n, this);
    this.n++;
  }

  /**
   * The rows pushed since the last take, as columns; the table starts empty
   * again. The integer columns are views of the table's own arrays, valid
   * until the next row is pushed (a consumer copies them, as the appender
   * does, before it reads on).
   */
  take(): ColumnarRows {
    const n = this.n;
    const columns = this.columns.map((c, k): BatchColumn => {
      const ints = this.ints[k];
      if (ints) return { name: c.name, ints: ints.subarray(0, n), nulls: this.nulls[k]!.slice(0, n) };
      return { name: c.name, values: this.values[k]!.slice(0, n) };
    });
    this.n = 0;
    for (const m of this.nulls) m?.fill(0, 0, n);
    return { n, columns };
  }

  /** The value of integer column `k` as its typed array takes it (called by `write`). */
  int(k: number, v: unknown): number | bigint {
    const { lo, hi, loN, hiN, small } = this.ranges[k]!;
    if (typeof v === 'number' && Number.isSafeInteger(v) && v >= loN && v <= hiN) return small ? v : BigInt(v);
    if (typeof v === 'bigint' && v >= lo && v <= hi) return small ? Number(v) : v;
    const c = this.columns[k]!;
    const why = typeof v === 'bigint' || (typeof v === 'number' && Number.isSafeInteger(v)) ? `out of range [${lo}, ${hi}]`
      : typeof v === 'number' && Number.isInteger(v) ? 'beyond 2^53 as a JS number (it may have been rounded)' : 'not an integer';
    throw new Error(`${this.table}.${c.name}: ${String(v)} is ${why}`);
  }

  private reset(): void {
    this.n = 0;
    this.ints = this.columns.map((c) => INT_COLUMNS[c.type]?.make(this.capacity) ?? null);
    this.nulls = this.columns.map((c) => (INT_COLUMNS[c.type] ? new Uint8Array(this.capacity) : null));
    this.values = this.columns.map((c) => (INT_COLUMNS[c.type] ? null : new Array<unknown>(this.capacity)));
  }

  private grow(): void {
    this.capacity *= 2;
    this.ints = this.ints.map((a) => {
      if (!a) return null;
      const b = new (a.constructor as new (n: number) => Int32Array | BigInt64Array | BigUint64Array)(this.capacity);
      b.set(a as never);
      return b;
    });
    this.nulls = this.nulls.map((a) => {
      if (!a) return null;
      const b = new Uint8Array(this.capacity);
      b.set(a);
      return b;
    });
  }
}
