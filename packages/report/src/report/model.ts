/**
 * The report as plain data: everything the HTML page, the Markdown summary
 * and the chart specs are built from. Collected from a store by
 * `collectReport`; pure functions turn it into output, so goldens can pin
 * each piece.
 */
import type { Finding, KernelStat } from '@tickwise/analyzer';
import type { CeilingResult } from '@tickwise/ceiling';

/** One (capture, device) of the report. */
export interface ReportDevice {
  readonly capture_id: number;
  readonly device: number;
  readonly kind: string;
  /** "iGPU · igpu-prefill (capture 1, device 0)": unique, the key of the device in every chart and table. */
  readonly label: string;
  /** "iGPU · device 0": the row name on its capture's timeline (the capture is in the chart's title). */
  readonly row_label: string;
  /** Index of its timeline in {@link ReportTimeline.groups}. */
  readonly group: number;
  readonly clock_domain: string;
  readonly time_source: string;
  readonly dispatches: number;
  readonly span_ns: bigint;
  readonly busy_ns: bigint;
  readonly idle_ns: bigint;
  readonly idle_fraction: number | null;
  readonly sum_dur_ns: bigint;
  readonly gap_count: number;
  readonly max_gap_ns: bigint | null;
  readonly gaps_over_threshold: number;
  readonly idle_over_threshold_ns: bigint;
  readonly between_submissions: { readonly count: number; readonly idle_ns: bigint };
  readonly within_submission: { readonly count: number; readonly idle_ns: bigint };
  /** Time with >= 2 dispatches of different submissions in flight. */
  readonly cross_submission_inflight_ns: bigint | null;
  readonly segments: readonly ReportSegment[];
  /** Which segments device, kernel and cost numbers use: `steady` (all but the first) or `all`. */
  readonly steady_choice: 'steady' | 'all';
  /** The same said for a table: "steady: segments 1-3 of 4" or "all (one segment)". */
  readonly coverage: string;
}

/**
 * One timeline of the page: the captures whose devices share a clock and
 * ran at the same time (one capture, unless captures overlap), drawn from
 * its own first dispatch.
 */
export interface TimelineGroup {
  /** Chart id: `timeline` for the first, `timeline-2`, ... */
  readonly id: string;
  /** "capture 1: igpu-prefill" or "captures 1, 2 (one clock, overlapping)". */
  readonly title: string;
  readonly capture_ids: readonly number[];
  /** Device labels (keys), in page order. */
  readonly labels: readonly string[];
  /** Time zero of this timeline: its earliest dispatch start. */
  readonly origin_ns: bigint;
  readonly end_ns: bigint;
}

/** One segment (repetition) of a device. */
export interface ReportSegment {
  readonly segment: number;
  readonly role: string;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly dispatches: number;
}

/** One interval of a device's timeline (see sql/timeline.ts). */
export interface TimelineInterval {
  readonly label: string;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly busy_ns: bigint;
  readonly dispatches: number;
  readonly blocks: number;
}

/** The timeline of all devices, aggregated to at most `max_intervals` per device. */
export interface ReportTimeline {
  /** Time zero of the chart: the earliest dispatch start of the devices drawn. */
  readonly origin_ns: bigint;
  readonly max_intervals: number;
  readonly intervals: readonly TimelineInterval[];
  /** Per device: busy blocks before merging, and the longest gap merged away (null: none). */
  readonly aggregation: readonly { readonly label: string; readonly raw_blocks: number; readonly intervals: number; readonly merged_gap_max_ns: bigint | null }[];
  /** One chart per group (issue 18.1). */
  readonly groups: readonly TimelineGroup[];
}

/** One log2 bucket of one device's gap histogram, one class. */
export interface HistogramBar {
  readonly label: string;
  readonly bucket: number;
  readonly lo_ns: bigint;
  readonly hi_ns: bigint;
  readonly class: 'between submissions' | 'inside a submission';
  readonly count: number;
  readonly idle_ns: bigint;
}

/** A kernel of a device, with the device's label. */
export type ReportKernel = KernelStat & { readonly label: string };

/** One row of the per-row-group cost table. */
export interface CostRow {
  readonly label: string;
  readonly kernel: string;
  readonly rows_per_dispatch: number;
  readonly group_rows: number;
  readonly segment: string;
  readonly dispatch_count: number;
  readonly mean_dispatch_ns: number;
  readonly group_ms: number;
  readonly group_ms_p10: number;
  readonly group_ms_p90: number;
  readonly group_ms_from_flops: number | null;
}

/** The ceiling section: a result, or why there is none. */
export type ReportCeiling =
  | { readonly kind: 'result'; readonly result: CeilingResult; readonly inputs: readonly string[] }
  | { readonly kind: 'missing'; readonly missing: readonly string[]; readonly found: readonly string[] }
  | { readonly kind: 'off' };

/** Everything a report shows. */
export interface ReportData {
  /** What the capture shows and what to do, one line each (the first screen; issue 18.2). */
  readonly verdict: readonly string[];
  readonly title: string;
  /** One provenance line per capture (`# capture 1: ...`). */
  readonly provenance: readonly string[];
  readonly findings: readonly Finding[];
  readonly threshold_ns: bigint;
  readonly devices: readonly ReportDevice[];
  readonly device_pairs: readonly { readonly a: string; readonly b: string; readonly overlap_ns: bigint; readonly fraction_of_a: number | null; readonly fraction_of_b: number | null }[];
  readonly timeline: ReportTimeline;
  readonly histogram: readonly HistogramBar[];
  readonly kernels: readonly ReportKernel[];
  readonly costs: readonly CostRow[];
  readonly ceiling: ReportCeiling;
  /** The micro-batch schedule model's best schedule (`report --schedule`), when asked for. */
  readonly schedule?: ReportSchedule | undefined;
  /** How numbers were made (segments, aggregation), for the reader. */
  readonly notes: readonly string[];
}

/** The schedule section: the Gantt chart of the best schedule and the model's text summary. */
export interface ReportSchedule {
  /** Vega-Lite spec from `scheduleGanttSpec`. */
  readonly spec: Record<string, unknown>;
  /** The model's summary, one line per element (strategies, best, critical path, notes). */
  readonly lines: readonly string[];
}
