// Writes a term as the operator would write it, for the one-line messages of a failed load (on the policy worker).

import type { Term } from 'n3';
import { XSD_STRING } from '../../vocabulary.js';

/** A term as the operator would write it, for messages (never long: literals are cut). */
export function describeTerm(term: Term): string {
  switch (term.termType) {
    case 'NamedNode':
      return `<${term.value}>`;
    case 'BlankNode':
      return 'a blank node';
    case 'Literal': {
      const text = term.value.length > 40 ? `${term.value.slice(0, 40)}...` : term.value;
      return `literal ${JSON.stringify(text)}${term.language ? `@${term.language}` : term.datatype.value === XSD_STRING ? '' : `^^<${term.datatype.value}>`}`;
    }
    default:
      return term.termType;
  }
}
