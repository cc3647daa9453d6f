/**
 * Chrome trace (Kineto) and rocprofv3 JSON import benchmark (issue 16.3):
 * the JSON record scanner alone, and `importInput` end to end into a
 * file-backed store, against `JSON.parse` of the same file (and Python's
 * `json.load` when python3 exists), each in a fresh child process.
 *
 *   scripts/bench-trace-import [--mb 150] [--reps 3] [--gz] [--only chrome|chrome-be|rocprof] [--no-import] [--no-python]
 *
 * Inputs are built from the real fixtures by repetition (nothing large is
 * committed): the Kineto trace `hta_trace_diff_control.json.gz` (HTA's
 * CUPTI trace: 35 MB, Kineto's own multi-line layout) has its traceEvents
 * repeated with `ts` shifted by the trace's span each time; rocprofv3's
 * `tracelens_908_results.json.gz` (MI300, 43,915 dispatches) has its
 * kernel_dispatch records repeated with their timestamps shifted. Each is
 * cut to about --mb MB and cached under $TMPDIR/tickwise-bench-trace.
 * `chrome-be` is generated (no real trace of that shape is in the
 * fixtures): the B/E layout of chrome://tracing and Perfetto's JSON, nested
 * 1-4 deep on 8 threads, ~2M events per 150 MB, an instant now and then;
 * its check pairs B and E with a stack per thread.
 *
 * Steps: JSON.parse (the baseline), python3's json.load, the TypeScript
 * scanner alone (`TICKWISE_JSONSCAN=0`), the native scanner alone
 * (native/jsonscan, when built), the whole import in-process (`importInput`;
 * the readers use the native scanner when it is built), the whole import as a
 * user runs it (`tickwise import`, the built CLI: a process of its own, start
 * to exit, its scan started by the entry before the CLI loads: the figure of
 * issue 16's goal), and a floor under the import: DuckDB
 * alone writing the rows that import stored (its event tables, held in
 * TEMP tables first and not timed) into a fresh store, as the import writes
 * them (host_events on one connection, the rest on a second, one thread
 * each), with the checkpoint. No import of the file can be faster than that
 * step plus reading the file and starting a process.
 *
 * Prints, per input and step, the median wall time, MB/s of the uncompressed
 * size and its ratio to JSON.parse's in the same run, the best run's MB/s,
 * CPU time (user + sys, child processes included: steadier than wall on a
 * busy machine) with its MB/s and ratio, and the Node process's peak RSS. `--mb 1000 --no-python` shows streaming memory
 * (JSON.parse cannot hold a string that large: its row is left out). Never a
 * timed assertion. After the runs, `check:` says whether the last import's
 * store agrees with the input (see verify): a mismatch exits 1.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { option as opt } from './bench-child';
import { gunzipSync, gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const fixtures = resolve(root, '../shared/fixtures/external');
const args = process.argv.slice(2);
const mb = Number(opt('mb', '150'));
const reps = Number(opt('reps', '3'));
const gz = args.includes('--gz');
const only = opt('only', '');
const work = join(tmpdir(), 'tickwise-bench-trace');
mkdirSync(work, { recursive: true });

/** End (index of the closing bracket) of the array whose `[` is at `open`. */
function arrayEnd(text: string, open: number): number {
  let depth = 0;
  let inStr = false;
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inStr) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inStr = false;
    } else if (c === 0x22) inStr = true;
    else if (c === 0x5b || c === 0x7b) depth++;
    else if (c === 0x5d || c === 0x7d) {
      if (--depth === 0) return i;
    }
  }
  throw new Error('unterminated array');
}

/**
 * Repeats the body of the array after `key` in `text` until the file is
 * about `bytes` long, shifting the integer part of every `fields` number by
 * the body's span each time; writes it to `out`.
 */
