// Refuses any IRI of the guard namespace that is not a term of the policy vocabulary, or a term where its kind cannot stand (on the policy worker, for policy, fact and rule files).

import type { Quad, Term } from 'n3';
import { GUARD, RDF_TYPE, VOCABULARY_TERMS, type TermKind } from '../vocabulary.js';
import { nearestWord } from '../nearest-word.js';
import { policyLoadError } from './policy-load-error.js';

/** The terms an input may use, for suggestions. */
const TERM_NAMES = Object.keys(VOCABULARY_TERMS).filter((name) => VOCABULARY_TERMS[name] !== 'description');

/**
 * The namespace as written with another scheme, host, case, separator or ending (`http:`,
 * `www.w3id.org`, `SPARQL-Guard`, `sparql_guard`, `/` for `#`, or no `#` at all: a prefix
 * declared as `<https://w3id.org/sparql-guard>` makes `guard:agent` `…/sparql-guardagent`).
 */
const NAMESPACE_LOOKALIKE = /^https?:\/\/(?:www\.)?w3id\.org\/sparql[-_]?guard(?:[#/]|$|[a-z])/i;

/**
 * Checks every IRI of `triples` against the closed vocabulary (VOCABULARY_TERMS): an IRI of
 * the guard namespace that is no term or only the service description's, a property used as
 * a class or a class as a property,
 * or an IRI that misspells the namespace itself, throws PolicyLoadError with one line naming
 * `origin` (the file, or the name of a source of triples), the IRI, where it stands and the
 * nearest term. IRIs of other namespaces pass: they are the operator's own (annotations,
 * facts for rules). Triples inside N3 formulas are checked like any other.
 */
export function checkVocabulary(triples: Iterable<Quad>, origin: string): void {
  for (const { subject, predicate, object, graph } of triples) {
    checkTerm(predicate, 'property', `as a predicate of ${describeSubject(subject)}`, origin);
    const objectKind = predicate.termType === 'NamedNode' && predicate.value === RDF_TYPE ? 'class' : undefined;
    checkTerm(object, objectKind, objectKind === 'class' ? `as the class of ${describeSubject(subject)}` : 'as an object', origin);
    checkTerm(subject, undefined, 'as a subject', origin);
    checkTerm(graph, undefined, 'as a graph', origin);
    if (object.termType === 'Literal') checkTerm(object.datatype, undefined, 'as a datatype', origin);
  }
}

function checkTerm(term: Term, kind: TermKind | undefined, where: string, origin: string): void {
  if (term.termType !== 'NamedNode' || !NAMESPACE_LOOKALIKE.test(term.value)) return;
  const iri = term.value;
  if (!iri.startsWith(GUARD)) {
    throw policyLoadError(
      `<${iri}> (${where}) is not in the namespace of the policy vocabulary (did you mean <${GUARD}${localName(iri)}>?)`,
      origin,
    );
  }
  const name = iri.slice(GUARD.length);
  const found = Object.hasOwn(VOCABULARY_TERMS, name) ? VOCABULARY_TERMS[name] : undefined;
  if (found === undefined) {
    const nearest = nearestWord(name, TERM_NAMES);
    const fix =
      nearest === undefined ? `the terms are ${TERM_NAMES.map((term) => `guard:${term}`).join(', ')}` : `did you mean guard:${nearest}?`;
    throw policyLoadError(`guard:${name} (${where}) is not a term of the policy vocabulary (${fix})`, origin);
  }
  if (found === 'description') {
    throw policyLoadError(`guard:${name} (${where}) is a term of the service description, not of policies or rules`, origin);
  }
  if (kind !== undefined && found !== kind) {
    throw policyLoadError(`guard:${name} (${where}) is a ${found}, not a ${kind}`, origin);
  }
}

/** The local part of an IRI that misspells the namespace: what follows its `#` or last `/`. */
function localName(iri: string): string {
  const rest = iri.replace(/^https?:\/\/(?:www\.)?w3id\.org\/sparql[-_]?guard/i, '');
  return rest.replace(/^[#/]/, '');
}

function describeSubject(subject: Term): string {
  return subject.termType === 'NamedNode' ? `<${subject.value}>` : subject.termType === 'Variable' ? `?${subject.value}` : 'a blank node';
}
