import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  allGpuSchedule,
  constantCost,
  costOn,
  exhaustiveSchedule,
  handoffMs,
  heftSchedule,
  perGemmSchedule,
  pipelinedSchedule,
  pipelinedSearchSchedule,
  prefillGraph,
  validateSchedule,
  type PrefillSpec,
  type StageGraph,
  type StageKind,
} from '../src/index';
import { npuTiles, randomGraph, sampleLikeSpec, seededRng } from './schedule-fixtures';

/** Every schedule, by brute force: every topological order x every engine per task, each started as early as it can. */
function bruteForce(g: StageGraph): number {
  const n = g.tasks.length;
  const engines = g.engines.map((e) => e.id);
  let best = Infinity;
  const order: number[] = [];
  const used = new Array<boolean>(n).fill(false);
  const orders: number[][] = [];
  const extend = () => {
    if (order.length === n) {
      orders.push([...order]);
      return;
    }
    for (let i = 0; i < n; i++) {
      if (used[i] || g.tasks[i]!.preds.some((p) => !used[p])) continue;
      used[i] = true;
      order.push(i);
      extend();
      order.pop();
      used[i] = false;
    }
  };
  extend();
  const assign = new Array<number>(n).fill(0);
  const visit = (i: number) => {
    if (i === n) {
      for (const o of orders) {
        const free = new Map(engines.map((e) => [e, 0]));
        const fin = new Array<number>(n).fill(0);
        for (const t of o) {
          const e = engines[assign[t]!]!;
          let s = free.get(e)!;
          for (const p of g.tasks[t]!.preds) s = Math.max(s, fin[p]! + handoffMs(g.handoff, engines[assign[p]!]!, e));
          fin[t] = s + costOn(g.tasks[t]!, e)!;
          free.set(e, fin[t]!);
        }
        best = Math.min(best, Math.max(...fin));
      }
      return;
    }
    for (let e = 0; e < engines.length; e++) {
      if (costOn(g.tasks[i]!, engines[e]!) === null) continue;
      assign[i] = e;
      visit(i + 1);
    }
  };
  visit(0);
  return best;
}

describe('branch and bound finds the optimum', () => {
  it('equals brute force on 60 seeded random graphs of 4-6 tasks, 2-3 engines, with handoff', () => {
    const rng = seededRng(5);
    for (let c = 0; c < 60; c++) {
      const n = 4 + rng.int(3);
      const engines = rng.next() < 0.5 ? ['gpu', 'npu'] : ['gpu', 'npu', 'cpu'];
      const g = randomGraph(rng, n, engines, rng.next() < 0.3 ? 0 : 2 * rng.next());
      const ex = exhaustiveSchedule(g);
      expect(ex.proven_optimal).toBe(true);
      expect(validateSchedule(g, ex.schedule)).toEqual([]);
      expect(ex.schedule.makespan_ms, `case ${c}`).toBeCloseTo(bruteForce(g), 9);
    }
  });

  it('says when its budget ran out, and returns the incumbent it started from', () => {
    const g = prefillGraph(sampleLikeSpec({ layers: 2, prompt_rows: 1536 }));
    const h = pipelinedSchedule(g).schedule;
    const ex = exhaustiveSchedule(g, { incumbent: h, max_nodes: 1000 });
    expect(ex.proven_optimal).toBe(false);
    expect(ex.nodes).toBe(1000);
    expect(ex.schedule.makespan_ms).toBeLessThanOrEqual(h.makespan_ms);
    expect(validateSchedule(g, ex.schedule)).toEqual([]);
  });
});

/** A prefill-shaped graph with seeded random costs: 1 layer, 2-3 micro-batches, 5 stages (QKV, attention, output, gate, down). */
function randomPrefill(rng: ReturnType<typeof seededRng>): PrefillSpec {
  const kinds: StageKind[] = ['qkv', 'attention', 'attn_output', 'ffn_gate', 'ffn_down'];
  const chunks = 2 + rng.int(2);
  const npuFactor = 1 + 7 * rng.next();
  return {
    layers: 1,
    prompt_rows: 512 * chunks,
    microbatch_rows: 512,
    group_rows: 256,
    engines: [{ id: 'gpu', name: 'iGPU' }, { id: 'npu', name: 'NPU' }],
    reference_engine: 'gpu',
    stages: kinds.map((kind) => {
      const g = 0.2 + 1.8 * rng.next();
      if (kind === 'attention') return { kind, cost: { gpu: { model: 'attention', per_dispatch_ms: 0.04, ms_per_row_pair: (g / (512 * 768)) } } };
      return { kind, cost: { gpu: { model: 'rows', per_group: constantCost(g / 2), whole_tiles: false }, npu: npuTiles((g / 2) * npuFactor * (0.7 + 0.6 * rng.next())) } };
    }),
    handoff: { default_ms: rng.next() < 0.25 ? 0 : 0.3 * rng.next() },
  };
}

