// Holds the policy set in force and turns callers into grants under it.

import type { Caller } from '../auth/caller.js';
import { GuardError } from '../guard-error.js';
import { grantFor, type Grant } from '../policy/grant.js';
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
  /** Why the set in force may not be used ('' when it may): none loaded yet, or its facts are too old. */
  unusableReason(): string;
  /** Caller -> Grant, or 503 before the first load or once stale, 401 (anonymous) / 403 when no policy applies. */
  grant(caller: Caller): Grant;
}

/** The refusal of every query while the facts in force are older than a source's maxStaleMs. */
export const STALE_MESSAGE = 'the policies are stale: a fact source has not been read for longer than its maxStaleMs';

/**
 * `challenge` is the `WWW-Authenticate` value of the 401 that refuses an anonymous caller
 * (authChallenge of the auth settings; Bearer by default).
 */
export function createPolicyHolder(challenge = 'Bearer'): PolicyHolder {
  let set: PolicySet | undefined;
  let freshUntil = Number.POSITIVE_INFINITY;
  // Grants of the callers identification hands out as shared frozen objects (API-key
  // callers, the anonymous caller), computed once per policy set: a per-caller object
  // is weakly held, so per-request callers (trusted headers) just miss and are collected.
  let grants = new WeakMap<Caller, Grant>();
  return {
    current: () => set,
    replace(next, until = Number.POSITIVE_INFINITY) {
      set = next;
      freshUntil = until;
      grants = new WeakMap();
    },
    extend(until) {
      freshUntil = until;
    },
    unusableReason: () => (set === undefined ? 'policies are not loaded yet' : Date.now() >= freshUntil ? STALE_MESSAGE : ''),
    grant(caller) {
      if (set === undefined) throw new GuardError(503, 'policies are not loaded yet');
      // Fail closed: facts older than a source allows may hold revoked memberships.
      if (freshUntil !== Number.POSITIVE_INFINITY && Date.now() >= freshUntil) throw new GuardError(503, STALE_MESSAGE);
      const cached = grants.get(caller);
      if (cached !== undefined) return cached;
      const grant = grantFor(set, caller);
      if (grant !== undefined) {
        grants.set(caller, grant);
        return grant;
      }
      if (!caller.authenticated) {
        throw new GuardError(401, 'no policy grants anonymous access: send credentials', {
          'www-authenticate': challenge,
        });
      }
      throw new GuardError(403, 'no policy applies to this caller');
    },
  };
}
