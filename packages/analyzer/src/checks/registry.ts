/**
 * Every check rule, by code. A `Record<CheckCode, CheckRule>`: a new code
 * in `CheckCode` breaks the build until it has a rule here.
 */
import { clockFitPoor, noTimeBase, tickFrequencyMismatch } from './clock';
import { busyMachine, conditionsDiffer, driverErrors, thermal } from './conditions';
import { deviceKindNpuNames } from './device-kind';
import { durationUnitMismatch } from './durations';
import { droppedRecords, invalidEvents, noDispatches } from './import-diagnostics';
import { coldFirstPass, wallClockMismatch } from './passes';
import { mixedBuilds, noProvenance, staleLibrary } from './provenance';
import type { CheckCode, CheckRule } from './types';

/** The rules, in the order findings are reported. */
export const CHECK_RULES: Record<CheckCode, CheckRule> = {
  'no-time-base': noTimeBase,
  'tick-frequency-mismatch': tickFrequencyMismatch,
  'duration-unit-mismatch': durationUnitMismatch,
  'clock-fit-poor': clockFitPoor,
  'wall-clock-mismatch': wallClockMismatch,
  'stale-library': staleLibrary,
  'mixed-builds': mixedBuilds,
  'no-provenance': noProvenance,
  'cold-first-pass': coldFirstPass,
  'no-dispatches': noDispatches,
  'dropped-records': droppedRecords,
  'invalid-events': invalidEvents,
  'driver-errors': driverErrors,
  'busy-machine': busyMachine,
  thermal,
  'conditions-differ': conditionsDiffer,
  'device-kind-npu-names': deviceKindNpuNames,
};
