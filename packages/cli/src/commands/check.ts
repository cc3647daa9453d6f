import type { CommandModule } from 'yargs';
import { readLlamaBench, readPin } from '@tickwise/capture';
import { formatPassedFigures, hasErrors, provenanceLines, runCheckSuite, type Finding } from '@tickwise/analyzer';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { withInputs, withJson, withStore, type InputArgs } from '../options';
import { formatJson, formatTable, out } from '../output';

interface Args extends InputArgs {
  capture?: number;
  pin?: string;
  wall?: string;
  'wall-capture'?: string;
}

/** The fixed fields of a finding; the rest are its numbers. */
const FIXED = new Set(['code', 'severity', 'message', 'capture_id', 'device', 'advice']);

function numbers(f: Finding): string {
  return Object.entries(f)
    // paths and long labels are in the message; short labels (factor, test) are numbers' company
    .filter(([k, v]) => !FIXED.has(k) && v !== null && v !== undefined && (typeof v !== 'string' || (v.length <= 32 && !v.includes('/'))))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
}

/** The human report: a table of findings, then each one's message and what to do. */
export async function formatFindings(store: Store, findings: readonly Finding[]): Promise<string> {
  if (findings.length === 0) return 'no findings: every check passed';
  const count = (s: Finding['severity']) => findings.filter((f) => f.severity === s).length;
  const header = await provenanceLines(store, findings.map((f) => f.capture_id).filter((x): x is number => x !== null));
  const lines = [
    ...(header ? [header, ''] : []),
    formatTable(
      ['#', 'severity', 'code', 'capture', 'device', 'numbers'],
      findings.map((f, i) => ({ '#': i + 1, severity: f.severity, code: f.code, capture: f.capture_id, device: f.device ?? null, numbers: numbers(f) })),
      { maxCell: Infinity }, // the numbers are the finding: never clipped
    ),
    '',
  ];
  findings.forEach((f, i) => {
    lines.push(`${i + 1}. ${f.severity} ${f.code}: ${f.message}`);
    lines.push(`   what to do: ${f.advice}`);
  });
  lines.push('', `${count('error')} error(s), ${count('warning')} warning(s), ${count('info')} info`);
  return lines.join('\n');
}

/**
 * The capture `--wall` is about: one reference describes one run, so not
 * every capture of a store (an NPU capture beside an iGPU one is not the
 * prefill llama-bench timed). null: all of them.
 */
async function wallCapture(store: Store, given: string | undefined, only: number | undefined): Promise<number | null> {
  if (given === 'all') return only ?? null;
  const ids = (await store.query({ capture_id: 'number' }, 'SELECT capture_id FROM captures ORDER BY capture_id')).map((r) => r.capture_id);
  if (given === undefined) return only ?? ids[0] ?? null;
  const id = Number(given);
  if (!Number.isInteger(id) || !ids.includes(id)) {
    throw new TickwiseError('usage', `--wall-capture ${given}: not a capture of this input (captures: ${ids.join(', ') || 'none'}; or "all")`);
  }
  return id;
}

/** `--capture N`: a capture of the input, or a usage error naming those there are. */
async function onlyCapture(store: Store, given: number | undefined): Promise<number | undefined> {
  if (given === undefined) return undefined;
  const ids = (await store.query({ capture_id: 'number' }, 'SELECT capture_id FROM captures ORDER BY capture_id')).map((r) => r.capture_id);
  if (!Number.isSafeInteger(given) || !ids.includes(given)) {
    throw new TickwiseError('usage', `--capture ${given}: not a capture of this input (captures: ${ids.join(', ') || 'none'}; tickwise info lists them)`);
  }
  return given;
}

/**
 * `tickwise check <input> [--capture N] [--pin pin.json] [--wall bench.csv [--wall-capture N|all]] [--json]`:
 * runs every check rule and prints its findings (code, severity, numbers,
 * what to do). Exit 1 when any finding is an error.
 */
export const checkCommand: CommandModule<object, Args> = {
  command: 'check <inputs..>',
  describe: 'check captures for unit, clock, wall-clock and provenance errors (exit 1 on an error finding)',
  builder: (y) =>
    withJson(
      withInputs(y)
        .option('capture', { type: 'number', requiresArg: true, describe: 'check only this capture id (default: every capture; tickwise info lists them)' })
        .option('pin', { type: 'string', requiresArg: true, describe: 'a pin (tickwise pin ... --out pin.json) to compare recorded libraries against' })
        .option('wall', { type: 'string', requiresArg: true, describe: 'llama-bench output (-o csv|json|jsonl|md|sql) to compare a capture\'s segment spans against' })
        .option('wall-capture', { type: 'string', requiresArg: true, describe: 'the capture id --wall is about (default: --capture, else the first capture), or "all"' }),
    ) as never,
  handler: async (args) => {
    const pin = args.pin ? readPin(args.pin) : undefined;
    const refs = args.wall ? (await readLlamaBench(args.wall)).refs : undefined;
    if (args['wall-capture'] !== undefined && !refs) throw new TickwiseError('usage', '--wall-capture goes with --wall <llama-bench output>');
    await withStore(args, async (store) => {
      const only = await onlyCapture(store, args.capture);
      const wallRefs = refs ? refs.map((r) => ({ ...r, capture_id: null as number | null })) : undefined;
      if (wallRefs) {
        const target = await wallCapture(store, args['wall-capture'], only);
        for (const r of wallRefs) r.capture_id = target;
      }
      const { findings, checks } = await runCheckSuite(store, { ...(only !== undefined ? { captureIds: [only] } : {}), ...(pin ? { pin } : {}), ...(wallRefs ? { wallRefs } : {}) });
      // --json: every check that ran with its figures; text: the figures of checks that passed (the wall ratio), issue 18.9
      const passed = formatPassedFigures(checks);
      out(args.json ? formatJson({ findings, checks }) : [await formatFindings(store, findings), ...(passed ? [passed] : [])].join('\n'));
      if (hasErrors(findings)) process.exitCode = 1;
    });
  },
};
