// The variables a group of patterns puts in scope (SPARQL 1.1 §18.2.1), for blocks that must keep them.

/**
 * The in-scope variables of a group's patterns (SPARQL 1.1 §18.2.1), in order
 * of first appearance: what the group with no solution replacing `GRAPH <iri> {P}`
 * must keep in scope. FILTER, MINUS and EXISTS bind nothing; a sub-select
 * binds what it projects.
 */
export function inScopeVariables(patterns: readonly unknown[]): string[] {
  const found: string[] = [];
  const add = (term: unknown): void => {
    const t = term as { termType?: unknown; value?: unknown } | undefined;
    if (t?.termType === 'Variable' && typeof t.value === 'string' && !found.includes('?' + t.value)) found.push('?' + t.value);
  };
  const visit = (pattern: unknown): void => {
    const p = pattern as Record<string, unknown>;
    switch (p['type']) {
      case 'bgp':
        for (const triple of p['triples'] as { subject: unknown; predicate: unknown; object: unknown }[]) {
          add(triple.subject);
          add(triple.predicate); // a path is no Variable and adds nothing
          add(triple.object);
        }
        break;
      case 'graph':
        add(p['name']);
        (p['patterns'] as unknown[]).forEach(visit);
        break;
      case 'group':
      case 'optional':
      case 'union':
        (p['patterns'] as unknown[]).forEach(visit);
        break;
      case 'bind':
        add(p['variable']);
        break;
      case 'values':
        for (const row of p['values'] as Record<string, unknown>[]) {
          for (const key of Object.keys(row)) add({ termType: 'Variable', value: key.replace(/^[?$]/, '') });
        }
        break;
      case 'query': {
        const variables = p['variables'] as { termType?: string; variable?: unknown }[];
        for (const v of variables) {
          if (v.termType === 'Wildcard') (p['where'] as unknown[] | undefined)?.forEach(visit);
          else add(v.termType === 'Variable' ? v : v.variable);
        }
        break;
      }
      default:
        break; // filter, minus, service (refused earlier): nothing enters scope
    }
  };
  patterns.forEach(visit);
  return found;
}
