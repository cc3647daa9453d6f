/**
 * DuckDB's GLOB, exactly, for names already in memory: the SQL analyses
 * select kernels with `kernel GLOB pattern` and the JS ones with
 * {@link globMatch}, and a differential test (test/glob.test.ts) holds the
 * two to the same answer on random patterns.
 *
 * `*` any run of bytes, `?` one byte, `[abc]` `[a-z]` one byte of a class,
 * `[!...]` one byte not in it, a `]` right after `[` or `[!` is a member,
 * `\x` the byte x itself. A class with no closing `]` makes the whole
 * pattern match nothing (as in DuckDB). Matching is on UTF-8 bytes and
 * case-sensitive.
 */
const enc = new TextEncoder();

function globBytes(s: Uint8Array, si0: number, p: Uint8Array, pi0: number): boolean {
  let si = si0;
  let pi = pi0;
  for (;;) {
    if (si >= s.length || pi >= p.length) break;
    const c = p[pi]!;
    if (c === 0x2a /* * */) {
      pi++;
      while (pi < p.length && p[pi] === 0x2a) pi++;
      if (pi === p.length) return true;
      for (; si < s.length; si++) if (globBytes(s, si, p, pi)) return true;
      return false;
    }
    if (c === 0x3f /* ? */) {
      si++;
      pi++;
      continue;
    }
    if (c === 0x5b /* [ */) {
      pi++;
      if (pi === p.length) return false;
      let invert = false;
      if (p[pi] === 0x21 /* ! */) {
        invert = true;
        pi++;
      }
      let found = invert;
      const start = pi;
      let closed = false;
      const b = s[si]!;
      while (pi < p.length) {
        const q = p[pi]!;
        if (q === 0x5d /* ] */ && pi > start) {
          closed = true;
          pi++;
          break;
        }
        if (pi + 1 === p.length) break;
        let matches: boolean;
        if (p[pi + 1] === 0x2d /* - */) {
          if (pi + 2 === p.length) break;
          matches = b >= q && b <= p[pi + 2]!;
          pi += 3;
        } else {
          matches = q === b;
          pi++;
        }
        if (found === invert && matches) found = !invert;
      }
      if (!closed || !found) return false;
      si++;
      continue;
    }
    if (c === 0x5c /* \ */) {
      pi++;
      if (pi === p.length) return false;
    }
    if (s[si] !== p[pi]) return false;
    si++;
    pi++;
  }
  while (pi < p.length && p[pi] === 0x2a) pi++;
  return pi === p.length && si === s.length;
}

/** Whether `name GLOB glob` is true in DuckDB. */
export function globMatch(glob: string, name: string): boolean {
  return globBytes(enc.encode(name), 0, enc.encode(glob), 0);
}

/** A matcher for one glob (what `RegExp.test` was used for). */
export function globMatcher(glob: string): { test: (name: string) => boolean } {
  const p = enc.encode(glob);
  return { test: (name) => globBytes(enc.encode(name), 0, p, 0) };
}
