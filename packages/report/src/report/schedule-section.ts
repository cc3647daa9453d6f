/**
 * The report's schedule section (`tickwise report --schedule`): the schedule
 * model on the iGPU and NPU captures of the report's own store (devices
 * chosen by kind, else by content, never by the order of the inputs), read
 * by `@tickwise/inputs`' scheduleInputs as `tickwise schedule` reads them,
 * modelled with the error bars and the exhaustive check off.
 *
 * ```
 * store ──scheduleInputs (npu: in the same store)──> ScheduleInputs
 *       ──scheduleModel──> ScheduleModelResult ──scheduleGanttSpec──> spec
 *                                              ──text (the CLI's)────> lines
 * ```
 */
import { scheduleGanttSpec, scheduleModel, type ScheduleModelResult } from '@tickwise/ceiling';
import { scheduleInputs } from '@tickwise/inputs';
import type { Store } from '@tickwise/store';
import type { ReportSchedule } from './model';

/** Options of {@link collectSchedule}. */
export interface ScheduleSectionOptions {
  /** Rows per micro-batch (default: the capture's rows per dispatch). */
  readonly microbatch?: number | undefined;
  /** The model's summary as text lines (the CLI's `scheduleText`). */
  readonly text: (result: ScheduleModelResult, provenance: readonly string[]) => string;
}

/** The schedule section of a report over `store`. */
export async function collectSchedule(store: Store, opts: ScheduleSectionOptions): Promise<ReportSchedule> {
  const g = await scheduleInputs(store, { npu: {}, microbatch: opts.microbatch });
  const result = scheduleModel({
    measured: g.measured, bootstrap: null, exhaustive_check: null, power: g.power.length ? g.power : null,
    measured_energy: g.measuredEnergy, capture: g.capture, handoff_source: g.handoffSource, notes: g.notes,
  });
  return { spec: scheduleGanttSpec(result) as Record<string, unknown>, lines: opts.text(result, g.provenance).split('\n') };
}
