import { TickwiseError } from '@tickwise/time';
import { costCurve, type CostPoint, type CostSource, type EngineCost } from './cost-curve';
import { ceilingMessages as msg } from './messages';

const COST_COLUMNS = ['ms', 'group_ms', 'total_ms'] as const;

/**
 * Parses a cost sweep written as CSV text (the caller reads the file; this
 * stays pure). Header required. Columns:
 *
 * - `rows`: the M the engine ran;
 * - `ms` (or `group_ms`): ms per G-row group at that M, **or** `total_ms`:
 *   the whole GEMM of `rows` rows, turned into per-group cost as
 *   `total_ms x groupRows / rows`;
 * - optional `p10_ms`, `p90_ms` in the same unit as the cost column.
 *
 * Blank lines and lines starting with `#` are skipped. A bad cell stops with
 * the file and line.
 */
export function parseCostCsv(text: string, opts: { file?: string; groupRows: number; what?: string }): EngineCost {
  const file = opts.file;
  const lines = text.split(/\r?\n/);
  let header: string[] | null = null;
  const points: CostPoint[] = [];
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    const fields = raw.split(',').map((f) => f.trim().replace(/^"(.*)"$/, '$1'));
    if (header === null) {
      header = fields.map((f) => f.toLowerCase());
      if (!header.includes('rows') || !COST_COLUMNS.some((c) => header!.includes(c))) {
        throw new TickwiseError('invalid-cost-csv', msg.csvMissingColumn(header), { file, line: i + 1 });
      }
      continue;
    }
    const at = { file, line: i + 1 };
    if (fields.length !== header.length) throw new TickwiseError('invalid-cost-csv', msg.csvFieldCount(header.length, fields.length), at);
    const rec: Record<string, number> = {};
    for (let c = 0; c < header.length; c++) {
      const cellText = fields[c]!;
      if (cellText === '') continue;
      const v = Number(cellText);
      if (!Number.isFinite(v) || !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(cellText)) {
        throw new TickwiseError('invalid-cost-csv', msg.csvBadCell(header[c]!, cellText), at);
      }
      rec[header[c]!] = v;
    }
    const rows = rec['rows'];
    const perGroup = rec['ms'] ?? rec['group_ms'];
    const total = rec['total_ms'];
    if (rows === undefined || (perGroup === undefined && total === undefined)) {
      throw new TickwiseError('invalid-cost-csv', msg.csvMissingColumn(header), at);
    }
    // total_ms is the whole GEMM at `rows`; p10/p90 then are totals too.
    const scale = perGroup === undefined ? opts.groupRows / rows : 1;
    const pt: CostPoint = {
      rows,
      ms: (perGroup ?? total!) * scale,
      p10_ms: rec['p10_ms'] === undefined ? undefined : rec['p10_ms'] * scale,
      p90_ms: rec['p90_ms'] === undefined ? undefined : rec['p90_ms'] * scale,
    };
    try {
      costCurve([pt], { what: opts.what ?? 'cost CSV' });
    } catch (e) {
      if (e instanceof TickwiseError) throw new TickwiseError(e.code, e.message, { ...at, cause: e });
      throw e;
    }
    points.push(pt);
  }
  if (header === null) throw new TickwiseError('invalid-cost-csv', msg.csvNoHeader(), { file });
  if (points.length === 0) throw new TickwiseError('invalid-cost-csv', msg.curveEmpty(), { file });
  const costCol = header.includes('total_ms') && !header.includes('ms') && !header.includes('group_ms') ? 'total_ms' : 'ms per group';
  const rowsSorted = points.map((p) => p.rows).sort((a, b) => a - b);
  const source: CostSource = {
    from: 'csv',
    line: `${file ?? 'CSV'} (${points.length} point${points.length === 1 ? '' : 's'}, ${rowsSorted[0]}..${rowsSorted[rowsSorted.length - 1]} rows, ${costCol})`,
    details: { file: file ?? null, points: points.length, cost_column: costCol },
  };
  try {
    return costCurve(points, { source, what: opts.what ?? 'cost CSV' });
  } catch (e) {
    if (e instanceof TickwiseError) throw new TickwiseError(e.code, e.message, { file, cause: e });
    throw e;
  }
}
