// Reads the protocol dataset (default-graph-uri / named-graph-uri) into checked graph IRIs, kept as written.

import { GuardError } from '../guard-error.js';
import { isAbsoluteIri } from '../iri.js';

/**
 * SPARQL 1.1 Protocol 2.1.4: each value must be an absolute IRI. An empty or
 * invalid value is refused with 400 naming the parameter (stores disagree on
 * empty values, so the guard decides). Values stay byte for byte,
 * as absolute IRIs in the query do: one with dot segments is another IRI, and
 * no policy may grant one (loadPolicySet), so it never reaches the store.
 * Duplicates keep their first position.
 */
export function readProtocolGraphs(values: readonly string[], parameter: string): string[] {
  const graphs: string[] = [];
  for (const value of values) {
    if (value === '') throw new GuardError(400, 'bad_request', `${parameter} has an empty value`);
    if (!isAbsoluteIri(value)) {
      throw new GuardError(400, 'bad_request', `${parameter} is not an absolute IRI`);
    }
    if (!graphs.includes(value)) graphs.push(value);
  }
  return graphs;
}
