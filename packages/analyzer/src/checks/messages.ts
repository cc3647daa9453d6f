/**
 * Catalog of the checks' messages and advice: each a function of the
 * numbers it states, so every finding says the same thing the same way.
 */
import { formatNs } from '@tickwise/time';
import { formatHz, formatPercent } from './factor';

const where = (file: string | null | undefined, line: number | null | undefined) =>
  file ? (line ? `${file}:${line}` : file) : line ? `line ${line}` : '';
const pct = (x: number, digits = 1) => `${(x * 100).toFixed(digits)} %`;

/** Messages of the checks. */
export const checkMessages = {
  // tick-frequency-mismatch
  tickHzMismatch: (device: number, declared: number, fitted: number, samples: number, diff: number, factor: string | null) =>
    `device ${device}: declared tick rate ${formatHz(declared)} (the producer's device record) differs from the rate fitted to ${samples} clock samples, ${formatHz(fitted)}: the declared rate is ${formatPercent(diff)} off (${Math.round(diff * 1e6)} ppm)` +
    (factor ? `, a factor of ${factor}` : '') + '; tickwise places ticks with the fitted rate',
  tickHzAdvice: (factor: string | null, diff: number) =>
    factor
      ? `a ${factor} factor is a unit error in the declared rate (Hz vs kHz/MHz, or a period written as a rate); anything scaled by the declared rate is ${factor} off: fix the producer's timestamp_frequency_hz and trust the fitted rate`
      : `quote the fitted rate; any tool that scales ticks by the declared rate (or a relative timeline built from it) is ${formatPercent(diff)} off; fix the producer's declared frequency`,
  tickHzDeclaredOnly: (device: number, declared: number) =>
    `device ${device}: only a declared tick rate (${formatHz(declared)}), no clock samples to check it against; its durations are as right as that declaration and its timeline is relative (not aligned with host events)`,
  tickHzDeclaredOnlyAdvice: () =>
    're-capture with clock correlation samples (IREE writes clock_correlation records when device profiling is on) so the rate is measured, not taken on trust',

  // no-time-base
  noTimeBase: (device: number, dispatches: number) =>
    `device ${device}: ${dispatches} dispatch(es) carry raw device ticks with neither clock samples nor a declared tick rate; their *_ns are NULL and every time-based number leaves them out`,
  noTimeBaseAdvice: () =>
    're-capture with clock correlation (clock_correlation records), or pass --tick-hz with the device\'s real rate (e.g. --tick-hz 100MHz): it is recorded as an assumption and every number then depends on it',
  assumedTimeBase: (device: number, hz: string | null) =>
    `device ${device}: ticks scaled by an assumed tick rate${hz ? ` of ${formatHz(Number(hz))}` : ''} (--tick-hz), on a relative timeline; durations are as right as that assumption`,
  assumedTimeBaseAdvice: () => 'confirm the rate from the device\'s documentation or a capture with clock correlation before quoting these durations',

  // clock-fit-poor
  fitPoor: (device: number, errNs: number, uncertaintyNs: number, excessNs: number, medianDurNs: number, share: number) =>
    `device ${device}: the clock fit places times only to within ${formatNs(BigInt(Math.round(errNs)))} (1-sigma uncertainty ${formatNs(BigInt(Math.round(uncertaintyNs)))}; worst sample ${formatNs(BigInt(Math.round(excessNs)))} outside its own bracket), ${pct(share)} of the median dispatch (${formatNs(BigInt(Math.round(medianDurNs)))})`,
  fitPoorAdvice: () =>
    'the clock samples disagree with one line (drift, a clock jump, or samples from another clock domain) or are too few: take more, narrower samples (best-of-N at start, periodically and at exit); gaps and cross-device overlap at this scale are not trustworthy',
  fitSlopePoor: (device: number, ppm: number, samples: number) =>
    `device ${device}: the fitted tick rate is uncertain by ${ppm.toFixed(0)} ppm (1 sigma, ${samples} samples): every duration carries that relative error`,
  fitSlopePoorAdvice: () => 'take clock samples over a longer stretch of the capture (at start, periodically and at exit) so the slope is pinned down',

  // duration-unit-mismatch
  durationMismatch: (device: number, basis: string, ratio: number, factor: string, n: number, file: string | null, line: number | null) =>
    `device ${device}: the source's own duration_ns are ${factor} ${ratio < 1 ? 'smaller' : 'larger'} than ${basis} (median ratio ${ratio.toPrecision(4)} over ${n} dispatches${line ? `; first at ${where(file, line)}` : ''})`,
  durationTicksAsNs: (factor: string) =>
    `the producer wrote device ticks where nanoseconds belong (at 100 MHz a tick is 10 ns: ${factor}); tickwise's dur_ns comes from the ticks through the clock fit, the file's duration_ns does not: any tool or script that reads duration_ns is ${factor} off`,
  durationAdvice: (factor: string) =>
    `the two disagree by ${factor}: find which is right before quoting a duration (check the tick-frequency finding and the wall clock); a power of ten is a unit error (ticks vs ns, us vs ns), not noise`,

  // wall-clock-mismatch
  wallMismatch: (capture: number, device: number, test: string, avgNs: bigint, src: string, spanNs: bigint, segments: string, ratio: number, factor: string) =>
    `capture ${capture} device ${device}: llama-bench ${test} avg ${formatNs(avgNs)}${src ? ` (${src})` : ''} is ${ratio.toFixed(3)}x the capture's ${segments} span ${formatNs(spanNs)} (${factor})`,
  wallUnitAdvice: (factor: string) =>
    `a ${factor} factor is a unit error, not a result: ticks read as ns (a 100 MHz tick is 10 ns), a wrong declared or assumed tick rate, or us vs ns; see tick-frequency-mismatch and duration-unit-mismatch, and do not quote numbers from this capture until it is resolved`,
  wallLongAdvice: () =>
    'the wall clock is longer than the device span: the capture may not be the run llama-bench timed (other build, prompt size or settings: compare n_prompt and the provenance), or host work between submissions was not captured',
  wallShortAdvice: () =>
    'the capture span is longer than the wall clock: a segment may hold more than one pass (check the segmentation), include warm-up, or the capture is of another prompt size than the reference',
  wallAmbiguous: (tests: readonly string[]) => `several prefill references (${tests.join(', ')}); compared with the closest`,
  noPrefillRef: (capture: number, tests: readonly string[]) =>
    `capture ${capture}: the wall references (${tests.join(', ')}) hold no prefill test (pp<N> with n_gen 0); nothing to compare the capture's span with`,
  noPrefillRefAdvice: () => 'run llama-bench with -p <prompt tokens> -n 0 for the prefill the capture holds, and pass that output with --wall',

  // stale-library
  staleLibrary: (capture: number, name: string, path: string, diffs: readonly string[], pinnedPath: string) =>
    `capture ${capture}: ${name} loaded from ${path} differs from the pin (${pinnedPath}): ${diffs.join('; ')}`,
  staleLibraryAdvice: () =>
    'the capture ran another build than the pin, so its numbers describe that build: fix the library search path (tickwise provenance <exe> --env LD_LIBRARY_PATH=... shows the file the loader really takes, RUNPATH included) and re-capture, or re-pin if this build is the one you mean',
  pinnedMissing: (capture: number, name: string, pinnedPath: string) =>
    `capture ${capture}: ${name} is pinned (${pinnedPath}) but not among the capture's recorded libraries`,
  pinnedMissingAdvice: () => 'the program did not load it, or provenance was recorded for another executable: check the --provenance-of executable and its environment',
  markerNotCounted: (capture: number, name: string, marker: string) =>
    `capture ${capture}: the pin counts marker "${marker}" in ${name}, but it was not counted when the capture was imported`,
  markerNotCountedAdvice: (marker: string) => `re-import with --marker ${JSON.stringify(marker)} so the kernel-generation marker can be compared`,

  // mixed-builds
  mixedFolders: (capture: number, libs: readonly string[], spread: string) =>
    `capture ${capture}: project libraries come from ${libs.length} folders with modification times ${spread} apart: ${libs.join('; ')}`,
  mixedFoldersAdvice: () =>
    'one folder (LD_LIBRARY_PATH) held only some of the libraries; the others came from elsewhere (RUNPATH, the system): point the search path at one complete build and re-capture',
  mixedCaptures: (name: string, builds: readonly string[]) =>
    `captures loaded different builds of ${name}: ${builds.join('; ')}`,
  mixedCapturesAdvice: () => 'numbers from these captures describe different builds: compare them only as such, or re-capture on one build (tickwise pin / check --pin)',

  // no-provenance
  noProvenance: (capture: number, path: string) => `capture ${capture} (${path}): no library provenance recorded; the build behind its numbers is unknown`,
  noProvenanceAdvice: () =>
    'import with --provenance-of <executable> [--env LD_LIBRARY_PATH=...] [--marker STR], or capture with the tickwise recorder (it records what was really loaded)',

  // cold-first-pass
  singlePass: (capture: number, device: number, idle: number, span: bigint) =>
    `capture ${capture} device ${device}: one pass only (no gap long enough to separate repetitions; span ${formatNs(span)}, idle ${pct(idle)}): it includes the cold first pass (program-cache misses, first-touch weights, command-buffer recording), so its idle share is not steady state`,
  singlePassAdvice: () =>
    'capture two or more repetitions (llama-bench -r 3, or repeat the prefill) and analyze the segments after the first',
  coldFirst: (capture: number, device: number, firstIdle: number, othersIdle: number, others: number) =>
    `capture ${capture} device ${device}: the first segment idles ${pct(firstIdle)} of its span, the other ${others} segment(s) ${pct(othersIdle)} (median): the first pass is cold`,
  coldFirstAdvice: () => 'leave the first segment out of steady-state numbers (gaps, overlap, cost): use segments 2..n',

  // no-dispatches
  noDispatches: (capture: number, label: string, records: number | null, first: string | null, at: string) =>
    `capture ${capture} (${label}): the capture holds no dispatches${records !== null ? ` (${records} record(s) read)` : ''}${first ? `: ${first.replace(/^the capture holds no dispatches:?\s*/, '')}` : ''}${at ? ` (${at})` : ''}`,
  noDispatchesAdvice: () =>
    'there is no device work to analyze: check that the profiler traced the device (kernel/dispatch tracing on, the run reached the GPU or NPU), and that this is the file it wrote; tickwise info lists what the capture does hold',

  // dropped-records
  dropped: (capture: number, count: number, first: string, at: string) =>
    `capture ${capture}: the producer reports missing records (${count} diagnostic(s)): ${first}${at ? ` (${at})` : ''}`,
  droppedAdvice: () =>
    'the timeline has holes: busy time and dispatch counts are low, gaps long; enlarge the profiler\'s buffers or shorten the capture, and re-capture',

  // invalid-events
  invalid: (capture: number, invalid: number, total: number, share: number, first: string, at: string) =>
    `capture ${capture}: ${invalid} of ${total} dispatch(es) (${pct(share, 2)}) are invalid and left out of time math${first ? `: ${first}` : ''}${at ? ` (${at})` : ''}`,
  invalidAdvice: () =>
    'invalid events (marked so by the producer, or ending before they start) make busy time low and gaps long; find why the producer marked them (timestamp wrap, counter reset) before quoting totals',

  // device-kind-npu-names
  npuNames: (capture: number, device: number, kind: string, kernels: number, example: string) =>
    `capture ${capture} device ${device}: every kernel (${kernels} name${kernels === 1 ? '' : 's'}, e.g. ${example}) carries an NPU marker (npu_), but the device's kind is ${kind}: if it is an NPU, import it with --device-kind npu`,
  npuNamesAdvice: () =>
    'the source does not say what kind of device ran the work; tickwise took the default (gpu). The split ceiling, the schedule model and the report look for the NPU by kind: re-import with --device-kind npu (tickwise import FILE --db STORE --device-kind npu), or pass --device-kind npu to the verb reading the capture',
} as const;

/** `file:line`, `file`, `line N` or '' (for messages). */
export function at(file: string | null | undefined, line: number | null | undefined): string {
  return where(file, line);
}
