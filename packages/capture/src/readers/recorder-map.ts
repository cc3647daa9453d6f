import type { ClockFit } from '@tickwise/time';
import type { DeviceKind, Severity } from '@tickwise/store';
import { RECORD_LAYOUT, type FieldType, type RecorderKindName } from './recorder-layout';
import type {
  RecorderClockSampleRow, RecorderConditionRow, RecorderDeviceRow, RecorderDiagnosticRow, RecorderDispatchRow, RecorderHostEventRow,
  RecorderProcess, RecorderProvenanceRow,
} from './recorder-dir';

/** What the per-backend mappers (recorder-hip, -amdxdna, -cuda) share while one capture is read. */

/** The rows of a capture, appended to by every mapper. */
export interface RecorderRows {
  readonly devices: RecorderDeviceRow[];
  readonly clock_samples: RecorderClockSampleRow[];
  readonly dispatches: RecorderDispatchRow[];
  readonly host_events: RecorderHostEventRow[];
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
