/**
 * Device ticks to host nanoseconds in SQL, exactly and fast.
 *
 * The clock map is `ns = base_ns + round_half_away((tick - base_tick) * num / FIT_DEN)`
 * (`tickToNs` in @tickwise/time). Done in 128-bit integers for every row it
 * costs more than the rest of an import (a HUGEINT multiply and divide per
 * tick), so each tick is first mapped in DOUBLE: the offset
 * `o = (tick - base_tick) * (num / FIT_DEN)` has a relative error below
 * 6e-16 (four roundings of 2^-53 each: the tick difference and `num` to
 * DOUBLE, the division by the exact 1e15, the product). Rounding `o` gives
 * the exact answer unless the true value could sit on the other side of a
 * half-integer, i.e. unless `o` is within `|o| * 4e-15 + 1e-6` of one (ties
 * included, and every `|o| >= 2^52`, whose doubles are whole numbers). Those
 * rare rows take the exact HUGEINT path. The sum with `base_ns` and the cast
 * are HUGEINT -> BIGINT as before, so out-of-range results behave the same.
 *
 * `fit` names a relation with HUGEINT columns `base_tick`, `base_ns`, `num`.
 */
import { FIT_DEN } from '@tickwise/time';

/** The exact mapping: HUGEINT multiply, round half away from zero, divide. */
export function tickNsExactSql(col: string, fit = 'f'): string {
  const x = `((${col})::HUGEINT - ${fit}.base_tick) * ${fit}.num`;
  const den = FIT_DEN.toString();
  return `CAST(${fit}.base_ns + CASE WHEN ${x} >= 0 THEN (${x} + ${den} // 2) // ${den} ELSE -((-(${x}) + ${den} // 2) // ${den}) END AS BIGINT)`;
}

/**
 * The DOUBLE offset `o` of a tick column (see the module comment). A query
 * that maps many ticks computes it once per tick in a subquery and hands the
 * column to {@link tickNsSql} (its `o`): DuckDB evaluates each copy of an
 * expression, and the mapping with its range check reads `o` five times
 * (313k dispatches: 100 ms as five copies, 42 ms once).
 */
export function tickOffsetSql(col: string, fit = 'f'): string {
  return `(((${col})::HUGEINT - ${fit}.base_tick)::DOUBLE * (${fit}.num::DOUBLE / ${Number(FIT_DEN)}.0))`;
}

/** The same value as {@link tickNsExactSql} for every tick, through DOUBLE where that is provably exact; `o`: its {@link tickOffsetSql}. */
export function tickNsSql(col: string, fit = 'f', o = tickOffsetSql(col, fit)): string {
  return `CASE WHEN abs(${o} - floor(${o}) - 0.5) > abs(${o}) * 4e-15 + 1e-6 THEN CAST(${fit}.base_ns + round(${o})::HUGEINT AS BIGINT) ELSE ${tickNsExactSql(col, fit)} END`;
}
