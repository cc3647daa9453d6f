/** Options that take a duration with a unit, in any verb (issue 18.7: their help shows <duration>, not [string]). */
export const DURATION_OPTIONS = ['min-gap', 'sync-overhead', 'handoff', 'lock-wait', 'boottime-offset'] as const;
