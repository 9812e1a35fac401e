// Joins a HAVING clause's constraints into one conjunction, which the sparqljs generator writes correctly.

import { walkQuery } from './walk-query.js';

/**
 * sparqljs writes `HAVING (C1) (C2)` as `HAVING (C1 C2)`, which does not
 * parse. SPARQL 1.1 §18.2.4.1 applies the constraints as filters one after
 * the other: a group survives only where each is true. Their conjunction is
 * true exactly then (§17.4.1: `&&` with an error operand is false or an
 * error, and a filter drops both), so `HAVING ((C1) && (C2))` means the same.
 * Rewrites every query node of the tree (sub-selects too) in place.
 */
export function joinHavingConstraints(tree: unknown): void {
  walkQuery(tree, {
    enter(node) {
      const having = node['type'] === 'query' ? node['having'] : undefined;
      if (Array.isArray(having) && having.length > 1) {
        node['having'] = [having.reduce((left: unknown, right: unknown) => ({ type: 'operation', operator: '&&', args: [left, right] }))];
      }
    },
  });
}
