// Finds which parts of the dataset a query can read: the default graph, the named graphs, or both.

import { walkQuery } from './walk-query.js';

/** What a query can read of its dataset (SPARQL 1.1 §13.3). */
export interface DatasetReach {
  /** A triple pattern or property path stands outside every GRAPH element: it is matched in the default graph. */
  readonly readsDefault: boolean;
  /** A GRAPH element stands somewhere (at any depth: OPTIONAL, UNION, MINUS, sub-selects, EXISTS). */
  readonly readsNamed: boolean;
}

/**
 * The parts of the dataset `root` (DESCRIBE already rewritten) can read: only triple patterns and
 * paths read the active graph (§18.5), the default graph outside GRAPH (§18.6); a CONSTRUCT template
 * reads nothing. Triples are found by their shape wherever the tree holds them.
 */
export function findDatasetReach(root: unknown): DatasetReach {
  let readsDefault = false;
  let readsNamed = false;
  let insideGraph = 0;
  // The CONSTRUCT template is the root's `template`: walk every other field.
  const fields = typeof root === 'object' && root !== null && !Array.isArray(root) ? { ...root, template: undefined } : root;
  walkQuery(fields, {
    enter(node) {
      if (node['type'] === 'graph') {
        readsNamed = true;
        insideGraph += 1;
      } else if (insideGraph === 0 && 'subject' in node && 'predicate' in node && 'object' in node) {
        readsDefault = true;
      }
    },
    leave(node) {
      if (node['type'] === 'graph') insideGraph -= 1;
    },
  });
  return { readsDefault, readsNamed };
}
