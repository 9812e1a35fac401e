// Reads the protocol dataset (default-graph-uri / named-graph-uri) into checked, normalised graph IRIs.

import { GuardError } from '../guard-error.js';
import { hasScheme, normaliseIri } from './resolve-iri.js';

/** White space, control characters and the characters an IRIREF may not hold ([139]). */
const NOT_IN_IRI = /[\u0000-\u0020\u007f-\u009f<>"{}|^`\\]/;

/**
 * SPARQL 1.1 Protocol 2.1.4: each value must be an absolute IRI. An empty or
 * invalid value is refused with 400 naming the parameter (stores disagree on
 * empty values, rig b06/b07, so the guard decides). Dot segments are removed
 * as for the query's own IRIs; duplicates keep their first position.
 */
export function readProtocolGraphs(values: readonly string[], parameter: string): string[] {
  const graphs: string[] = [];
  for (const value of values) {
    if (value === '') throw new GuardError(400, `${parameter} has an empty value`);
    if (NOT_IN_IRI.test(value) || !hasScheme(value)) {
      throw new GuardError(400, `${parameter} is not an absolute IRI`);
    }
    const iri = normaliseIri(value);
    if (!graphs.includes(iri)) graphs.push(iri);
  }
  return graphs;
}
