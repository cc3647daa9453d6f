/**
 * The stages of a prefill, read from a capture: which kernels are which
 * stage of a Llama-style layer, how many layers and micro-batches (ubatches)
 * one prefill has, and every dispatch's duration with its repetition and
 * micro-batch position, for the schedule model (`@tickwise/ceiling`
 * `scheduleModel`) to fit costs to and bootstrap from.
 *
 * ```
 * planSources --one (capture, device)--> resolveSegments (default steady when it repeats, else all)
 *   --selectionSql--> dispatches in start order per segment (kernel, start, end)
 *   --classify kernels into stage roles (overrides first, then the default rules)-->
 *   --structure: layers x ubatches (--layers | --tokens | embed count | attention's steps)-->
 *   per role: parts (kernel, dispatches per instance, durations, segment, position)
 *   per segment: span, busy (union), summed time; unmatched kernels
 * ```
 *
 * Default rules (each role's rule is replaced when a glob is given for it):
 * - `head`: a kernel whose name's shape has 1 leading row (`_1x3072`,
 *   `matmul_1x128256x3072`), or named lm_head / output_norm / logits;
 * - `embed`: gather, embed, get_rows, token_embd;
 * - `attention`: attention, flash_attn, fattn, sdpa, softmax, soft_max;
 * - `rope`: rope, rotary;  `ffn_act`: silu, gelu, swiglu, geglu, swish;
 * - norms (`norm`): one kernel serves both `attn_norm` and `ffn_norm`;
 *   two or more: the first dispatched is `attn_norm`, the others `ffn_norm`;
 * - GEMMs (matmul, gemm, mmt, mul_mat, linear, with an MxNxK shape whose
 *   M is the rows per dispatch), by shape: H = the K most dispatches share;
 *   K != H is `ffn_down`; N = H is `attn_output`; the largest remaining N
 *   is `ffn_gate`/`ffn_up` (first dispatched gate; one kernel serves both);
 *   the rest `qkv` (separate q, k, v kernels add up).
 * Kernels no rule takes are reported as unmatched (not in the graph).
 */
import { STAGE_ORDER, STAGE_SCOPE, type StageKind } from '@tickwise/ceiling';
import type { Store } from '@tickwise/store';
import { TickwiseError, median } from '@tickwise/time';
import { gemmShapeFromName } from './cost';
import { planSources, whereLabel, withSegments, type DevicePlan, type SelectionOptions } from './selection';
import { resolveSegments, type Segment } from './segments';
import { oneSegmentNote, steadyOrAll } from './segment-default';
import { kernelGlobSql } from './sql/cost';
import { globMatcher } from './glob';
import { selectionSql } from './sql/selection';

/** The default name rules, as documented above (regexes over the kernel name, case-insensitive). */
export const DEFAULT_STAGE_RULES = {
  head: '(^|[^0-9x])1x[0-9]+ shape, or lm_head|output_norm|logits',
  embed: 'gather|embed|get_rows|token_embd',
  attention: 'attention|flash_attn|fattn|sdpa|softmax|soft_max',
  rope: 'rope|rotary',
  ffn_act: 'silu|gelu|swiglu|geglu|swish',
  norm: 'norm (one kernel: attn_norm and ffn_norm; several: first attn_norm, rest ffn_norm)',
  gemm: 'matmul|gemm|mmt|mul_mat|linear with MxNxK, M = rows per dispatch; roles by shape (K != H: ffn_down; N = H: attn_output; largest N: ffn_gate/ffn_up; rest: qkv)',
} as const;

const RX = {
  head: /lm_head|output_norm|logits/i,
  headShape: /(^|[^0-9x])1x[0-9]+/,
  embed: /gather|embed|get_rows|token_embd/i,
  attention: /attention|flash_attn|fattn|sdpa|softmax|soft_max/i,
  rope: /rope|rotary/i,
  ffn_act: /silu|gelu|swiglu|geglu|swish/i,
  norm: /norm/i,
  gemm: /matmul|gemm|mmt|mul_mat|linear/i,
};

