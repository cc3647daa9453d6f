/** Catalog of the analyzer's user-facing messages. */
export const analyzerMessages = {
  noTimeBase: (where: string) =>
    `${where} has device ticks but no time base (no clock samples, no declared frequency); tickwise will not turn ticks into time on its own. ` +
    `Give the tick rate, e.g. --tick-hz 100MHz (recorded as an assumption), or re-capture with clock correlation`,
  incomparableTimelines: (a: string, aDomain: string, b: string, bDomain: string) =>
    `cross-device overlap needs one common host timeline, but ${a} is on ${aDomain} and ${b} on ${bDomain}: their times cannot be compared. ` +
    `Analyze one device (--capture N --device N), or import captures whose device ticks are fitted to the same host clock`,
  badSegment: (text: string) =>
    `invalid --segment: "${text}" (write all, first, last, steady, or a segment index as tickwise segments lists it, 0 = first)`,
  badReps: (text: string) => `invalid --reps: "${text}" (write the number of repetitions, a whole number >= 1)`,
  steadyWhereItCan: (whole: readonly string[]) =>
    `steady (all but the first segment), except ${whole.join('; ')}: one segment (no repetition found), read whole`,
  noSteady: (where: string) =>
    `--segment steady: ${where} has only one segment (no repetition found), so there is no steady state to select; ` +
    `use --segment all, tell the number of repetitions with --reps N, or leave this device out (--capture N --device N)`,
  segmentOutOfRange: (where: string, index: number, count: number) =>
    `--segment ${index}: ${where} has ${count} segment${count === 1 ? '' : 's'} (0..${count - 1})`,
  tooFewGaps: (where: string, reps: number, gaps: number) =>
    `--reps ${reps}: ${where} has only ${gaps} idle gap${gaps === 1 ? '' : 's'}, so it cannot be cut into ${reps} repetitions`,
  noDispatchSelected: (what: string) => `no dispatches selected: ${what}`,
  costNoMatch: (glob: string, examples: readonly string[]) =>
    `--kernel ${glob}: no selected dispatch matches (a case-sensitive glob: * ? [..]). Kernels here include: ${examples.join(', ') || '(none)'}`,
  costManyDevices: (glob: string, where: readonly string[]) =>
    `--kernel ${glob} matches dispatches on ${where.length} devices (${where.join('; ')}); choose one with --capture N --device N`,
  badRows: (name: string, v: number) => `--${name}: ${v} is not a positive whole number of rows`,
  flopsNeedBoth: () => `the FLOP reading needs both --params and --tokens`,
  noGemmTime: (glob: string) => `FLOP reading: no selected dispatch matches the GEMM kernels (${glob}); give --gemm-kernels GLOB`,
} as const;
