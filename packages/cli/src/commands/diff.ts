import type { CommandModule } from 'yargs';
import { diff, formatFindingLine, type DiffResult, type DiffSide, type KernelDiff } from '@tickwise/analyzer';
import { openInputs } from '@tickwise/capture/open';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { captures, dur, header, pct } from '../analysis-options';
import { durationOpt, durationOption, checkInputsExist, importOptions, withInputs, withJson, type InputArgs } from '../options';
import { formatJson, formatTable, logSkipped, out } from '../output';

interface Args extends InputArgs {
  'a-capture'?: number;
  'b-capture'?: number;
  segment: string;
  'a-segment'?: string;
  'b-segment'?: string;
  'a-kernel'?: string;
  'b-kernel'?: string;
  device?: number;
  reps?: number;
  'min-gap'?: string;
  'rows-per-dispatch'?: number;
}

const ratio = (v: number | null) => (v === null ? '-' : `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3)}x`);
const signed = (v: bigint | number | null) => (v === null ? '-' : (v > 0 ? '+' : '') + dur(v));
const work = (k: KernelDiff['a']) => (k === null || k.work_per_launch === null ? '-' : `${Number(k.work_per_launch.toFixed(2))} ${k.work_unit === 'workgroups' ? 'wg' : 'rows'}`);

/** Which captures the sides are, from the inputs and --a-capture/--b-capture. */
async function sides(store: Store, imported: readonly number[], args: Args): Promise<{ a: number; b: number }> {
  const ids = (await store.query({ capture_id: 'number' }, 'SELECT capture_id FROM captures ORDER BY capture_id')).map((r) => r.capture_id);
  const check = (id: number, name: string) => {
    if (!ids.includes(id)) throw new TickwiseError('usage', `--${name} ${id}: not a capture of this input (captures: ${ids.join(', ') || 'none'})`);
    return id;
  };
  const pool = imported.length ? imported : ids;
  const a = args['a-capture'] !== undefined ? check(args['a-capture'], 'a-capture') : pool[0];
  const b = args['b-capture'] !== undefined ? check(args['b-capture'], 'b-capture') : pool.length === 2 ? pool[1] : pool.length === 1 ? pool[0] : undefined;
  if (a === undefined || b === undefined) {
    throw new TickwiseError('usage', `the input holds ${ids.length} captures (${ids.join(', ')}): say which two to compare with --a-capture N --b-capture M`);
  }
  return { a, b };
}

function kernelRows(r: DiffResult): Record<string, unknown>[] {
  return r.kernels.map((k) => ({
    device: k.device, kernel: k.kernel, status: k.status,
    'count A': k.a?.count ?? 0, 'count B': k.b?.count ?? 0,
    'total A': dur(k.a?.total_ns ?? null), 'total B': dur(k.b?.total_ns ?? null), 'total B-A': signed(k.total_delta_ns),
    'mean A': dur(k.a?.mean_ns ?? null), 'mean B': dur(k.b?.mean_ns ?? null), 'per-launch B/A': ratio(k.mean_ratio),
    'median B/A': ratio(k.median_ratio), 'work/launch A': work(k.a), 'work/launch B': work(k.b), 'time/work B/A': ratio(k.ns_per_work_ratio),
  }));
}