/** Options of {@link stageSamples}; `segment` defaults to steady when the capture repeats, else all (with a note). */
export interface StageSampleOptions extends SelectionOptions {
  /** Rows one dispatch covers (the ubatch); default: the M of the GEMM kernels' names. */
  readonly rowsPerDispatch?: number | undefined;
  readonly layers?: number | undefined;
  /** Prompt rows (tokens) of one prefill. */
  readonly tokens?: number | undefined;
  /** Globs per role; a role given here loses its default rule, and kernels a glob takes leave the default rules. */
  readonly patterns?: Partial<Record<StageKind, readonly string[]>> | undefined;
}

/** Dispatches of one kernel that make (part of) a role. */
export interface StagePart {
  readonly kernel: string;
  /** Dispatches of this kernel per role instance. */
  readonly per_instance: number;
  /** Roles sharing this kernel (its dispatches are split evenly among them). */
  readonly shared_by: readonly StageKind[];
  /** MxNxK from the name, when it has one. */
  readonly shape: { readonly m: number; readonly n: number; readonly k: number } | null;
  /** Per dispatch: duration (ns), segment, micro-batch position (0-based ubatch). */
  readonly dur_ns: readonly number[];
  readonly segment: readonly number[];
  readonly position: readonly number[];
}

/** One role found in the capture. */
export interface StageFound {
  readonly role: StageKind;
  /** Which rule took its kernels ("default: ...", "--stage qkv=GLOB"). */
  readonly rule: string;
  /** Instances per prefill (layers x ubatches, ubatches, or 1). */
  readonly instances_per_prefill: number;
  readonly parts: readonly StagePart[];
}

/** One selected segment (prefill) of the device. */
export interface StageSegment {
  readonly segment: number;
  readonly role: Segment['role'];
  readonly start_ns: bigint;
  readonly end_ns: bigint;
  readonly span_ns: bigint;
  /** Union of dispatch intervals. */
  readonly busy_ns: bigint;
  readonly sum_dur_ns: bigint;
  readonly dispatches: number;
}

/** A segment's time window. */
export interface SegmentWindow {
  readonly segment: number;
  readonly start_ns: bigint;
  readonly end_ns: bigint;
}

/** The one device a sample was read from, and its segments. */
export interface SampledDevice {
  readonly capture_id: number;
  readonly device: number;
  readonly label: string;
  /** `--segment` as used (steady / all / ...). */
  readonly segment: string;
  readonly segments: readonly StageSegment[];
  /** Every segment of the device, selected or not (first start to last end). */
  readonly all_segments: readonly SegmentWindow[];
  readonly notes: readonly string[];
}

/** Result of {@link stageSamples}. */
export interface StageSamplesResult extends SampledDevice {
  readonly rows_per_dispatch: number;
  readonly rows_per_dispatch_from: string;
  readonly layers: number;
  readonly ubatches: number;
  readonly prompt_rows: number;
  readonly structure_from: string;
  readonly stages: readonly StageFound[];
  /** Kernels no rule took: per prefill time (mean over the selected segments). */
  readonly unmatched: readonly { readonly kernel: string; readonly dispatches: number; readonly ns_per_prefill: number }[];
}

const DISPATCH_SHAPE = { kernel: 'string?', segment: 'number', start_ns: 'bigint', end_ns: 'bigint', dur_ns: 'number' } as const;

function usage(message: string): TickwiseError {
  return new TickwiseError('usage', message);
}

/** Picks the one (capture, device) to read: the given one, else the only one, else the only GPU. */
async function pickDevice(store: Store, opts: { captureId?: number | undefined; device?: number | undefined }, want: string): Promise<DevicePlan> {
  const plan = await planSources(store, opts);
  if (plan.devices.length === 1) return plan.devices[0]!;
  const ofKind = plan.devices.filter((d) => d.kind === want);
  if (ofKind.length === 1) return ofKind[0]!;
  if (plan.devices.length === 0) throw new TickwiseError('no-match', 'no dispatches in the input');
  throw usage(`the input holds ${plan.devices.length} devices (${plan.devices.map((d) => whereLabel(d)).join('; ')}): choose one with --capture N --device N`);
}

