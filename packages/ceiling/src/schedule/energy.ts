import { TickwiseError } from '@tickwise/time';
import type { StageGraph } from './graph';
import { scheduleMessages as msg } from './messages';
import { engineUse, type Schedule } from './schedule';

/** One engine's power: while it runs a stage, and while it waits. */
export interface EnginePower {
  readonly engine: string;
  /** W while busy (null: unknown). */
  readonly active_w: number | null;
  /** W while idle within the prefill (null: unknown). */
  readonly idle_w: number | null;
  /** Where the numbers came from ("--gpu-active-w 45", "measured: ..."). */
  readonly source: string;
}

/** Modelled energy of one schedule. */
export interface EnergyEstimate {
  /** Joules per prefill, null when some engine's power is unknown. */
  readonly joules: number | null;
  readonly by_engine: readonly { readonly engine: string; readonly busy_ms: number; readonly idle_ms: number; readonly active_j: number | null; readonly idle_j: number | null }[];
  /** What is missing ("--npu-idle-w"), empty when complete. */
  readonly missing: readonly string[];
}

function checkW(what: string, v: number | null): void {
  if (v !== null && !(Number.isFinite(v) && v >= 0)) throw new TickwiseError('invalid-input', msg.badPower(what, v));
}

/**
 * Energy of a schedule: every engine of the chip draws its active power
 * while busy and its idle power for the rest of the makespan (an engine the
 * schedule leaves unused still idles beside it, so strategies compare on the
 * same chip). J = sum over engines of (active_W x busy_s + idle_W x idle_s).
 */
export function scheduleEnergy(g: StageGraph, s: Schedule, power: readonly EnginePower[]): EnergyEstimate {
  const missing: string[] = [];
  const by_engine = engineUse(g, s).map((u) => {
    const p = power.find((x) => x.engine === u.engine);
    const active = p?.active_w ?? null;
    const idle = p?.idle_w ?? null;
    checkW(`${u.engine} active power`, active);
    checkW(`${u.engine} idle power`, idle);
    if (active === null) missing.push(`--${u.engine}-active-w`);
    if (idle === null) missing.push(`--${u.engine}-idle-w`);
    const idleMs = Math.max(0, s.makespan_ms - u.busy_ms);
    return {
      engine: u.engine,
      busy_ms: u.busy_ms,
      idle_ms: idleMs,
      active_j: active === null ? null : (active * u.busy_ms) / 1e3,
      idle_j: idle === null ? null : (idle * idleMs) / 1e3,
    };
  });
  const joules = missing.length ? null : by_engine.reduce((a, e) => a + e.active_j! + e.idle_j!, 0);
  return { joules, by_engine, missing };
}
