// Validates what the rules derived and attaches it to the declared policies.

import { DataFactory, type BlankNode, type Quad } from 'n3';
import { guard, isReservedIri, isSkolemIri, XSD_STRING } from './guard-terms.js';
import { iriSpliceProblem } from './iri-splice-problem.js';
import { policyLoadError } from './policy-load-error.js';
import type { CompiledPolicy, Principal } from './policy-set.js';
import { describe, type PolicyDocument } from './read-policy-files.js';

/**
 * Turns the derived `guard:appliesTo` / `guard:grantsGraph` triples into one
 * record per declared policy, in order of listing; its principals and graphs
 * come in the order its Turtle states them, then derived ones sorted. Fails closed on anything
 * derived that the Turtle itself could not say: a subject that is not a
 * declared policy, a graph that is not a usable IRI, a principal that is
 * neither an IRI nor a plain string.
 */
export function attachDerivations(document: PolicyDocument, derived: readonly Quad[]): CompiledPolicy[] {
  const byIri = new Map<string, { file: string; principals: Map<string, Principal>; graphs: Set<string> }>();
  for (const policy of document.policies) byIri.set(policy.iri, { file: policy.file, principals: new Map(), graphs: new Set() });

  // Engines derive in different orders: the error reported is that of the first bad triple in
  // term order, and the lists are sorted, so the result does not depend on the engine.
  let failure: { key: string; error: Error } | undefined;
  const fail = (subject: Quad['subject'] | BlankNode, predicate: Quad['predicate'], object: Quad['object'] | BlankNode, error: () => Error) => {
    const key = `${subject.id}\u0000${predicate.value}\u0000${object.id}`;
    if (failure === undefined || key < failure.key) failure = { key, error: error() };
  };
  // The same graph comes back for many policies (collections): judge each IRI once.
  const graphProblems = new Map<string, string | undefined>();
  for (const quad of derived) {
    const { predicate } = quad;
    const subject = unskolemize(quad.subject);
    const object = unskolemize(quad.object);
    const target = subject.termType === 'NamedNode' ? byIri.get(subject.value) : undefined;
    const name = predicate.value === guard.appliesTo ? 'guard:appliesTo' : 'guard:grantsGraph';
    if (target === undefined) {
      fail(subject, predicate, object, () => policyLoadError(`the rules derived ${name} for ${describe(subject)}, which is not a declared guard:Policy`));
      continue;
    }
    let problem: Principal | string | undefined;
    if (predicate.value === guard.grantsGraph) {
      if (object.termType === 'NamedNode') {
        problem = graphProblems.get(object.value);
        if (problem === undefined && !graphProblems.has(object.value)) graphProblems.set(object.value, (problem = graphProblem(object)));
      } else problem = graphProblem(object);
    } else problem = principalOf(object);
    if (typeof problem === 'string') {
      const reason = problem;
      fail(subject, predicate, object, () => policyLoadError(`the rules derived ${name} ${describe(object)}: ${reason}`, target.file, subject.value));
    } else if (problem === undefined) {
      target.graphs.add(object.value);
    } else {
      target.principals.set(principalKey(problem), problem);
    }
  }
  if (failure !== undefined) throw failure.error;

  const stated = statedOrder(document);
  return document.policies.map((policy) => {
    const found = byIri.get(policy.iri);
    const rank = stated.get(policy.iri);
    return {
      iri: policy.iri,
      file: policy.file,
      order: policy.order,
      hidePaths: policy.hidePaths,
      limits: policy.limits,
      graphs: inStatedOrder([...(found?.graphs ?? [])].map((graph) => [`<${graph}>`, graph] as const), rank),
      principals: inStatedOrder([...(found?.principals.entries() ?? [])], rank),
    };
  });
}

/** The values in the order their keys are stated (rank), then the rest by key. */
function inStatedOrder<T>(entries: (readonly [string, T])[], rank: ReadonlyMap<string, number> | undefined): T[] {
  if (entries.length < 2) return entries.map(([, value]) => value);
  const ranked = entries.map(([key, value]) => ({ key, value, rank: rank?.get(key) ?? Infinity }));
  ranked.sort((a, b) => a.rank - b.rank || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return ranked.map((entry) => entry.value);
}

/** Per policy, the position of each graph and principal its own Turtle states: those come first, as written. */
function statedOrder(document: PolicyDocument): Map<string, Map<string, number>> {
  const ranks = new Map<string, Map<string, number>>();
  for (const policy of document.policies) ranks.set(policy.iri, new Map());
  for (const { subject, predicate, object } of document.quads) {
    const rank = ranks.get(subject.value);
    if (rank === undefined || subject.termType !== 'NamedNode') continue;
    let key: string | undefined;
    if (predicate.value === guard.readGraph && object.termType === 'NamedNode') key = `<${object.value}>`;
    else if (predicate.value === guard.agent || predicate.value === guard.group) {
      const principal = principalOf(object);
      if (typeof principal !== 'string') key = principalKey(principal);
    }
    if (key !== undefined && !rank.has(key)) rank.set(key, rank.size);
  }
  return ranks;
}

/** A blank node of the data comes back from the engines as a reserved IRI (skolemIri): name it as the data did. */
function unskolemize<T extends Quad['subject'] | Quad['object']>(term: T): T | BlankNode {
  return term.termType === 'NamedNode' && isSkolemIri(term.value) ? DataFactory.blankNode(term.value) : term;
}

/** Why a derived graph cannot be granted, or undefined when it can. */
function graphProblem(object: Quad['object'] | BlankNode): string | undefined {
  if (object.termType !== 'NamedNode') return 'a graph must be an IRI';
  if (isReservedIri(object.value)) return 'the IRI is reserved by the rewriter (urn:x-sparql-guard:)';
  const problem = iriSpliceProblem(object.value);
  return problem === undefined ? undefined : `the IRI ${problem}`;
}

/** The principal a derived object names, or why it names none. */
function principalOf(object: Quad['object'] | BlankNode): Principal | string {
  if (object.termType === 'NamedNode') {
    if (object.value === guard.Everyone) return { kind: 'everyone' };
    if (object.value === guard.AuthenticatedAgent) return { kind: 'authenticated' };
    if (isReservedIri(object.value)) return 'the IRI is reserved by the rewriter (urn:x-sparql-guard:)';
    return { kind: 'agent', agent: object.value };
  }
  if (object.termType === 'Literal' && object.datatype.value === XSD_STRING && object.language === '' && object.value !== '') {
    return { kind: 'group', group: object.value };
  }
  return 'a principal must be an agent IRI or a non-empty plain string (group name)';
}

/** A key unique per principal, readable in an operator's listing. */
export function principalKey(principal: Principal): string {
  switch (principal.kind) {
    case 'everyone':
      return 'Everyone';
    case 'authenticated':
      return 'AuthenticatedAgent';
    case 'agent':
      return `<${principal.agent}>`;
    case 'group':
      return `group ${JSON.stringify(principal.group)}`;
  }
}
