import type { CommandModule } from 'yargs';
import { TABLE_NAMES, type Store } from '@tickwise/store';
import { withInputs, withJson, withStore, type InputArgs } from '../options';
import { formatJson, formatTable, out } from '../output';

/** Everything `info` reports about a store. */
export async function describeStore(store: Store) {
  const captures = await store.rows(`SELECT capture_id, label, path, format, schema_version, producer, timeline, session_status, record_count,
      size_bytes, sha256 FROM captures ORDER BY capture_id`);
  const devices = await store.rows(`SELECT capture_id, device, kind, name, time_base, tick_hz_declared, tick_hz_fitted,
      CASE WHEN tick_hz_declared > 0 AND tick_hz_fitted > 0 THEN round((tick_hz_declared - tick_hz_fitted) / tick_hz_fitted * 1e6, 1) END AS declared_vs_fitted_ppm,
      clock_samples, round(fit_residual_max_ns, 1) AS fit_residual_max_ns, round(fit_residual_rms_ns, 1) AS fit_residual_rms_ns,
      round(fit_uncertainty_ns, 1) AS fit_uncertainty_ns, round(fit_slope_uncertainty_ppm, 4) AS fit_slope_uncertainty_ppm, fit_domain
    FROM devices ORDER BY capture_id, device`);
  const counts: Record<string, number> = {};
  for (const t of TABLE_NAMES) if (t !== 'tickwise_meta') counts[t] = await store.count(t);
  const perDevice = await store.rows(`SELECT capture_id, device, time_source, count(*) AS dispatches, count(*) FILTER (WHERE NOT valid) AS invalid,
      min(start_ns) AS first_start_ns, max(end_ns) AS last_end_ns FROM dispatches GROUP BY ALL ORDER BY ALL`);
  const diagnostics = await store.rows(`SELECT capture_id, severity, code, message, file, line FROM diagnostics ORDER BY capture_id, line NULLS FIRST`);
  const assumptions = await store.rows(`SELECT * FROM assumptions ORDER BY ALL`);
  return { captures, devices, dispatches_by_device: perDevice, row_counts: counts, diagnostics, assumptions };
}

/** `tickwise info <input>`: captures, devices and clock fits, row counts, diagnostics. */
export const infoCommand: CommandModule<object, InputArgs> = {
  command: 'info <inputs..>',
  describe: 'captures, devices (declared and fitted tick rates, fit quality), row counts, diagnostics',
  builder: (y) => withJson(withInputs(y)) as never,
  handler: async (args) => {
    await withStore(args, async (store) => {
      const d = await describeStore(store);
      if (args.json) {
        out(formatJson(d));
        return;
      }
      const short = d.captures.map((c) => ({ ...c, sha256: typeof c['sha256'] === 'string' ? (c['sha256'] as string).slice(0, 12) : null }));
      out('captures\n' + formatTable(['capture_id', 'label', 'format', 'schema_version', 'timeline', 'session_status', 'record_count', 'sha256'], short));
      out('\ndevices (tick rates in Hz; fit on the host timeline)\n' + formatTable(
        ['capture_id', 'device', 'kind', 'time_base', 'tick_hz_declared', 'tick_hz_fitted', 'declared_vs_fitted_ppm', 'clock_samples', 'fit_residual_max_ns', 'fit_residual_rms_ns', 'fit_uncertainty_ns'],
        d.devices,
      ));
      out('\ndispatches\n' + formatTable(['capture_id', 'device', 'time_source', 'dispatches', 'invalid', 'first_start_ns', 'last_end_ns'], d.dispatches_by_device));
      out('\nrows\n' + formatTable(['table', 'rows'], Object.entries(d.row_counts).map(([table, rows]) => ({ table, rows }))));
      if (d.assumptions.length) out('\nassumptions\n' + formatTable(['capture_id', 'device', 'what', 'value', 'note'], d.assumptions));
      out(`\ndiagnostics (${d.diagnostics.length})`);
      if (d.diagnostics.length) out(formatTable(['capture_id', 'severity', 'code', 'line', 'message'], d.diagnostics, { maxCell: Infinity }));
    });
  },
};
