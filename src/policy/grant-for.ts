// Answers, per request, what a caller may read: a few map look-ups in the compiled policy set.

import type { Caller } from '../auth/caller.js';
import { mergeInOrder } from './compile-policy-set.js';
import { composeGrant } from './compose-grant.js';
import type { Grant } from './grant.js';
import type { CompiledPolicy, PolicySet } from './policy-set.js';

/**
 * The grant of `caller`: the policies for Everyone, for AuthenticatedAgent
 * (authenticated callers only), for its agent IRI and for each of its groups,
 * merged in order of listing without duplicates (docs/design.md#vocabulary).
 * `undefined` when no policy applies; the caller of this function answers
 * 401 or 403 (docs/design.md#identity). No reasoning happens here.
 */
export function grantFor(set: PolicySet, caller: Caller): Grant | undefined {
  const { lookup } = set;
  const extra: (readonly CompiledPolicy[])[] = [];
  const own = lookup.agents.get(caller.agent);
  if (own !== undefined) extra.push(own);
  for (const group of caller.groups) {
    const list = lookup.groups.get(group);
    if (list !== undefined) extra.push(list);
  }
  // The common case (no policy names this agent or its groups) was computed at load.
  if (extra.length === 0) return caller.authenticated ? lookup.authenticatedGrant : lookup.everyoneGrant;

  const base = caller.authenticated ? [lookup.everyone, lookup.authenticated] : [lookup.everyone];
  return composeGrant(mergeInOrder([...base, ...extra]));
}
