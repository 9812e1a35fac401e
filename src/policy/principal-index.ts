// The principals of a policy set as typed arrays: built on the policy worker, moved to the serving thread without a copy, and searched there by name.

import { randomBytes } from 'node:crypto';
import type { Principal } from './policy-set.js';

/** The kinds of principal, in the order `AttachedPolicies.principalKinds` numbers them. */
export const PRINCIPAL_KINDS = ['everyone', 'authenticated', 'agent', 'group'] as const;

/** A key unique per principal, readable in an operator's listing. */
export function principalKey(principal: Principal): string {
  switch (principal.kind) {
    case 'everyone':
      return 'Everyone';
    case 'authenticated':
      return 'AuthenticatedAgent';
    case 'agent':
      return `<${principal.agent}>`;
    case 'group':
      return `group ${JSON.stringify(principal.group)}`;
  }
}

/**
 * Every distinct principal of a load, in columns: principal i has kind `kinds[i]` (an index
 * into PRINCIPAL_KINDS), its name (agent IRI or group name, '' for Everyone and
 * AuthenticatedAgent) is `units` from `ends[i - 1]` (0 for the first) to `ends[i]` as UTF-16
 * code units (a byte each when no name has one above U+00FF), and its policies, in order of listing, are `policies` from `policyStarts[i]` to
 * `policyStarts[i + 1]`. `slots` is an open-addressing table over kind and name (hashed with
 * `seed`): each slot holds a principal number plus one, 0 when empty, and at least half the
 * slots are empty.
 */
export interface PrincipalIndex {
  readonly kinds: Uint8Array;
  readonly units: Uint8Array | Uint16Array;
  readonly ends: Int32Array;
  readonly policyStarts: Int32Array;
  readonly policies: Int32Array;
  readonly seed: number;
  readonly slots: Int32Array;
}

/**
 * Indexes the principals of a load: `kinds` and `names` per principal, and per policy the
 * principals it names (`principalStarts`, `principalIndexes`: policy p names
 * `principalIndexes[k]` for k from `principalStarts[p]` to `principalStarts[p + 1]`).
 *
 * With memberships read from the store, a load has as many principals as members. As typed
 * arrays, the thread that serves requests receives them without a copy and without making an
 * object per principal (a hundred thousand strings and a Map of them were tens of milliseconds
 * of that thread's time, and as much again of its collector's, at every refresh). The seed is
 * drawn per load, as V8 seeds its own string hashes, so no name list collides on purpose.
 */
export function indexPrincipals(
  kinds: Uint8Array,
  names: readonly string[],
  principalStarts: Int32Array,
  principalIndexes: Int32Array,
): PrincipalIndex {
  const ends = new Int32Array(names.length);
  let length = 0;
  for (let at = 0; at < names.length; at += 1) {
    length += (names[at] as string).length;
    ends[at] = length;
  }
  // One byte per code unit when every name allows it (IRIs almost always do), else two.
  const wide = names.some((name) => /[^\u0000-\u00ff]/.test(name));
  const units = wide ? new Uint16Array(length) : new Uint8Array(length);
  for (let at = 0, start = 0; at < names.length; at += 1) {
    const name = names[at] as string;
    for (let k = 0; k < name.length; k += 1) units[start + k] = name.charCodeAt(k);
    start += name.length;
  }
  const seed = randomBytes(4).readInt32LE(0);
  let size = 2;
  while (size < names.length * 2) size *= 2;
  const slots = new Int32Array(size);
  const mask = size - 1;
  for (let at = 0; at < names.length; at += 1) {
    let slot = hashPrincipal(seed, kinds[at] as number, names[at] as string) & mask;
    while (slots[slot] !== 0) slot = (slot + 1) & mask;
    slots[slot] = at + 1;
  }
  const { starts: policyStarts, values: policies } = invertRanges(principalStarts, principalIndexes, names.length);
  return { kinds, units, ends, policyStarts, policies, seed, slots };
}

/** The principal of `kind` named `name`, or -1 when the index has none. */
export function findPrincipal(index: PrincipalIndex, kind: number, name: string): number {
  const { slots, kinds, units, ends } = index;
  const mask = slots.length - 1;
  for (let slot = hashPrincipal(index.seed, kind, name) & mask; ; slot = (slot + 1) & mask) {
    const entry = slots[slot] as number;
    if (entry === 0) return -1;
    const at = entry - 1;
    if (kinds[at] !== kind) continue;
    const start = at === 0 ? 0 : (ends[at - 1] as number);
    if ((ends[at] as number) - start !== name.length) continue;
    let same = true;
    for (let k = 0; k < name.length && same; k += 1) same = units[start + k] === name.charCodeAt(k);
    if (same) return at;
  }
}

/** The name of principal `at`, code unit for code unit (a decoder would replace a lone surrogate). */
export function principalName(index: PrincipalIndex, at: number): string {
  const end = index.ends[at] as number;
  let name = '';
  for (let from = at === 0 ? 0 : (index.ends[at - 1] as number); from < end; from += 4096) {
    name += String.fromCharCode(...index.units.subarray(from, Math.min(end, from + 4096)));
  }
  return name;
}

/** FNV-1a over the kind and the code units, seeded, then mixed (murmur3's finaliser) so the low bits that pick a slot depend on every unit. */
function hashPrincipal(seed: number, kind: number, name: string): number {
  let hash = (seed ^ kind) | 0;
  for (let k = 0; k < name.length; k += 1) hash = Math.imul(hash ^ name.charCodeAt(k), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  return (hash ^ (hash >>> 16)) >>> 0;
}

/** From ranges per policy (the principals each names) to ranges per principal (the policies naming it, in order). */
function invertRanges(starts: Int32Array, values: Int32Array, count: number): { starts: Int32Array; values: Int32Array } {
  const inverted = new Int32Array(count + 1);
  for (const value of values) inverted[value + 1] = (inverted[value + 1] as number) + 1;
  for (let at = 0; at < count; at += 1) inverted[at + 1] = (inverted[at + 1] as number) + (inverted[at] as number);
  const next = inverted.slice(0, count);
  const out = new Int32Array(values.length);
  for (let owner = 0; owner + 1 < starts.length; owner += 1) {
    for (let k = starts[owner] as number, end = starts[owner + 1] as number; k < end; k += 1) {
      const value = values[k] as number;
      out[next[value] as number] = owner;
      next[value] = (next[value] as number) + 1;
    }
  }
  return { starts: inverted, values: out };
}
