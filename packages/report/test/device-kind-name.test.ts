/** What the report calls a device: an H200 is a GPU; a Radeon 890M, gfx1151 or an unnamed IREE device an iGPU. */
import { describe, expect, it } from 'vitest';
import { deviceKindName } from '../src/report/collect';

describe('deviceKindName', () => {
  it('names integrated GPUs by their names, discrete ones GPU', () => {
    for (const n of ['AMD Radeon 890M', 'AMD Radeon(TM) Graphics', 'Radeon 8060S Graphics', 'gfx1151', 'gfx1103', 'AMD Ryzen AI 9 HX 370 w/ Radeon 890M', 'Strix Halo iGPU']) {
      expect(deviceKindName('gpu', n, 'chrome-trace'), n).toBe('iGPU');
    }
    for (const n of ['NVIDIA H200', 'NVIDIA A100-PG509-200 (GPU 0)', 'AMD Instinct MI300X', 'gfx942', 'NVIDIA B200']) {
      expect(deviceKindName('gpu', n, 'ireeperf-jsonl'), n).toBe('GPU');
    }
  });

  it('an unnamed GPU is an iGPU only in the captures of a Ryzen AI machine (IREE, the recorder), else GPU', () => {
    expect(deviceKindName('gpu', null, 'ireeperf-jsonl')).toBe('iGPU');
    expect(deviceKindName('gpu', null, 'tickwise-recorder')).toBe('iGPU');
    expect(deviceKindName('gpu', null, 'chrome-trace')).toBe('GPU');
    expect(deviceKindName('gpu', '', 'rocprofv3-csv')).toBe('GPU');
  });

  it('other kinds keep their word', () => {
    expect(deviceKindName('npu', 'AIE', 'ireeperf-jsonl')).toBe('NPU');
    expect(deviceKindName('cpu', null, null)).toBe('CPU');
    expect(deviceKindName('other', 'MTIA 17', 'chrome-trace')).toBe('accelerator');
  });
});
