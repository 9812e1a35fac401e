// Decides whether a string can stand as an agent IRI (docs/design.md#identity).

import { GUARD } from '../vocabulary.js';

/** RFC 3986 section 3.1: a scheme is a letter followed by letters, digits, `+`, `-` or `.`. */
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * Characters an IRI reference cannot hold (RFC 3987 section 2.2 has no production for them,
 * and SPARQL's IRIREF excludes them, SPARQL 1.1 Query section 19.8): whitespace of any kind,
 * C0 and C1 controls, and `<>"{}|^` backquote and backslash.
 */
const FORBIDDEN = /[\s\u0000-\u001f\u007f-\u009f<>"{}|^`\\]/u;

/**
 * Returns why `iri` cannot be an agent IRI, as a phrase that never repeats the IRI, or
 * undefined when it can: it must be absolute (have a scheme), hold none of the characters an
 * IRI cannot hold, and lie outside the guard's own namespace (so no caller can pose as
 * `guard:Anonymous`, `guard:Everyone` or `guard:AuthenticatedAgent`).
 */
export function findAgentIriProblem(iri: string): string | undefined {
  if (!SCHEME.test(iri)) return 'is not an absolute IRI (it lacks a scheme such as https:)';
  if (FORBIDDEN.test(iri)) return 'holds whitespace, a control character or one of <>"{}|^`\\';
  if (iri.startsWith(GUARD)) return `lies in the reserved namespace ${GUARD}`;
  return undefined;
}
