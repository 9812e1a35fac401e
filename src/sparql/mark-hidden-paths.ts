// Finds, once per prepared query, where hidden predicates could be reached: IRIs named as predicates and variable predicates per group.

/** What the template step needs to close a query against hidden predicates (DESIGN section 3). */
export interface HiddenPathMarks {
  /** IRIs in predicate position: triple patterns, every property path member, CONSTRUCT templates. */
  readonly named: ReadonlySet<string>;
  /**
   * Per basic graph pattern (by identity), the predicate variables (names
   * without `?`) that need a NOT IN filter right after it: each variable once
   * per group, on the first BGP of the group that uses it as a predicate.
   */
  readonly filters: ReadonlyMap<object, readonly string[]>;
}

interface Term {
  readonly termType: string;
  readonly value: string;
}

interface PathNode {
  readonly type: 'path';
  readonly pathType: string;
  readonly items: readonly (Term | PathNode)[];
}

interface Triple {
  readonly subject: unknown;
  readonly predicate: Term | PathNode;
  readonly object: unknown;
}

/**
 * Walks a parsed (and normalised: every IRI absolute) query. A FILTER scopes
 * over its whole group (SPARQL 1.1 §18.2.2), so a filter placed right after a
 * BGP constrains exactly the solutions of the group that BGP belongs to:
 * the group of a WHERE, OPTIONAL, MINUS, GRAPH, UNION branch, EXISTS or
 * sub-select. A UNION branch or EXISTS that is a bare BGP is a group of its
 * own (the generator writes it in braces).
 */
export function markHiddenPaths(root: Record<string, unknown>): HiddenPathMarks {
  const named = new Set<string>();
  const filters = new Map<object, string[]>();

  const collectPath = (predicate: Term | PathNode): void => {
    if ('termType' in predicate) {
      if (predicate.termType === 'NamedNode') named.add(predicate.value);
      return;
    }
    for (const item of predicate.items) collectPath(item);
  };

  /** One group: its BGPs get the filters, everything else is walked for nested groups. */
  const visitGroup = (patterns: readonly unknown[]): void => {
    const seen = new Set<string>();
    for (const pattern of patterns) {
      const record = pattern as Record<string, unknown> | null;
      if (record === null || typeof record !== 'object' || record['type'] !== 'bgp') {
        visit(pattern);
        continue;
      }
      const variables: string[] = [];
      for (const triple of record['triples'] as readonly Triple[]) {
        const predicate = triple.predicate;
        if ('termType' in predicate && predicate.termType === 'Variable') {
          if (!seen.has(predicate.value)) {
            seen.add(predicate.value);
            variables.push(predicate.value);
          }
        } else collectPath(predicate);
      }
      if (variables.length > 0) filters.set(record, variables);
    }
  };

  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const record = node as Record<string, unknown>;
    if (typeof record['termType'] === 'string') return;
    switch (record['type']) {
      case 'bgp':
        visitGroup([record]); // a bare BGP as a UNION branch or EXISTS argument
        return;
      case 'group':
      case 'optional':
      case 'minus':
      case 'graph':
      case 'service':
        visitGroup(record['patterns'] as readonly unknown[]);
        return;
      case 'query':
        visitQuery(record);
        return;
      default:
        for (const key of Object.keys(record)) visit(record[key]);
    }
  };

  const visitQuery = (query: Record<string, unknown>): void => {
    for (const key of Object.keys(query)) {
      const value = query[key];
      if (key === 'where') visitGroup(value as readonly unknown[]);
      else if (key === 'template') {
        for (const triple of value as readonly Triple[]) collectPath(triple.predicate);
      } else visit(value);
    }
  };

  visitQuery(root);
  return { named, filters };
}
