import { join } from 'node:path';
import { QueryError, type DeviceKind, type Store } from '@tickwise/store';
import { TickwiseError, mapFromFrequency } from '@tickwise/time';
import { checkAssumedTickHz, tickBeyondNsSql, tickNsInRangeSql, type Diagnostic, type ImportOptions, type ImportResult } from './ireeperf-jsonl';
import {
  baseName, cleanDuckdbMessage, deviceKindFromText, insertAssumptions, insertCapture, type AssumptionRow, type DeviceRow, insertDevices, insertDiagnostics, ndjsonErrorLine, sqlString, withTempDir,
} from '../capture-rows';
import { scanJsonRecords, sourceLineOf, type JsonPath } from '../json-records';
import { lineOfNthMatch, matchesByLine, sha256File, type SourceFile } from '../source-file';
import { traceMessages } from '../trace-messages';
import type {} from '../reader-options'; // its ImportOptions fields

/**
 * The hrx runtime's `DeviceProfile` JSON: one device's execution intervals
 * in raw device ticks and the tick rate the runtime declares,
 *
 * ```
 * {"device": "npu0", "kind": "npu", "frequency_hz": 100000000,
 *  "intervals": [{"name": "gemm_256", "start_tick": 123400, "end_tick": 125900, "queue": 0}, ...]}
 * ```
 * or several of them (a JSON array, or `{"devices": [...]}` /
 * `{"profiles": [...]}`). Interval fields: `start_tick`, `end_tick`
 * (required, integers), `name` (or `kernel`/`label`), `queue`, `id`.
 * Profile fields: `frequency_hz`, `device`/`name`, `kind`.
 *
 * Ticks are never read as ns (trap 1): they go through `frequency_hz`
 * exactly like an ireeperf device with only a declared frequency: a relative
 * timeline starting at the first tick (`device_tick_declared`, timeline
 * `relative`), `--tick-hz` when the profile declares none.
 *
 * ```
 * .json[.gz] --scanJsonRecords: intervals to NDJSON (ticks stay integers), profile fields captured
 *   --DuckDB read_json (UBIGINT ticks)--> tw_hrx
 *   per profile: mapFromFrequency(hz, first tick, 0) --exact HUGEINT math--> dispatches (*_ns, *_tick)
 * ```
 */

/** Where profiles sit, as paths to a profile object (the intervals are its `intervals` array). */
const PROFILE_PATHS: readonly JsonPath[] = [[], ['[]'], ['devices', '[]'], ['profiles', '[]']];
const PROFILE_FIELDS = ['frequency_hz', 'device', 'name', 'kind', 'device_kind'] as const;

function unquote(text: string | undefined): string | null {
  if (text === undefined) return null;
  try {
    const v: unknown = JSON.parse(text);
    if (v === null) return null;
    return typeof v === 'string' ? v : typeof v === 'number' ? text.trim() : null;
  } catch {
    return null;
  }
}

