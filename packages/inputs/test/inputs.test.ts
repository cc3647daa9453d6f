import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rowGroupCost } from '@tickwise/analyzer';
import { Store } from '@tickwise/store';
import { ceilingInputs, kernelCost, scheduleDevices, scheduleInputs } from '../src/index';

/**
 * @tickwise/inputs on real stores: the shipped sample captures imported by
 * the real CLI (this layer may not import @tickwise/capture), read back with
 * DuckDB; numbers held to the analyzer and to the generator's truth files.
 */
const ROOT = resolve(import.meta.dirname, '../../..');
const GPU = 'captures/sample/igpu-prefill.ireeperf.jsonl';
const NPU = 'captures/sample/npu-tiles.ireeperf.jsonl';
const NPU_TRUTH = JSON.parse(readFileSync(join(ROOT, 'captures/sample/npu-tiles.truth.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'tickwise-inputs-'));

function store(name: string, imports: string[][]): string {
  const db = join(tmp, `${name}.duckdb`);
  for (const args of imports) execFileSync(join(ROOT, 'scripts/tickwise'), ['import', ...args, '--db', db], { cwd: ROOT, stdio: 'ignore' });
  return db;
}

let kinds: Store; // iGPU then NPU, the NPU imported as npu
let untyped: Store; // NPU first, both imported as gpu (IREE files do not say)
beforeAll(async () => {
  kinds = await Store.open(store('kinds', [[GPU], [NPU, '--device-kind', 'npu']]), { readOnly: true });
  untyped = await Store.open(store('untyped', [[NPU], [GPU]]), { readOnly: true });
});
afterAll(async () => {
  await kinds?.close();
  await untyped?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('scheduleDevices', () => {
  it('takes the devices by kind', async () => {
    expect(await scheduleDevices(kinds, true)).toEqual({ gpu: { capture_id: 1, device: 0 }, npu: { capture_id: 2, device: 0 }, note: null });
  });
  it('when no device says npu, the capture of GEMM tiles only is the NPU, whatever the order, and says so', async () => {
    const d = await scheduleDevices(untyped, true);
    expect(d.gpu).toEqual({ capture_id: 2, device: 0 });
    expect(d.npu).toEqual({ capture_id: 1, device: 0 });
    expect(d.note).toMatch(/no device is of kind npu: capture 1 .* is taken as the NPU/);
  });
});

describe('scheduleInputs', () => {
  it('reads the same inputs from a store of both captures in either order (and kinds or none)', async () => {
    const a = await scheduleInputs(kinds, { npu: {}, microbatch: 512 });
    const b = await scheduleInputs(untyped, { npu: {}, microbatch: 512 });
    const strip = (x: typeof a) => JSON.stringify(x.measured.stages.map((s) => ({ kind: s.kind, costs: Object.keys(s.cost), gpu: s.cost['gpu']?.form, npu: s.cost['npu']?.form })));
    expect(strip(b)).toBe(strip(a));
    expect(a.measured).toMatchObject({ layers: 28, prompt_rows: 2048, microbatch_rows: 512, engines: [{ id: 'gpu' }, { id: 'npu' }] });
    expect(b.capture.span_ms).toBe(a.capture.span_ms);
    expect(a.handoffSource).toMatch(/^measured: median idle between consecutive NPU dispatches/);
    expect(b.measured.handoff.default_ms).toBe(a.measured.handoff.default_ms);
  });
  it('refuses an NPU capture and a typed tile time together', async () => {
    await expect(scheduleInputs(kinds, { npu: {}, npuTile: { ms: 6, line: '--npu-tile-ms 6' } })).rejects.toThrow(/give the NPU cost one way/);
  });
});

describe('ceilingInputs', () => {
  it('derived from a store: the NPU GEMM and the iGPU GEMM of the same N x K, each on its default segment', async () => {
    const r = await ceilingInputs(kinds, { rows: 8192, derive: true });
    expect(r.kind).toBe('inputs');
    if (r.kind !== 'inputs') return;
    // the iGPU GEMMs of that N x K are gate and up (one glob over both), on the steady prefill; the NPU tile is the truth's t
    const both = await rowGroupCost(kinds, { captureId: 1, kernel: '*512x8192x3072*', rowsPerDispatch: 512, segment: 'steady' });
    expect(both.matched_kernels.map((k) => k.kernel)).toEqual(['prefill_dispatch_6_matmul_512x8192x3072_f16', 'prefill_dispatch_7_matmul_512x8192x3072_f16']);
    expect(r.input.gpu.kind === 'constant' && r.input.gpu.ms).toBe(both.group_ms);
    expect(r.input.npu.kind === 'constant' && r.input.npu.ms).toBeCloseTo(NPU_TRUTH.split_inputs.t_ms, 5);
    expect(r.found[0]).toMatch(/^iGPU \(derived: the GEMM with the NPU kernel's N x K = 8192 x 3072\): .*\(segment steady\)/);
    expect(r.found[1]).toMatch(/^NPU \(derived: the NPU capture's GEMM\): .*\(segment all\)/);
    expect(r.found[2]).toBe('M: --rows 8192');
  });
  it('says what is missing instead of guessing', async () => {
    const r = await ceilingInputs(kinds, { derive: true, npu: { number: { ms: 6, line: '--npu-tile-ms 6' } } });
    expect(r).toMatchObject({ kind: 'missing', missing: ['the rows to split: --rows M (e.g. the prompt length, 8192)'] });
  });
  it('from capture inputs: one point per capture, the note when a capture has one segment', async () => {
    const r = await ceilingInputs(null, {
      gpu: { captures: [{ store: kinds, input: 'both.duckdb' }], kernel: '*dispatch_6_matmul*', rowsPerDispatch: [512], selection: { captureId: 1 } },
      npu: { captures: [{ store: kinds, input: 'both.duckdb' }], kernel: '*matmul*', rowsPerDispatch: [256], selection: { captureId: 2 } },
      rows: 8192,
    });
    if (r.kind !== 'inputs') throw new Error('expected inputs');
    const steady = await rowGroupCost(kinds, { captureId: 1, kernel: '*dispatch_6_matmul*', rowsPerDispatch: 512, segment: 'steady' });
    expect(r.input.gpu.kind === 'constant' && r.input.gpu.ms).toBe(steady.group_ms);
    expect(r.notes).toEqual(['both.duckdb: one segment (no repetition found), so all 40 dispatches were used; a cold first pass cannot be told apart (--npu-segment, --npu-reps)']);
  });
});

describe('kernelCost', () => {
  it('steady where the device repeats, all (with the note) where it does not; a named segment as named', async () => {
    const g = await kernelCost(kinds, { captureId: 1, kernel: '*dispatch_6_matmul*', rowsPerDispatch: 512 }, { options: '--segment' });
    expect([g.cost.segment, g.segment_defaulted, g.segment_note]).toEqual(['steady', true, null]);
    const n = await kernelCost(kinds, { captureId: 2, kernel: '*matmul*', rowsPerDispatch: 256 }, { options: '--segment' });
    expect([n.cost.segment, n.segment_defaulted]).toEqual(['all', true]);
    expect(n.segment_note).toMatch(/^capture 2 device 0: one segment/);
    const all = await kernelCost(kinds, { captureId: 1, kernel: '*dispatch_6_matmul*', rowsPerDispatch: 512, segment: 'all' }, { options: '--segment' });
    expect([all.cost.segment, all.segment_defaulted, all.cost.dispatch_count]).toEqual(['all', false, 2 * g.cost.dispatch_count]);
  });
});
