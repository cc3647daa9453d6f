/**
 * @tickwise/inputs: measurements to model inputs, in one place. Between the
 * analyzer (numbers from a store) and the models (`@tickwise/ceiling`):
 * {@link ceilingInputs} for the split ceiling, {@link scheduleInputs} for the
 * micro-batch schedule model, {@link kernelCost} for one kernel's row-group
 * cost on the default segment (steady where the capture repeats, else all).
 * Typed options; every number comes with its source line. The CLI verbs
 * parse options, call these and print; the report calls the same functions.
 */
export * from './kernel-cost';
export * from './ceiling-inputs';
export * from './schedule-devices';
export * from './schedule-power';
export * from './schedule-stages';
export * from './schedule-inputs';