/** Imports an hrx DeviceProfile JSON file (plain or gzip). */
export async function importHrxDeviceProfile(store: Store, src: SourceFile, opts: ImportOptions = {}): Promise<ImportResult> {
  checkAssumedTickHz(opts);
  const diags: Diagnostic[] = [];
  const sha = sha256File(src.path);
  sha.catch(() => undefined);
  opts.onProgress?.('scanning');
  return withTempDir('tickwise-hrx-', async (dir) => {
    const out = join(dir, 'intervals.ndjson');
    const scan = await scanJsonRecords(src, {
      mode: 'document',
      records: [{ paths: PROFILE_PATHS.map((p) => [...p, 'intervals', '[]']), out }],
      capture: PROFILE_PATHS.flatMap((p) => PROFILE_FIELDS.map((f) => [...p, f])),
    });
    for (const i of scan.issues) diags.push(i);
    // Profiles by the concrete path prefix of their fields ('' for a single top-level profile).
    const profiles = new Map<string, Record<string, string | null>>();
    for (const [path, text] of scan.captured) {
      const cut = path.lastIndexOf('/');
      const prefix = cut < 0 ? '' : path.slice(0, cut);
      const field = cut < 0 ? path : path.slice(cut + 1);
      const p = profiles.get(prefix) ?? {};
      p[field] = unquote(text);
      profiles.set(prefix, p);
    }
    const records = scan.counts[0]!;
    await refuseStrayIntervals(src, scan.lines[0]!, records);
    if (records === 0 && profiles.size === 0) {
      throw new TickwiseError('wrong-format', 'not an hrx DeviceProfile: no "frequency_hz" and no "intervals"', { file: src.displayPath, line: 1 });
    }
    try {
      await store.run('DROP TABLE IF EXISTS tw_hrx');
      await store.run('DROP TABLE IF EXISTS tw_hrx_text');
      try {
        await store.run(records === 0
          ? `CREATE TEMP TABLE tw_hrx (_line BIGINT, _i UBIGINT[], start_tick UBIGINT, end_tick UBIGINT, name VARCHAR, kernel VARCHAR, label VARCHAR, queue VARCHAR, id VARCHAR)`
          : `CREATE TEMP TABLE tw_hrx_text AS SELECT * FROM read_json(${sqlString(out)}, format = 'newline_delimited',
            columns = {_line: 'BIGINT', _i: 'UBIGINT[]', start_tick: 'JSON', end_tick: 'JSON', name: 'VARCHAR', kernel: 'VARCHAR', label: 'VARCHAR',
              queue: 'VARCHAR', id: 'VARCHAR'})`);
      } catch (e) {
        if (!(e instanceof QueryError)) throw e;
        const ndjsonLine = await ndjsonErrorLine(e.message, out);
        throw new TickwiseError('bad-record', traceMessages.badRecord(cleanDuckdbMessage(e.message)), {
          file: src.displayPath, line: sourceLineOf(scan.lines[0]!, ndjsonLine), cause: e,
        });
      }
      if (records > 0) {
        // ticks are integers 0..2^64-1: anything else present is out of range at its line (never rounded, never "missing")
        for (const f of ['start_tick', 'end_tick'] as const) {
          const bad = await store.rows(`SELECT _line, ${f}::VARCHAR AS v FROM tw_hrx_text
            WHERE ${f} IS NOT NULL AND json_type(${f}) <> 'NULL' AND (json_type(${f}) NOT IN ('UBIGINT', 'BIGINT') OR TRY_CAST(${f}::VARCHAR AS UBIGINT) IS NULL)
            ORDER BY _line LIMIT 1`);
          if (bad[0]) {
            const v = String(bad[0]['v']);
            throw new TickwiseError('bad-value', `${f} ${v} is ${/^-?\d+$/.test(v) ? 'out of range' : 'not an integer'}: a tick is an integer from 0 to 18446744073709551615`,
              { file: src.displayPath, line: Number(bad[0]['_line']) });
          }
        }
        await store.run(`CREATE TEMP TABLE tw_hrx AS SELECT _line, _i, TRY_CAST(start_tick::VARCHAR AS UBIGINT) AS start_tick, TRY_CAST(end_tick::VARCHAR AS UBIGINT) AS end_tick,
          name, kernel, label, queue, id FROM tw_hrx_text`);
      }
      for (const f of ['start_tick', 'end_tick'] as const) {
        const missing = await store.scalar(`SELECT min(_line) FROM tw_hrx WHERE ${f} IS NULL`);
        if (missing !== null) throw new TickwiseError('missing-field', traceMessages.missingField(f, 'this interval'), { file: src.displayPath, line: Number(missing) });
      }
      const captureId = await store.nextCaptureId();
      // The profile an interval belongs to: its array positions without the interval's own (the last).
      await store.run(`ALTER TABLE tw_hrx ADD COLUMN profile VARCHAR`);
      await store.run(`UPDATE tw_hrx SET profile = array_to_string(list_transform(_i[1:len(_i) - 1], x -> x::VARCHAR), '/')`);
      // per profile: its intervals' count and first tick (one query), its captured fields (by key, the first
      // prefix of a key as before); devices numbered in document order
      const stats = new Map((await store.query({ profile: 'string', n: 'number', min_tick: 'bigint?' },
        `SELECT profile, count(*)::INTEGER AS n, min(start_tick) AS min_tick FROM tw_hrx GROUP BY profile`)).map((r) => [r.profile, r]));
      const fields = new Map<string, Record<string, string | null>>();
      for (const [prefix, p] of profiles) if (!fields.has(profileKey(prefix))) fields.set(profileKey(prefix), p);
      const keys = [...new Set([...stats.keys(), ...fields.keys()])].sort(comparePrefix);
      await refuseBadFrequencies(src, profiles);
      await store.run(`CREATE OR REPLACE TEMP TABLE tw_hrx_fit (profile VARCHAR, device INTEGER, time_source VARCHAR, base_tick HUGEINT, base_ns HUGEINT, num HUGEINT)`);
      let sawDeclared = false;
      const deviceRows: DeviceRow[] = [];
      const fitRows: unknown[][] = [];
      const assumptions: AssumptionRow[] = [];
      for (let device = 0; device < keys.length; device++) {
        const key = keys[device]!;
        const p = fields.get(key) ?? {};
        const hz = p['frequency_hz'] !== null && p['frequency_hz'] !== undefined ? Number(p['frequency_hz']) : NaN;
        const name = p['device'] ?? p['name'] ?? null;
        const kindText = p['kind'] ?? p['device_kind'] ?? null;
        let kind: DeviceKind | null = opts.deviceKind ?? deviceKindFromText(kindText) ?? deviceKindFromText(name);
        if (!kind) {
          kind = 'unknown';
          diags.push({ severity: 'info', code: 'unknown-device-kind', message: traceMessages.unknownDeviceKind(device) });
        }
        const n = stats.get(key)?.n ?? 0;
        const minTick = stats.get(key)?.min_tick ?? null;
        let source: 'device_tick_declared' | 'device_tick_assumed' | 'device_tick_none';
        let usedHz: number | null = null;
        if (Number.isFinite(hz) && hz > 0) {
          source = 'device_tick_declared';
          usedHz = hz;
          sawDeclared = true;
          if (n > 0) diags.push({ severity: 'warning', code: 'declared-frequency-only', message: traceMessages.declaredOnly(device, hz) });
        } else if (opts.assumeTickHz !== undefined) {
          source = 'device_tick_assumed';
          usedHz = opts.assumeTickHz;
          assumptions.push({ device, what: 'tick_hz', value: String(opts.assumeTickHz), note: 'given with --tick-hz; ticks placed on a relative timeline starting at 0' });
        } else {
          source = 'device_tick_none';
          if (n > 0) diags.push({ severity: 'error', code: 'no-time-base', message: traceMessages.noFrequency(device) });
        }
        const map = usedHz !== null ? mapFromFrequency(usedHz, minTick ?? 0n, 0n, source === 'device_tick_declared' ? 'declared' : 'assumed') : null;
        deviceRows.push({
          capture_id: captureId, device, kind, name, time_base: source, tick_hz_declared: Number.isFinite(hz) && hz > 0 ? hz : null,
          tick_hz_used: usedHz, fit_method: map?.method ?? null, fit_base_tick: map?.base_tick ?? null, fit_base_ns: map?.base_ns ?? null,
          fit_ns_per_tick_num: map?.ns_per_tick_num ?? null,
        });
        fitRows.push([key, device, source, map?.base_tick ?? null, map?.base_ns ?? null, map?.ns_per_tick_num ?? null]);
      }
      // one append each, not statements per profile (2000 profiles took 19 s)
      await insertAssumptions(store, captureId, assumptions);
      await insertDevices(store, deviceRows);
      await store.appendTemp('tw_hrx_fit', fitRows);
      const tickNs = (col: string) => tickNsInRangeSql(col, 'f');
      const beyond = `(${tickBeyondNsSql('h.start_tick', 'f')} OR ${tickBeyondNsSql('h.end_tick', 'f')})`;
      opts.onProgress?.('loading tables');
      await store.run(`INSERT INTO dispatches
        SELECT ${captureId}, f.device, TRY_CAST(h.queue AS INTEGER), NULL, NULL, NULL, TRY_CAST(h.id AS UBIGINT), NULL, NULL, coalesce(h.name, h.kernel, h.label, 'interval'),
          ${tickNs('h.start_tick')} AS s_ns, ${tickNs('h.end_tick')} AS e_ns, e_ns - s_ns, h.start_tick, h.end_tick, NULL, f.time_source,
          h.end_tick > h.start_tick AND NOT ${beyond}, NULL, NULL, NULL, NULL, h._line
        FROM tw_hrx h JOIN tw_hrx_fit f ON f.profile = h.profile ORDER BY h._line`);
      const bad = (await store.query({ n: 'number', line: 'number?' },
        `SELECT count(*)::INTEGER AS n, min(_line) AS line FROM tw_hrx WHERE end_tick <= start_tick`))[0]!;
      if (bad.n > 0) diags.push({ severity: 'warning', code: 'non-positive-duration', message: traceMessages.nonPositiveDuration('interval(s)', bad.n), line: bad.line ?? undefined });
      const huge = (await store.query({ n: 'number', line: 'number?' },
        `SELECT count(*)::INTEGER AS n, min(h._line) AS line FROM tw_hrx h JOIN tw_hrx_fit f ON f.profile = h.profile WHERE ${beyond}`))[0]!;
      if (huge.n > 0) {
        diags.push({ severity: 'warning', code: 'tick-beyond-ns-range', line: huge.line ?? undefined,
          message: `${huge.n} interval(s) have a tick that maps beyond the int64 ns range: kept with their ticks, *_ns NULL and valid = false` });
      }
      const anyNone = Number(await store.scalar(`SELECT count(*) FROM tw_hrx_fit WHERE time_source = 'device_tick_none'`)) > 0;
      const timeline = anyNone && !sawDeclared && opts.assumeTickHz === undefined ? 'ticks-only' : 'relative';
      await insertCapture(store, {
        capture_id: captureId, path: src.displayPath, format: 'hrx-device-profile', sha256: await sha, size_bytes: src.sizeBytes,
        producer: 'hrx runtime DeviceProfile', label: opts.label ?? baseName(src.displayPath), timeline, record_count: records,
      });
      await insertDiagnostics(store, captureId, src.displayPath, diags);
      const dispatches = await store.count('dispatches', `WHERE capture_id = ${captureId}`);
      return { capture_id: captureId, format: 'hrx-device-profile', records, dispatches, diagnostics: diags.length };
    } finally {
      for (const t of ['tw_hrx', 'tw_hrx_text', 'tw_hrx_fit']) await store.run(`DROP TABLE IF EXISTS ${t}`).catch(() => undefined);
    }
  });
}

