import { MAX_NS_DIGITS, decimalToNs } from '@tickwise/time';

/**
 * `decimalToNs(text, scale)` as decimal text, fast for the scales that are
 * powers of ten (us -> ns is 10^3; Chrome traces stage femtoseconds, 10^9):
 * the decimal point is moved in the text itself, rounding half away from
 * zero at the last kept digit, with no BigInt and no double in between. Any
 * other scale, and texts it does not handle (huge exponents), go through
 * {@link decimalToNs}; the answers are the same (a seeded test compares them).
 *
 * ```
 * "1700000000123.0004" x 10^3 -> "1700000000123000" (.4 dropped, < .5)
 * "-1.5" x 10^0 -> "-2"      "2.5e-1" x 10^1 -> "3"      "0.0" -> "0"
 * ```
 * Returns null for text that is not a decimal number (as decimalToNs does).
 */
export function scaleDecimal(text: string, scale: bigint): string | null {
  const pow = POW10.get(scale);
  if (pow === undefined) return slow(text, scale);
  const s = text;
  let a = 0;
  let b = s.length;
  // trim as String#trim does for the ASCII whitespace; anything else goes the slow way
  while (a < b && isSpace(s.charCodeAt(a))) a++;
  while (b > a && isSpace(s.charCodeAt(b - 1))) b--;
  let i = a;
  let negative = false;
  let c = s.charCodeAt(i);
  if (c === 0x2d || c === 0x2b) {
    negative = c === 0x2d;
    i++;
  }
  const intStart = i;
  while (i < b && isDigit(s.charCodeAt(i))) i++;
  const intEnd = i;
  let fracStart = i;
  let fracEnd = i;
  if (i < b && s.charCodeAt(i) === 0x2e) {
    fracStart = ++i;
    while (i < b && isDigit(s.charCodeAt(i))) i++;
    fracEnd = i;
  }
  if (intEnd === intStart && fracEnd === fracStart) return slow(text, scale);
  let exp = 0;
  if (i < b && (s.charCodeAt(i) === 0x65 || s.charCodeAt(i) === 0x45)) {
    i++;
    let expNegative = false;
    c = s.charCodeAt(i);
    if (c === 0x2d || c === 0x2b) {
      expNegative = c === 0x2d;
      i++;
    }
    const expStart = i;
    while (i < b && isDigit(s.charCodeAt(i))) i++;
    if (i === expStart) return slow(text, scale);
    if (i - expStart > 6) return slow(text, scale);
    exp = Number(s.slice(expStart, i));
    if (expNegative) exp = -exp;
  }
  if (i !== b) return slow(text, scale); // not a plain decimal (other whitespace, junk): decimalToNs decides
  // value = digits x 10^shift
  const digits = s.slice(intStart, intEnd) + s.slice(fracStart, fracEnd);
  const shift = exp - (fracEnd - fracStart) + pow;
  // beyond MAX_NS_DIGITS digits: +-10^MAX_NS_DIGITS, as decimalToNs says (never a string of a million zeros)
  let lead = 0;
  while (lead < digits.length && digits.charCodeAt(lead) === 0x30) lead++;
  if (lead < digits.length && digits.length - lead + shift > MAX_NS_DIGITS) return `${negative ? '-' : ''}1${'0'.repeat(MAX_NS_DIGITS)}`;
  let out: string;
  if (shift >= 0) {
    out = stripZeros(digits);
    if (out !== '0' && shift > 0) out += '0'.repeat(shift);
  } else {
    const cut = digits.length + shift; // digits kept
    const kept = cut > 0 ? stripZeros(digits.slice(0, cut)) : '0';
    out = cut >= 0 && cut < digits.length && digits.charCodeAt(cut) >= 0x35 ? increment(kept) : kept;
  }
  return negative && out !== '0' ? `-${out}` : out;
}

const POW10 = new Map<bigint, number>(Array.from({ length: 31 }, (_, k) => [10n ** BigInt(k), k]));

function slow(text: string, scale: bigint): string | null {
  return decimalToNs(text, scale)?.toString() ?? null;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || c === 0x0b || c === 0x0c;
}

/** Digits without leading zeros ("0" for none). */
function stripZeros(d: string): string {
  let k = 0;
  while (k < d.length - 1 && d.charCodeAt(k) === 0x30) k++;
  return d.length === 0 ? '0' : k === 0 ? d : d.slice(k);
}

/** Decimal digits plus one. */
function increment(d: string): string {
  if (d.length < 15) return String(Number(d) + 1);
  return (BigInt(d) + 1n).toString();
}
