// Finds the `GRAPH ?var` elements whose pattern holds a `+` or `*` property path: the ones the template expands per named graph.

import { walkQuery } from './walk-query.js';

/**
 * The `GRAPH ?var { P }` nodes (by identity) where P holds, at any depth, a `*` or `+` path
 * (SPARQL 1.1 §9.1): Virtuoso 7.2.5 walks such a path across graphs outside FROM NAMED.
 */
export function findTransitiveGraphs(root: unknown): ReadonlySet<object> {
  const found = new Set<object>();
  /** Per node entered and not yet left: whether it holds a `*` or `+` path so far. */
  const holds: boolean[] = [];
  walkQuery(root, {
    enter(node) {
      holds.push(node['type'] === 'path' && (node['pathType'] === '*' || node['pathType'] === '+'));
    },
    leave(node) {
      if (holds.pop() !== true) return;
      if (node['type'] === 'graph' && (node['name'] as { termType?: unknown } | undefined)?.termType === 'Variable') found.add(node);
      if (holds.length > 0) holds[holds.length - 1] = true;
    },
  });
  return found;
}
