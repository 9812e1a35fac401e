// The IRI prefixes that stores treat as property functions, which the planner refuses as predicates and the configuration refuses to allow.

/**
 * A deny-list, not an allow-list: IRI prefixes that stores treat as property
 * functions (code run in place of matching a triple, some of it reading
 * indexes outside the dataset). Predicates cannot be allow-listed: any IRI is
 * a valid predicate. Jena ARQ property functions (apf:, old and new
 * namespaces), list:, jena-text text:, jena-spatial spatial:, Jena's
 * dynamically loaded `java:` classes, Virtuoso's `bif:` and `sql:` (as the
 * bare pseudo-schemes Virtuoso predefines and in the openlinksw namespace).
 * Lower-cased: every comparison is case-blind.
 */
export const PROPERTY_FUNCTION_NAMESPACES: readonly string[] = [
  'http://jena.apache.org/ARQ/property#',
  'http://jena.hpl.hp.com/ARQ/property#',
  'http://jena.apache.org/ARQ/list#',
  'http://jena.hpl.hp.com/ARQ/list#',
  'http://jena.apache.org/text#',
  'http://jena.apache.org/spatial#',
  'java:',
  'bif:',
  'sql:',
  'http://www.openlinksw.com/schemas/bif#',
  'http://www.openlinksw.com/schemas/sql#',
].map((prefix) => prefix.toLowerCase());

/**
 * The denied property-function namespace an allow-list entry falls in or
 * covers (a prefix entry such as `http://www.openlinksw.com/` would cover
 * `bif#`), compared case-blind; undefined when the entry is clear of them.
 */
export function findDeniedNamespace(entry: string): string | undefined {
  const lower = entry.toLowerCase();
  const isPrefix = entry.endsWith('#') || entry.endsWith('/');
  return PROPERTY_FUNCTION_NAMESPACES.find((denied) => lower.startsWith(denied) || (isPrefix && denied.startsWith(lower)));
}
