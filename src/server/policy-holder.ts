// Holds the policy set in force and turns callers into grants under it.

import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Caller } from '../auth/caller.js';
import { GuardError } from '../guard-error.js';
import { TemplateValueError } from '../policy/compile-graph-template.js';
import { grantFor } from '../policy/grant.js';
import type { Grant } from '../policy/policy-set.js';
import type { PolicySet } from '../policy/policy-set.js';

/**
 * The one mutable reference of the process: the compiled policy set. A reload swaps
 * it whole; a request reads it once, so requests in flight finish under the set
 * they started with.
 */
export interface PolicyHolder {
  current(): PolicySet | undefined;
  /** Puts `set` in force, fresh until `freshUntil` (Date.now() milliseconds; never stale when absent). */
  replace(set: PolicySet, freshUntil?: number): void;
  /** Moves the end of the set's freshness (a refresh read the same facts again). */
  extend(freshUntil: number): void;
  /**
   * What kept the facts from being renewed, for the stale refusal: 'source' (a fact source could
   * not be read or its answer was refused, or no load failed since), 'load' (the last load failed
   * otherwise: the files, the rules, the prefix listing).
   */
  staleCause(cause: 'source' | 'load'): void;
  /** Why the set in force may not be used ('' when it may): none loaded yet, or its facts are too old. */
  unusableReason(): string;
  /** Caller -> Grant, or 503 before the first load or once stale, 401 (anonymous) / 403 when no policy applies. */
  grant(caller: Caller): Grant;
}

/** The bound of the grants remembered by caller identity: entries, and graph references over all of them. */
export const GRANT_CACHE_ENTRIES = 10_000;
export const GRANT_CACHE_GRAPHS = 2_000_000;

/** The refusal of every query while the facts in force are older than a source's maxStaleMs. */
export const STALE_MESSAGE = 'the policies are stale: a fact source has not been read for longer than its maxStaleMs';
/** The same refusal when the sources were read but the set could not be loaded again (a policy or rule file, say). */
export const STALE_AFTER_FAILED_LOAD_MESSAGE =
  "the policies are stale: the facts in force are older than a fact source's maxStaleMs, as the policy set could not be loaded again since (see policies-reload-failed in the guard's log)";

/**
 * `challenge` is the `WWW-Authenticate` value of the 401 that refuses an anonymous caller
 * (authChallenge of the auth settings; Bearer by default).
 */
export function createPolicyHolder(challenge = 'Bearer'): PolicyHolder {
  let set: PolicySet | undefined;
  let freshUntil = Number.POSITIVE_INFINITY;
  let staleMessage = STALE_MESSAGE;
  // Grants of the callers identification hands out as shared frozen objects (API-key
  // callers, the anonymous caller, a JWT while its token is cached), computed once per
  // policy set: a per-caller object is weakly held, so per-request callers just miss.
  let grants = new WeakMap<Caller, Grant>();
  // Then by what a grant depends on (agent, groups, the claims templates read): a caller
  // identified anew on each request (trusted headers, a new token) gets the same grant
  // object back, and with it the dataset text built for that grant (applyGrant). Bounded by
  // entries and by the graphs they hold: a grant of 20,000 graphs costs 20,000.
  const byIdentity = createGrantCache();
  return {
    current: () => set,
    replace(next, until = Number.POSITIVE_INFINITY) {
      set = next;
      freshUntil = until;
      grants = new WeakMap();
      // Emptied, not made anew: a cache of 10,000 entries is arrays of that size to allocate.
      byIdentity.clear();
    },
    extend(until) {
      freshUntil = until;
    },
    staleCause(cause) {
      staleMessage = cause === 'load' ? STALE_AFTER_FAILED_LOAD_MESSAGE : STALE_MESSAGE;
    },
    unusableReason: () => (set === undefined ? 'policies are not loaded yet' : Date.now() >= freshUntil ? staleMessage : ''),
    grant(caller) {
      if (set === undefined) throw new GuardError(503, 'not_ready', 'policies are not loaded yet');
      // Fail closed: facts older than a source allows may hold revoked memberships.
      if (freshUntil !== Number.POSITIVE_INFINITY && Date.now() >= freshUntil) throw new GuardError(503, 'stale_policies', staleMessage);
      const cached = grants.get(caller);
      if (cached !== undefined) return cached;
      const key = identityKey(set, caller);
      let grant = byIdentity.get(key);
      if (grant === undefined) {
        grant = grantOf(set, caller);
        if (grant !== undefined) byIdentity.set(key, grant);
      }
      if (grant !== undefined) {
        grants.set(caller, grant);
        return grant;
      }
      if (!caller.authenticated) {
        throw new GuardError(401, 'unauthenticated', 'no policy grants anonymous access: send credentials', {
          'www-authenticate': challenge,
        });
      }
      throw new GuardError(403, 'forbidden', 'no policy applies to this caller');
    },
  };
}

function createGrantCache(): LRUCache<string, Grant> {
  return new LRUCache<string, Grant>({
    max: GRANT_CACHE_ENTRIES,
    maxSize: GRANT_CACHE_GRAPHS,
    sizeCalculation: (grant) => grant.graphs.size + 1,
  });
}

/** grantFor, with a caller whose identity cannot fill a graph template refused (403, one line). */
function grantOf(set: PolicySet, caller: Caller): Grant | undefined {
  try {
    return grantFor(set, caller);
  } catch (error) {
    if (error instanceof TemplateValueError) throw new GuardError(403, 'graph_template_value', error.message);
    throw error;
  }
}

/** Everything grantFor reads of a caller, as one string: the claims only those some template reads. */
function identityKey(set: PolicySet, caller: Caller): string {
  // 0 for a missing claim: JSON writes undefined in an array as null, which marks a claim that is not a string.
  const claims = set.lookup.templateClaims.map((name) => caller.claims?.get(name) ?? (caller.claims?.has(name) === true ? null : 0));
  const key = JSON.stringify([caller.authenticated, caller.agent, caller.groups, claims]);
  // A long identity (many groups, long claims: up to a token's 8,192 characters) is kept as its digest.
  return key.length <= MAX_PLAIN_KEY ? key : createHash('sha256').update(key).digest('base64');
}

/** The longest identity key kept as it is, characters: 10,000 of them stay under 10 MB. */
const MAX_PLAIN_KEY = 512;
