// Joins a HAVING clause's constraints into one conjunction, which the sparqljs generator writes correctly.

import { walkQuery } from './walk-query.js';

/**
 * sparqljs writes `HAVING (C1) (C2)` as `HAVING (C1 C2)`, which does not parse; `HAVING ((C1) && (C2))`
 * means the same (§18.2.4.1 filters by each in turn; §17.4.1). Rewrites every query node in place.
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
