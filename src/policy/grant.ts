// What a caller may read: the result of policy look-up.

import type { PolicyLimits } from './policy-set.js';

/**
 * The graphs the policies of one caller grant, computed per request by map
 * look-ups in the compiled policy set.
 */
export interface Grant {
  /**
   * The caller's limits: per kind, the largest value among its policies that set one
   * (the most generous policy wins, as graphs are a union); a kind absent, or no limits at
   * all, = no policy sets it.
   */
  readonly limits?: PolicyLimits;
  /** Policy IRIs (bare, without angle brackets), in order of listing. */
  readonly policies: readonly string[];
  /** Every graph IRI granted for reading by at least one of those policies. */
  readonly graphs: ReadonlySet<string>;
  /**
   * Per granted graph, the predicates that stay hidden in it (DESIGN section 3:
   * intersection of the hidePath sets of the caller's policies granting that
   * graph). Graphs with nothing hidden are absent.
   */
  readonly hiddenByGraph: ReadonlyMap<string, ReadonlySet<string>>;
}
