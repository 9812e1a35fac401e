// Finds which parts of the dataset a query can read: the default graph, the named graphs, or both.

import { walkQuery } from './walk-query.js';

/** What a query can read of its dataset (SPARQL 1.1 §13.3). */
export interface DatasetReach {
  /** A triple pattern or property path stands outside every GRAPH element: it is matched in the default graph. */
  readonly readsDefault: boolean;
  /** A GRAPH element stands somewhere (at any depth: OPTIONAL, UNION, MINUS, sub-selects, EXISTS). */
  readonly readsNamed: boolean;
  /**
   * When every GRAPH element names an IRI: those IRIs, sorted, the only named graphs the query can
   * read (§18.6), so FROM NAMED need list no other. Undefined when one names a variable, or none stands.
   */
  readonly namedIris?: readonly string[];
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
  const iris = new Set<string>();
  let graphVariable = false;
  // The CONSTRUCT template is the root's `template`: walk every other field.
  const fields = typeof root === 'object' && root !== null && !Array.isArray(root) ? { ...root, template: undefined } : root;
  walkQuery(fields, {
    enter(node) {
      if (node['type'] === 'graph') {
        readsNamed = true;
        insideGraph += 1;
        const name = node['name'] as { termType?: unknown; value?: unknown } | undefined;
        if (name?.termType === 'NamedNode' && typeof name.value === 'string') iris.add(name.value);
        else graphVariable = true;
      } else if (insideGraph === 0 && 'subject' in node && 'predicate' in node && 'object' in node) {
        readsDefault = true;
      }
    },
    leave(node) {
      if (node['type'] === 'graph') insideGraph -= 1;
    },
  });
  return readsNamed && !graphVariable ? { readsDefault, readsNamed, namedIris: [...iris].sort() } : { readsDefault, readsNamed };
}
