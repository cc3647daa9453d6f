import { TickwiseError } from './errors';
import { timeMessages } from './messages';
import { NS_PER, decimalToNs, type Ns, type Ticks } from './units';

/** A parsed command-line duration: either host nanoseconds or device ticks. */
export type Duration =
  | { readonly kind: 'ns'; readonly ns: Ns; readonly text: string }
  | { readonly kind: 'ticks'; readonly ticks: Ticks; readonly device: number; readonly text: string };

const UNIT_RE = /^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(ns|us|µs|ms|s|ticks?)(?:@dev(\d+))?$/;

/**
 * Parses a duration that carries its unit: `200us`, `0.2ms`, `200000ns`,
 * `1.5s`, `20000ticks@dev0`. A bare number is refused with a message that says
 * what to write; fractions of a nanosecond are refused.
 */
export function parseDuration(text: string): Duration {
  const t = text.trim();
  if (/^[+-]?[0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?$/.test(t)) {
    throw new TickwiseError('invalid-duration', timeMessages.bareNumber(t));
  }
  if (t.startsWith('-')) throw new TickwiseError('invalid-duration', timeMessages.negativeDuration(t));
  const m = UNIT_RE.exec(t);
  if (!m) throw new TickwiseError('invalid-duration', timeMessages.badDuration(t));
  const [, num, unitRaw, dev] = m as unknown as [string, string, string, string | undefined];
  if (unitRaw.startsWith('tick')) {
    if (dev === undefined) throw new TickwiseError('invalid-duration', timeMessages.ticksNeedDevice(t));
    const v = decimalToNs(num, 1n);
    if (v === null || decimalToNs(num, 1000n) !== v * 1000n) {
      throw new TickwiseError('invalid-duration', timeMessages.subNanosecond(t));
    }
    return { kind: 'ticks', ticks: (v as bigint) as Ticks, device: Number(dev), text: t };
  }
  if (dev !== undefined) throw new TickwiseError('invalid-duration', timeMessages.badDuration(t));
  const unit = unitRaw === 'µs' ? 'us' : (unitRaw as keyof typeof NS_PER);
  const v = decimalToNs(num, NS_PER[unit]);
  const vMilli = decimalToNs(num, NS_PER[unit] * 1000n);
  if (v === null || vMilli === null || vMilli !== v * 1000n) {
    throw new TickwiseError('invalid-duration', timeMessages.subNanosecond(t));
  }
  return { kind: 'ns', ns: v, text: t };
}

/** Parses a duration that must be host time (no ticks), returning ns. */
export function parseDurationNs(text: string): Ns {
  const d = parseDuration(text);
  if (d.kind !== 'ns') {
    throw new TickwiseError(
      'invalid-duration',
      `invalid duration: ${text} is in ticks; this option needs host time (write e.g. 200us)`,
    );
  }
  return d.ns;
}

/** Parses a frequency with a unit (`100MHz`, `1GHz`, `99810000Hz`) to Hz. */
export function parseFrequencyHz(text: string): number {
  const m = /^([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*(Hz|kHz|MHz|GHz)$/i.exec(text.trim());
  if (!m) throw new TickwiseError('invalid-frequency', timeMessages.badFrequency(text));
  const mult: Record<string, number> = { hz: 1, khz: 1e3, mhz: 1e6, ghz: 1e9 };
  const hz = Number(m[1]) * (mult[m[2]!.toLowerCase()] ?? NaN);
  if (!(hz > 0) || !Number.isFinite(hz)) throw new TickwiseError('invalid-frequency', timeMessages.badFrequency(text));
  return hz;
}
