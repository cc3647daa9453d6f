/** @tickwise/cli: the command line. Thin yargs verbs over the packages. */
export * from './output';
export * from './options';
