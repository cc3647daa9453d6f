/**
 * A small seeded PRNG (xoshiro128**, seeded through splitmix32) for the
 * capture generators.
 *
 * Only integer ops (Math.imul, shifts) and IEEE +,-,*,/ and sqrt are used, so a
 * seed gives the same sequence on every platform and Node version: the
 * generated files must be byte-identical when regenerated. No Math.log/exp/cos
 * (their last-bit results are engine-specific), no Date.now(), no Math.random.
 */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** Seeds the four state words from `seed` through splitmix32. */
  constructor(seed: number) {
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s0 = next();
    this.s1 = next();
    this.s2 = next();
    this.s3 = next();
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Next uniform unsigned 32-bit integer. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.s1, 5), 7), 9) >>> 0;
    const t = (this.s1 << 9) >>> 0;
    this.s2 = (this.s2 ^ this.s0) >>> 0;
    this.s3 = (this.s3 ^ this.s1) >>> 0;
    this.s1 = (this.s1 ^ this.s2) >>> 0;
    this.s0 = (this.s0 ^ this.s3) >>> 0;
    this.s2 = (this.s2 ^ t) >>> 0;
    this.s3 = rotl(this.s3, 11);
    return result;
  }

  /** Uniform in [0, 1), 32 bits of resolution. */
  uniform(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform real in [lo, hi). */
  range(lo: number, hi: number): number {
    return lo + (hi - lo) * this.uniform();
  }

  /** Uniform integer in [lo, hi] (both inclusive; spans below 2^32). */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.uniform() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.uniform() < p;
  }

  /**
   * Approximately standard normal (Irwin-Hall sum of 4 uniforms, rescaled to
   * unit variance; bounded to +-3.46, which is what a timing model wants).
   */
  normal(): number {
    const s = this.uniform() + this.uniform() + this.uniform() + this.uniform();
    return (s - 2) * SQRT3;
  }

  /** An independent stream derived from this seed and a label. */
  fork(label: number): Rng {
    return new Rng((Math.imul(this.u32() ^ 0x5bd1e995, 0x27d4eb2f) ^ label) >>> 0);
  }

  /** A hex string of `bytes` random bytes (ids, hashes, uuids). */
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i += 4) {
      out += this.u32().toString(16).padStart(8, '0');
    }
    return out.slice(0, bytes * 2);
  }
}

const SQRT3 = Math.sqrt(3);

function rotl(x: number, k: number): number {
  return ((x << k) | (x >>> (32 - k))) >>> 0;
}
