import { formatMs, formatSpeedup } from '../format-numbers';
import type { VegaLiteSpec } from '../vega-spec';
import type { ScheduleModelResult } from './model';
import { STRATEGY_NAMES, type StrategyId } from './schedule';
import { isStageKind, STAGE_ORDER, type StageKind } from './stages';

/** Six significant digits: enough for drawing, stable for goldens. */
function r6(x: number): number {
  return Number(x.toPrecision(6));
}

/** A colour per stage kind (Tableau 10 and greys), so a kind keeps its colour across charts. */
export const STAGE_COLOURS: Record<StageKind, string> = {
  embed: '#9d755d', attn_norm: '#bab0ac', qkv: '#4c78a8', rope: '#72b7b2', attention: '#e45756', attn_output: '#f58518',
  ffn_norm: '#79706e', ffn_gate: '#54a24b', ffn_up: '#eeca3b', ffn_act: '#ff9da6', ffn_down: '#b279a2', head: '#17becf',
};
const OTHER_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b'];

/**
 * A Vega-Lite (v5) Gantt chart of the best schedule of a {@link
 * scheduleModel} result: one lane per engine, a bar per stage (or per part
 * of a split GEMM) from its start to its end in ms, coloured by stage kind,
 * bars on the critical path outlined in black; the title gives the strategy,
 * makespan and speedup over all-iGPU. Data are inline, so the spec is
 * self-contained JSON for the report to draw.
 */
export function scheduleGanttSpec(r: ScheduleModelResult): VegaLiteSpec {
  const strategy: StrategyId = r.gantt.strategy;
  const s = r.strategies.find((x) => x.strategy === strategy)!;
  const names = new Map(r.model.engines.map((e) => [e.id, e.name]));
  const critical = new Set(r.critical_path.steps.map((x) => x.task));
  const kinds = STAGE_ORDER.filter((k) => r.gantt.bars.some((b) => b.kind === k));
  const extra = [...new Set(r.gantt.bars.map((b) => b.kind))].filter((k) => !kinds.includes(k as (typeof kinds)[number]));
  const domain = [...kinds, ...extra];
  const values = r.gantt.bars.map((b) => ({
    engine: names.get(b.engine) ?? b.engine,
    stage: b.name,
    kind: b.kind,
    layer: b.layer,
    chunk: b.chunk,
    rows: b.rows,
    start_ms: r6(b.start_ms),
    end_ms: r6(b.end_ms),
    dur_ms: r6(b.end_ms - b.start_ms),
    critical: critical.has(b.task),
  }));
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    description: `Gantt chart of the ${STRATEGY_NAMES[strategy]} schedule of one prefill`,
    title: {
      text: `${STRATEGY_NAMES[strategy]}: ${formatMs(s.makespan_ms)} ms, ${formatSpeedup(s.speedup)} over all-iGPU`,
      subtitle: `${r.model.layers} layers x ${r.model.chunks} micro-batches of ${r.model.microbatch_rows} rows; handoff ${formatMs(r.model.handoff_ms)} ms; outlined: critical path`,
    },
    width: 900,
    height: { step: 36 },
    data: { values },
    mark: { type: 'bar', tooltip: true },
    encoding: {
      y: { field: 'engine', type: 'nominal', title: null, sort: r.model.engines.map((e) => e.name) },
      x: { field: 'start_ms', type: 'quantitative', title: 'ms from the start of the prefill', scale: { domain: [0, r6(s.makespan_ms)] } },
      x2: { field: 'end_ms' },
      color: {
        field: 'kind',
        type: 'nominal',
        title: 'stage',
        scale: { domain, range: domain.map((k, i) => (isStageKind(k) ? STAGE_COLOURS[k] : OTHER_COLOURS[i % OTHER_COLOURS.length]!)) },
        legend: { orient: 'bottom', columns: 6 },
      },
      stroke: { condition: { test: 'datum.critical', value: 'black' }, value: null },
      strokeWidth: { condition: { test: 'datum.critical', value: 0.8 }, value: 0 },
      tooltip: [
        { field: 'stage', type: 'nominal' },
        { field: 'engine', type: 'nominal' },
        { field: 'rows', type: 'quantitative' },
        { field: 'start_ms', type: 'quantitative', format: '.3f' },
        { field: 'end_ms', type: 'quantitative', format: '.3f' },
        { field: 'dur_ms', type: 'quantitative', title: 'ms', format: '.4f' },
        { field: 'critical', type: 'nominal', title: 'on critical path' },
      ],
    },
  };
}
