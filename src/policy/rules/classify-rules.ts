// Reads one rule file and decides whether the forward chainer computes exactly what EYE would for it, docs/design/policy.md "Two engines" (on the policy worker, and on the command line's thread for `check --why`).

import { Parser, type Quad, type Term } from 'n3';
import { XSD_STRING } from '../../vocabulary.js';

/** One Horn rule, as forwardChain takes it; `<=` rules arrive turned around by N3.js. */
export interface HornRule {
  readonly premise: readonly Quad[];
  readonly conclusion: readonly Quad[];
}

/** What reading a rule file found: its rules and facts inside the Horn fragment, or why not. */
export type RuleReading =
  | { readonly fragment: true; readonly rules: readonly HornRule[]; readonly facts: readonly Quad[] }
  | {
      readonly fragment: false;
      /** One phrase for `check`: the first construct that is outside the fragment. */
      readonly reason: string;
      /** The rules and facts N3.js could read (for dependencies and warnings); undefined when it could not parse the file. */
      readonly rules?: readonly HornRule[];
      readonly facts?: readonly Quad[];
    };

export const LOG_IMPLIES = 'http://www.w3.org/2000/10/swap/log#implies';
const OWL_SAME_AS = 'http://www.w3.org/2002/07/owl#sameAs';
const RDF_LANG_STRING = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#langString';

/**
 * Namespaces of the built-ins EYE evaluates (log:, math:, string:, list:, time:, crypto:, graph:
 * of https://www.w3.org/2000/10/swap/, and EYE's own): the forward chainer would read them as plain
 * predicates and match nothing, so a rule that names one is EYE's.
 */
const BUILT_IN_NAMESPACES = [
  'http://www.w3.org/2000/10/swap/',
  'http://eulersharp.sourceforge.net/',
  'https://eyereasoner.github.io/',
  'http://www.w3.org/2007/rif#',
];

/**
 * Classifies a rule file by reading it, never by running it. The fragment is what
 * the forward chainer (forwardChain) evaluates with EYE's meaning: rules `{ P } => { C }` (or `<=`) whose
 * sides are non-empty lists of triples over variables, IRIs and plain or language-tagged
 * strings, every conclusion variable bound by the premise, no built-in, no `false` or `true`
 * side, no nested formula, no list, no blank node; and ground facts over the same terms.
 * Numbers and other typed literals are left to EYE, which reads them as values, not terms.
 */
export function classifyRules(text: string): RuleReading {
  let quads: Quad[];
  try {
    quads = new Parser({ format: 'text/n3' }).parse(text);
  } catch {
    return { fragment: false, reason: 'N3.js cannot parse it' };
  }
  const byFormula = new Map<string, Quad[]>();
  const topLevel: Quad[] = [];
  for (const quad of quads) {
    if (quad.graph.termType === 'DefaultGraph') topLevel.push(quad);
    else byFormula.set(quad.graph.value, [...(byFormula.get(quad.graph.value) ?? []), quad]);
  }

  const rules: HornRule[] = [];
  const facts: Quad[] = [];
  let reason: string | undefined;
  const outside = (why: string) => {
    reason ??= why;
  };
  for (const quad of topLevel) {
    const { subject, predicate, object } = quad;
    if (predicate.value !== LOG_IMPLIES) {
      const bad = [subject, predicate, object].find((term) => !isPlainTerm(term));
      if (bad !== undefined) outside(`a fact with ${describeTerm(bad)}`);
      else if (isBuiltIn(predicate.value)) outside(`a fact with the built-in <${predicate.value}>`);
      facts.push(quad);
      continue;
    }
    if (
      subject.termType !== 'BlankNode' ||
      object.termType !== 'BlankNode' ||
      !byFormula.has(subject.value) ||
      !byFormula.has(object.value)
    ) {
      outside(
        object.termType === 'Literal' && object.value === 'false'
          ? 'a rule concluding false'
          : 'a rule whose side is not a list of triples',
      );
      continue;
    }
    const premise = byFormula.get(subject.value) ?? [];
    const conclusion = byFormula.get(object.value) ?? [];
    byFormula.delete(subject.value);
    byFormula.delete(object.value);
    rules.push({ premise, conclusion });
    const why = ruleProblem(premise, conclusion);
    if (why !== undefined) outside(why);
  }
  // A formula that is no rule's side is quoted (a graph term inside a triple).
  if (byFormula.size > 0) outside('a quoted formula');
  return reason === undefined ? { fragment: true, rules, facts } : { fragment: false, reason, rules, facts };
}

function ruleProblem(premise: readonly Quad[], conclusion: readonly Quad[]): string | undefined {
  if (premise.length === 0) return 'a rule with an empty premise';
  if (conclusion.length === 0) return 'a rule with an empty conclusion';
  const bound = new Set<string>();
  for (const quad of premise) {
    for (const term of [quad.subject, quad.predicate, quad.object]) {
      if (term.termType === 'Variable') bound.add(term.value);
      else if (!isPlainTerm(term)) return `a rule with ${describeTerm(term)}`;
    }
    if (isBuiltIn(quad.predicate.value)) return `the built-in <${quad.predicate.value}>`;
  }
  for (const quad of conclusion) {
    for (const term of [quad.subject, quad.predicate, quad.object]) {
      if (term.termType === 'Variable') {
        if (!bound.has(term.value)) return `a conclusion variable ?${term.value} that the premise does not bind`;
      } else if (!isPlainTerm(term)) return `a rule with ${describeTerm(term)}`;
    }
    if (isBuiltIn(quad.predicate.value)) return `a conclusion with the built-in <${quad.predicate.value}>`;
  }
  return undefined;
}

/** An IRI, or a string literal (plain or language-tagged): terms both engines compare the same way. */
function isPlainTerm(term: Term): boolean {
  if (term.termType === 'NamedNode') return true;
  if (term.termType !== 'Literal') return false;
  return term.datatype.value === XSD_STRING || term.datatype.value === RDF_LANG_STRING;
}

/** Whether EYE evaluates the predicate itself (a built-in) rather than matching triples. */
export function isBuiltIn(iri: string): boolean {
  return iri === OWL_SAME_AS || BUILT_IN_NAMESPACES.some((namespace) => iri.startsWith(namespace));
}

function describeTerm(term: Term): string {
  switch (term.termType) {
    case 'BlankNode':
      return 'a blank node, list or formula';
    case 'Variable':
      return `a variable ?${term.value} outside a rule`;
    case 'Literal':
      return `a typed literal (${term.datatype.value})`;
    default:
      return term.termType;
  }
}

/** Predicates a rule file's rules can derive; 'any' when a conclusion has a variable predicate or the file was not read. */
export function derivedPredicates(reading: RuleReading): Set<string> | 'any' {
  if (reading.rules === undefined) return 'any';
  const found = new Set<string>();
  for (const rule of reading.rules) {
    for (const { predicate } of rule.conclusion) {
      if (predicate.termType !== 'NamedNode') return 'any';
      found.add(predicate.value);
    }
  }
  return found;
}

/** Predicates the premises read; 'any' for a variable predicate or an unread file. */
export function premisePredicates(reading: RuleReading): Set<string> | 'any' {
  if (reading.rules === undefined) return 'any';
  const found = new Set<string>();
  for (const rule of reading.rules) {
    for (const { predicate } of rule.premise) {
      if (predicate.termType !== 'NamedNode') return 'any';
      found.add(predicate.value);
    }
  }
  return found;
}
