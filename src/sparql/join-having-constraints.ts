// Joins a HAVING clause's constraints into one conjunction, which the sparqljs generator writes correctly.

/**
 * sparqljs writes `HAVING (C1) (C2)` as `HAVING (C1 C2)`, which does not
 * parse. SPARQL 1.1 §18.2.4.1 applies the constraints as filters one after
 * the other: a group survives only where each is true. Their conjunction is
 * true exactly then (§17.4.1: `&&` with an error operand is false or an
 * error, and a filter drops both), so `HAVING ((C1) && (C2))` means the same.
 * Rewrites every query node of the tree (sub-selects too) in place.
 */
export function joinHavingConstraints(node: unknown): void {
  if (typeof node !== 'object' || node === null) return;
  if (Array.isArray(node)) {
    for (const item of node) joinHavingConstraints(item);
    return;
  }
  const record = node as Record<string, unknown>;
  if (typeof record['termType'] === 'string') return;
  const having = record['type'] === 'query' ? record['having'] : undefined;
  if (Array.isArray(having) && having.length > 1) {
    record['having'] = [having.reduce((left: unknown, right: unknown) => ({ type: 'operation', operator: '&&', args: [left, right] }))];
  }
  for (const key of Object.keys(record)) joinHavingConstraints(record[key]);
}
