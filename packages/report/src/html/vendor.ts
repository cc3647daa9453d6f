/**
 * The chart libraries a page inlines (no network): the UMD builds of vega,
 * vega-lite and vega-embed, read from node_modules once per process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { TickwiseError } from '@tickwise/time';
import { reportMessages as msg } from '../messages';

/** One inlined library. */
export interface VendorScript {
  readonly name: string;
  readonly version: string;
  readonly code: string;
}

/** The libraries, in load order, with the UMD file inside each package's build folder. */
const VENDOR = [
  { name: 'vega', file: 'vega.min.js' },
  { name: 'vega-lite', file: 'vega-lite.min.js' },
  { name: 'vega-embed', file: 'vega-embed.min.js' },
] as const;

let cached: VendorScript[] | null = null;

/**
 * The copies a built CLI carries (`vendor/` beside its modules, written by
 * scripts/build-cli.mjs), or null when running from source.
 */
function bundledVendor(name: string, file: string): VendorScript | null {
  const dir = join(import.meta.dirname, 'vendor');
  if (!existsSync(join(dir, file))) return null;
  const code = readFileSync(join(dir, file), 'utf8');
  const version = readFileSync(join(dir, `${name}.version`), 'utf8').trim();
  return { name, version, code };
}

/** The vendored scripts (cached). */
export function vendorScripts(): VendorScript[] {
  if (cached) return cached;
  const require = createRequire(import.meta.url);
  cached = VENDOR.map(({ name, file }) => {
    const bundled = bundledVendor(name, file);
    if (bundled) return bundled;
    let entry: string;
    try {
      entry = require.resolve(name);
    } catch (e) {
      throw new TickwiseError('vendor-missing', msg.vendorMissing(name, 'node_modules'), { cause: e });
    }
    // each package's entry sits in its build/ folder, beside the UMD file
    const path = join(dirname(entry), file);
    let code: string;
    try {
      code = readFileSync(path, 'utf8');
    } catch (e) {
      throw new TickwiseError('vendor-missing', msg.vendorMissing(`${name} (${file})`, dirname(entry)), { cause: e });
    }
    if (/<\/script/i.test(code)) throw new Error(`${path} contains "</script" and cannot be inlined as is`);
    const pkg = JSON.parse(readFileSync(join(dirname(entry), '..', 'package.json'), 'utf8')) as { version: string };
    return { name, version: pkg.version, code };
  });
  return cached;
}
