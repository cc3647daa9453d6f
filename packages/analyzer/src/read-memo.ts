/**
 * Answers already computed from a read-only store. An analysis verb asks for
 * the same facts from several places (its own plan, the check suite behind
 * its header, the provenance lines): on a store nothing in this process can
 * change, each is computed once. A writable store is never memoized.
 */
import type { Store } from '@tickwise/store';

const memo = new WeakMap<Store, Map<string, Promise<unknown>>>();

/**
 * `compute()` once per (store, key) on a read-only store; every call on a
 * writable one. A failed computation is forgotten, so the next caller sees
 * its own error. `key` must name everything the answer depends on.
 */
export function readOnce<T>(store: Store, key: string, compute: () => Promise<T>): Promise<T> {
  if (!store.readOnly) return compute();
  let byKey = memo.get(store);
  if (byKey === undefined) memo.set(store, (byKey = new Map()));
  let found = byKey.get(key) as Promise<T> | undefined;
  if (found === undefined) {
    found = compute();
    byKey.set(key, found);
    found.catch(() => byKey.delete(key));
  }
  return found;
}

/** A memo key from values (bigints as their digits). */
export function memoKey(...parts: unknown[]): string {
  return JSON.stringify(parts, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
}
