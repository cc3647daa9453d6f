import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { expect } from 'vitest';
import type { Store } from '@tickwise/store';

/** Hand-written fixtures of the trace readers. */
export const TRACE_FIXTURES = resolve(import.meta.dirname, 'fixtures');

/** Path of a fixture. */
export function fixture(...parts: string[]): string {
  return join(TRACE_FIXTURES, ...parts);
}

/** The kernel-totals query every reader's diff test runs: count and sum(dur_ns) per kernel. */
export const KERNEL_TOTALS_SQL = `
  SELECT kernel,
    count(*) FILTER (WHERE valid) AS n,
    sum(dur_ns) FILTER (WHERE valid) AS total_ns,
    count(*) FILTER (WHERE NOT valid OR start_ns IS NULL) AS invalid
  FROM dispatches WHERE capture_id = $1 GROUP BY kernel ORDER BY kernel`;

function csvCell(v: unknown): string {
  const s = v === null || v === undefined ? '' : String(v);
  return /[",\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** Rows as CSV text (header first), integers exact. */
export function toCsv(columns: readonly string[], rows: readonly Record<string, unknown>[]): string {
  return [columns.join(','), ...rows.map((r) => columns.map((c) => csvCell(r[c])).join(','))].join('\n') + '\n';
}

/**
 * Diff test against a committed golden beside the fixture: the query's CSV
 * must equal the file. `scripts/regen-goldens` rewrites every golden of the
 * project (this one through UPDATE_GOLDEN=1); review the diff before committing.
 */
export async function expectGolden(store: Store, golden: string, sql: string, params: unknown[]): Promise<void> {
  const t = await store.table(sql, params);
  const text = toCsv(t.columns, t.rows);
  if (process.env['UPDATE_GOLDEN'] === '1') writeFileSync(golden, text);
  expect(existsSync(golden), `golden ${golden} missing: run scripts/regen-goldens and review it`).toBe(true);
  expect(text).toBe(readFileSync(golden, 'utf8'));
}
