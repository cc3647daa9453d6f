import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Vitest's global setup: every test run gets a temporary folder of its own
 * (TMPDIR for the test processes and the CLI processes they start), removed
 * when the run ends. The tests make a folder or two each for their files and
 * stores, and left them all: ~40 a run, 4,400 in /tmp after one day's work.
 * A run that was killed leaves its folder; the next run removes those older
 * than a day.
 */
export default function setup(): () => void {
  const parent = tmpdir();
  for (const name of readdirSync(parent)) {
    if (!name.startsWith('tickwise-vitest-')) continue;
    const path = join(parent, name);
    try {
      if (Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // another user's, or gone already
    }
  }
  const dir = mkdtempSync(join(parent, 'tickwise-vitest-'));
  process.env['TMPDIR'] = dir;
  return () => {
    process.env['TMPDIR'] = parent;
    rmSync(dir, { recursive: true, force: true });
  };
}
