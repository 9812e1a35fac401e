// Reads the protocol dataset (default-graph-uri / named-graph-uri) into checked graph IRIs, kept as written.

import { GuardError } from '../guard-error.js';
import { hasScheme, iriReferenceProblem, isAbsoluteIri, NOT_IN_IRI } from '../iri.js';

/**
 * SPARQL 1.1 Protocol 2.1.4: each value an absolute IRI, else 400 naming the parameter. Values stay
 * byte for byte (no policy grants an IRI with dot segments); duplicates keep their first position.
 */
export function readProtocolGraphs(values: readonly string[], parameter: string): string[] {
  const graphs: string[] = [];
  for (const value of values) {
    if (value === '') throw new GuardError(400, 'bad_request', `${parameter} has an empty value`);
    if (!isAbsoluteIri(value)) {
      const problem = hasScheme(value) && !NOT_IN_IRI.test(value) ? iriReferenceProblem(value) : undefined;
      throw new GuardError(
        400,
        'bad_request',
        `${parameter} is not an absolute IRI${problem === undefined ? '' : ` (RFC 3987: it ${problem})`}`,
      );
    }
    if (!graphs.includes(value)) graphs.push(value);
  }
  return graphs;
}
