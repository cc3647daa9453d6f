/**
 * @tickwise/time: units and clocks. Branded `Ns`/`Ticks` bigints, the only
 * module that converts between them, duration parsing that requires units,
 * and the clock fit that places device ticks on the host timeline.
 */
export * from './units';
export * from './errors';
export * from './messages';
export * from './duration';
export * from './clock-fit';
export * from './stats';
