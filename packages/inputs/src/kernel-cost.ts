/**
 * One kernel's per-row-group cost in one capture, on the default segment
 * when none is named: steady where the device repeats, else all with a note
 * (`defaultSegment` of the analyzer, the one definition). `tickwise cost`,
 * `tickwise ceiling --gpu/--npu CAPTURE` and the report's ceiling all cost
 * kernels through here.
 */
import { captureFacts, defaultSegment, errorFindingsHeader, provenanceLine, rowGroupCost, segments, type CaptureFacts, type CostOptions, type CostResult } from '@tickwise/analyzer';
import type { Store } from '@tickwise/store';

/** A kernel's cost and which segments it covers. */
export interface KernelCost {
  readonly cost: CostResult;
  /** Set when no segment was named and the device has one segment (so all of it was used). */
  readonly segment_note: string | null;
  /** True when the segment was chosen by the default rule (none named). */
  readonly segment_defaulted: boolean;
}

/** How the one-segment note names things: the input, and the options that change the segment. */
export interface SegmentWords {
  /** Default: `capture N device N`. */
  readonly where?: string | undefined;
  readonly options: string;
}

/**
 * `rowGroupCost` on the given segment, or, when none is given, on the
 * default one: the kernel's device found over all segments, then steady when
 * that device repeats.
 */
export async function kernelCost(store: Store, opts: CostOptions, words: SegmentWords): Promise<KernelCost> {
  if (opts.segment !== undefined) return { cost: await rowGroupCost(store, opts), segment_note: null, segment_defaulted: false };
  const all = await rowGroupCost(store, { ...opts, segment: 'all' });
  const d = await defaultSegment(store, { captureId: all.capture_id, device: all.device, reps: opts.reps }, {
    where: words.where ?? `capture ${all.capture_id} device ${all.device}`, used: `all ${all.dispatch_count} dispatches were`, options: words.options,
  });
  if (d.segment === 'all') return { cost: all, segment_note: d.note, segment_defaulted: true };
  return { cost: await rowGroupCost(store, { ...opts, captureId: all.capture_id, device: all.device, segment: 'steady' }), segment_note: null, segment_defaulted: true };
}

/** What one capture input gave the ceiling: the kernel's cost, where it came from, and the prefill share of the matched kernels. */
export interface CaptureCost extends KernelCost {
  readonly input: string;
  readonly provenance: string;
  readonly capture: CaptureFacts | null;
  /** Summed time of the matched kernels in the selected segments / summed span of those segments. */
  readonly prefill_share: { readonly kernel_ns: number; readonly span_ns: number; readonly segments: number } | null;
  /** The capture's error findings, to be said before any number built on it (empty when none). */
  readonly error_findings: string;
}

/** Costs `opts.kernel` in one capture input (a store of its own, or the shared one). */
export async function captureCost(store: Store, input: string, opts: CostOptions, words: SegmentWords): Promise<CaptureCost> {
  const k = await kernelCost(store, opts, words);
  const cost = k.cost;
  const segs = (await segments(store, { captureId: cost.capture_id, device: cost.device, reps: opts.reps })).devices[0]?.segments ?? [];
  const picked = new Set(cost.per_segment.map((p) => p.segment));
  const chosen = segs.filter((x) => picked.has(x.segment));
  const spanNs = chosen.reduce((a, x) => a + Number(x.span_ns), 0);
  const kernelNs = cost.matched_kernels.reduce((a, m) => a + Number(m.total_ns), 0);
  return {
    ...k,
    input,
    provenance: await provenanceLine(store, cost.capture_id),
    capture: (await captureFacts(store, [cost.capture_id]))[0] ?? null,
    prefill_share: spanNs > 0 ? { kernel_ns: kernelNs, span_ns: spanNs, segments: chosen.length } : null,
    error_findings: await errorFindingsHeader(store, { captureIds: [cost.capture_id] }),
  };
}
