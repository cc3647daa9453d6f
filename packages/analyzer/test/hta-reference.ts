/**
 * An independent implementation of HTA's idle-time breakdown
 * (HolisticTraceAnalysis, hta/analyzers/breakdown_analysis.py,
 * `_analyze_idle_time_for_stream` / `get_idle_time_breakdown`, read at commit
 * 0c2146a8; written from its published algorithm, not copied), for tests.
 * It reads the Chrome-trace JSON text itself (never tickwise's store), with
 * exact decimals: `ts`/`dur` are turned into integer ns from their decimal
 * text (HTA with `HTA_DISABLE_NS_ROUNDING=1`), every event kept (the last
 * profiler step included).
 *
 * HTA's algorithm, per rank and per stream:
 * - GPU events: every event with a stream (`args.stream`); here the device
 *   work categories `kernel`, `gpu_memcpy`, `gpu_memset` (HTA's parser also
 *   gives a stream to `cuda_sync` markers; the traces tested here have none
 *   on the compared streams, or the test says so).
 * - each is joined to the CPU event of its correlation id (`args.correlation`)
 *   for `ts_runtime`; HTA correlates runtime events (`cuda_runtime`), so a
 *   kernel launched by a driver call (`cuLaunchKernelEx`) has none unless
 *   `driverLaunches` is set.
 * - sorted by ts; `idle_interval = ts - previous end`; host wait when
 *   `ts_runtime > previous end`; kernel wait when not host wait and
 *   `idle_interval < consecutive_kernel_delay` (30 ns by default); other
 *   otherwise. Each class sums its intervals (negative ones too).
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

/** Exact ns from a decimal number of microseconds. */
function usTextToNs(t: string): bigint {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(t.trim());
  if (!m) throw new Error(`not a number: ${t}`);
  let digits = m[2]! + (m[3] ?? '');
  let exp = -(m[3]?.length ?? 0) + Number(m[4] ?? 0) + 3; // us -> ns
  if (exp >= 0) digits += '0'.repeat(exp);
  else {
    const keep = digits.length + exp;
    const frac = keep > 0 ? digits.slice(keep) : digits.padStart(-exp, '0');
    digits = keep > 0 ? digits.slice(0, keep) : '0';
    if (/[1-9]/.test(frac) && Number('0.' + frac) >= 0.5) digits = (BigInt(digits) + 1n).toString();
    exp = 0;
  }
  return (m[1] ? -1n : 1n) * BigInt(digits);
}

interface Ev { cat?: string; ph?: string; name?: string; pid?: unknown; ts?: string; dur?: string; args?: Record<string, unknown> }

/** Events of a (gzipped) Chrome trace, `ts`/`dur` kept as decimal text. */
export function readTraceEvents(path: string): Ev[] {
  const raw = readFileSync(path);
  const text = (path.endsWith('.gz') ? gunzipSync(raw) : raw).toString('utf8');
  const quoted = text.replace(/"(ts|dur)"\s*:\s*(-?[0-9][0-9.eE+-]*)/g, '"$1":"$2"');
  const j = JSON.parse(quoted) as { traceEvents?: Ev[] } | Ev[];
  return Array.isArray(j) ? j : (j.traceEvents ?? []);
}

/** HTA's idle classes of one stream. */
export interface HtaStreamIdle { host_wait_ns: bigint; kernel_wait_ns: bigint; other_ns: bigint }

/** HTA's idle-time breakdown per stream of a trace (one rank). */
export function htaIdleBreakdown(events: readonly Ev[], opts: { consecutiveKernelDelayNs?: bigint; driverLaunches?: boolean } = {}): Map<number, HtaStreamIdle> {
  const delay = opts.consecutiveKernelDelayNs ?? 30n;
  const runtimeCats = new Set(['cuda_runtime', ...(opts.driverLaunches ? ['cuda_driver'] : [])]);
  const runtime = new Map<string, bigint>();
  for (const e of events) {
    if (e.ph === 'X' && runtimeCats.has(e.cat ?? '') && e.args && e.args['correlation'] !== undefined && e.ts !== undefined) {
      runtime.set(String(e.args['correlation']), usTextToNs(e.ts));
    }
  }
  const byStream = new Map<number, { ts: bigint; end: bigint; rt: bigint | undefined }[]>();
  for (const e of events) {
    if (e.ph !== 'X' || !['kernel', 'gpu_memcpy', 'gpu_memset'].includes(e.cat ?? '') || !e.args || e.args['stream'] === undefined) continue;
    const ts = usTextToNs(e.ts!);
    const end = ts + usTextToNs(e.dur ?? '0');
    const s = Number(e.args['stream']);
    const list = byStream.get(s) ?? [];
    list.push({ ts, end, rt: e.args['correlation'] === undefined ? undefined : runtime.get(String(e.args['correlation'])) });
    byStream.set(s, list);
  }
  const out = new Map<number, HtaStreamIdle>();
  for (const [s, list] of byStream) {
    list.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.end < b.end ? -1 : a.end > b.end ? 1 : 0));
    const r: HtaStreamIdle = { host_wait_ns: 0n, kernel_wait_ns: 0n, other_ns: 0n };
    for (let i = 1; i < list.length; i++) {
      const prevEnd = list[i - 1]!.end;
      const idle = list[i]!.ts - prevEnd;
      const host = list[i]!.rt !== undefined && list[i]!.rt! > prevEnd;
      if (host) r.host_wait_ns += idle;
      else if (idle < delay) r.kernel_wait_ns += idle;
      else r.other_ns += idle;
    }
    out.set(s, r);
  }
  return out;
}
