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
  replace(set: PolicySet): void;
  /** Caller -> Grant, or 503 before the first load, 401 (anonymous) / 403 when no policy applies. */
  grant(caller: Caller): Grant;
}

/**
 * `challenge` is the `WWW-Authenticate` value of the 401 that refuses an anonymous caller
 * (authChallenge of the auth settings; Bearer by default).
 */
export function createPolicyHolder(challenge = 'Bearer'): PolicyHolder {
  let set: PolicySet | undefined;
  // Grants of the callers identification hands out as shared frozen objects (API-key
  // callers, the anonymous caller), computed once per policy set: a per-caller object
  // is weakly held, so per-request callers (trusted headers) just miss and are collected.
  let grants = new WeakMap<Caller, Grant>();
  return {
    current: () => set,
    replace(next) {
      set = next;
      grants = new WeakMap();
    },
    grant(caller) {
      if (set === undefined) throw new GuardError(503, 'not_ready', 'policies are not loaded yet');
      const cached = grants.get(caller);
      if (cached !== undefined) return cached;
      const grant = grantFor(set, caller);
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
