// Finds the `GRAPH ?var` elements whose pattern holds a `+` or `*` property path: the ones the template expands per named graph.

/**
 * The `GRAPH ?var { P }` nodes (by identity) where P holds, at any depth, a
 * property path with `*` or `+` (SPARQL 1.1 §9.1 ZeroOrMorePath,
 * OneOrMorePath): in nested groups, OPTIONAL, UNION, MINUS, sub-selects and
 * EXISTS alike. Virtuoso 7.2.5 walks such a path across graphs outside FROM
 * NAMED (and the default graph) and reports them under a granted graph name;
 * `GRAPH <iri>` stays in its graph, and `?` (ZeroOrOnePath) measured safe.
 * A GRAPH ?var nested in another one is found too; both get expanded.
 */
export function findTransitiveGraphs(root: unknown): ReadonlySet<object> {
  const found = new Set<object>();
  /** True when the node holds a `*` or `+` path; marks the GRAPH ?var nodes on the way back up. */
  const visit = (node: unknown): boolean => {
    if (typeof node !== 'object' || node === null) return false;
    if (Array.isArray(node)) {
      let holds = false;
      for (const item of node) if (visit(item)) holds = true;
      return holds;
    }
    const record = node as Record<string, unknown>;
    if (typeof record['termType'] === 'string') return false;
    let holds = record['type'] === 'path' && (record['pathType'] === '*' || record['pathType'] === '+');
    for (const key of Object.keys(record)) if (visit(record[key])) holds = true;
    if (holds && record['type'] === 'graph' && (record['name'] as { termType?: unknown } | undefined)?.termType === 'Variable') {
      found.add(record);
    }
    return holds;
  };
  visit(root);
  return found;
}
