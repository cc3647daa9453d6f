/**
 * The fast tick -> ns mapping in SQL (DOUBLE where provably exact, HUGEINT
 * otherwise) against the exact bigint arithmetic of @tickwise/time's
 * tickToNs, on seeded random clock maps and ticks and on the adversarial
 * cases: exact ties (x.5 ns), values a hair either side of a half, negative
 * offsets, ticks near 2^64, offsets beyond 2^52 ns.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Store } from '@tickwise/store';
import { FIT_DEN, seededRng, tickToNs, type ClockMap } from '@tickwise/time';
import { tickNsExactSql, tickNsSql } from '../src/tick-sql';

interface Case {
  tick: bigint;
  base_tick: bigint;
  base_ns: bigint;
  num: bigint;
}

const U64_MAX = (1n << 64n) - 1n;
const I63 = (1n << 63n) - 1n;

function cases(): Case[] {
  const rng = seededRng(20261203);
  const big = (bits: number) => {
    let x = 0n;
    for (let i = 0; i < bits; i += 16) x = (x << 16n) | BigInt(rng.int(1 << 16));
    return x & ((1n << BigInt(bits)) - 1n);
  };
  const out: Case[] = [];
  const nums = [10n ** 16n, 5n * 10n ** 14n, 10001900360000012n, 999999999999999n, 10n ** 15n + 1n, 1n, 3n, 41666666666666667n];
  for (let i = 0; i < 6000; i++) {
    const num = i % 3 === 0 ? nums[i % nums.length]! : 1n + big(i % 2 ? 58 : 40);
    const base_tick = big(i % 5 === 0 ? 63 : 44);
    const base_ns = 1_700_000_000_000_000_000n + big(40);
    const span = big(i % 7 === 0 ? 60 : 36);
    const tick = i % 2 ? base_tick + span : base_tick > span ? base_tick - span : 0n;
    out.push({ tick: tick > U64_MAX ? U64_MAX : tick, base_tick, base_ns, num });
  }
  // exact ties and near-ties: num = k * den / 2 makes odd offsets land on .5 exactly
  for (let dt = 1n; dt < 200n; dt += 2n) out.push({ tick: 1000n + dt, base_tick: 1000n, base_ns: 5n, num: 5n * 10n ** 14n });
  for (let dt = 1n; dt < 200n; dt += 2n) out.push({ tick: 1000n, base_tick: 1000n + dt, base_ns: 5n, num: 5n * 10n ** 14n });
  for (const d of [-2n, -1n, 1n, 2n]) out.push({ tick: 10n ** 12n + 1n, base_tick: 0n, base_ns: 0n, num: 5n * 10n ** 14n + d });
  // the largest ticks, and offsets whose doubles are whole numbers
  out.push({ tick: U64_MAX, base_tick: U64_MAX - 12345n, base_ns: 0n, num: 10n ** 16n });
  out.push({ tick: 1n << 60n, base_tick: 0n, base_ns: 0n, num: 4n * 10n ** 15n });
  return out.filter((c) => {
    const ns = expected(c);
    return ns <= I63 && ns >= -I63;
  });
}

function expected(c: Case): bigint {
  const map = { base_tick: c.base_tick, base_ns: c.base_ns, ns_per_tick_num: c.num } as unknown as ClockMap;
  return tickToNs(map, c.tick);
}

describe('tickNsSql: DOUBLE where provably exact, else HUGEINT', () => {
  let store: Store;
  const all = cases();
  beforeAll(async () => {
    store = await Store.open(':memory:');
    await store.run('CREATE TEMP TABLE c (i INTEGER, tick UBIGINT, base_tick HUGEINT, base_ns HUGEINT, num HUGEINT, want BIGINT)');
    for (let at = 0; at < all.length; at += 500) {
      const values = all.slice(at, at + 500).map((c, k) => `(${at + k}, ${c.tick}, ${c.base_tick}, ${c.base_ns}, ${c.num}, ${expected(c)})`);
      await store.run(`INSERT INTO c VALUES ${values.join(', ')}`);
    }
  });
  afterAll(async () => store.close());

  it(`equals tickToNs exactly on ${all.length} seeded and adversarial cases (FIT_DEN ${FIT_DEN})`, async () => {
    const bad = await store.rows(`SELECT i, tick, want, ${tickNsSql('f.tick', 'f')} AS got, ${tickNsExactSql('f.tick', 'f')} AS exact
      FROM c f WHERE got IS DISTINCT FROM want OR exact IS DISTINCT FROM want LIMIT 5`);
    expect(bad).toEqual([]);
    expect(Number(await store.scalar('SELECT count(*) FROM c'))).toBe(all.length);
  });

  it('takes the exact path on ties and keeps round-half-away-from-zero', async () => {
    const r = await store.rows(`SELECT ${tickNsSql('3::UBIGINT', 'f')} AS up, ${tickNsSql('0::UBIGINT', 'f')} AS down
      FROM (SELECT 0::HUGEINT AS base_ns, 0::HUGEINT AS base_tick, 500000000000000::HUGEINT AS num UNION ALL SELECT 0, 3, 500000000000000) f ORDER BY base_tick`);
    // 3 ticks x 0.5 ns = 1.5 ns -> 2; -3 ticks x 0.5 ns = -1.5 ns -> -2
    expect(r).toEqual([{ up: 2n, down: 0n }, { up: 0n, down: -2n }]);
  });
});
