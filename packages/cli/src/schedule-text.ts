/**
 * The human text of a schedule model's result (`tickwise schedule`, and the
 * report's schedule section): strategies with error bars, the lower bound,
 * the critical path, per-GEMM splits, stage costs with their sources, the
 * reproduction of the capture, what the model leaves out, energy, notes.
 */
import { formatMs, formatSpeedup, type CriticalStep, type ScheduleModelResult } from '@tickwise/ceiling';
import { formatTable } from './output';

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
// below a femtosecond is float noise of a difference of sums (-5.68e-12 ms): printed as 0
const signedMs = (x: number) => (Math.abs(x) < 1e-9 ? '0 ms' : `${x >= 0 ? '+' : '-'}${formatMs(Math.abs(x))} ms`);

/** Runs of consecutive critical-path steps on one engine: "iGPU 40 stages (L0 c0 embed .. L3 c0 ffn_down) 30.1 ms". */
function pathRuns(steps: readonly CriticalStep[], names: Map<string, string>): string[] {
  const runs: { engine: string; first: CriticalStep; last: CriticalStep; n: number; ms: number; handoff: number }[] = [];
  for (const s of steps) {
    const r = runs[runs.length - 1];
    if (r && r.engine === s.engine) {
      r.last = s;
      r.n++;
      r.ms += s.end_ms - s.start_ms;
    } else runs.push({ engine: s.engine, first: s, last: s, n: 1, ms: s.end_ms - s.start_ms, handoff: s.handoff_ms });
  }
  const eng = (e: string) => e.split('+').map((x) => names.get(x) ?? x).join('+');
  return runs.map((r) => `${eng(r.engine)}: ${r.n} stage${r.n === 1 ? '' : 's'} (${r.first.name}${r.n > 1 ? ` .. ${r.last.name}` : ''}) ${formatMs(r.ms)} ms${r.handoff > 0 ? ` after a ${formatMs(r.handoff)} ms handoff` : ''}`);
}

