// Drops a triple pattern of variables written twice in one basic graph pattern: the same solutions (SPARQL 1.1 §18.3).

import { walkQuery, type TreeNode } from './walk-query.js';

/**
 * Keeps the first of equal triple patterns whose three terms are variables, in each BGP of `tree`. A
 * BGP's solutions are the mappings that send every pattern into the data, so a repeated pattern changes
 * neither the solutions nor their number. Only variables: a constant is a slot of a cached shape
 * (create-shape-cache.ts), so whether two patterns with constants are equal would differ between
 * requests of one shape; a path's triple is not one pattern (§18.4). Why: Virtuoso 7.2.5 answered
 * `?s ?p ?o, ?o` beside the join of a row check with no row where the view has six (docs/design/sparql.md,
 * "Rows and columns").
 */
export function dropRepeatedTriples(tree: unknown): void {
  walkQuery(tree, {
    enter(node: TreeNode) {
      if (node['type'] !== 'bgp' || !Array.isArray(node['triples'])) return;
      const seen = new Set<string>();
      const triples = node['triples'] as Record<string, unknown>[];
      const kept = triples.filter((triple) => {
        const key = variablesKey(triple);
        if (key === undefined) return true;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      if (kept.length < triples.length) node['triples'] = kept;
    },
  });
}

/** The three variables' names of a triple pattern of variables; undefined for any other. */
function variablesKey(triple: Record<string, unknown>): string | undefined {
  const names: string[] = [];
  for (const part of [triple['subject'], triple['predicate'], triple['object']]) {
    const term = part as { termType?: unknown; value?: unknown } | null;
    if (typeof term !== 'object' || term === null || term.termType !== 'Variable' || typeof term.value !== 'string') return undefined;
    names.push(term.value);
  }
  return names.join(' ');
}
