/**
 * Installs the analyses as SQL views and macros in a store (see
 * `sql/views.ts` for what each holds), so `tickwise sql` users can combine
 * them with their own queries. A read-only store gets TEMP views (gone when
 * it closes); a writable one keeps them in the file.
 */
import type { Store } from '@tickwise/store';
import { MACRO_NAMES, VIEW_NAMES, viewStatements } from './sql/views';

/** What {@link installViews} created. */
export interface InstalledViews {
  readonly temporary: boolean;
  readonly views: readonly string[];
  readonly macros: readonly string[];
}

/** True when the store's database is attached read-only. */
export async function isReadOnly(store: Store): Promise<boolean> {
  const v = await store.scalar(`SELECT readonly FROM duckdb_databases() WHERE database_name = current_database()`);
  return v === true;
}

/**
 * Creates (or replaces) the views `dispatch_spans`, `busy_intervals`,
 * `device_busy`, `gaps_v`, `kernel_stats` and the macros `ns_to_ms(x)`,
 * `gaps_over(threshold_ns)`, `kernel_cost(kernel_glob, rows_per_dispatch, group_rows)`.
 */
export async function installViews(store: Store, opts: { temporary?: boolean } = {}): Promise<InstalledViews> {
  const temporary = opts.temporary ?? (await isReadOnly(store));
  // one statement list, one commit (a statement each took ~20 ms of every import)
  const all = viewStatements(temporary).join(';\n');
  if (temporary) await store.run(all);
  else {
    await store.run(`BEGIN TRANSACTION;\n${all};\nCOMMIT`).catch(async (e: unknown) => {
      await store.run('ROLLBACK').catch(() => undefined);
      throw e;
    });
  }
  return { temporary, views: VIEW_NAMES, macros: MACRO_NAMES };
}
