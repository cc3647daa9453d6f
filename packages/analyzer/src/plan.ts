import type { Store } from '@tickwise/store';
import { planSources, withSegments, type Plan, type SelectionOptions } from './selection';
import { parseSegmentChoice, resolveSegments, type ResolvedSegments } from './segments';

/**
 * Plans an analysis: sources (see `planSources`) and the segment ranges
 * `--segment` picks. `all` reads the whole capture as one timeline (no
 * segmentation) unless `always` asks for segment labels (row-group cost
 * reports counts per segment).
 */
export async function planAnalysis(
  store: Store,
  opts: SelectionOptions,
  segmentation: 'when-asked' | 'always' = 'when-asked',
): Promise<Plan & { resolved: ResolvedSegments | null }> {
  const base = await planSources(store, opts);
  const choice = parseSegmentChoice(opts.segment);
  const segment = opts.segment ?? 'all';
  if (choice.kind === 'all' && segmentation === 'when-asked') {
    return { ...base, segment, resolved: null };
  }
  const resolved = await resolveSegments(store, opts);
  // `steady` over devices of which some do not repeat: the resolved segment says which were read whole
  return { ...base, spec: withSegments(base.spec, resolved.ranges), segment: resolved.segment, resolved };
}
