// Gives the blank nodes of one copy of a pattern labels of their own, in written text and in a tree alike.

/**
 * SPARQL 1.1 §4.1.4: "the same blank node label cannot be used in two different basic graph patterns in
 * the same query". Where the guard writes a caller's pattern more than once (a `GRAPH ?g` expanded into a
 * branch per graph), each copy's blank nodes take the prefix `b<copy>_`: every label sparqljs gives starts
 * with `e_` (written `_:x`) or `g_` (`[]`), so a prefixed label is no label of the caller's, and one copy's
 * labels are no other copy's.
 */
export function blankNodePrefix(copy: number): string {
  return `b${copy}_`;
}

/**
 * `text` (SPARQL as the generator writes it: literals in `"…"` with `"` escaped, IRIs in `<…>` without
 * spaces, `<` as an operator followed by a space) with the prefix after every `_:` outside literals and IRIs.
 */
export function relabelBlankNodes(text: string, prefix: string): string {
  if (!text.includes('_:')) return text;
  return text.replace(/"(?:[^"\\]|\\.)*"|<[^\s<>"]*>|_:/g, (token) => (token === '_:' ? '_:' + prefix : token));
}

/** A copy of a sparqljs subtree with the prefix on every blank node's label; other terms shared. */
export function relabelBlankNodeTerms<T>(value: T, prefix: string): T {
  if (Array.isArray(value)) return value.map((item: unknown) => relabelBlankNodeTerms(item, prefix)) as T;
  if (typeof value !== 'object' || value === null) return value;
  const term = value as { termType?: unknown; value?: unknown };
  if (term.termType === 'BlankNode') return { termType: 'BlankNode', value: prefix + String(term.value) } as T;
  if (typeof term.termType === 'string') return value;
  return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, relabelBlankNodeTerms(field, prefix)])) as T;
}
