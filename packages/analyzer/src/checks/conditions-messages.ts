/**
 * Messages and advice of the condition checks (busy-machine, driver-errors,
 * thermal, conditions-differ): each a function of the numbers it states.
 */

const list = (xs: readonly string[], max = 8) => (xs.length <= max ? xs.join(', ') : `${xs.slice(0, max).join(', ')} and ${xs.length - max} more`);

/** Messages of the condition checks. */
export const conditionMessages = {
  busy: (capture: number, peak: number, start: number | null, end: number | null, cpus: number | null, max: number) =>
    `capture ${capture}: the load average (1 min) reached ${peak} during the capture (start ${start ?? '-'}, end ${end ?? '-'}${cpus ? `, ${cpus} CPUs` : ''}), above ${max}: other work shared the machine`,
  busyAdvice: () =>
    'numbers from a busy machine are not steady state (host launch gaps grow, clocks and memory bandwidth are shared): re-run on a quiet machine and quote medians taken below the threshold',
  driverErrors: (capture: number, counts: readonly string[], first: string | null) =>
    `capture ${capture}: the kernel log has driver error lines from the capture's window (${counts.join(', ')})${first ? `: "${first}"` : ''}`,
  driverErrorsAdvice: () =>
    'a driver error (a GPU ring timeout or reset, an NPU command timeout, a firmware fault) can stall or re-run work: read the kernel log (dmesg) for the window, fix the cause, and re-capture before quoting numbers',
  kmsgUnreadable: (capture: number, why: string) =>
    `capture ${capture}: the kernel log was not readable when the conditions were sampled (${why}): driver errors during the capture are unknown`,
  kmsgUnreadableAdvice: () =>
    'sample the conditions where /dev/kmsg or dmesg is readable (kernel.dmesg_restrict=0, or CAP_SYSLOG), or check the kernel log of the window by hand',
  thermal: (capture: number, what: string, celsius: number, max: number, sensor: string | null) =>
    `capture ${capture}: the ${what} reached ${celsius} C during the capture${sensor ? ` (${sensor})` : ''}, above ${max} C: clocks may have been throttled`,
  thermalAdvice: () =>
    'a throttled run is slower than the chip is: let the machine cool, check cooling and power limits, and re-capture; compare the clocks (clock.gpu.sclk_mhz) of both runs',
  differ: (base: number, other: number, exact: readonly string[], measured: readonly string[]) =>
    `capture ${other} ran under other conditions than capture ${base}: ` +
    [exact.length ? `set up differently (${list(exact)})` : '', measured.length ? `measured differently (${list(measured)})` : ''].filter(Boolean).join('; '),
  differAdvice: (exact: boolean) =>
    exact
      ? 'the runs differ in environment, versions or firmware: a difference in their numbers may come from that, not from the change being measured; tickwise diff lists each condition'
      : 'the machine was in another state (load, temperature, clocks): compare the runs only with that in mind, or re-run both under the same conditions',
} as const;
