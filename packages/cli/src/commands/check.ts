import type { CommandModule } from 'yargs';
import { readLlamaBench, readPin } from '@tickwise/capture';
import { hasErrors, runChecks, type Finding } from '@tickwise/analyzer';
import type { Store } from '@tickwise/store';
import { withInputs, withJson, withStore, type InputArgs } from '../options';
import { formatJson, formatTable, out } from '../output';

interface Args extends InputArgs {
  pin?: string;
  wall?: string;
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

async function captureLines(store: Store, findings: readonly Finding[]): Promise<string[]> {
  const ids = [...new Set(findings.map((f) => f.capture_id).filter((x): x is number => x !== null))];
  if (ids.length === 0) return [];
  const rows = await store.query(
    { capture_id: 'number', path: 'string', producer: 'string?' },
    `SELECT capture_id, path, producer FROM captures WHERE capture_id IN (${ids.join(', ')}) ORDER BY capture_id`,
  );
  return rows.map((r) => `capture ${r.capture_id}: ${r.path}${r.producer ? ` (${r.producer})` : ''}`);
}

/** The human report: a table of findings, then each one's message and what to do. */
export async function formatFindings(store: Store, findings: readonly Finding[]): Promise<string> {
  if (findings.length === 0) return 'no findings: every check passed';
  const count = (s: Finding['severity']) => findings.filter((f) => f.severity === s).length;
  const lines = [
    ...(await captureLines(store, findings)),
    '',
    formatTable(
      ['#', 'severity', 'code', 'capture', 'device', 'numbers'],
      findings.map((f, i) => ({ '#': i + 1, severity: f.severity, code: f.code, capture: f.capture_id, device: f.device ?? null, numbers: numbers(f) })),
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
 * `tickwise check <input> [--pin pin.json] [--wall bench.csv] [--json]`:
 * runs every check rule and prints its findings (code, severity, numbers,
 * what to do). Exit 1 when any finding is an error.
 */
export const checkCommand: CommandModule<object, Args> = {
  command: 'check <inputs..>',
  describe: 'check captures for unit, clock, wall-clock and provenance errors (exit 1 on an error finding)',
  builder: (y) =>
    withJson(
      withInputs(y)
        .option('pin', { type: 'string', requiresArg: true, describe: 'a pin (tickwise pin ... --out pin.json) to compare recorded libraries against' })
        .option('wall', { type: 'string', requiresArg: true, describe: 'llama-bench output (-o csv|json|jsonl|md|sql) to compare segment spans against' }),
    ) as never,
  handler: async (args) => {
    const pin = args.pin ? readPin(args.pin) : undefined;
    const wallRefs = args.wall ? (await readLlamaBench(args.wall)).refs : undefined;
    await withStore(args, async (store) => {
      const findings = await runChecks(store, { ...(pin ? { pin } : {}), ...(wallRefs ? { wallRefs } : {}) });
      out(args.json ? formatJson({ findings }) : await formatFindings(store, findings));
      if (hasErrors(findings)) process.exitCode = 1;
    });
  },
};
