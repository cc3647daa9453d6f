/**
 * SQL fragments the checks share. Pure: they build text and never touch
 * DuckDB.
 */
import type { CheckScope } from './types';

/** `capture_id IN (...)` for a scope (`TRUE` for every capture), on an optional table alias. */
export function captureFilter(scope: CheckScope, alias?: string): string {
  if (scope.captureIds === null) return 'TRUE';
  if (scope.captureIds.length === 0) return 'FALSE';
  const col = alias ? `${alias}.capture_id` : 'capture_id';
  return `${col} IN (${scope.captureIds.map((id) => String(Math.trunc(id))).join(', ')})`;
}

/**
 * The dispatch rows time math uses, one time source per (capture, device):
 * device-timed rows when the device has any, else host-timed ones (a device
 * can carry both: IREE's fixture_smoke does). Columns of `dispatches`; a
 * subquery to put after FROM.
 */
export function chosenDispatchesSql(scope: CheckScope): string {
  return `(SELECT x.* FROM dispatches x JOIN (
      SELECT capture_id, device, bool_or(time_source LIKE 'device_tick%') AS device_timed
      FROM dispatches WHERE ${captureFilter(scope)} GROUP BY capture_id, device
    ) s ON s.capture_id = x.capture_id AND s.device = x.device
    WHERE (x.time_source LIKE 'device_tick%') = s.device_timed AND ${captureFilter(scope, 'x')})`;
}

/** Of {@link chosenDispatchesSql}, the rows that can enter time math (valid, both ends on the timeline). */
export function timedDispatchesSql(scope: CheckScope): string {
  return `(SELECT capture_id, device, start_ns, end_ns FROM ${chosenDispatchesSql(scope)} c
    WHERE c.valid AND c.start_ns IS NOT NULL AND c.end_ns IS NOT NULL AND c.end_ns >= c.start_ns)`;
}

/** A SQL string literal (the store's one quoting). */
export { sqlString } from '@tickwise/store';
