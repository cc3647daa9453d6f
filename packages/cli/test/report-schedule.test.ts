import { describe, expect, it } from 'vitest';
import { tickwise } from './run-cli';

/**
 * `tickwise report IGPU NPU --schedule` (issue 14.1): the schedule section is
 * read from the report's own store by @tickwise/inputs' scheduleInputs, with
 * the iGPU and the NPU chosen by kind or, when both captures import as gpu
 * (IREE files do not say), by their kernels: never by the order of the inputs.
 */
const GPU = 'captures/sample/igpu-prefill.ireeperf.jsonl';
const NPU = 'captures/sample/npu-tiles.ireeperf.jsonl';

function report(...inputs: string[]) {
  const r = tickwise('report', ...inputs, '--schedule', '--schedule-microbatch', '512', '--rows', '8192', '--format', 'md');
  expect(r.stderr).not.toMatch(/no NPU device/);
  expect(r.code).toBe(0);
  const section = r.stdout.slice(r.stdout.indexOf('### Schedule model'));
  return { section, best: /best: (.*)/.exec(section)?.[1] };
}

describe('report --schedule with an iGPU and an NPU capture in either order', () => {
  const forward = report(GPU, NPU);
  const backward = report(NPU, GPU);

  it.each([['iGPU first', forward], ['NPU first', backward]])('%s: the iGPU is the prefill capture, the NPU the tile capture', (_, r) => {
    expect(r.section).toMatch(/# iGPU input: capture \d: captures\/sample\/igpu-prefill\.ireeperf\.jsonl/);
    expect(r.section).toMatch(/# NPU input: capture \d: captures\/sample\/npu-tiles\.ireeperf\.jsonl/);
    expect(r.section).toContain('schedule model: 28 layers x 4 micro-batches of 512 rows (2048-row prompt), 1125 stages; engines iGPU, NPU');
    // both captures imported as gpu: the choice is said, with the option that makes it explicit
    expect(r.section).toMatch(/no device is of kind npu: capture \d \(.*npu-tiles.*\) device 0 is taken as the NPU .* --device-kind npu/);
  });

  it('models the same prefill both ways', () => {
    expect(forward.best).toBeDefined();
    expect(backward.best).toBe(forward.best);
  });
});
