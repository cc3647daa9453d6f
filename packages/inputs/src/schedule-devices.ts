/**
 * Which devices of a store are the iGPU and the NPU of a schedule: by device
 * kind, and, when kinds do not tell them apart (two IREE captures both
 * imported as `gpu`), by content: the NPU capture is the one whose every
 * kernel is a GEMM tile with an MxNxK shape. Never by the order of the inputs.
 */
import { byDevice, deviceKey, gemmShapeFromName, planSources, whereLabel } from '@tickwise/analyzer';
import type { Store } from '@tickwise/store';
import { TickwiseError } from '@tickwise/time';

/** A (capture, device) of the store. */
export interface DeviceRef {
  readonly capture_id: number;
  readonly device: number;
}

/** The iGPU and NPU devices found, and how. */
export interface ScheduleDevices {
  readonly gpu: DeviceRef;
  readonly npu: DeviceRef | null;
  /** Set when the kinds did not decide (what was taken, and the option that says it). */
  readonly note: string | null;
}

const isTile = (kernel: string) => /(matmul|gemm|mmt)/i.test(kernel) && gemmShapeFromName(kernel) !== null;

/** Finds the iGPU and (when `wantNpu`) the NPU device of one store. */
export async function scheduleDevices(store: Store, wantNpu: boolean): Promise<ScheduleDevices> {
  const plan = await planSources(store);
  const devs = plan.devices;
  const gpus = devs.filter((d) => d.kind === 'gpu');
  const npus = devs.filter((d) => d.kind === 'npu');
  const ref = (d: DeviceRef): DeviceRef => ({ capture_id: d.capture_id, device: d.device });
  if (!wantNpu || npus.length > 0) {
    const gpu = gpus[0] ?? devs.find((d) => d.kind !== 'npu');
    if (!gpu) throw new TickwiseError('usage', '--schedule: the input has no GPU device to model');
    return { gpu: ref(gpu), npu: wantNpu ? ref(npus[0]!) : null, note: null };
  }
  // no device says npu: tell them apart by their kernels
  const kernels = await store.query({ capture_id: 'number', device: 'number', kernel: 'string' },
    'SELECT DISTINCT capture_id, device, kernel FROM dispatches WHERE kernel IS NOT NULL');
  const kernelsOf = byDevice(kernels);
  const tilesOnly = gpus.filter((d) => {
    const ks = kernelsOf.get(deviceKey(d)) ?? [];
    return ks.length > 0 && ks.every((k) => isTile(k.kernel));
  });
  const others = gpus.filter((d) => !tilesOnly.includes(d));
  if (tilesOnly.length === 1 && others.length >= 1) {
    const npu = tilesOnly[0]!;
    return {
      gpu: ref(others[0]!),
      npu: ref(npu),
      note: `no device is of kind npu: ${whereLabel(npu)} is taken as the NPU (every kernel of it is a GEMM tile with an MxNxK shape) and ${whereLabel(others[0]!)} as the iGPU; import the NPU capture with --device-kind npu to say so`,
    };
  }
  throw new TickwiseError('usage', '--schedule: the input has no NPU device (import an NPU capture with --device-kind npu, or run tickwise schedule with --npu-tile-ms)');
}
