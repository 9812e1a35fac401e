// Writes triples as EYE's N3P intermediate (Prolog facts), which EYE loads several times faster than N3 text (on the policy worker).

import type { Quad, Term } from 'n3';
import { skolemIri } from '../../vocabulary.js';

/**
 * EYE parses N3 text in Prolog inside WebAssembly: about 10 s for the triples
 * of 10,000 policies. N3P is what EYE itself writes with `--intermediate`:
 * one Prolog fact per triple, `'<p>'('<s>', '<o>').`, read with the fast
 * Prolog term reader. The format follows eyereasoner 21.0.11 (EYE v11), which
 * package.json pins exactly; the tests run the real EYE over it.
 */
export function writeN3p(quads: readonly Quad[]): string {
  const lines: string[] = [];
  const predicates = new Set<string>();
  for (const { subject, predicate, object } of quads) {
    const p = atom(`<${predicate.value}>`);
    predicates.add(p);
    lines.push(`${p}(${term(subject)}, ${term(object)}).`);
  }
  // Declared dynamic so a rule asking for a predicate with no facts fails quietly instead of raising.
  const declarations = [...predicates].map((p) => `:- dynamic(${p}/2).`);
  return `${declarations.join('\n')}\n${lines.join('\n')}\nend_of_file.\n`;
}

function term(value: Term): string {
  switch (value.termType) {
    case 'NamedNode':
      return atom(`<${value.value}>`);
    case 'BlankNode':
      return atom(`<${skolemIri(value.value)}>`);
    case 'Literal': {
      // EYE keeps a literal's lexical form N3-escaped inside the atom (as `--intermediate` shows).
      const lexical = atom(escapeN3(value.value));
      return value.language !== ''
        ? `literal(${lexical}, lang(${atom(value.language)}))`
        : `literal(${lexical}, type(${atom(`<${value.datatype.value}>`)}))`;
    }
    default:
      throw new Error(`unexpected ${value.termType} in policy data`);
  }
}

/** A Prolog quoted atom (ISO 6.4.2): backslash and quote escaped, control characters as escapes. */
function atom(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`).replace(/[\u0000-\u001f\u007f]/g, (c) => `\\x${c.charCodeAt(0).toString(16)}\\`)}'`;
}

/** The escapes of an N3 string literal (N3 grammar, ECHAR and UCHAR). */
function escapeN3(text: string): string {
  return text.replace(/[\\"\n\r\t\u0000-\u001f\u007f]/g, (c) => {
    switch (c) {
      case '\\':
        return '\\\\';
      case '"':
        return '\\"';
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;
    }
  });
}
