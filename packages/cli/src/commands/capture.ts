import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CommandModule } from 'yargs';
import { importInput, runWithConditions } from '@tickwise/capture';
import { withAtomicStore } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';
import { installViews } from '@tickwise/analyzer';
import { log, out } from '../output';

/** Backends the recorder knows; each is switched on by name. */
const BACKENDS = ['hip', 'amdxdna', 'cuda'] as const;

interface Args {
  backend: string;
  out: string;
  marker?: string[];
  db?: string;
  recorder?: string;
  'preload-after'?: string[];
  'ring-records'?: number;
  command: string[];
}

/** The checkout this CLI runs from (source or built): the folder that holds native/. */
function checkoutRoot(): string {
  for (let dir = import.meta.dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'native', 'CMakeLists.txt'))) return dir;
    if (dirname(dir) === dir) return resolve(import.meta.dirname, '../../../..');
  }
}
const ROOT = checkoutRoot();

/**
 * The recorder library: `--recorder`, $TICKWISE_RECORDER_LIB, or this
 * checkout's native build (built on first use with cmake).
 */
function recorderLibrary(given: string | undefined): string {
  const explicit = given ?? process.env['TICKWISE_RECORDER_LIB'];
  if (explicit) {
    if (!existsSync(explicit)) throw new TickwiseError('usage', `--recorder ${explicit}: no such file`);
    return resolve(explicit);
  }
  const lib = join(ROOT, 'native/build/lib/libtickwise_recorder.so');
  if (existsSync(lib)) return lib;
  log('capture: building the native recorder (cmake, once) ...');
  const build = join(ROOT, 'native/build');
  const cfg = spawnSync('cmake', ['-S', join(ROOT, 'native'), '-B', build, '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], { encoding: 'utf8' });
  const b = cfg.status === 0 ? spawnSync('cmake', ['--build', build, '-j', '2', '--target', 'tickwise_recorder'], { encoding: 'utf8' }) : cfg;
  if (b.status !== 0 || !existsSync(lib)) {
    throw new TickwiseError('no-recorder', `cannot build the recorder in ${build} (needs cmake and g++): ${(b.stderr || b.stdout || '').split('\n').slice(-3).join(' ')}`);
  }
  return lib;
}


/**
 * `tickwise capture --backend hip,amdxdna --out run/ -- ./app args`: runs a
 * program with the recorder preloaded and writes a capture directory.
 *
 * ```
 * env: LD_PRELOAD=recorder[:preload-after...], TICKWISE_CAPTURE_DIR=run/,
 *      TICKWISE_BACKENDS=..., TICKWISE_MARKERS=..., CUDA_INJECTION64_PATH (cuda)
 * app --(records, clock samples, provenance)--> run/records.twr + meta.json
 * host conditions sampled while it runs -----> run/conditions.json
 * --db run.duckdb: imported (atomic) with those conditions attached
 * ```
 */
export const captureCommand: CommandModule<object, Args> = {
  command: 'capture',
  describe: 'run a program with the recorder preloaded: tickwise capture --backend hip,amdxdna --out run/ -- ./app args',
  builder: (y) =>
    y
      .usage('tickwise capture --backend hip,amdxdna --out run/ [--db run.duckdb] -- <program> [args...]')
      .option('backend', { type: 'string', default: 'hip,amdxdna', describe: `comma list of ${BACKENDS.join(', ')}` })
      .option('out', { type: 'string', demandOption: true, describe: 'capture directory to create (must not exist or be empty)' })
      .option('marker', { type: 'string', array: true, describe: 'count this string in every loaded library (provenance; repeatable)' })
      .option('db', { type: 'string', describe: 'also import the capture into this store (.duckdb)' })
      .option('recorder', { type: 'string', describe: 'the recorder library (default: this checkout\'s native build)' })
      .option('preload-after', { type: 'string', array: true, describe: 'libraries to preload after the recorder (e.g. a fake driver in tests)' })
      .option('ring-records', { type: 'number', describe: 'per-thread ring capacity in records (default the recorder\'s)' })
      .parserConfiguration({ 'populate--': true }) as never,
  handler: async (argv) => {
    // the program's words exactly as typed: yargs' '--' list turns "2048" into a number and "-" into stdin's name
    const rawAt = process.argv.indexOf('--');
    const command = rawAt >= 0 ? process.argv.slice(rawAt + 1) : (((argv as unknown as Record<string, unknown>)['--'] as unknown[] | undefined) ?? []).map(String);
    if (command.length === 0) throw new TickwiseError('usage', 'name the program after --: tickwise capture --out run/ -- ./app args');
    const backends = argv.backend.split(',').map((b) => b.trim()).filter(Boolean);
    for (const b of backends) {
      if (!(BACKENDS as readonly string[]).includes(b)) throw new TickwiseError('usage', `--backend ${b}: unknown (known: ${BACKENDS.join(', ')})`);
    }
    const outDir = resolve(argv.out);
    if (existsSync(outDir) && readdirSync(outDir).length > 0) throw new TickwiseError('usage', `--out ${argv.out}: exists and is not empty (a capture is never overwritten)`);
    mkdirSync(dirname(outDir), { recursive: true });
    const lib = recorderLibrary(argv.recorder);
    const preload = [lib, ...(argv['preload-after'] ?? []).map((p) => resolve(p)), ...(process.env['LD_PRELOAD'] ? [process.env['LD_PRELOAD']] : [])];
    const env: Record<string, string | undefined> = {
      ...process.env,
      LD_PRELOAD: preload.join(':'),
      TICKWISE_CAPTURE_DIR: outDir,
      TICKWISE_BACKENDS: backends.join(','),
    };
    if (argv.marker?.length) env['TICKWISE_MARKERS'] = argv.marker.join('\n');
    if (argv['ring-records'] !== undefined) env['TICKWISE_RING_RECORDS'] = String(argv['ring-records']);
    if (backends.includes('cuda')) env['CUDA_INJECTION64_PATH'] = lib;
    const run = await runWithConditions(command, { env });
    if (!existsSync(outDir)) {
      throw new TickwiseError('no-capture', `the program ran (exit ${run.exit_code ?? run.signal}) but wrote no capture in ${argv.out}: did it load a HIP runtime or open an amdxdna device?`);
    }
    writeFileSync(join(outDir, 'conditions.json'), JSON.stringify({ schema: 'tickwise-conditions/1', conditions: run.conditions }, null, 1));
    out(`captured ${command.join(' ')} -> ${argv.out} (program exit ${run.exit_code ?? `signal ${run.signal}`}; backends ${backends.join(', ')})`);
    if (argv.db) {
      const r = await withAtomicStore(argv.db, async (store) => {
        const res = await importInput(store, outDir); // reads conditions.json too
        await installViews(store, { temporary: false });
        return res;
      });
      out(`imported as capture ${r.capture_id} of ${argv.db}: ${r.dispatches} dispatches, ${r.diagnostics} diagnostics`);
    } else {
      log(`next: tickwise import ${argv.out} --db run.duckdb   (or tickwise gaps ${argv.out})`);
    }
    if (run.exit_code !== 0) process.exitCode = run.exit_code ?? 1;
  },
};
