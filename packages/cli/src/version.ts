import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Set by the build (scripts/build-cli.mjs); absent when run from source. */
declare const TICKWISE_VERSION: string | undefined;

/** The CLI's version: the build's, or packages/cli/package.json's when run from source. */
export function cliVersion(): string {
  if (typeof TICKWISE_VERSION === 'string') return TICKWISE_VERSION;
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
  return `${pkg.version} (from source)`;
}
