import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { importInput } from '../src/index';
import { tmp } from './helpers';

/**
 * B/E pairing against a reference that knows the answer: per (pid, tid), the
 * events in time order (file order among equal times) run through a stack;
 * an E closes the innermost open B, an E with none open closes nothing. The
 * traces are seeded and have what real ones have and a pairing can get
 * wrong: deep nesting, ties, threads interleaved in the file, events out of
 * time order in the file, B's never closed, E's with nothing open (also
 * before a B of the same level), numeric and string pids, fractional us.
 */

function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Ev {
  ph: 'B' | 'E';
  pid: number | string;
  tid: number;
  /** ns, exact (the trace says ts_ns / 1000 us). */
  tsNs: bigint;
  id: number;
}

/** One trace: events per thread with a true nesting, then an E or a B in the wrong place now and then. */
function generate(seed: number): Ev[] {
  const r = rng(seed);
  const threads: Ev[][] = [];
  let id = 0;
  for (const pid of [7, 'gpu-host']) {
    for (let tid = 1; tid <= 3; tid++) {
      const evs: Ev[] = [];
      let t = 1_000_000n + BigInt(Math.floor(r() * 1000)) * 250n;
      let open = 0;
      const n = 5 + Math.floor(r() * 60);
      for (let i = 0; i < n; i++) {
        // a tie now and then (ns steps of 250: the us text has a fraction)
        if (r() > 0.2) t += BigInt(1 + Math.floor(r() * 8)) * 250n;
        const u = r();
        const ph: 'B' | 'E' = u < 0.06 ? 'E' : u < 0.1 ? 'B' : open === 0 || (u < 0.55 && open < 12) ? 'B' : 'E';
        if (ph === 'B') open++;
        else if (open > 0) open--;
        evs.push({ ph, pid, tid, tsNs: t, id: id++ });
      }
      threads.push(evs);
    }
  }
  // interleave the threads in the file; now and then an event moves a few places within its thread's file order
  const file: Ev[] = [];
  const at = threads.map(() => 0);
  while (at.some((k, i) => k < threads[i]!.length)) {
    const live = at.map((k, i) => (k < threads[i]!.length ? i : -1)).filter((i) => i >= 0);
    const i = live[Math.floor(r() * live.length)]!;
    file.push(threads[i]![at[i]!++]!);
  }
  for (let k = 0; k < file.length / 20; k++) {
    const a = Math.floor(r() * file.length);
    const b = Math.min(file.length - 1, a + 1 + Math.floor(r() * 4));
    [file[a], file[b]] = [file[b]!, file[a]!];
  }
  return file;
}

/** The reference: B line -> E's ns (or null: never closed); the lines of E's that close nothing. */
function stackPairs(file: readonly Ev[], lineOf: (i: number) => number): { ends: Map<number, bigint | null>; unmatchedE: number[] } {
  const byThread = new Map<string, number[]>();
  file.forEach((e, i) => {
    const k = `${typeof e.pid}:${e.pid}/${e.tid}`;
    byThread.set(k, [...(byThread.get(k) ?? []), i]);
  });
  const ends = new Map<number, bigint | null>();
  const unmatchedE: number[] = [];
  for (const idx of byThread.values()) {
    idx.sort((a, b) => (file[a]!.tsNs < file[b]!.tsNs ? -1 : file[a]!.tsNs > file[b]!.tsNs ? 1 : a - b));
    const stack: number[] = [];
    for (const i of idx) {
      if (file[i]!.ph === 'B') {
        stack.push(i);
        ends.set(lineOf(i), null);
      } else if (stack.length > 0) ends.set(lineOf(stack.pop()!), file[i]!.tsNs);
      else unmatchedE.push(lineOf(i));
    }
  }
  return { ends, unmatchedE: unmatchedE.sort((a, b) => a - b) };
}

/** ns -> the trace's us text ("1000250" -> "1000.25"). */
function usText(ns: bigint): string {
  const s = ns.toString().padStart(4, '0');
  const frac = s.slice(-3).replace(/0+$/, '');
  return frac === '' ? s.slice(0, -3) : `${s.slice(0, -3)}.${frac}`;
}

describe('Chrome trace: B/E pairing equals a stack per thread', () => {
  it('on 40 seeded traces: every B closed by the right E (or by none), every E that closes nothing kept raw', async () => {
    const dir = tmp('tickwise-pairing-');
    let pairs = 0;
    let openB = 0;
    let loneE = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const file = generate(seed);
      // one event a line, after the first line `{"traceEvents": [`
      const lines = file.map((e, i) => {
        const pid = typeof e.pid === 'number' ? e.pid : JSON.stringify(e.pid);
        const b = e.ph === 'B' ? `"name":"f${e.id}","cat":"cpu",` : '';
        return `{"ph":"${e.ph}",${b}"pid":${pid},"tid":${e.tid},"ts":${usText(e.tsNs)}}${i + 1 < file.length ? ',' : ''}`;
      });
      const path = join(dir, `be-${seed}.json`);
      writeFileSync(path, `{"traceEvents": [\n${lines.join('\n')}\n]}\n`);
      const want = stackPairs(file, (i) => i + 2);

      const store = await Store.open(':memory:');
      try {
        await importInput(store, path);
        const got = await store.rows(`SELECT line, end_ns FROM host_events WHERE kind = 'slice' ORDER BY line`);
        expect(new Map(got.map((g) => [Number(g['line']), g['end_ns'] as bigint | null])), `seed ${seed}`).toEqual(want.ends);
        const raw = await store.rows(`SELECT line FROM raw_records WHERE record_type = 'chrome:E' ORDER BY line`);
        expect(raw.map((x) => Number(x['line'])), `seed ${seed}`).toEqual(want.unmatchedE);
        const diag = await store.rows(`SELECT code, message FROM diagnostics WHERE code IN ('unmatched-begin', 'unmatched-end') ORDER BY code`);
        const nOpen = [...want.ends.values()].filter((v) => v === null).length;
        expect(diag.map((d) => d['code']), `seed ${seed}`).toEqual([...(nOpen > 0 ? ['unmatched-begin'] : []), ...(want.unmatchedE.length > 0 ? ['unmatched-end'] : [])]);
        pairs += want.ends.size - nOpen;
        openB += nOpen;
        loneE += want.unmatchedE.length;
      } finally {
        await store.close();
      }
    }
    // the seeds reach every case
    expect(pairs).toBeGreaterThan(1000);
    expect(openB).toBeGreaterThan(50);
    expect(loneE).toBeGreaterThan(50);
  }, 120_000);
});
