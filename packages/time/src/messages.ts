/** Catalog of the time package's user-facing messages. */
export const timeMessages = {
  bareNumber: (text: string) =>
    `invalid duration: ${text} (write a unit: ${text}ns, ${text}us, ${text}ms, ${text}s, or ${text}ticks@dev0)`,
  badDuration: (text: string) =>
    `invalid duration: "${text}" (expected a number with a unit, e.g. 200us, 0.2ms, 200000ns, 1.5s, 3000ticks@dev0)`,
  negativeDuration: (text: string) => `invalid duration: ${text} is negative`,
  subNanosecond: (text: string) => `invalid duration: ${text} is not a whole number of nanoseconds`,
  ticksNeedDevice: (text: string) =>
    `invalid duration: ${text} counts ticks but names no device (write ${text}@dev0: ticks mean nothing without the device's clock)`,
  badFrequency: (text: string) => `invalid frequency: "${text}" (write a unit: 100MHz, 1GHz, 1e8Hz)`,
} as const;
