// The graph IRI the rewriter reserves for "no graph".

/**
 * Written as FROM / FROM NAMED when a set of graphs is empty (docs/design.md#rewriting):
 * a graph that never exists and that no policy may grant.
 */
export const EMPTY_GRAPH = 'urn:x-sparql-guard:empty';
