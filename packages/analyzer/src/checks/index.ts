/**
 * Checks: rules that make a plausible wrong number loud (domain.md,
 * "Traps"). Pure SQL builders and evaluations per rule, a registry by code,
 * and `runChecks`.
 */
export * from './types';
export * from './factor';
export * from './messages';
export * from './sql';
export * from './segments-local';
export * from './clock';
export * from './durations';
export * from './passes';
export * from './provenance';
export * from './import-diagnostics';
export * from './conditions';
export * from './conditions-messages';
export * from './registry';
export * from './run';
