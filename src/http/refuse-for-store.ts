// Refuses, per store, the queries a store is known to answer beyond the caller's view although the guard's text is right.

import { GuardError } from '../guard-error.js';
import type { Plan } from '../sparql/plan.js';
import { saysVirtuoso } from '../upstream/check-dataset-support.js';

/** The one line of the refusal below. */
export const EXISTS_BESIDE_NEGATION =
  'the upstream store (Virtuoso) answers EXISTS, NOT EXISTS and MINUS wrongly beside the row and column checks this query needs: ask without them';

/** The one line of the refusal of an EXISTS in a SELECT clause. */
export const EXISTS_IN_PROJECTION =
  'the upstream store (Virtuoso) evaluates an EXISTS or NOT EXISTS in a SELECT expression over every graph, not the granted ones: move it into a BIND or FILTER in the WHERE clause';

/**
 * Virtuoso 7.2.5 also evaluates an EXISTS or NOT EXISTS inside an expression of the SELECT clause (a projection,
 * an aggregate's argument) over every graph of the store, ignoring FROM: an anonymous caller granted one graph
 * read `SELECT (IF(EXISTS { ?s ?p "CANARY-SECRET-1" }, 1, 0) AS ?k) WHERE { }` as 1, and 0 for a value no graph
 * holds (test/stores/store-hazards.test.ts). The same EXISTS in a BIND or a FILTER reads FROM only, and in the
 * graph-filter form (datasetForm, "auto" in front of Virtuoso) every EXISTS reads the granted graphs only.
 *
 * The refusal of `plan` in front of the store whose Server header is `server`, or undefined. Virtuoso 7.2.5
 * evaluates a group whose filter holds an EXISTS (a row check of the guard's) beside a NOT EXISTS, `!EXISTS` or
 * MINUS over the same triple wrongly: `SELECT * { ?s ?p ?o MINUS { ?s ?p ?o } }` answered triples outside the
 * caller's view, hidden columns' values among them (docs/design/sparql.md, "Rows and columns"); likewise a
 * caller's EXISTS beside the per-graph checks of a merged default graph ("The hidden-path checks of such a
 * default graph"). The guard cannot write those checks another way there, so it refuses; other stores answer
 * it as the view.
 */
export function refuseForStore(plan: Plan, server: string | undefined): GuardError | undefined {
  if (!saysVirtuoso(server)) return undefined;
  // In the graph-filter form each pattern of the EXISTS stands in a GRAPH held to the dataset by a filter, which
  // Virtuoso applies there too: only the clauses' text leaves it the whole store.
  if (plan.existsInProjection && plan.clausesQuery === undefined) return new GuardError(403, 'forbidden', EXISTS_IN_PROJECTION);
  if (!plan.existsBesideNegation) return undefined;
  return new GuardError(403, 'forbidden', EXISTS_BESIDE_NEGATION);
}
