/**
 * Chrome trace (Kineto-shaped) import benchmark: the streaming JSON record
 * scanner with exact ts/dur conversion, then DuckDB, end to end.
 *
 *   scripts/bench-trace-import [--mb 300] [--reps 3] [--gz]
 *
 * Writes a seeded trace of about --mb MB (one kernel event per two CPU op
 * events, microsecond floats with 4 decimals, pretty enough to span lines
 * like Kineto's), then times, in fresh child processes, the scanner alone
 * (to NDJSON) and `importInput` into a file-backed store. Prints median wall
 * time, MB/s, events/s and peak RSS. Never a timed assertion.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, statSync, writeFileSync, readFileSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';

const root = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : dflt;
};
const mb = Number(opt('mb', '300'));
const reps = Number(opt('reps', '3'));
const gz = args.includes('--gz');
const work = join(tmpdir(), 'tickwise-bench-trace');
mkdirSync(work, { recursive: true });
const plain = join(work, `kineto-${mb}mb.json`);
const file = gz ? `${plain}.gz` : plain;

if (!existsSync(plain)) {
  console.error(`generating ~${mb} MB -> ${plain}`);
  const out = createWriteStream(plain);
  out.write('{"schemaVersion": 1, "displayTimeUnit": "ms", "baseTimeNanoseconds": 1700000000000000000, "traceEvents": [\n');
  let written = 0;
  let ts = 1000;
  let seed = 42;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  for (let i = 0; written < mb * 1e6; i++) {
    ts += 0.5 + rnd() * 2;
    const e = i % 3 === 0
      ? `{\n  "ph": "X", "cat": "kernel", "name": "gemm_${i % 7}", "pid": 0, "tid": 7,\n  "ts": ${ts.toFixed(4)}, "dur": ${(rnd() * 900).toFixed(4)},\n  "args": {"device": 0, "stream": 7, "correlation": ${i}, "grid": [64, 32, 1], "block": [256, 1, 1]}\n}`
      : `{\n  "ph": "X", "cat": "cpu_op", "name": "aten::op_${i % 13}", "pid": 4242, "tid": 4242,\n  "ts": ${ts.toFixed(4)}, "dur": ${(rnd() * 5).toFixed(4)},\n  "args": {"External id": ${i}}\n}`;
    const chunk = (i ? ',\n' : '') + e;
    written += chunk.length;
    if (!out.write(chunk)) await once(out, 'drain');
  }
  out.write('\n]}\n');
  out.end();
  await once(out, 'finish');
}
if (gz && !existsSync(file)) writeFileSync(file, gzipSync(readFileSync(plain)));
const bytes = statSync(plain).size;

const loader = join(root, 'node_modules/tsx/dist/loader.mjs');
function child(kind: 'scan' | 'import'): { s: number; events: number; rss_mb: number } {
  const db = join(work, 'bench.duckdb');
  for (const p of [db, `${db}.wal`]) if (existsSync(p)) rmSync(p);
  const code = `
    import { openSource, scanJsonRecords, importInput } from '@tickwise/capture';
    import { withAtomicStore } from '@tickwise/store';
    import { decimalToNs } from '@tickwise/time';
    const t0 = performance.now();
    let events = 0;
    if (${JSON.stringify(kind)} === 'scan') {
      const src = await openSource(${JSON.stringify(file)});
      const r = await scanJsonRecords(src, { mode: 'document', records: [{ paths: [['traceEvents', '[]']], out: ${JSON.stringify(join(work, 'scan.ndjson'))},
        exactKeys: ['ts', 'dur'], convert: (_k, t) => decimalToNs(t, 1000n)?.toString() ?? null }] });
      events = r.counts[0];
    } else {
      const r = await withAtomicStore(${JSON.stringify(db)}, (s) => importInput(s, ${JSON.stringify(file)}));
      events = r.records;
    }
    console.log(JSON.stringify({ s: (performance.now() - t0) / 1000, events, rss_mb: process.resourceUsage().maxRSS / 1024 }));
  `;
  const r = spawnSync(process.execPath, ['--conditions=source', '--import', loader, '--input-type=module', '-e', code], { cwd: join(root, 'packages/cli'), encoding: 'utf8' });
  if (r.status !== 0) {
    console.error(r.stderr);
    process.exit(1);
  }
  return JSON.parse(r.stdout.trim().split('\n').pop()!);
}

const runs = { scan: [] as ReturnType<typeof child>[], import: [] as ReturnType<typeof child>[] };
for (let i = 0; i < reps; i++) {
  runs.scan.push(child('scan'));
  runs.import.push(child('import'));
  console.error(`rep ${i + 1}: scan ${runs.scan.at(-1)!.s.toFixed(2)} s, import ${runs.import.at(-1)!.s.toFixed(2)} s`);
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(`file: ${file} (${(bytes / 1e6).toFixed(0)} MB uncompressed, ${runs.scan[0]!.events} events), ${reps} reps, median`);
for (const [name, rs] of [['scanner -> NDJSON (exact ts/dur)', runs.scan], ['importInput (end to end)', runs.import]] as const) {
  const s = median(rs.map((r) => r.s));
  console.log(`${name.padEnd(36)} ${s.toFixed(2).padStart(7)} s ${(bytes / 1e6 / s).toFixed(0).padStart(5)} MB/s ${(rs[0]!.events / s / 1e6).toFixed(2).padStart(5)} Mevents/s  peak RSS ${Math.max(...rs.map((r) => r.rss_mb)).toFixed(0)} MB`);
}
