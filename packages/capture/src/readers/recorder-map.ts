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
}

/**
 * A span from `start` to `end` as (end_ns, dur_ns, ordered): an end before its
 * start keeps both raw bounds but no duration (never a negative dur_ns).
 */
export function span(ctx: ProcessContext, what: string, start: bigint, end: bigint): { dur_ns: bigint | null; ordered: boolean } {
  if (end >= start) return { dur_ns: end - start, ordered: true };
  ctx.inverted(what);
  return { dur_ns: null, ordered: false };
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
  readonly offsets: Int32Array;
  readonly types: readonly FieldType[];
}

/** A kind's fields from byte 8 on (not kind/aux/tid), less those `skip` names. */
export function argsFields(kind: RecorderKindName, skip: (name: string) => boolean): ArgsFields {
  const list = Object.entries(RECORD_LAYOUT[kind].fields as Record<string, readonly [number, FieldType]>)
    .filter(([n, [o, t]]) => o >= 8 && !t.startsWith('char') && !skip(n));
  return { names: list.map(([n]) => n), offsets: Int32Array.from(list.map(([, [o]]) => o)), types: list.map(([, [, t]]) => t) };
}

/**
 * `args` JSON text of the record at `at`: its fields in layout order, 64-bit
 * integers as decimal strings, then `extra` (JSON members text, may be '').
 */
export function argsText(dv: DataView, at: number, f: ArgsFields, extra: string): string {
  let s = '{';
  for (let i = 0; i < f.names.length; i++) {
    const o = at + f.offsets[i]!;
    let v: string;
    switch (f.types[i]) {
      case 'u8': v = String(dv.getUint8(o)); break;
      case 'u16': v = String(dv.getUint16(o, true)); break;
      case 'u32': v = String(dv.getUint32(o, true)); break;
      case 'i32': v = String(dv.getInt32(o, true)); break;
      case 'u64': v = `"${dv.getBigUint64(o, true)}"`; break;
      default: v = `"${dv.getBigInt64(o, true)}"`;
    }
    s += `${i ? ',' : ''}"${f.names[i]}":${v}`;
  }
  if (extra) s += `${f.names.length ? ',' : ''}${extra}`;
  return `${s}}`;
}
