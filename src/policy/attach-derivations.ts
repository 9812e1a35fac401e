// Validates what the rules derived and attaches it to the declared policies.

import { DataFactory, type BlankNode, type Quad } from 'n3';
import { guard, isReservedIri, isSkolemIri, XSD_STRING } from '../vocabulary.js';
import { iriSpliceProblem } from '../iri.js';
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
  const byIri = new Map<string, { file: string; principals: Judged<Principal>[]; graphs: Judged<string>[] }>();
  for (const policy of document.policies) byIri.set(policy.iri, { file: policy.file, principals: [], graphs: [] });

  // Engines derive in different orders: the error reported is that of the first bad triple in
  // term order, and the lists are sorted, so the result does not depend on the engine.
  let failure: { key: string; error: Error } | undefined;
  const fail = (
    subject: Quad['subject'] | BlankNode,
    predicate: Quad['predicate'],
    object: Quad['object'] | BlankNode,
    error: () => Error,
  ) => {
    const key = `${subject.id}\u0000${predicate.value}\u0000${object.id}`;
    if (failure === undefined || key < failure.key) failure = { key, error: error() };
  };
  // Half a million derived triples name a few thousand terms: each object term is judged once,
  // and each principal is one object shared by every policy that names it.
  const graphs = new Judgements<string>();
  const principals = new Judgements<Principal>();
  for (const quad of derived) {
    const { predicate } = quad;
    const subject = unskolemize(quad.subject);
    const target = subject.termType === 'NamedNode' ? byIri.get(subject.value) : undefined;
    const grants = predicate.value === guard.grantsGraph;
    const name = grants ? 'guard:grantsGraph' : 'guard:appliesTo';
    if (target === undefined) {
      fail(subject, predicate, unskolemize(quad.object), () =>
        policyLoadError(`the rules derived ${name} for ${describe(subject)}, which is not a declared guard:Policy`),
      );
      continue;
    }
    const judged = grants ? graphs.judge(quad.object, graphOf) : principals.judge(quad.object, principalOf);
    if (typeof judged === 'string') {
      const object = unskolemize(quad.object);
      fail(subject, predicate, object, () =>
        policyLoadError(`the rules derived ${name} ${describe(object)}: ${judged}`, target.file, subject.value),
      );
    } else if (grants) target.graphs.push(judged as Judged<string>);
    else target.principals.push(judged as Judged<Principal>);
  }
  if (failure !== undefined) throw failure.error;
  graphs.rank();
  principals.rank();

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
      graphs: inStatedOrder(found?.graphs, rank, graphs),
      principals: inStatedOrder(found?.principals, rank, principals),
    };
  });
}

/** A derived graph or principal that validation accepted, with its key (`<iri>` or principalKey) and its place among all keys. */
interface Judged<T> {
  readonly key: string;
  readonly value: T;
  rank: number;
}

/** The judgement of every distinct derived object term: one entry per key, or why the term is refused. */
class Judgements<T> {
  private readonly byTerm = new Map<string, Judged<T> | string>();
  private readonly byKey = new Map<string, Judged<T>>();

  judge(term: Quad['object'], readTerm: (object: Quad['object'] | BlankNode) => { key: string; value: T } | string): Judged<T> | string {
    let judged = this.byTerm.get(term.id);
    if (judged === undefined) {
      const read = readTerm(unskolemize(term));
      if (typeof read === 'string') judged = read;
      else {
        judged = this.byKey.get(read.key) ?? { ...read, rank: 0 };
        this.byKey.set(read.key, judged);
      }
      this.byTerm.set(term.id, judged);
    }
    return judged;
  }

  private sorted: Judged<T>[] = [];

  /** Numbers the entries in key order, so a policy's derived entries sort by number rather than by string. */
  rank(): void {
    this.sorted = [...this.byKey.values()].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    this.sorted.forEach((entry, rank) => (entry.rank = rank));
  }

  /** The entry with this key, if any triple named it. */
  entry(key: string): Judged<T> | undefined {
    return this.byKey.get(key);
  }

  /** The value of the entry ranked `rank` (after rank()). */
  at(rank: number): T {
    return (this.sorted[rank] as Judged<T>).value;
  }
}

/**
 * The values of a policy's entries without repeats: those its Turtle states first, as stated
 * (`rank`, whose keys are in stated order), then the rest in key order. The entries are sorted as
 * numbers in a typed array: a policy high in a hierarchy has hundreds of derived principals.
 */
function inStatedOrder<T>(
  entries: readonly Judged<T>[] | undefined,
  rank: ReadonlyMap<string, number> | undefined,
  all: Judgements<T>,
): T[] {
  if (entries === undefined || entries.length === 0) return [];
  const ranks = Int32Array.from(entries, (entry) => entry.rank).sort();
  const stated: number[] = [];
  for (const key of rank?.keys() ?? []) {
    const entry = all.entry(key);
    if (entry !== undefined && ranks.includes(entry.rank)) stated.push(entry.rank);
  }
  const values = stated.map((at) => all.at(at));
  ranks.forEach((at, index) => {
    if (ranks[index - 1] !== at && !stated.includes(at)) values.push(all.at(at));
  });
  return values;
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
      const principal = readPrincipal(object);
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

/** The graph a derived object names, keyed as a graph is listed, or why it cannot be granted. */
function graphOf(object: Quad['object'] | BlankNode): { key: string; value: string } | string {
  return graphProblem(object) ?? { key: `<${object.value}>`, value: object.value };
}

/** The principal a derived object names, with its key, or why it names none. */
function principalOf(object: Quad['object'] | BlankNode): { key: string; value: Principal } | string {
  const principal = readPrincipal(object);
  return typeof principal === 'string' ? principal : { key: principalKey(principal), value: principal };
}

/** Why a derived graph cannot be granted, or undefined when it can. */
function graphProblem(object: Quad['object'] | BlankNode): string | undefined {
  if (object.termType !== 'NamedNode') return 'a graph must be an IRI';
  if (isReservedIri(object.value)) return 'the IRI is reserved by the rewriter (urn:x-sparql-guard:)';
  const problem = iriSpliceProblem(object.value);
  return problem === undefined ? undefined : `the IRI ${problem}`;
}

/** The principal a term names, or why it names none. */
function readPrincipal(object: Quad['object'] | BlankNode): Principal | string {
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
