import { execFileSync } from 'node:child_process';
import { mkdtempSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MarkerCounter, ProvenanceError, fileFacts } from '../src/provenance/index';
import { seededRng } from '@tickwise/time';

const tmp = () => mkdtempSync(join(tmpdir(), 'tickwise-facts-'));

/** Non-overlapping count over the whole buffer: what Python's bytes.count gives. */
function naiveCount(hay: Buffer, needle: string): number {
  const n = Buffer.from(needle);
  let count = 0;
  for (let at = hay.indexOf(n); at >= 0; at = hay.indexOf(n, at + n.length)) count++;
  return count;
}

/** A seeded pseudo-random generator (xorshift32), so the file is the same on every run. */
/** The project's one seeded PRNG (mulberry32, @tickwise/time). */
const rng = (seed: number): (() => number) => seededRng(seed).next;

describe('fileFacts', () => {
  it('size, mtime, sha256 (sha256sum as oracle), realpath, no build-id for a non-ELF file', async () => {
    const d = tmp();
    const f = join(d, 'data.bin');
    writeFileSync(f, 'kernel_v2 kernel_v2 kernel_v1\n');
    utimesSync(f, new Date('2026-11-28T10:00:00.250Z'), new Date('2026-11-28T10:00:00.250Z'));
    const facts = await fileFacts(f, ['kernel_v2', 'kernel_v1', 'absent']);
    expect(facts.size_bytes).toBe(30);
    expect(facts.mtime_iso).toBe('2026-11-28T10:00:00.250Z');
    expect(facts.mtime_ns).toBe(statSync(f, { bigint: true }).mtimeNs);
    expect(facts.sha256).toBe(execFileSync('sha256sum', [f], { encoding: 'utf8' }).split(' ')[0]);
    expect(facts.markers).toEqual({ kernel_v2: 2, kernel_v1: 1, absent: 0 });
    expect(facts.is_elf).toBe(false);
    expect(facts.build_id).toBeNull();
    expect(facts.realpath).toBe(f);
  });

  it('an ELF file: build-id as readelf -n prints it', async () => {
    const facts = await fileFacts('/bin/ls', []);
    const notes = execFileSync('readelf', ['-n', '/bin/ls'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    expect(facts.is_elf).toBe(true);
    expect(facts.build_id).toBe(/Build ID: ([0-9a-f]+)/.exec(notes)![1]);
  });

  it('marker counts equal a whole-buffer count for every chunk size, markers spanning chunk boundaries', async () => {
    const rand = rng(42);
    const markers = ['gemm_q4k_v7', 'ab', 'aaa', 'xyz_unseen', 'é_marker'];
    const parts: Buffer[] = [];
    for (let i = 0; i < 3000; i++) {
      const r = rand();
      if (r < 0.05) parts.push(Buffer.from('gemm_q4k_v7'));
      else if (r < 0.1) parts.push(Buffer.from('aaaaa'));
      else if (r < 0.12) parts.push(Buffer.from('é_marker'));
      else parts.push(Buffer.from(String.fromCharCode(97 + Math.floor(rand() * 3)).repeat(1 + Math.floor(rand() * 4))));
    }
    const data = Buffer.concat(parts);
    const f = join(tmp(), 'lib.bin');
    writeFileSync(f, data);
    const truth = Object.fromEntries(markers.map((m) => [m, naiveCount(data, m)]));
    expect(truth['gemm_q4k_v7']).toBeGreaterThan(100);
    for (const chunk of [1, 2, 3, 5, 7, 11, 64, 1000, 1 << 20]) {
      const facts = await fileFacts(f, markers, { chunk_bytes: chunk });
      expect(facts.markers, `chunk ${chunk}`).toEqual(truth);
    }
  });

  it('MarkerCounter: a marker split across two pushes is counted once; overlapping occurrences are not', () => {
    const c = new MarkerCounter(['abcabc', 'cab']);
    c.push(Buffer.from('xxabc'));
    c.push(Buffer.from('abcabcab'));
    c.push(Buffer.from('c'));
    // "xxabcabcabcabc": abcabc at 2 and 8 (non-overlapping), cab at 4 and 10 (and 7 overlaps 4..6? no: 4..6 then 7..9 ok)
    expect(c.counts()).toEqual({ abcabc: naiveCount(Buffer.from('xxabcabcabcabc'), 'abcabc'), cab: naiveCount(Buffer.from('xxabcabcabcabc'), 'cab') });
  });

  it('errors: a missing file, an empty marker', async () => {
    await expect(fileFacts('/nonexistent/x', [])).rejects.toBeInstanceOf(ProvenanceError);
    await expect(fileFacts('/bin/ls', [''])).rejects.toThrow('a marker string must not be empty');
  });
});
