import { defineConfig } from 'vitest/config';

export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'scripts/**/test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // one temporary folder for the run, removed at its end (scripts/vitest-tmp.ts)
    globalSetup: ['scripts/vitest-tmp.ts'],
    env: { TZ: 'America/Los_Angeles' },
  },
});
