// Refuses, per store, the queries a store is known to answer beyond the caller's view although the guard's text is right.

import { GuardError } from '../guard-error.js';
import type { Plan } from '../sparql/plan.js';
import { saysVirtuoso } from '../upstream/check-dataset-support.js';

/** The one line of the refusal below. */
export const EXISTS_BESIDE_NEGATION =
  'the upstream store (Virtuoso) answers EXISTS, NOT EXISTS and MINUS wrongly beside the row and column checks this query needs: ask without them';

/**
 * The refusal of `plan` in front of the store whose Server header is `server`, or undefined. Virtuoso 7.2.5
 * evaluates a group whose filter holds an EXISTS (a row check of the guard's) beside a NOT EXISTS, `!EXISTS` or
 * MINUS over the same triple wrongly: `SELECT * { ?s ?p ?o MINUS { ?s ?p ?o } }` answered triples outside the
 * caller's view, hidden columns' values among them (docs/design/sparql.md, "Rows and columns"); likewise a
 * caller's EXISTS beside the per-graph checks of a merged default graph ("The hidden-path checks of such a
 * default graph"). The guard cannot write those checks another way there, so it refuses; other stores answer
 * it as the view.
 */
export function refuseForStore(plan: Plan, server: string | undefined): GuardError | undefined {
  if (!plan.existsBesideNegation || !saysVirtuoso(server)) return undefined;
  return new GuardError(403, 'forbidden', EXISTS_BESIDE_NEGATION);
}
