import { TickwiseError } from '@tickwise/time';
import { ceilingMessages as msg } from './messages';

/**
 * Amdahl: only the splittable share `f` of the prefill speeds up, by `s`:
 * 1 / ((1 - f) + f / s).
 */
export function endToEndSpeedup(splittableFraction: number, speedup: number): number {
  checkFraction(splittableFraction);
  return 1 / (1 - splittableFraction + splittableFraction / speedup);
}

/** Validates a splittable fraction (0..1). */
export function checkFraction(f: unknown): number {
  if (typeof f !== 'number' || !Number.isFinite(f) || f < 0 || f > 1) throw new TickwiseError('invalid-input', msg.fractionRange(f));
  return f;
}
