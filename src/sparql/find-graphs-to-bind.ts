// Finds the `GRAPH ?var` elements whose per-graph branches bind ?var with BIND rather than VALUES.

import { inScopeVariables } from './in-scope-variables.js';
import { walkQuery, type TreeNode } from './walk-query.js';

/**
 * The `GRAPH ?var { P }` nodes (by identity) inside an EXISTS, a NOT EXISTS or a MINUS whose variable is named
 * nowhere outside the innermost of them, and which P leaves out of scope (§18.2.1, so BIND may assign it). No
 * solution from outside can bind such a ?var, so `BIND(<g> AS ?var)` in a branch says what `VALUES ?var { <g> }`
 * says. Virtuoso 7.2.5 answers a UNION of branches ending in VALUES there wrongly; Oxigraph takes a BIND there
 * for true when ?var is bound outside, hence the second condition (docs/design/sparql.md, "`GRAPH ?g` under a
 * negation").
 */
export function findGraphsToBind(root: unknown): ReadonlySet<object> {
  const total = new Map<string, number>();
  /** The EXISTS, NOT EXISTS and MINUS nodes entered and not yet left, with the variables named inside each. */
  const open: { readonly node: TreeNode; readonly named: Map<string, number> }[] = [];
  const candidates: { readonly graph: TreeNode; readonly variable: string; readonly inside: Map<string, number> }[] = [];
  const negation = (node: TreeNode) =>
    node['type'] === 'minus' || (node['type'] === 'operation' && (node['operator'] === 'exists' || node['operator'] === 'notexists'));
  const name = (variable: string) => {
    total.set(variable, (total.get(variable) ?? 0) + 1);
    for (const { named } of open) named.set(variable, (named.get(variable) ?? 0) + 1);
  };
  walkQuery(root, {
    enter(node) {
      if (negation(node)) open.push({ node, named: new Map() });
      // A VALUES row names its variables by key (`?g`), not by a term: in a pattern, or after a query's WHERE.
      if ((node['type'] === 'values' || node['type'] === 'query') && Array.isArray(node['values']))
        for (const key of new Set((node['values'] as object[]).flatMap(Object.keys))) name(key.slice(1));
      const graph = node['name'] as { termType?: unknown; value?: unknown } | undefined;
      const innermost = open.at(-1);
      if (node['type'] === 'graph' && graph?.termType === 'Variable' && innermost !== undefined)
        candidates.push({ graph: node, variable: String(graph.value), inside: innermost.named });
    },
    leave(node) {
      if (open.at(-1)?.node === node) open.pop();
    },
    term(term) {
      if (term.termType === 'Variable') name(term.value);
      return undefined;
    },
  });
  const found = new Set<object>();
  for (const { graph, variable, inside } of candidates) {
    if (inside.get(variable) !== total.get(variable)) continue;
    if (inScopeVariables(graph['patterns'] as unknown[]).includes('?' + variable)) continue;
    found.add(graph);
  }
  return found;
}