/** The human report of a diff. */
export async function formatDiff(store: Store, r: DiffResult): Promise<string> {
  const side = (s: DiffResult['a']) => `capture ${s.capture_id}, segment ${s.segment}${s.kernel ? `, kernels ${s.kernel}` : ''}`;
  const lines = [await header(store, [r.a.capture_id, r.b.capture_id])];
  lines.push(`\ndiff of ${r.mode === 'kernels' ? 'two kernel groups' : r.mode === 'segments' ? 'two segment selections' : 'two captures'}: A = ${side(r.a)}; B = ${side(r.b)}`);
  for (const f of r.findings.filter((f) => f.severity !== 'info')) lines.push(`!! ${formatFindingLine(f)}`);
  lines.push(`\nper kernel (ratios B/A; sorted ${r.sort_rule}):`);
  const changed = r.kernels.filter((k) => k.status !== 'same');
  lines.push(r.kernels.length ? formatTable(Object.keys(kernelRows(r)[0]!), kernelRows(r)) : 'no timed dispatches');
  if (r.kernels.length && changed.length === 0) lines.push('(every kernel the same on both sides)');
  if (r.timeline.length) {
    lines.push(`\nbusy / idle per device (busy = union of dispatch intervals; gaps over ${dur(r.threshold_ns)}):`);
    lines.push(formatTable(
      ['device', 'kind', 'span A', 'span B', 'busy A', 'busy B', 'idle A', 'idle B', 'idle B-A', 'gaps A', 'gaps B', 'long-gap idle A', 'long-gap idle B', 'between-sub idle A', 'between-sub idle B'],
      r.timeline.map((t) => ({
        device: t.device, kind: t.kind, 'span A': dur(t.a?.span_ns ?? null), 'span B': dur(t.b?.span_ns ?? null), 'busy A': dur(t.a?.busy_ns ?? null), 'busy B': dur(t.b?.busy_ns ?? null),
        'idle A': pct(t.a?.idle_fraction ?? null), 'idle B': pct(t.b?.idle_fraction ?? null),
        'idle B-A': t.idle_fraction_delta === null ? '-' : `${t.idle_fraction_delta >= 0 ? '+' : ''}${(t.idle_fraction_delta * 100).toFixed(2)} pt`,
        'gaps A': t.a?.gap_count ?? null, 'gaps B': t.b?.gap_count ?? null,
        'long-gap idle A': pct(t.a?.over_threshold_share_of_idle ?? null), 'long-gap idle B': pct(t.b?.over_threshold_share_of_idle ?? null),
        'between-sub idle A': pct(t.a?.between_submissions_share_of_idle ?? null), 'between-sub idle B': pct(t.b?.between_submissions_share_of_idle ?? null),
      })),
    ));
  }
  if (r.provenance.length) {
    lines.push('\nlibraries that differ:');
    for (const p of r.provenance) {
      const what = p.status === 'changed' ? p.changed.map((f) => `${f} ${String(p.a?.[f as keyof typeof p.a] ?? '-')} -> ${String(p.b?.[f as keyof typeof p.b] ?? '-')}`).join('; ') : p.status === 'only_a' ? `only in A (${p.a?.path})` : `only in B (${p.b?.path})`;
      lines.push(`  ${p.name}: ${what}`);
    }
  } else if (r.a.capture_id !== r.b.capture_id) {
    lines.push('\nlibraries: no differences in the recorded provenance');
  }
  if (r.conditions.length) {
    lines.push('\nconditions that differ:');
    lines.push(formatTable(['key', 'class', 'A', 'B', 'delta'], r.conditions.map((c) => ({
      key: c.key, class: c.class, A: c.a ?? `(${c.a_note ?? 'null'})`, B: c.b ?? `(${c.b_note ?? 'null'})`, delta: c.delta === null ? '' : `${c.delta > 0 ? '+' : ''}${Number(c.delta.toFixed(3))}${c.unit ? ` ${c.unit}` : ''}`,
    }))));
  }
  for (const n of r.notes) lines.push(`note: ${n}`);
  lines.push(r.identical ? '\nno differences' : `\n${r.differences} difference(s)`);
  return lines.join('\n');
}

/**
 * `tickwise diff <A> <B> [--segment steady] [--json]`: two captures (two
 * inputs, or one store with --a-capture/--b-capture), two segment
 * selections (--a-segment/--b-segment), or two kernel groups of one capture
 * (--a-kernel/--b-kernel), compared kernel by kernel, with busy/idle,
 * libraries and conditions side by side.
 */
export const diffCommand: CommandModule<object, Args> = {
  command: 'diff <inputs..>',
  describe: 'compare two captures, segments or kernel groups: per kernel count/total/mean/median per launch with deltas and ratios; busy/idle; libraries; conditions',
  builder: (y) =>
    withJson(withInputs(y))
      .option('a-capture', { type: 'number', describe: 'capture id of side A (default: the first input\'s)' })
      .option('b-capture', { type: 'number', describe: 'capture id of side B (default: the second input\'s)' })
      .option('segment', { type: 'string', default: 'all', describe: 'segments of both sides: all | first | last | steady | N' })
      .option('a-segment', { type: 'string', describe: 'segments of side A (overrides --segment)' })
      .option('b-segment', { type: 'string', describe: 'segments of side B (overrides --segment)' })
      .option('a-kernel', { type: 'string', describe: 'side A is the kernels matching this glob (with --b-kernel)' })
      .option('b-kernel', { type: 'string', describe: 'side B is the kernels matching this glob (with --a-kernel)' })
      .option('device', { type: 'number', describe: 'only this device ordinal' })
      .option('reps', { type: 'number', describe: 'repetitions (prefills) per capture; default: detected' })
      .option('min-gap', durationOpt('gap threshold for the long-gap share (default 200us)'))
      .option('rows-per-dispatch', { type: 'number', describe: 'rows one launch covers, where the source carries neither rows nor workgroup counts' }) as never,
  handler: async (args) => {
    if ((args['a-kernel'] === undefined) !== (args['b-kernel'] === undefined)) throw new TickwiseError('usage', 'give both --a-kernel GLOB and --b-kernel GLOB');
    const threshold = durationOption(args['min-gap'], 'min-gap');
    checkInputsExist(args.inputs);
    const { store, imported, skipped } = await openInputs(args.inputs, importOptions(args));
    logSkipped(skipped);
    try {
      const { a, b } = await sides(store, imported.map((i) => i.capture_id), args);
      const sideA: DiffSide = { captureId: a, segment: args['a-segment'] ?? args.segment, kernel: args['a-kernel'] };
      const sideB: DiffSide = { captureId: b, segment: args['b-segment'] ?? args.segment, kernel: args['b-kernel'] };
      const r = await diff(store, { a: sideA, b: sideB, device: args.device, reps: args.reps, thresholdNs: threshold, rowsPerDispatch: args['rows-per-dispatch'] });
      out(args.json ? formatJson({ ...r, captures: await captures(store, [a, b]) }) : await formatDiff(store, r));
    } finally {
      await store.close();
    }
  },
};