/** Dispatches of the chosen segments, in start order, and the segment facts. */
async function selectedDispatches(store: Store, dev: DevicePlan, segment: string | undefined, reps: number | undefined, glob?: string) {
  const base = await planSources(store, { captureId: dev.capture_id, device: dev.device });
  const notes: string[] = [];
  let choice = segment;
  let resolved = await resolveSegments(store, { captureId: dev.capture_id, device: dev.device, segment: 'all', reps });
  const count = resolved.devices[0]?.segments.length ?? 0;
  if (choice === undefined) {
    choice = steadyOrAll(count);
    if (choice === 'all') notes.push(oneSegmentNote(whereLabel(dev), 'all of it was', '--segment, --reps'));
  }
  if (choice !== 'all') resolved = await resolveSegments(store, { captureId: dev.capture_id, device: dev.device, segment: choice, reps });
  const spec = withSegments(base.spec, resolved.ranges);
  const sel = selectionSql(spec, { capture_id: dev.capture_id, device: dev.device, queue: null }, glob ? kernelGlobSql(glob) : undefined);
  const rows = await store.query(DISPATCH_SHAPE, `SELECT kernel, segment, start_ns, end_ns, dur_ns FROM (${sel}) ORDER BY segment, start_ns, end_ns`);
  const segs = resolved.devices[0]?.segments ?? [];
  const picked = new Set(resolved.ranges.map((r) => r.segment));
  return { rows, segments: segs.filter((s) => picked.has(s.segment)), all: segs.map((s) => ({ segment: s.segment, start_ns: s.start_ns, end_ns: s.end_ns })), choice, notes };
}

/** The device and segments part of a sample result. */
function sampledDevice(dev: DevicePlan, sel: Pick<Awaited<ReturnType<typeof selectedDispatches>>, 'rows' | 'segments' | 'all' | 'choice' | 'notes'>): SampledDevice {
  return { capture_id: dev.capture_id, device: dev.device, label: dev.label, segment: sel.choice, segments: segmentFacts(sel.rows, sel.segments), all_segments: sel.all, notes: sel.notes };
}

function segmentFacts(rows: readonly { segment: number; start_ns: bigint; end_ns: bigint; dur_ns: number }[], segs: readonly Segment[]): StageSegment[] {
  return segs.map((s) => {
    let busy = 0n;
    let sum = 0n;
    let n = 0;
    let curS: bigint | null = null;
    let curE = 0n;
    let first: bigint | null = null;
    let last = 0n;
    for (const r of rows) {
      if (r.segment !== s.segment) continue;
      n++;
      sum += r.end_ns - r.start_ns;
      if (first === null || r.start_ns < first) first = r.start_ns;
      if (r.end_ns > last) last = r.end_ns;
      if (curS === null || r.start_ns > curE) {
        if (curS !== null) busy += curE - curS;
        curS = r.start_ns;
        curE = r.end_ns;
      } else if (r.end_ns > curE) curE = r.end_ns;
    }
    if (curS !== null) busy += curE - curS;
    const start = first ?? s.start_ns;
    const end = first === null ? s.end_ns : last;
    return { segment: s.segment, role: s.role, start_ns: start, end_ns: end, span_ns: end - start, busy_ns: busy, sum_dur_ns: sum, dispatches: n };
  });
}

/** @deprecated the name of {@link globMatcher} before it matched DuckDB's GLOB exactly. */
export const globToRegExp = globMatcher;

interface KernelInfo {
  readonly kernel: string;
  readonly firstPos: number;
  readonly count: number;
  readonly shape: { m: number; n: number; k: number } | null;
}

/**
 * Kernels to roles. Overrides first (a kernel several globs take is shared
 * by those roles), then the default rules over the kernels left, for the
 * roles not overridden.
 */