/**
 * Every object with a `"start_tick"` must be an interval the scanner took
 * (under a profile's `"intervals"` array): one whose array key is damaged
 * (one 0xFF byte, a typo) would otherwise be dropped with its whole profile
 * and no word. Compared per source line: the first line with more
 * `"start_tick"` keys than records read is refused.
 */
async function refuseStrayIntervals(src: SourceFile, recordLines: Uint32Array, records: number): Promise<void> {
  const seen = await matchesByLine(src, /"start_tick"\s*:/g);
  let total = 0;
  for (const n of seen.values()) total += n;
  if (total <= records) return;
  const taken = new Map<number, number>();
  for (const l of recordLines) taken.set(l, (taken.get(l) ?? 0) + 1);
  const first = [...seen.entries()].sort(([a], [b]) => a - b).find(([l, n]) => n > (taken.get(l) ?? 0));
  throw new TickwiseError('bad-record',
    `${total - records} interval(s) with "start_tick" are not inside a profile's "intervals" array (of ${total}): a damaged or misspelled key? ` +
    'nothing is imported rather than dropping them', { file: src.displayPath, line: first?.[0] });
}

/** The tick rates a declared frequency may have: below or above, the ns per tick leave the exact 128-bit map's range. */
const MIN_TICK_HZ = 1e-3;
const MAX_TICK_HZ = 1e12;

