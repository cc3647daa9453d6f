import cliProgress from 'cli-progress';
import type { Store } from '@tickwise/store';

/**
 * A progress bar for long imports: shown only on a TTY and for inputs over
 * `minBytes`; silent when piped. Polls DuckDB's progress of the running scan.
 */
export function importProgress(label: string, sizeBytes: number, minBytes = 50 * 1024 * 1024) {
  if (!process.stderr.isTTY || sizeBytes < minBytes) {
    return { phase: (_: string) => undefined, watch: (_: Store) => undefined, stop: () => undefined };
  }
  const bar = new cliProgress.SingleBar(
    { format: `${label} [{bar}] {percentage}% {phase} {duration}s`, stream: process.stderr, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(100, 0, { phase: 'starting' });
  let timer: NodeJS.Timeout | undefined;
  let phase = 'starting';
  return {
    phase: (p: string) => { phase = p; bar.update({ phase }); },
    watch: (store: Store) => {
      timer = setInterval(() => {
        const pct = store.progressPercent();
        if (pct !== null && phase === 'scanning') bar.update(Math.min(99, Math.round(pct)), { phase });
      }, 200);
    },
    stop: () => {
      if (timer) clearInterval(timer);
      bar.update(100, { phase: 'done' });
      bar.stop();
    },
  };
}