const GOLDEN = join(import.meta.dirname, 'golden', 'schedule-heuristic-vs-optimal.md');
const UPDATE = process.env['UPDATE_GOLDEN'] === '1';
const f3 = (x: number) => x.toFixed(3);
const pct = (x: number) => `${(x * 100).toFixed(1)} %`;

describe('heuristic vs optimum, side by side (seeded generated graphs)', () => {
  it('HEFT and HEFT + search never beat the optimum; the table of how far they are is a reviewed golden', () => {
    const rng = seededRng(2026);
    const rows: string[] = [];
    const excessHeft: number[] = [];
    const excessSearch: number[] = [];
    const cases: { name: string; g: StageGraph }[] = [];
    for (let c = 0; c < 12; c++) {
      const engines = c % 3 === 2 ? ['gpu', 'npu', 'cpu'] : ['gpu', 'npu'];
      cases.push({ name: `random DAG ${c + 1} (${engines.length} engines)`, g: randomGraph(rng, 7 + rng.int(4), engines, rng.next() < 0.3 ? 0 : 1.5 * rng.next()) });
    }
    for (let c = 0; c < 8; c++) {
      const spec = randomPrefill(rng);
      cases.push({ name: `prefill 1 layer x ${spec.prompt_rows / 512} micro-batches ${c + 1}`, g: prefillGraph(spec) });
    }
    const sample = sampleLikeSpec({ layers: 1, prompt_rows: 1024 });
    cases.push({ name: 'sample-shaped, 1 layer x 2 micro-batches (all 10 stages)', g: prefillGraph(sample) });
    for (const { name, g } of cases) {
      const all = allGpuSchedule(g).makespan_ms;
      const heft = heftSchedule(g).makespan_ms;
      const piped = pipelinedSchedule(g).schedule;
      const search = pipelinedSearchSchedule(g).schedule;
      const ex = exhaustiveSchedule(g, { incumbent: search });
      expect(ex.proven_optimal, name).toBe(true);
      for (const s of [piped, search, ex.schedule]) expect(validateSchedule(g, s), name).toEqual([]);
      const opt = ex.schedule.makespan_ms;
      expect(opt).toBeLessThanOrEqual(search.makespan_ms * (1 + 1e-12));
      expect(search.makespan_ms).toBeLessThanOrEqual(piped.makespan_ms * (1 + 1e-12));
      expect(piped.makespan_ms).toBeLessThanOrEqual(Math.min(heft, all) * (1 + 1e-12));
      const per = g.tasks.some((t) => t.split) ? f3(perGemmSchedule(g).schedule.makespan_ms) : '-';
      excessHeft.push(piped.makespan_ms / opt - 1);
      excessSearch.push(search.makespan_ms / opt - 1);
      rows.push(`| ${name} | ${g.tasks.length} | ${f3(all)} | ${per} | ${f3(piped.makespan_ms)} | ${f3(search.makespan_ms)} | ${f3(opt)} | ${pct(piped.makespan_ms / opt - 1)} | ${pct(search.makespan_ms / opt - 1)} | ${ex.nodes} |`);
    }
    const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
    const text = [
      '# Heuristic vs optimum on generated graphs (seeded; regenerate: scripts/regen-goldens)',
      '',
      'Makespans in ms. HEFT = the pipelined strategy (HEFT over engine subsets); search = HEFT + local search over the engine choice;',
      'optimum = branch and bound (every case proven). Excess = heuristic / optimum - 1.',
      '',
      '| graph | stages | all-iGPU | per-GEMM | HEFT | HEFT + search | optimum | HEFT excess | search excess | B&B nodes |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...rows,
      '',
      `HEFT: mean excess ${pct(mean(excessHeft))}, worst ${pct(Math.max(...excessHeft))}, optimal in ${excessHeft.filter((x) => x < 1e-9).length} of ${excessHeft.length}.`,
      `HEFT + search: mean excess ${pct(mean(excessSearch))}, worst ${pct(Math.max(...excessSearch))}, optimal in ${excessSearch.filter((x) => x < 1e-9).length} of ${excessSearch.length}.`,
      '',
    ].join('\n');
    if (UPDATE || !existsSync(GOLDEN)) {
      writeFileSync(GOLDEN, text);
      if (!UPDATE) throw new Error('wrote missing golden schedule-heuristic-vs-optimal.md: review it and run again');
    } else expect(text).toBe(readFileSync(GOLDEN, 'utf8'));
  });
});