async function repeatArray(text: string, key: string, fields: string[], bytes: number, out: string): Promise<void> {
  const at = text.indexOf(`"${key}"`);
  const open = text.indexOf('[', at);
  const close = arrayEnd(text, open);
  const head = text.slice(0, open + 1);
  const body = text.slice(open + 1, close).replace(/^\s+|\s+$/g, '');
  const tail = text.slice(close);
  const re = new RegExp(`("(?:${fields.join('|')})":\\s*)(\\d+)`, 'g');
  let lo = Infinity, hi = -Infinity;
  for (const m of body.matchAll(re)) {
    const v = Number(m[2]);
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  const span = hi - lo + 1;
  const w = createWriteStream(out);
  w.write(head + '\n');
  let written = head.length + tail.length;
  for (let rep = 0; written < bytes; rep++) {
    const part = (rep > 0 ? ',\n' : '') + (rep === 0 ? body : body.replace(re, (_m, k: string, v: string) => k + String(Number(v) + rep * span)));
    written += part.length;
    if (!w.write(part)) await once(w, 'drain');
  }
  w.write('\n' + tail);
  w.end();
  await once(w, 'finish');
}

interface Input {
  name: string;
  file: string;
  bytes: number;
}

type Kind = 'chrome' | 'chrome-be' | 'rocprof';
/** The reader a kind goes to. */
const formatOf = (kind: Kind): 'chrome' | 'rocprof' => (kind === 'rocprof' ? 'rocprof' : 'chrome');

/** B/E events (Chrome's own layout): nested 1-4 deep, 8 threads, fractional us, an instant every 50th nest. */
async function writeBeginEnd(bytes: number, out: string): Promise<void> {
  const w = createWriteStream(out);
  let written = 0;
  const put = async (t: string) => {
    written += t.length;
    if (!w.write(t)) await once(w, 'drain');
  };
  await put('{"traceEvents":[\n{"ph":"M","name":"process_name","pid":1,"args":{"name":"renderer"}}');
  const ts = new Array<number>(8).fill(0); // in ns, written as us with 3 decimals
  for (let n = 0; written < bytes; n++) {
    const tid = n % 8;
    const depth = 1 + (n % 4);
    for (let d = 0; d < depth; d++) {
      ts[tid]! += 1500;
      await put(`,\n{"ph":"B","name":"fn_${d}_${n % 97}","cat":"v8,devtools","pid":1,"tid":${tid},"ts":${ts[tid]! / 1000},"args":{"depth":${d},"id":${n}}}`);
    }
    for (let d = 0; d < depth; d++) {
      ts[tid]! += 2250;
      await put(`,\n{"ph":"E","pid":1,"tid":${tid},"ts":${ts[tid]! / 1000}}`);
    }
    if (n % 50 === 0) await put(`,\n{"ph":"i","name":"mark","s":"t","pid":1,"tid":${tid},"ts":${ts[tid]! / 1000}}`);
  }
  w.write('\n]}\n');
  w.end();
  await once(w, 'finish');
}

async function prepare(kind: Kind): Promise<Input> {
  const plain = join(work, `${kind === 'chrome' ? 'kineto' : kind === 'chrome-be' ? 'begin-end' : 'rocprofv3'}-${mb}mb.json`);
  if (kind === 'chrome-be' && !existsSync(plain)) await writeBeginEnd(mb * 1e6, plain);
  if (!existsSync(plain)) {
    console.error(`generating ~${mb} MB -> ${plain}`);
    const src = kind === 'chrome' ? join(fixtures, 'chrome-trace/hta_trace_diff_control.json.gz') : join(fixtures, 'rocprofv3-json/tracelens_908_results.json.gz');
    const text = gunzipSync(readFileSync(src)).toString('utf8');
    if (kind === 'chrome') await repeatArray(text, 'traceEvents', ['ts'], mb * 1e6, plain);
    else await repeatArray(text, 'kernel_dispatch', ['start_timestamp', 'end_timestamp'], mb * 1e6, plain);
  }
  const file = gz ? `${plain}.gz` : plain;
  if (gz && !existsSync(file)) writeFileSync(file, gzipSync(readFileSync(plain), { level: 6 }));
  return { name: kind === 'chrome' ? 'Chrome trace (Kineto)' : kind === 'chrome-be' ? 'Chrome trace (B/E, generated)' : 'rocprofv3 JSON', file, bytes: statSync(plain).size };
}

interface Run {
  s: number;
  cpu_s: number;
  rss_mb: number;
  records: number;
}

const loader = join(root, 'node_modules/tsx/dist/loader.mjs');
const sqlQuote = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** One measured step in a fresh process; its last stdout line is a {@link Run} as JSON. */
function child(step: 'parse' | 'python' | 'scan' | 'nscan' | 'import' | 'cli' | 'write', kind: 'chrome' | 'rocprof', file: string): Run | null {
  if (step === 'cli') return cliRun(file);
  if (step === 'python') {
    const code = `
import gzip, json, resource, sys, time
t0 = time.perf_counter(); c0 = time.process_time()
f = gzip.open(sys.argv[1], 'rb') if sys.argv[1].endswith('.gz') else open(sys.argv[1], 'rb')
d = json.load(f)
print(json.dumps({'s': time.perf_counter() - t0, 'cpu_s': time.process_time() - c0, 'rss_mb': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 'records': 0}))`;
    const r = spawnSync('python3', ['-c', code, file], { encoding: 'utf8' });
    return r.status === 0 ? (JSON.parse(r.stdout.trim().split('\n').pop()!) as Run) : null;
  }
  const imported = join(work, 'bench.duckdb');
  const db = step === 'write' ? join(work, 'bench-write.duckdb') : imported;
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  if (step === 'write' && !existsSync(imported)) return null;
  // the scan steps' NDJSON, removed before each step: left behind, ~400 MB of it was still being written back to
  // disk while the next step (the import) ran, which took ~0.4 s longer than alone (2.4 against 1.9-2.0 s)
  const out = join(work, 'scan');
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const code = `
    import { readFileSync } from 'node:fs';
    import { gunzipSync } from 'node:zlib';
    import { openSource, scanJsonRecords, scaleDecimal, importInput } from '@tickwise/capture';
    import { withAtomicStore } from '@tickwise/store';
    const file = ${JSON.stringify(file)}, kind = ${JSON.stringify(kind)}, step = ${JSON.stringify(step)}, out = ${JSON.stringify(out)};
    // the allocator setting tickwise import makes for a large Chrome trace, before DuckDB loads (as the CLI does)
    if (step === 'import') await (await import('@tickwise/capture')).freeMemoryPromptlyFor([file], new Map());
    // DuckDB's native library loads when the first store opens: module loading, not counted
    await (await import('@tickwise/store')).loadDuckdb();
    const tables = ['host_events', 'dispatches', 'raw_records', 'metric_samples'];
    let w;
    if (step === 'write') {
      // the imported rows held in TEMP tables of a fresh store (not timed), its tables empty
      const { Store } = await import('@tickwise/store');
      w = await Store.open(${JSON.stringify(db)});
      await w.run(\`ATTACH ${sqlQuote(imported)} AS imp (READ_ONLY)\`);
      // TEMP tables are a connection's own: the second connection's rows are in an attached in-memory database
      await w.run("ATTACH ':memory:' AS wm");
      await w.run('CREATE TEMP TABLE w_host_events AS SELECT * FROM imp.host_events');
      for (const t of tables.slice(1)) await w.run(\`CREATE TABLE wm.\${t} AS SELECT * FROM imp.\${t}\`);
      await w.run('DETACH imp');
      await w.run('CHECKPOINT');
    }
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let records = 0;
    if (step === 'write') {
      const second = await w.sibling();
      await w.run('SET threads = 1');
      await Promise.all([
        w.run('INSERT INTO host_events SELECT * FROM w_host_events'),
        (async () => { for (const t of tables.slice(1)) await second.run(\`INSERT INTO \${t} SELECT * FROM wm.\${t}\`); })(),
      ]);
      await second.close();
      await w.run('CHECKPOINT');
      records = Number(await w.scalar('SELECT count(*) FROM host_events'));
      await w.close();
    } else if (step === 'parse') {
      const bytes = readFileSync(file);
      const v = JSON.parse((file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8'));
      records = kind === 'chrome' ? v.traceEvents.length : v['rocprofiler-sdk-tool'][0].buffer_records.kernel_dispatch.length;
    } else if (step === 'scan' || step === 'nscan') {
      // the readers' own specs (chrome-trace.ts, rocprofv3.ts)
      const tool = 'rocprofiler-sdk-tool';
      const K = (k) => [tool, '[]', 'buffer_records', k, '[]'];
      const records_ = kind === 'chrome'
        ? [{ paths: [['[]'], ['traceEvents', '[]']], out: out + '/ev.ndjson', exactKeys: ['ts', 'dur', 'tts', 'tdur'], convert: (_k, t) => scaleDecimal(t, 1000000000n), nativeConvert: { kind: 'scale', pow10: 9 } }]
        : [K('kernel_dispatch'), [tool, '[]', 'agents', '[]'], [tool, '[]', 'kernel_symbols', '[]'], ...['hip_api', 'hsa_api', 'marker_api', 'rccl_api', 'memory_copy'].map(K)]
            .map((p, i) => ({ paths: [p], out: out + '/' + i + '.ndjson' }));
      const capture = kind === 'chrome' ? ['displayTimeUnit', 'baseTimeNanoseconds', 'traceName', 'schemaVersion', 'otherData', 'deviceProperties', 'distributedInfo', 'metadata'].map((k) => [k])
        : [[tool, '[]', 'metadata'], [tool, '[]', 'strings', 'buffer_records']];
      const r = await scanJsonRecords(await openSource(file), { mode: 'document', records: records_, capture });
      records = r.counts[0];
    } else {
      const r = await withAtomicStore(${JSON.stringify(db)}, (s) => importInput(s, file));
      records = r.records;
    }
    const c = process.cpuUsage(c0);
    // the native scanner's CPU too: its child processes' user + system ticks (fields 16 and 17 of /proc/self/stat, waited-for children)
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const children_s = (Number(f[13]) + Number(f[14])) / 100;
    console.log(JSON.stringify({ s: (performance.now() - t0) / 1000, cpu_s: (c.user + c.system) / 1e6 + children_s, rss_mb: process.resourceUsage().maxRSS / 1024, records }));
  `;
  const env = step === 'scan' ? { ...process.env, TICKWISE_JSONSCAN: '0' } : process.env; // the TypeScript scanner alone
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', loader, '--input-type=module', '-e', code], { cwd: join(root, 'packages/cli'), encoding: 'utf8', maxBuffer: 1 << 26, env });
  if (r.status !== 0) {
    console.error(r.stderr.split('\n').filter((l) => l.trim()).slice(-3).join('\n'));
    if (step === 'parse') return null; // beyond V8's largest string (~512 MB): no baseline
    process.exit(1);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Run;
}

/**
 * `tickwise import <file> --db <store>` as a user runs it: the built CLI
 * (scripts/build-cli.mjs; built above when stale), a process of its own, from
 * its start to its exit, with its early scan (which the in-process import
 * step has not: it starts the scan when the reader asks). Wall time around
 * the process; CPU from this process's waited-for children's ticks; peak RSS
 * from /usr/bin/time when it exists (else not shown).
 */
function cliRun(file: string): Run | null {
  const db = join(work, 'bench.duckdb');
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  const childTicks = () => {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[13]) + Number(f[14]);
  };
  const argv = [process.execPath, cliEntry, 'import', file, '--db', db];
  const timed = existsSync('/usr/bin/time');
  const ticks0 = childTicks();
  const t0 = performance.now();
  const r = timed ? spawnSync('/usr/bin/time', ['-f', 'TW_TIME %M', ...argv], { encoding: 'utf8' }) : spawnSync(argv[0]!, argv.slice(1), { encoding: 'utf8' });
  const s = (performance.now() - t0) / 1000;
  if (r.status !== 0) {
    console.error(r.stderr.split('\n').filter((l) => l.trim()).slice(-3).join('\n'));
    process.exit(1);
  }
  const kib = Number(/TW_TIME (\d+)/.exec(r.stderr)?.[1]);
  return { s, cpu_s: (childTicks() - ticks0) / 100, rss_mb: timed ? kib / 1024 : NaN, records: Number(/: (\d+) records/.exec(r.stdout)?.[1] ?? 0) };
}

/**
 * Checks the store the last import wrote against the input itself, so that
 * a bench run also says whether the large file was read right (a wrong
 * pairing of raw events with their texts once showed only beyond ~100 MB):
 * per kernel, the count and summed duration equal a JSON.parse of the file
 * (when V8 can hold it as one string), and every raw record's JSON is an
 * event of its own phase with no staging field. Prints one line; a
 * mismatch exits 1.
 */
function verify(kind: Kind, file: string): void {
  const db = join(work, 'bench.duckdb');
  const code = `
    import { readFileSync } from 'node:fs';
    import { gunzipSync } from 'node:zlib';
    import { Store } from '@tickwise/store';
    const file = ${JSON.stringify(file)}, kind = ${JSON.stringify(kind)};
    const s = await Store.open(${JSON.stringify(db)}, { readOnly: true });
    const got = new Map((await s.rows('SELECT kernel, count(*) AS n, sum(dur_ns) AS d FROM dispatches GROUP BY kernel')).map((r) => [r.kernel, r.n + ' ' + r.d]));
    const slices = (await s.rows("SELECT count(*) AS n, sum(dur_ns) AS d, count(*) FILTER (WHERE NOT valid) AS bad FROM host_events WHERE kind = 'slice'"))[0];
    // a stored text need not be valid JSON (the appender does not check it): tested first
    const raw = await s.rows(\`SELECT count(*) AS n, count(*) FILTER (WHERE NOT json_valid(json::VARCHAR) OR json::VARCHAR LIKE '%"_line"%' OR json::VARCHAR LIKE '%"_ts"%'
      OR CASE WHEN json_valid(json::VARCHAR) THEN json_extract_string(json::VARCHAR, '$.ph') END IS DISTINCT FROM substr(record_type, 8)) AS bad FROM raw_records\`);
    await s.close();
    const out = [];
    let bad = 0;
    let text;
    try {
      const bytes = readFileSync(file);
      text = (file.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
    } catch { text = undefined; }
    if (text !== undefined && text.length > 0) {
      const v = JSON.parse(text);
      const want = new Map();
      const add = (name, d) => { const w = want.get(name) ?? { n: 0n, d: 0n }; w.n++; w.d += d; want.set(name, w); };
      if (kind === 'chrome-be') {
        // B/E: a stack per thread (the generated events are in time order); the store's slices, their count and summed durations
        const open = new Map();
        let n = 0n, d = 0n;
        for (const e of v.traceEvents) {
          if (e.ph !== 'B' && e.ph !== 'E') continue;
          const st = open.get(e.tid) ?? [];
          open.set(e.tid, st);
          if (e.ph === 'B') st.push(BigInt(Math.round(e.ts * 1000)));
          else { n++; d += BigInt(Math.round(e.ts * 1000)) - st.pop(); }
        }
        if (slices.n !== n || slices.d !== d || slices.bad !== 0n) bad++;
        out.push((bad ? 'MISMATCH: ' + slices.n + ' slices, ' + slices.d + ' ns' : 'B/E slices equal a stack per thread') + ' (' + n + ' pairs, ' + d + ' ns)');
      } else if (kind === 'chrome') {
        // Kineto writes whole-microsecond ts: a kernel's duration is its dur in ns
        for (const e of v.traceEvents) if (e.ph === 'X' && e.cat === 'kernel' && Number.isInteger(e.ts)) add(e.name, BigInt(Math.round(e.dur * 1000)));
      } else {
        for (const tool of v['rocprofiler-sdk-tool']) {
          const names = new Map((tool.kernel_symbols ?? []).map((k) => [k.kernel_id, k.formatted_kernel_name ?? k.kernel_name]));
          for (const k of tool.buffer_records?.kernel_dispatch ?? []) add(names.get(k.dispatch_info.kernel_id) ?? 'kernel_' + k.dispatch_info.kernel_id, BigInt(k.end_timestamp) - BigInt(k.start_timestamp));
        }
      }
      let n = 0n;
      for (const [k, w] of want) { n += w.n; if (got.get(k) !== w.n + ' ' + w.d) bad++; }
      if (got.size !== want.size) bad++;
      if (kind !== 'chrome-be') out.push((bad ? 'MISMATCH in ' + bad + ' kernel(s)' : "kernel counts and summed durations equal JSON.parse's") + ' (' + want.size + ' kernels, ' + n + ' dispatches)');
    } else {
      out.push('kernel totals not checked (the file is beyond one V8 string)');
    }
    const r = raw[0];
    if (r.bad > 0n) bad++;
    out.push(r.bad > 0n ? r.bad + ' of ' + r.n + ' raw records NOT their own event' : 'raw records are their own events (' + r.n + ')');
    console.log(out.join('; '));
    process.exit(bad ? 1 : 0);
  `;
  const r = spawnSync(process.execPath, ['--max-old-space-size=6000', '--conditions=source', '--import', loader, '--input-type=module', '-e', code], { cwd: join(root, 'packages/cli'), encoding: 'utf8', maxBuffer: 1 << 26 });
  console.log(`check: ${r.status === 0 || r.stdout.trim() ? r.stdout.trim().split('\n').pop() : r.stderr.trim().split('\n').slice(-8).join('\n')}`);
  if (r.status !== 0) process.exitCode = 1;
}

const python = !args.includes('--no-python') && spawnSync('python3', ['--version']).status === 0;
const steps = [
  ['parse', 'JSON.parse (baseline)'],
  ...(python ? [['python', 'python3 json.load']] : []),
  ['scan', 'TS scanner -> NDJSON (exact ts/dur)'],
  ['nscan', 'native scanner -> NDJSON'],
  ...(args.includes('--no-import') ? [] : [['import', 'importInput (in-process)'], ['cli', 'tickwise import (whole CLI process)'], ['write', 'floor: DuckDB writes its rows']]),
] as const;
const cliEntry = join(root, 'packages/cli/dist/tickwise.mjs');
if (!args.includes('--no-import')) spawnSync(process.execPath, [join(root, 'scripts/build-cli.mjs'), '--if-stale'], { stdio: 'inherit' });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kinds = (['chrome', 'chrome-be', 'rocprof'] as const).filter((k) => !only || k === only);
const rows: string[] = [];
for (const kind of kinds) {
  const input = await prepare(kind);
  const runs = new Map<string, Run[]>();
  for (let i = 0; i < reps; i++) {
    for (const [step] of steps) {
      const r = child(step, formatOf(kind), input.file);
      if (r) runs.set(step, [...(runs.get(step) ?? []), r]);
    }
    console.error(`${input.name} rep ${i + 1}: ${steps.map(([s]) => `${s} ${runs.get(s)?.at(-1)?.s.toFixed(2) ?? '-'} s`).join(', ')}`);
  }
  const mbOf = input.bytes / 1e6;
  const parsed = runs.get('parse');
  const base = parsed ? median(parsed.map((r) => r.s)) : NaN;
  const baseCpu = parsed ? median(parsed.map((r) => r.cpu_s)) : NaN;
  const records = parsed?.[0]?.records ?? runs.get('scan')?.[0]?.records;
  console.log(`\n${input.name}: ${input.file} (${mbOf.toFixed(0)} MB uncompressed${gz ? ', read as gzip' : ''}, ${records} records), median of ${reps}`);
  console.log(`${'step'.padEnd(34)} ${'wall s'.padStart(7)} ${'MB/s'.padStart(6)} ${'x JSON.parse'.padStart(12)} ${'best MB/s'.padStart(9)} ${'CPU s'.padStart(7)} ${'MB/CPU s'.padStart(8)} ${'x'.padStart(5)} ${'peak RSS MB'.padStart(11)}`);
  for (const [step, label] of steps) {
    const rs = runs.get(step);
    if (!rs) continue;
    const s = median(rs.map((r) => r.s));
    const cpu = median(rs.map((r) => r.cpu_s));
    const rss = Math.max(...rs.map((r) => r.rss_mb));
    const best = Math.min(...rs.map((r) => r.s));
    const line = `${label.padEnd(34)} ${s.toFixed(2).padStart(7)} ${(mbOf / s).toFixed(0).padStart(6)} ${(base / s).toFixed(2).padStart(12)} ${(mbOf / best).toFixed(0).padStart(9)} ${cpu.toFixed(2).padStart(7)} ${(mbOf / cpu).toFixed(0).padStart(8)} ${(baseCpu / cpu).toFixed(2).padStart(5)} ${rss.toFixed(0).padStart(11)}`;
    console.log(line);
    rows.push(`| ${input.name} | ${label} | ${s.toFixed(2)} | ${(mbOf / s).toFixed(0)} | ${(base / s).toFixed(2)} | ${(mbOf / best).toFixed(0)} | ${cpu.toFixed(2)} | ${(mbOf / cpu).toFixed(0)} | ${(baseCpu / cpu).toFixed(2)} | ${rss.toFixed(0)} |`);
  }
  if (!args.includes('--no-import')) verify(kind, input.file);
}
console.log('\nmarkdown:\n| input | step | wall s | MB/s | x JSON.parse | best MB/s | CPU s | MB/CPU s | x JSON.parse CPU | peak RSS MB |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n' + rows.join('\n'));
