// Why a policy IRI cannot be spliced into generated queries as is, if it cannot: dot segments or characters no IRIREF holds.

/** RFC 3986 appendix B: the path of a URI reference (group 1). */
const PATH = /^(?:[^:/?#]+:)?(?:\/\/[^/?#]*)?([^?#]*)/;

/** A scheme per RFC 3986 3.1, followed by the colon. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** Characters an IRIREF may not hold (SPARQL 1.1 [139]). */
const NOT_IN_IRIREF = /[<>"{}|^`\\\u0000-\u0020]/;

/**
 * The reason `iri` may not be a granted graph or a hidden path, or undefined
 * when it may. The planner compares graph and predicate IRIs as exact strings
 * and keeps the query's absolute IRIs byte for byte (SPARQL 1.1 §4.1.1), while
 * some stores remove dot segments (RFC 3986 5.2.4) when they read a query
 * (Jena): a granted `<a/../b>` would be written as is and read as `<b>`. So a
 * policy IRI must be an absolute IRIREF whose path holds no `.` or `..`
 * segment; then no other spelling the guard lets through names it on a store.
 */
export function iriSpliceProblem(iri: string): string | undefined {
  if (NOT_IN_IRIREF.test(iri) || !SCHEME.test(iri)) return 'is not a valid absolute SPARQL IRI';
  const path = PATH.exec(iri)?.[1] ?? '';
  if (path.split('/').some((segment) => segment === '.' || segment === '..')) {
    return 'has dot segments (/./ or /../), which stores may normalise away';
  }
  return undefined;
}