export function classifyKernels(
  kernels: readonly KernelInfo[],
  rowsPerDispatch: number,
  patterns: Partial<Record<StageKind, readonly string[]>> = {},
): { roles: Map<StageKind, string[]>; rules: Map<StageKind, string>; notes: string[] } {
  const roles = new Map<StageKind, string[]>();
  const rules = new Map<StageKind, string>();
  const notes: string[] = [];
  const taken = new Set<string>();
  const add = (role: StageKind, k: string, rule: string) => {
    roles.set(role, [...(roles.get(role) ?? []), k]);
    if (!rules.has(role)) rules.set(role, rule);
    taken.add(k);
  };
  const overridden = new Set<StageKind>();
  for (const role of STAGE_ORDER) {
    const globs = patterns[role];
    if (!globs || globs.length === 0) continue;
    overridden.add(role);
    const rx = globs.map(globMatcher);
    rules.set(role, `--stage ${role}=${globs.join(',')}`);
    for (const k of kernels) if (rx.some((r) => r.test(k.kernel))) add(role, k.kernel, rules.get(role)!);
    if (!roles.has(role)) notes.push(`--stage ${role}=${globs.join(',')} matches no kernel of the selected dispatches`);
  }
  const free = kernels.filter((k) => !taken.has(k.kernel)).sort((a, b) => a.firstPos - b.firstPos);
  const use = (role: StageKind) => !overridden.has(role);
  const dflt = (what: string) => `default: ${what}`;
  const rest: KernelInfo[] = [];
  for (const k of free) {
    const name = k.kernel;
    if (use('head') && (RX.head.test(name) || RX.headShape.test(name) || (k.shape !== null && k.shape.m === 1))) add('head', name, dflt(DEFAULT_STAGE_RULES.head));
    else if (use('embed') && RX.embed.test(name)) add('embed', name, dflt(DEFAULT_STAGE_RULES.embed));
    else if (use('attention') && RX.attention.test(name) && !RX.gemm.test(name)) add('attention', name, dflt(DEFAULT_STAGE_RULES.attention));
    else if (use('rope') && RX.rope.test(name)) add('rope', name, dflt(DEFAULT_STAGE_RULES.rope));
    else if (use('ffn_act') && RX.ffn_act.test(name)) add('ffn_act', name, dflt(DEFAULT_STAGE_RULES.ffn_act));
    else rest.push(k);
  }
  const norms = rest.filter((k) => RX.norm.test(k.kernel) && !RX.gemm.test(k.kernel));
  const normRoles = (['attn_norm', 'ffn_norm'] as const).filter(use);
  if (norms.length && normRoles.length) {
    const rule = dflt(DEFAULT_STAGE_RULES.norm);
    if (norms.length === 1 || normRoles.length === 1) for (const k of norms) for (const r of normRoles) add(r, k.kernel, rule);
    else {
      add(normRoles[0]!, norms[0]!.kernel, rule);
      for (const k of norms.slice(1)) add(normRoles[1]!, k.kernel, rule);
    }
  }
  const gemms = rest.filter((k) => !taken.has(k.kernel) && RX.gemm.test(k.kernel) && k.shape !== null && k.shape.m === rowsPerDispatch);
  const gemmRoles = (['qkv', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down'] as const).filter(use);
  if (gemms.length && gemmRoles.length) {
    const rule = dflt(DEFAULT_STAGE_RULES.gemm);
    const byK = new Map<number, number>();
    for (const k of gemms) byK.set(k.shape!.k, (byK.get(k.shape!.k) ?? 0) + k.count);
    const H = [...byK].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]![0];
    const inH = gemms.filter((k) => k.shape!.k === H);
    const down = gemms.filter((k) => k.shape!.k !== H);
    const out = inH.filter((k) => k.shape!.n === H);
    const others = inH.filter((k) => k.shape!.n !== H);
    const maxN = others.length ? others.reduce((a, k) => Math.max(a, k.shape!.n), -Infinity) : null; // not a spread: kernels named per instance can be 10^5
    const ffn = others.filter((k) => k.shape!.n === maxN);
    const qkv = others.filter((k) => k.shape!.n !== maxN);
    const put = (role: StageKind, ks: readonly KernelInfo[]) => {
      if (use(role)) for (const k of ks) add(role, k.kernel, rule);
    };
    put('ffn_down', down);
    put('attn_output', out);
    put('qkv', qkv);
    if (ffn.length === 1) {
      put('ffn_gate', ffn);
      put('ffn_up', ffn);
    } else if (ffn.length > 1) {
      put('ffn_gate', ffn.slice(0, 1));
      put('ffn_up', ffn.slice(1));
    }
    if (qkv.length === 0 && use('qkv') && ffn.length > 1) notes.push(`no QKV GEMM told apart by shape (H = ${H}); give --stage qkv=GLOB`);
  }
  return { roles, rules, notes };
}

/** Rows per dispatch from the GEMM kernels' names: the M most GEMM dispatches share. */
function rowsFromNames(kernels: readonly KernelInfo[]): number | null {
  const byM = new Map<number, number>();
  for (const k of kernels) if (k.shape && RX.gemm.test(k.kernel) && k.shape.m > 1) byM.set(k.shape.m, (byM.get(k.shape.m) ?? 0) + k.count);
  const top = [...byM].sort((a, b) => b[1] - a[1] || b[0] - a[0])[0];
  return top ? top[0] : null;
}

/** R^2 of the least-squares line of y over x. */
function lineR2(x: readonly number[], y: readonly number[]): number {
  const n = x.length;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxx = 0;
  let sxy = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxx += (x[i]! - mx) ** 2;
    sxy += (x[i]! - mx) * (y[i]! - my);
    syy += (y[i]! - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
}

/**
 * The stages of a prefill as a capture shows them (see the module comment
 * for the rules). Refuses when no layer stage is found or the structure
 * (layers x ubatches) cannot be told.
 */
export async function stageSamples(store: Store, opts: StageSampleOptions = {}): Promise<StageSamplesResult> {
  const dev = await pickDevice(store, opts, 'gpu');
  const { rows, segments: segs, all, choice, notes } = await selectedDispatches(store, dev, opts.segment, opts.reps);
  if (rows.length === 0) throw new TickwiseError('no-match', `${whereLabel(dev)}: no dispatches in --segment ${choice}`);
  const nSeg = segs.length;
  // per segment, each kernel's dispatches in start order
  const bySegKernel = new Map<string, number[]>();
  const infos = new Map<string, { firstPos: number; count: number }>();
  const firstSeg = rows[0]!.segment;
  let pos = 0;
  rows.forEach((r, i) => {
    const k = r.kernel ?? 'unknown';
    const key = `${r.segment}\u0000${k}`;
    const list = bySegKernel.get(key);
    if (list) list.push(i);
    else bySegKernel.set(key, [i]);
    const inf = infos.get(k);
    if (inf) inf.count++;
    else infos.set(k, { firstPos: r.segment === firstSeg ? pos : Number.MAX_SAFE_INTEGER - 1, count: 1 });
    if (r.segment === firstSeg) pos++;
  });
  const kernels: KernelInfo[] = [...infos].map(([kernel, v]) => ({ kernel, firstPos: v.firstPos, count: v.count, shape: gemmShapeFromName(kernel) }));

  let U = opts.rowsPerDispatch;
  let uFrom = `--rows-per-dispatch ${U}`;
  if (U === undefined) {
    const fromNames = rowsFromNames(kernels);
    if (fromNames === null) throw usage(`cannot tell the rows one dispatch covers: no GEMM kernel name carries an MxNxK shape; give --rows-per-dispatch N (the ubatch, e.g. 512)`);
    U = fromNames;
    uFrom = `the GEMM kernels' names (M = ${U})`;
  }
  const { roles, rules, notes: classNotes } = classifyKernels(kernels, U, opts.patterns ?? {});
  notes.push(...classNotes);
  const layerRoles = STAGE_ORDER.filter((r) => STAGE_SCOPE[r] === 'layer' && roles.has(r));
  if (layerRoles.length === 0) {
    const names = kernels.map((k) => k.kernel).slice(0, 12).join(', ');
    throw usage(`no kernel of ${whereLabel(dev)} was recognised as a layer stage (qkv, attention, ffn_down, ...); name them with --stage ROLE=GLOB. Kernels: ${names}`);
  }
  const perPrefill = (k: string) => infos.get(k)!.count / nSeg;
  const share = new Map<string, number>();
  for (const ks of roles.values()) for (const k of ks) share.set(k, (share.get(k) ?? 0) + 1);

  // structure: layers x ubatches
  const anchorRole: StageKind = roles.has('attention') ? 'attention' : layerRoles[0]!;
  const anchor = roles.get(anchorRole)![0]!;
  const anchorInst = perPrefill(anchor) / share.get(anchor)!;
  let layers: number;
  let ubatches: number;
  let from: string;
  const embedCount = roles.has('embed') ? perPrefill(roles.get('embed')![0]!) / share.get(roles.get('embed')![0]!)! : null;
  if (opts.layers !== undefined) {
    layers = opts.layers;
    ubatches = anchorInst / layers;
    from = `--layers ${layers}: ${anchorInst} ${anchorRole} dispatches per prefill / ${layers}`;
  } else if (opts.tokens !== undefined) {
    ubatches = Math.ceil(opts.tokens / U);
    layers = anchorInst / ubatches;
    from = `--tokens ${opts.tokens}: ${ubatches} ubatches of ${U} rows; ${anchorInst} ${anchorRole} dispatches per prefill / ${ubatches}`;
  } else if (embedCount !== null && Number.isInteger(embedCount) && embedCount >= 1 && Number.isInteger(anchorInst / embedCount)) {
    ubatches = embedCount;
    layers = anchorInst / ubatches;
    from = `${embedCount} embedding dispatches per prefill (one per ubatch); ${anchorInst} ${anchorRole} dispatches / ${ubatches} = ${layers} layers`;
  } else if (anchorRole === 'attention' && anchorInst >= 2) {
    // the ubatch count whose grouping of attention dispatches (in order) best fits a line over position
    const idx = bySegKernel.get(`${segs[0]!.segment}\u0000${anchor}`) ?? [];
    const y = idx.map((i) => rows[i]!.dur_ns);
    let best = { u: 1, r2: -1 };
    for (let u = 2; u <= y.length; u++) {
      if (y.length % u !== 0) continue;
      const per = y.length / u;
      const r2 = lineR2(y.map((_, j) => Math.floor(j / per)), y);
      if (r2 > best.r2 + 1e-9) best = { u, r2 };
    }
    if (best.r2 < 0.5) throw usage(`cannot tell layers from micro-batches in ${whereLabel(dev)}: give --layers N or --tokens N`);
    ubatches = best.u;
    layers = anchorInst / ubatches;
    from = `attention dispatch times step with position: ${ubatches} steps of ${layers} (R^2 ${best.r2.toFixed(3)} of the line over steps); check with --layers/--tokens`;
  } else {
    throw usage(`cannot tell layers from micro-batches in ${whereLabel(dev)}: give --layers N or --tokens N`);
  }
  if (!(Number.isInteger(layers) && layers >= 1 && Number.isInteger(ubatches) && ubatches >= 1)) {
    throw usage(`${whereLabel(dev)}: ${anchorInst} ${anchorRole} dispatches per prefill do not make whole layers x ubatches (${from}); give --layers N or --tokens N`);
  }
  const prompt = opts.tokens ?? ubatches * U;

  const stages: StageFound[] = [];
  for (const role of STAGE_ORDER) {
    const ks = roles.get(role);
    if (!ks) continue;
    const instances = STAGE_SCOPE[role] === 'layer' ? layers * ubatches : STAGE_SCOPE[role] === 'chunk' ? ubatches : 1;
    const parts: StagePart[] = [];
    for (const k of ks) {
      const sh = share.get(k)!;
      const perInst = perPrefill(k) / (sh * instances);
      if (!Number.isInteger(perInst) || perInst < 1) {
        notes.push(`${role}: kernel ${k} has ${perPrefill(k)} dispatches per prefill, not a multiple of ${sh * instances} (${instances} instances x ${sh} roles sharing it); its mean is used as is`);
      }
      const per = Math.max(1, Math.round(perInst));
      const dur: number[] = [];
      const seg: number[] = [];
      const position: number[] = [];
      for (const s of segs) {
        const idx = bySegKernel.get(`${s.segment}\u0000${k}`) ?? [];
        idx.forEach((i, j) => {
          const inst = Math.floor(j / (per * sh));
          dur.push(rows[i]!.dur_ns);
          seg.push(s.segment);
          position.push(STAGE_SCOPE[role] === 'layer' ? Math.min(ubatches - 1, Math.floor(inst / layers)) : STAGE_SCOPE[role] === 'chunk' ? Math.min(ubatches - 1, inst) : ubatches - 1);
        });
      }
      parts.push({ kernel: k, per_instance: perInst, shared_by: STAGE_ORDER.filter((r) => roles.get(r)?.includes(k)), shape: gemmShapeFromName(k), dur_ns: dur, segment: seg, position });
    }
    stages.push({ role, rule: rules.get(role) ?? 'default', instances_per_prefill: instances, parts });
  }
  const taken = new Set([...roles.values()].flat());
  const unmatched = kernels
    .filter((k) => !taken.has(k.kernel))
    .map((k) => {
      let ns = 0;
      for (const s of segs) for (const i of bySegKernel.get(`${s.segment}\u0000${k.kernel}`) ?? []) ns += rows[i]!.dur_ns;
      return { kernel: k.kernel, dispatches: k.count, ns_per_prefill: ns / nSeg };
    })
    .sort((a, b) => b.ns_per_prefill - a.ns_per_prefill);
  return {
    ...sampledDevice(dev, { rows, segments: segs, all, choice, notes }),
    rows_per_dispatch: U,
    rows_per_dispatch_from: uFrom,
    layers,
    ubatches,
    prompt_rows: prompt,
    structure_from: from,
    stages,
    unmatched,
  };
}

/** Options of {@link kernelSamples}. */
export interface KernelSampleOptions extends SelectionOptions {
  /** Kernel glob (default `*`). */
  readonly kernel?: string | undefined;
  /** Device kind to prefer when the input holds several (default npu). */
  readonly kind?: string | undefined;
}

/** Per-dispatch durations of the kernels a glob matches on one device (e.g. an NPU's GEMM tiles). */
export interface KernelSamplesResult extends SampledDevice {
  readonly kernels: readonly {
    readonly kernel: string;
    readonly shape: { readonly m: number; readonly n: number; readonly k: number } | null;
    readonly dur_ns: readonly number[];
    readonly segment: readonly number[];
  }[];
  /**
   * Median idle time between one dispatch's end and the next one's start
   * inside the selected segments: on a device the host drives one dispatch
   * at a time (the NPU), the host's turnaround per hand-off. Null with
   * fewer than two dispatches.
   */
  readonly median_gap_ns: number | null;
  readonly gaps: number;
}

/** Durations of the dispatches matching `kernel` on one device, per kernel, and the median gap between dispatches. */
export async function kernelSamples(store: Store, opts: KernelSampleOptions = {}): Promise<KernelSamplesResult> {
  const dev = await pickDevice(store, opts, opts.kind ?? 'npu');
  const glob = opts.kernel ?? '*';
  const { rows, segments: segs, all, choice, notes } = await selectedDispatches(store, dev, opts.segment, opts.reps, glob);
  if (rows.length === 0) throw new TickwiseError('no-match', `${whereLabel(dev)}: no dispatch matches --npu-kernel ${glob} in --segment ${choice}`);
  const by = new Map<string, { dur_ns: number[]; segment: number[] }>();
  for (const r of rows) {
    const k = r.kernel ?? 'unknown';
    const x = by.get(k) ?? { dur_ns: [], segment: [] };
    x.dur_ns.push(r.dur_ns);
    x.segment.push(r.segment);
    by.set(k, x);
  }
  const gaps: number[] = [];
  for (let i = 1; i < rows.length; i++) {
    if (rows[i]!.segment !== rows[i - 1]!.segment) continue;
    const g = rows[i]!.start_ns - rows[i - 1]!.end_ns;
    if (g >= 0n) gaps.push(Number(g));
  }
  return {
    ...sampledDevice(dev, { rows, segments: segs, all, choice, notes }),
    kernels: [...by].map(([kernel, v]) => ({ kernel, shape: gemmShapeFromName(kernel), ...v })),
    median_gap_ns: gaps.length === 0 ? null : median(gaps),
    gaps: gaps.length,
  };
}
