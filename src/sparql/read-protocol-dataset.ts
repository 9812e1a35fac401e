// Reads the protocol dataset (default-graph-uri / named-graph-uri) into checked graph IRIs, kept as written.

import { GuardError } from '../guard-error.js';
import { absoluteIriProblem, isAbsoluteIri } from '../iri.js';

/**
 * SPARQL 1.1 Protocol 2.1.4: each value an absolute IRI, else 400 naming the parameter. Values stay
 * byte for byte (no policy grants an IRI with dot segments); duplicates keep their first position.
 */
export function readProtocolGraphs(values: readonly string[], parameter: string): string[] {
  const graphs: string[] = [];
  for (const value of values) {
    if (value === '') throw new GuardError(400, 'bad_request', `${parameter} has an empty value`);
    if (!isAbsoluteIri(value)) {
      // Each reason named (no scheme, a character no IRI holds, RFC 3987): `http://example.org/a b` has a scheme.
      const problem = absoluteIriProblem(value);
      throw new GuardError(400, 'bad_request', `${parameter} is not an absolute IRI${problem === undefined ? '' : ` (${problem})`}`);
    }
    if (!graphs.includes(value)) graphs.push(value);
  }
  return graphs;
}
