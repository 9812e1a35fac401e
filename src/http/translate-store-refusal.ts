// Tells a store's refusal of a query too large for it (a grant of thousands of graphs) from any other answer of the store.

import { GuardError } from '../guard-error.js';
import type { Plan } from '../sparql/plan.js';

/**
 * From this many granted graphs in the forwarded dataset (FROM and FROM NAMED clauses), a
 * store's refusal is put down to its size: the smallest limit measured is Virtuoso's, 4,094
 * graphs per list (docs/operations.md, "Grant size"); 1,000 leaves room for the other
 * stores' limits on the whole text.
 */
export const LARGE_DATASET_GRAPHS = 1_000;

/** The statuses stores answer a query too long or with too many dataset clauses with. */
const SIZE_REFUSALS = new Set([400, 413, 414, 431, 500]);

/**
 * The one-line error that replaces the store's own answer when the store refused a query
 * that the guard generated (so valid SPARQL 1.1) with a dataset of LARGE_DATASET_GRAPHS or
 * more granted graphs: undefined for every other answer, which passes to the caller unchanged. Virtuoso answers 400 with its SQL compiler's
 * message ("Too many arguments ...") past 4,094 graphs in FROM; a store's bare 400 would tell
 * the caller its query is wrong, when it is the grant that is too large for the store.
 */
export function translateStoreRefusal(status: number, plan: Plan): GuardError | undefined {
  if (!SIZE_REFUSALS.has(status)) return undefined;
  // A query large of itself (a VALUES block of 20,000 rows) is the caller's: the store's answer stands.
  if (plan.datasetGraphs < LARGE_DATASET_GRAPHS) return undefined;
  const bytes = plan.formBytes;
  const size = `${plan.datasetGraphs.toLocaleString('en-US')} graphs in its dataset, ${Math.ceil(bytes / 1024).toLocaleString('en-US')} KiB`;
  return new GuardError(
    502,
    'store_refused_large_dataset',
    `the store refused the query as forwarded (HTTP ${status}): with ${size}, it is larger than this store accepts; name fewer graphs with FROM / FROM NAMED, or ask the operator (grant size, docs/operations.md)`,
  );
}
