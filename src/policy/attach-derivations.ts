// Validates what the rules derived and attaches it to the declared policies.

import type { Quad } from 'n3';
import { guard, isReservedIri, XSD_STRING } from './guard-terms.js';
import { iriSpliceProblem } from './iri-splice-problem.js';
import { policyLoadError } from './policy-load-error.js';
import type { CompiledPolicy, Principal } from './policy-set.js';
import { describe, type PolicyDocument } from './read-policy-files.js';

/**
 * Turns the derived `guard:appliesTo` / `guard:grantsGraph` triples into one
 * record per declared policy, in order of listing. Fails closed on anything
 * derived that the Turtle itself could not say: a subject that is not a
 * declared policy, a graph that is not a usable IRI, a principal that is
 * neither an IRI nor a plain string.
 */
export function attachDerivations(document: PolicyDocument, derived: readonly Quad[]): CompiledPolicy[] {
  const byIri = new Map<string, { file: string; principals: Map<string, Principal>; graphs: Set<string> }>();
  for (const policy of document.policies) byIri.set(policy.iri, { file: policy.file, principals: new Map(), graphs: new Set() });

  for (const { subject, predicate, object } of derived) {
    const target = subject.termType === 'NamedNode' ? byIri.get(subject.value) : undefined;
    const name = predicate.value === guard.appliesTo ? 'guard:appliesTo' : 'guard:grantsGraph';
    if (target === undefined) {
      throw policyLoadError(`the rules derived ${name} for ${describe(subject)}, which is not a declared guard:Policy`);
    }
    const { file } = target;
    const fail = (reason: string): never => {
      throw policyLoadError(`the rules derived ${name} ${describe(object)}: ${reason}`, file, subject.value);
    };
    if (predicate.value === guard.grantsGraph) {
      if (object.termType !== 'NamedNode') fail('a graph must be an IRI');
      if (isReservedIri(object.value)) fail('the IRI is reserved by the rewriter (urn:x-sparql-guard:)');
      const problem = iriSpliceProblem(object.value);
      if (problem !== undefined) fail(`the IRI ${problem}`);
      target.graphs.add(object.value);
    } else if (predicate.value === guard.appliesTo) {
      const principal = toPrincipal(object, fail);
      target.principals.set(principalKey(principal), principal);
    }
  }

  return document.policies.map((policy) => {
    const found = byIri.get(policy.iri);
    return {
      iri: policy.iri,
      file: policy.file,
      order: policy.order,
      hidePaths: policy.hidePaths,
      graphs: [...(found?.graphs ?? [])],
      principals: [...(found?.principals.values() ?? [])],
    };
  });
}

function toPrincipal(object: Quad['object'], fail: (reason: string) => never): Principal {
  if (object.termType === 'NamedNode') {
    if (object.value === guard.Everyone) return { kind: 'everyone' };
    if (object.value === guard.AuthenticatedAgent) return { kind: 'authenticated' };
    if (isReservedIri(object.value)) return fail('the IRI is reserved by the rewriter (urn:x-sparql-guard:)');
    return { kind: 'agent', agent: object.value };
  }
  if (object.termType === 'Literal' && object.datatype.value === XSD_STRING && object.language === '' && object.value !== '') {
    return { kind: 'group', group: object.value };
  }
  return fail('a principal must be an agent IRI or a non-empty plain string (group name)');
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
