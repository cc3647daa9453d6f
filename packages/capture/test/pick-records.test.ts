import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { NdjsonPart } from '../src/json-records';
import { pickRecords } from '../src/pick-records';

/**
 * pickRecords reads staged NDJSON records back by index (the Chrome reader's
 * raw events). Staged here: records of seeded lengths (some long enough to
 * be read alone, most short so that runs share one read), split over parts.
 */
const dir = mkdtempSync(join(tmpdir(), 'tickwise-pick-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32);
}

function stage(n: number, perPart: number, seed: number): { texts: string[]; parts: NdjsonPart[]; ends: Float64Array } {
  const rnd = lcg(seed);
  const texts = Array.from({ length: n }, (_, i) => {
    const len = rnd() < 0.02 ? 70_000 + Math.floor(rnd() * 100_000) : Math.floor(rnd() * 200);
    return JSON.stringify({ i, pad: 'x'.repeat(len) });
  });
  const ends = new Float64Array(n);
  const parts: NdjsonPart[] = [];
  let at = 0;
  for (let first = 0, k = 0; first < n; first += perPart, k++) {
    const chunk = texts.slice(first, first + perPart).map((t) => `${t}\n`).join('');
    const path = join(dir, `s${seed}.ndjson.${k}`);
    writeFileSync(path, chunk);
    parts.push({ path, startByte: at, firstRecord: first, records: Math.min(perPart, n - first) });
    for (let i = first; i < first + perPart && i < n; i++) ends[i] = (i === 0 ? 0 : ends[i - 1]!) + Buffer.byteLength(texts[i]!) + 1;
    at += Buffer.byteLength(chunk);
  }
  return { texts, parts, ends };
}

async function pick(s: ReturnType<typeof stage>, recs: number[]): Promise<string[]> {
  const got: string[] = [];
  await pickRecords(s.parts, s.ends, recs, async (texts, from) => {
    expect(from).toBe(got.length);
    got.push(...texts);
  });
  return got;
}

describe('pickRecords', () => {
  it('hands on exactly the texts of the indexes asked for, across parts, gaps and runs', async () => {
    const s = stage(3000, 700, 7);
    const rnd = lcg(11);
    for (const density of [1, 0.5, 0.05, 0.002]) {
      const recs = [...s.texts.keys()].filter(() => rnd() < density);
      expect(await pick(s, recs)).toEqual(recs.map((i) => s.texts[i]));
    }
    expect(await pick(s, [])).toEqual([]);
    expect(await pick(s, [0, 699, 700, 2999])).toEqual([0, 699, 700, 2999].map((i) => s.texts[i]));
  });

  it('refuses indexes that are not strictly ascending, rather than handing on other records\' texts', async () => {
    // a join's output (the Chrome reader's NOT IN) need not keep order: such a list once stored 41k of a
    // 174 MB trace's 171k raw events with the wrong text
    const s = stage(400, 100, 3);
    for (const recs of [[5, 3], [10, 250, 120, 300], [7, 7]]) {
      await expect(pick(s, recs)).rejects.toThrow(/not ascending/);
    }
  });
});
