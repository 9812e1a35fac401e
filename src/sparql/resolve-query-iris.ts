// Rewrites every relative IRIREF of the query text to its absolute form, resolved against BASE or the configured base.

import { GuardError } from '../guard-error.js';
import { iriReferenceProblem, NOT_IN_IRI } from '../iri.js';
import { resolveIri } from './resolve-iri.js';
import type { TextRegion } from './split-query-text.js';

/** A code region that ends with the keyword BASE, so the next IRI is a base IRI ([5] BaseDecl). */
const ENDS_WITH_BASE = /(?:^|[^A-Za-z0-9_:?$@.\-\u0080-\uFFFF])BASE\s*$/i;

/** The query text with every IRI absolute, and the base in force at its end. */
export interface ResolvedQuery {
  readonly text: string;
  /** The last BASE of the prologue (resolved), else `baseIri`: what IRI() and URI() resolve against (§17.4.2.8). */
  readonly base: string;
}

/**
 * SPARQL 1.1 §4.1.1: relative IRIs resolve against the query's BASE, else `baseIri` (RFC 3986
 * 5.2.2); absolute IRIs stay byte for byte. Done on the text, replacing sparqljs's own resolution,
 * which skips dot-segment removal and mishandles fragments. `text` has no codepoint escapes left.
 */
export function resolveQueryIris(text: string, regions: readonly TextRegion[], baseIri: string): ResolvedQuery {
  let base = baseIri;
  let baseFollows = false;
  // Parts joined once at the end: `endsWith` on a string built by `+=` flattens it every time (quadratic on long queries).
  const out: string[] = [];
  for (const region of regions) {
    const slice = text.slice(region.start, region.end);
    switch (region.kind) {
      case 'code':
        baseFollows = /^\s*$/.test(slice) ? baseFollows : ENDS_WITH_BASE.test(slice);
        out.push(slice);
        break;
      case 'string':
      case 'comment':
        baseFollows &&= region.kind === 'comment';
        out.push(slice);
        break;
      case 'iri': {
        const reference = slice.slice(1, -1);
        const problem = iriReferenceProblem(reference);
        if (problem !== undefined) throw notAnIri(problem);
        const iri = resolveIri(reference, base);
        if (NOT_IN_IRI.test(iri)) {
          throw new GuardError(400, 'parse', 'query is not valid SPARQL 1.1: an IRI does not resolve to a valid IRI');
        }
        if (baseFollows) base = iri;
        baseFollows = false;
        // `?o<<x:b>` is `?o < <x:b>` in SPARQL 1.1; sparqljs would lex `<<` as SPARQL-star's opener.
        if (out[out.length - 1]?.endsWith('<') === true) out.push(' ');
        out.push('<' + iri + '>');
        break;
      }
    }
  }
  return { text: out.join(''), base };
}

/** SPARQL 1.1 §19.5: an IRIREF, or a prefixed name once expanded, that is not an RFC 3987 IRI reference; `problem` says why. */
export function notAnIri(problem: string): GuardError {
  return new GuardError(
    400,
    'parse',
    `query is not valid SPARQL 1.1: an IRI is not an IRI reference as RFC 3987 writes one (§19.5): it ${problem}`,
  );
}
