// Parses one fact source's answer into triples and checks what a source may say (on the policy worker).

import { Parser, type Quad, type Term } from 'n3';
import { isAbsoluteIri } from '../../iri.js';
import { GUARD, guard, isReservedIri, RDF_TYPE } from '../../vocabulary.js';
import { factOrigin } from '../store-reads/fact-origin.js';
import { policyLoadError } from '../policy-load-error.js';
import { describeTerm } from './describe-term.js';
import type { FactInput } from './worker-messages.js';

/**
 * The predicates of policies, stated or derived: a source without `policies: true` may not
 * use any of them, about any subject. The terms other modules add (prefix and template grants)
 * are named here by IRI so that a source can never use them either, whichever lands first.
 */
export const POLICY_TERMS: ReadonlySet<string> = new Set([
  guard.agent,
  guard.group,
  guard.readGraph,
  guard.readGraphPrefix,
  `${guard.readGraph}Template`,
  guard.hidePath,
  guard.timeoutMs,
  guard.resultLimit,
  guard.maxConcurrent,
  guard.appliesTo,
  guard.grantsGraph,
]);

/** Media types read as N-Triples (`text/plain` is what some stores call it) and as Turtle. */
const FORMATS: Readonly<Record<string, string>> = {
  'application/n-triples': 'N-Triples',
  'text/plain': 'N-Triples',
  'text/turtle': 'text/turtle',
  'application/x-turtle': 'text/turtle',
};

/**
 * Parses a source's answer (N-Triples or Turtle: no formulas, no graphs), each source with
 * blank node labels of its own, and checks it: at most `maxTriples` triples, every IRI
 * absolute and outside the reserved `urn:x-sparql-guard:` (a source cannot name the rewriter's
 * graphs nor the stand-ins of the policy files' blank nodes), and without `policies` no policy
 * term (POLICY_TERMS), no `a guard:Policy` and no other IRI of the vocabulary anywhere (the
 * principals: guard:Everyone as a member). Throws PolicyLoadError `facts:<name>: ...`.
 */
export function parseFactSource(input: FactInput, index: number): Quad[] {
  const origin = factOrigin(input.name);
  const fail = (reason: string): never => {
    throw policyLoadError(reason, origin);
  };
  const format = FORMATS[input.contentType];
  if (format === undefined) {
    fail(`the store answered ${input.contentType === '' ? 'without a media type' : input.contentType}, not N-Triples or Turtle`);
  }
  let text = '';
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(input.body);
  } catch {
    fail('the answer is not UTF-8');
  }
  let quads: Quad[] = [];
  try {
    // No base IRI: a relative IRI stays relative, and is refused below.
    quads = new Parser({ format, blankNodePrefix: `f${index}_` }).parse(text);
  } catch (error) {
    fail(`the answer cannot be read as ${format}: ${(error as Error).message.replace(/\.$/, '')}`);
  }
  if (quads.length > input.maxTriples) fail(`${quads.length} triples, more than maxTriples ${input.maxTriples}`);
  for (const quad of quads) {
    for (const term of [quad.subject, quad.predicate, quad.object]) checkTerm(term, fail);
    if (input.policies) continue;
    if (POLICY_TERMS.has(quad.predicate.value)) {
      fail(`states ${describeTerm(quad.predicate)} about ${describeTerm(quad.subject)}, a policy term (allow it with "policies": true)`);
    }
    if (quad.predicate.value === RDF_TYPE && quad.object.termType === 'NamedNode' && quad.object.value === guard.Policy) {
      fail(`declares ${describeTerm(quad.subject)} a guard:Policy (allow it with "policies": true)`);
    }
    // Nor any other IRI of the vocabulary, in any place: `guard:Everyone app:memberOf <apollo>`
    // went through the operator's membership rule to grant apollo to every caller.
    for (const term of [quad.subject, quad.predicate, quad.object]) {
      if (term.termType === 'NamedNode' && term.value.startsWith(GUARD)) {
        fail(`names ${describeTerm(term)}, a term of the policy vocabulary (allow it with "policies": true)`);
      }
    }
  }
  return quads;
}

function checkTerm(term: Term, fail: (reason: string) => never): void {
  if (term.termType !== 'NamedNode') return;
  if (!isAbsoluteIri(term.value)) fail(`${describeTerm(term)} is not an absolute IRI`);
  if (isReservedIri(term.value)) fail(`${describeTerm(term)} is reserved by the rewriter (urn:x-sparql-guard:)`);
}