/**
 * A declared `frequency_hz` that is present but not a finite positive number
 * (-1, 0, NaN, 1e400, a string) is refused with its line: ticks through it
 * would be stored with a meaningless time base (or silently none).
 */
async function refuseBadFrequencies(src: SourceFile, profiles: Map<string, Record<string, string | null>>): Promise<void> {
  let nth = 0;
  for (const [prefix, p] of [...profiles.entries()].sort(([a], [b]) => comparePrefix(a, b))) {
    if (!Object.hasOwn(p, 'frequency_hz')) continue;
    nth++;
    const text = p['frequency_hz'];
    if (text === null) continue; // null: not known (as if left out)
    const hz = text === undefined ? NaN : Number(text);
    if (Number.isFinite(hz) && hz >= MIN_TICK_HZ && hz <= MAX_TICK_HZ) continue;
    const line = await lineOfNthMatch(src, /"frequency_hz"\s*:/g, nth);
    throw new TickwiseError('bad-value',
      `frequency_hz ${text ?? '(not a number)'} of ${prefix === '' ? 'the profile' : `profile ${profileKey(prefix) || prefix}`}: a tick rate must be a number of Hz ` +
      `between ${MIN_TICK_HZ} and ${MAX_TICK_HZ} (leave it out and pass --tick-hz when the producer does not know it)`, { file: src.displayPath, line });
  }
}

/** Orders captured path prefixes by their array positions (document order). */
function comparePrefix(a: string, b: string): number {
  const ka = profileKey(a).split('/').map(Number);
  const kb = profileKey(b).split('/').map(Number);
  for (let i = 0; i < Math.max(ka.length, kb.length); i++) {
    const d = (ka[i] ?? -1) - (kb[i] ?? -1);
    if (d !== 0) return d;
  }
  return 0;
}

/**
 * The profile key of a captured field's path prefix: its array positions
 * (`devices/1` -> `1`, `0` -> `0`, `` -> ``), matching the intervals' `_i`
 * without their own index.
 */
function profileKey(prefix: string): string {
  return prefix.split('/').filter((s) => /^\d+$/.test(s)).join('/');
}

/** True when the first bytes look like an hrx DeviceProfile. */
export function sniffHrxDeviceProfile(head: string): boolean {
  if (!/^\s*[[{]/.test(head)) return false;
  const intervals = /"intervals"\s*:/.test(head);
  return (intervals || /"start_tick"\s*:/.test(head)) && (/"frequency_hz"\s*:/.test(head) || (intervals && /"start_tick"\s*:/.test(head) && /"end_tick"\s*:/.test(head)));
}