/** The human report. */
export function scheduleText(r: ScheduleModelResult, provenance: readonly string[]): string {
  const names = new Map(r.model.engines.map((e) => [e.id, e.name]));
  const L: string[] = [...provenance, ''];
  const m = r.model;
  L.push(`schedule model: ${m.layers} layers x ${m.chunks} micro-batch${m.chunks === 1 ? '' : 'es'} of ${m.microbatch_rows} rows (${m.prompt_rows}-row prompt), ${m.tasks} stages; engines ${m.engines.map((e) => e.name).join(', ')}`);
  L.push(`handoff between engines: ${formatMs(m.handoff_ms)} ms (${m.handoff_source})`);
  L.push('');
  const u = r.uncertainty;
  const cols = ['strategy', 'makespan', 'speedup', ...(u ? ['median', `${Math.round(u.coverage * 100)} % interval`] : []), ...m.engines.map((e) => `${e.name} busy`)];
  const rows = r.strategies.map((s) => {
    const row: Record<string, unknown> = {
      strategy: `${s.name}${s.strategy === r.best ? ' *' : ''}${s.proven_optimal === false ? ' (not proven)' : ''}`,
      makespan: `${formatMs(s.makespan_ms)} ms`,
      speedup: formatSpeedup(s.speedup),
    };
    if (u) {
      row['median'] = s.interval ? formatSpeedup(s.interval.speedup.median) : '-';
      row[`${Math.round(u.coverage * 100)} % interval`] = s.interval ? `${formatSpeedup(s.interval.speedup.low)} .. ${formatSpeedup(s.interval.speedup.high)}` : '-';
    }
    for (const e of s.engines) row[`${names.get(e.engine)} busy`] = `${formatMs(e.busy_ms)} ms (${pct(e.utilisation)})`;
    return row;
  });
  L.push(formatTable(cols, rows));
  const best = r.strategies.find((s) => s.strategy === r.best)!;
  const bi = best.interval;
  L.push('');
  L.push(`best: ${best.name}, ${formatMs(best.makespan_ms)} ms, ${formatSpeedup(best.speedup)} over all-iGPU` +
    (u && bi ? ` (median ${formatSpeedup(bi.speedup.median)}, ${Math.round(u.coverage * 100)} % interval ${formatSpeedup(bi.speedup.low)} .. ${formatSpeedup(bi.speedup.high)})` : ''));
  const lb = r.lower_bound;
  L.push(`no schedule of this graph takes less than ${formatMs(lb.bound_ms)} ms (${lb.load_ms >= lb.path_ms ? 'the work at each engine\'s speed' : 'the longest least-cost path'}; path ${formatMs(lb.path_ms)} ms, load ${formatMs(lb.load_ms)} ms): the best found is at most ${pct(lb.best_excess_max)} above the optimum`);
  if (u) {
    L.push(`error bars: ${u.replicates} bootstrap replicates (seed ${u.seed}) over ${u.repetitions.map((x) => `${x.segments} repetition${x.segments === 1 ? '' : 's'} of the ${names.get(x.capture) ?? x.capture} capture`).join(' and ')}, ${u.dispatches} dispatches; ${u.method}`);
    for (const n of u.notes) L.push(`  note: ${n.replace(/^(gpu|npu):/, (x) => `${names.get(x.slice(0, -1)) ?? x}:`)}`);
  } else L.push('error bars: off (--bootstrap 0)');
  L.push('');
  const cp = r.critical_path;
  L.push(`critical path of the best schedule: ${cp.steps.length} stages, ${formatMs(cp.length_ms)} ms (handoff on it ${formatMs(cp.handoff_ms)} ms)`);
  L.push(`  by engine: ${cp.by_engine.map((e) => `${e.engine.split('+').map((x) => names.get(x) ?? x).join('+')} ${formatMs(e.ms)} ms`).join(', ')}`);
  L.push(`  by stage: ${cp.by_kind.map((k) => `${k.kind} ${formatMs(k.ms)} ms (${k.steps})`).join(', ')}`);
  const runs = pathRuns(cp.steps, names);
  const shown = runs.length <= 12 ? runs : [...runs.slice(0, 6), `... ${runs.length - 12} more runs ...`, ...runs.slice(-6)];
  for (const x of shown) L.push(`  ${x}`);
  if (r.per_gemm_splits.length) {
    L.push('');
    L.push(`per-GEMM split (tickwise ceiling of each GEMM: M = its rows, sync = the handoff):`);
    L.push(formatTable(['gemm', 'rows', 'npu_groups', 'gpu_ms', 'npu_ms', 'split_ms', 'speedup', 'instances'], r.per_gemm_splits.map((s) => ({
      gemm: s.kind, rows: s.rows, npu_groups: s.split.npu_groups, gpu_ms: formatMs(s.split.gpu_ms), npu_ms: formatMs(s.split.npu_ms),
      split_ms: formatMs(s.split.split_ms), speedup: formatSpeedup(s.split.speedup), instances: s.instances,
    }))));
  }
  L.push('');
  L.push(`stage costs (ms per stage: first and last micro-batch, and summed over one prefill as if every instance ran on that engine)`);
  L.push(formatTable(['stage', 'engine', 'model', 'first', 'last', 'per prefill'], r.stage_costs.map((c) => ({
    stage: c.kind, engine: names.get(c.engine) ?? c.engine, model: c.model,
    first: formatMs(c.first_chunk_ms), last: formatMs(c.last_chunk_ms), 'per prefill': formatMs(c.prefill_ms),
  }))));
  const att = r.stage_costs.find((c) => c.kind === 'attention' && c.fit?.line);
  if (att?.fit?.line) {
    const l = att.fit.line;
    L.push(`  attention: fitted over ${l.positions} micro-batch positions: ${formatMs(l.a_ms)} ms + ${formatMs(l.b_ms_per_position)} ms x position${l.r2 === null ? '' : ` (R^2 ${l.r2.toFixed(4)})`}: cost grows with the keys attended`);
  }
  L.push('  sources:');
  const seen = new Set<string>();
  for (const c of r.stage_costs) {
    const line = `${c.kind} on ${names.get(c.engine) ?? c.engine}: ${c.source?.line ?? '-'}`;
    if (!seen.has(line)) L.push(`    ${line}`);
    seen.add(line);
  }
  if (r.exhaustive_check) {
    const x = r.exhaustive_check;
    L.push('');
    L.push(`heuristic vs optimum, on a cut-down graph of the same costs (${x.layers} layer${x.layers === 1 ? '' : 's'} x ${x.chunks} micro-batch${x.chunks === 1 ? '' : 'es'}, ${x.tasks} stages):`);
    L.push(`  all-iGPU ${formatMs(x.all_gpu_ms)} ms, per-GEMM ${formatMs(x.per_gemm_ms)} ms, HEFT ${formatMs(x.heuristic_ms)} ms (+${pct(x.heuristic_excess)})` +
      (x.search_ms !== null && x.search_excess !== null ? `, HEFT + search ${formatMs(x.search_ms)} ms (+${pct(x.search_excess)})` : '') +
      `, optimum ${formatMs(x.optimal_ms)} ms ` + (x.proven_optimal ? `(proven, ${x.nodes} search nodes)` : `(best found in ${x.nodes} nodes, not proven optimal)`));
  }
  if (r.reproduction) {
    const p = r.reproduction;
    L.push('');
    L.push(`model vs capture: all-iGPU at ${p.microbatch_rows} rows ${formatMs(p.model_ms)} ms vs measured span ${formatMs(p.measured_span_ms)} ms (${p.error >= 0 ? '+' : ''}${pct(p.error)}, ${p.within_5pct ? 'within' : 'NOT within'} 5 %)`);
    L.push(`  ${p.source}`);
    for (const a of p.accounted) L.push(`  ${signedMs(a.ms)}  ${a.what}`);
    L.push(`  ${signedMs(p.residual_ms)}  residual`);
  }
  L.push('');
  L.push('the model leaves out:');
  for (const w of r.left_out) L.push(`  - ${w.what}${w.ms_per_prefill === null ? '' : ` (${signedMs(w.ms_per_prefill)} per prefill in the capture)`}`);
  L.push('');
  L.push(`energy: ${r.energy.note}`);
  if (r.energy.measured) {
    const me = r.energy.measured;
    L.push(`  measured: ${me.joules_per_prefill.toFixed(3)} J per prefill (${me.segments.map((s) => `segment ${s.segment}: ${s.joules.toFixed(3)} J, mean ${s.mean_w.toFixed(2)} W, ${s.samples} samples`).join('; ')})`);
  }
  for (const p of r.energy.power) L.push(`  ${names.get(p.engine) ?? p.engine} power: ${p.source}`);
  for (const s of r.strategies) {
    if (s.energy && s.energy.joules !== null) {
      const base = r.strategies[0]!.energy?.joules ?? null;
      L.push(`  modelled ${s.name}: ${s.energy.joules.toFixed(3)} J${base ? ` (${((s.energy.joules / base - 1) * 100).toFixed(1)} % vs all-iGPU)` : ''}`);
    }
  }
  if (r.notes.length) {
    L.push('');
    L.push('notes');
    for (const n of r.notes) L.push(`  - ${n}`);
  }
  return L.join('\n');
}

