// Validates what the rules derived and attaches it to the declared policies (on the policy worker).

import { DataFactory, type BlankNode, type Quad } from 'n3';
import { GUARD, guard, isReservedIri, isSkolemIri, skolemIri, XSD_STRING } from '../../vocabulary.js';
import { findAgentIriProblem, iriSpliceProblem, storeAliasProblem } from '../../iri.js';
import { policyLoadError } from '../policy-load-error.js';
import type { PolicyLimits, Principal } from '../policy-set.js';
import { indexPrincipals, principalKey, PRINCIPAL_KINDS } from '../principal-index.js';
import type { PolicyDocument } from './read-policy-files.js';
import type { AttachedPolicies } from './worker-messages.js';
import { describeTerm } from './describe-term.js';
import { factOrigin } from '../store-reads/fact-origin.js';
import type { PolicyRestriction } from './read-row-rule.js';
import type { ClosureTerm } from '../rules/forward-chain.js';
import type { DerivedTriples } from '../rules/derived-triples.js';

/**
 * Turns the derived `guard:appliesTo` / `guard:grantsGraph` triples into one
 * record per declared policy, in order of listing; its principals and graphs
 * come in the order its Turtle states them, then derived ones sorted. Fails closed on anything
 * derived that the Turtle itself could not say: a subject that is not a
 * declared policy, a graph that is not a usable IRI, a principal that is
 * neither an IRI nor a plain string.
 */
export function attachDerivations(document: PolicyDocument, derived: DerivedTriples): AttachedPolicies {
  const byIri = new Map<string, Target>();
  for (const policy of document.policies) byIri.set(policy.iri, { file: policy.file, principals: [], graphs: [] });

  // Engines derive in different orders: the error reported is that of the first bad triple in
  // term order, and the lists are sorted, so the result does not depend on the engine. Its line
  // is written once, at the end: naming the fact source a term came from reads every triple.
  let failure: { key: string; error: () => Error } | undefined;
  const fail = (subject: ClosureTerm | BlankNode, predicate: string, object: Quad['object'] | BlankNode, error: () => Error) => {
    const key = `${subject.id}\u0000${predicate}\u0000${object.id}`;
    if (failure === undefined || key < failure.key) failure = { key, error };
  };
  // Half a million derived triples name a few thousand terms: each term is judged once, by its
  // number, and each principal is one object shared by every policy that names it.
  const { terms } = derived;
  // Per term number: -2 not looked up yet, -1 not a declared policy, else its index in `targets`.
  const targetIndex = new Int32Array(terms.length).fill(-2);
  const targets: Target[] = [];
  const targetOf = (number: number): number => {
    let index = targetIndex[number] as number;
    if (index === -2) {
      const subject = unskolemize(terms[number] as ClosureTerm);
      const target = subject.termType === 'NamedNode' ? byIri.get(subject.value) : undefined;
      index = target === undefined ? -1 : targets.push(target) - 1;
      targetIndex[number] = index;
    }
    return index;
  };
  const graphs = new Judgements<string>(terms, graphOf);
  const principals = new Judgements<Principal>(terms, principalOf);
  for (const [pairs, grants] of [
    [derived.appliesTo, false],
    [derived.grantsGraph, true],
  ] as const) {
    const predicate = grants ? guard.grantsGraph : guard.appliesTo;
    const name = grants ? 'guard:grantsGraph' : 'guard:appliesTo';
    const judgements: Judgements<unknown> = grants ? graphs : principals;
    for (let at = 0; at < pairs.length; at += 2) {
      const s = pairs[at] as number;
      const o = pairs[at + 1] as number;
      const index = targetOf(s);
      if (index < 0) {
        const subject = unskolemize(terms[s] as ClosureTerm);
        fail(subject, predicate, unskolemize(terms[o] as ClosureTerm), () => {
          const source = factSourceOf(document, terms[s] as ClosureTerm);
          const what = `the rules derived ${name} for ${describeTerm(subject)}`;
          return source === undefined
            ? policyLoadError(`${what}, which is not a declared guard:Policy`)
            : policyLoadError(`${what}${FROM_FACTS}, which is not a declared guard:Policy (${FIX_FACTS})`, source);
        });
        continue;
      }
      const target = targets[index] as Target;
      const judged = judgements.judge(o);
      if (judged < 0) {
        const subject = unskolemize(terms[s] as ClosureTerm);
        const object = unskolemize(terms[o] as ClosureTerm);
        fail(subject, predicate, object, () => {
          const source = factSourceOf(document, terms[o] as ClosureTerm);
          const what = `the rules derived ${name} ${describeTerm(object)}`;
          return source === undefined
            ? policyLoadError(`${what}: ${judgements.refusal(o)}`, target.file, subject.value)
            : policyLoadError(
                `${what}${FROM_FACTS}: ${judgements.refusal(o)} (${FIX_FACTS}; the policy is in ${target.file})`,
                source,
                subject.value,
              );
        });
      } else if (grants) target.graphs.push(judged);
      else target.principals.push(judged);
    }
  }
  if (failure !== undefined) throw failure.error();
  graphs.rank();
  principals.rank();

  const stated = statedOrder(document);
  const policies = document.policies;
  const principalLists = new IndexLists(policies.length, derived.appliesTo.length / 2);
  const graphLists = new IndexLists(policies.length, derived.grantsGraph.length / 2);
  policies.forEach((policy, at) => {
    const found = byIri.get(policy.iri);
    const rank = stated.get(policy.iri);
    principalLists.write(at, found?.principals, rank, principals);
    graphLists.write(at, found?.graphs, rank, graphs);
  });
  const principalRanges = principalLists.done();
  const graphRanges = graphLists.done();
  const files: string[] = [];
  const fileIndex = new Map<string, number>();
  const fileIndexes = new Int32Array(policies.length);
  const orders = new Int32Array(policies.length);
  const hidesNothing: readonly string[] = [];
  const limitsNothing: PolicyLimits = {};
  const restrictsNothing: PolicyRestriction = {};
  policies.forEach(({ file, order }, at) => {
    let index = fileIndex.get(file);
    if (index === undefined) fileIndex.set(file, (index = files.push(file) - 1));
    fileIndexes[at] = index;
    orders[at] = order;
  });
  const principalKinds = new Uint8Array(principals.values.length);
  const principalNames = principals.values.map((principal, at) => {
    principalKinds[at] = PRINCIPAL_KINDS.indexOf(principal.kind);
    return principal.kind === 'agent' ? principal.agent : principal.kind === 'group' ? principal.group : '';
  });
  return {
    iris: policies.map((policy) => policy.iri),
    orders,
    files,
    fileIndexes,
    // A structured clone sends a shared object once, then references to it.
    hidePaths: policies.map((policy) => (policy.hidePaths.length === 0 ? hidesNothing : policy.hidePaths)),
    graphTemplates: policies.map((policy) => (policy.graphTemplates.length === 0 ? hidesNothing : policy.graphTemplates)),
    graphPrefixes: policies.map((policy) => (policy.graphPrefixes.length === 0 ? hidesNothing : policy.graphPrefixes)),
    limits: policies.map((policy) => (Object.keys(policy.limits).length === 0 ? limitsNothing : policy.limits)),
    restrictions: policies.map((policy) =>
      policy.restriction.readPaths === undefined && policy.restriction.rowRule === undefined ? restrictsNothing : policy.restriction,
    ),
    principals: indexPrincipals(principalKinds, principalNames, principalRanges.starts, principalRanges.indexes),
    graphs: graphs.values,
    principalStarts: principalRanges.starts,
    principalIndexes: principalRanges.indexes,
    graphStarts: graphRanges.starts,
    graphIndexes: graphRanges.indexes,
  };
}

/** Per policy, a list of ranks written into one Int32Array. */
class IndexLists {
  private readonly starts: Int32Array;
  private readonly indexes: Int32Array;
  private end = 0;
  /** Room to sort one policy's ranks without allocating. */
  private scratch = new Int32Array(64);

  constructor(policies: number, capacity: number) {
    this.starts = new Int32Array(policies + 1);
    this.indexes = new Int32Array(capacity);
  }

  /**
   * Writes policy `at`'s entries without repeats: those its Turtle states first, as stated
   * (`rank`, whose keys are in stated order), then the rest in key order. The entries are
   * sorted as numbers: a policy high in a hierarchy has hundreds of derived principals.
   */
  write<T>(at: number, entries: readonly number[] | undefined, rank: ReadonlyMap<string, number> | undefined, all: Judgements<T>): void {
    this.starts[at] = this.end;
    const count = entries?.length ?? 0;
    if (entries !== undefined && count > 0) {
      if (this.scratch.length < count) this.scratch = new Int32Array(count * 2);
      const ranks = this.scratch.subarray(0, count);
      for (let i = 0; i < count; i += 1) ranks[i] = all.ranks[entries[i] as number] as number;
      ranks.sort();
      const stated: number[] = [];
      for (const key of rank?.keys() ?? []) {
        const found = all.rankOf(key);
        if (found >= 0 && ranks.includes(found)) stated.push(found);
      }
      const { indexes } = this;
      for (const found of stated) indexes[this.end++] = found;
      let previous = -1;
      for (const found of ranks) {
        if (found !== previous && (stated.length === 0 || !stated.includes(found))) indexes[this.end++] = found;
        previous = found;
      }
    }
    this.starts[at + 1] = this.end;
  }

  /** The start of each policy's range (one more than the policies) and the ranks, trimmed. */
  done(): { starts: Int32Array; indexes: Int32Array } {
    return { starts: this.starts, indexes: this.indexes.slice(0, this.end) };
  }
}

/** A declared policy and the entries derived for it, as Judged indexes. */
interface Target {
  readonly file: string;
  readonly principals: number[];
  readonly graphs: number[];
}

/** A derived graph or principal that validation accepted, with its key (`<iri>` or principalKey) and its number among the accepted. */
interface Judged<T> {
  readonly key: string;
  readonly value: T;
  readonly index: number;
}

/** The judgement of every distinct derived object term: one entry per key, or why the term is refused. */
class Judgements<T> {
  /** Per term number: -2 not judged yet, -1 refused, else the index of its entry. */
  private readonly byTerm: Int32Array;
  private readonly refusals = new Map<number, string>();
  private readonly byKey = new Map<string, Judged<T>>();

  constructor(
    private readonly terms: readonly ClosureTerm[],
    private readonly readTerm: (object: Quad['object'] | BlankNode) => { key: string; value: T } | string,
  ) {
    this.byTerm = new Int32Array(terms.length).fill(-2);
  }

  /** The entry index of term number `number`, or -1 when it is refused (see refusal); judged on the first call. */
  judge(number: number): number {
    let judged = this.byTerm[number] as number;
    if (judged === -2) {
      const read = this.readTerm(unskolemize(this.terms[number] as ClosureTerm));
      if (typeof read === 'string') {
        judged = -1;
        this.refusals.set(number, read);
      } else {
        let entry = this.byKey.get(read.key);
        if (entry === undefined) {
          entry = { ...read, index: this.byKey.size };
          this.byKey.set(read.key, entry);
        }
        judged = entry.index;
      }
      this.byTerm[number] = judged;
    }
    return judged;
  }

  /** Why term number `number` was refused. */
  refusal(number: number): string {
    return this.refusals.get(number) ?? '';
  }

  /** Per rank (place in key order), the entry's value; after rank(). */
  values: T[] = [];
  /** Per entry index, its rank; after rank(). */
  ranks = new Int32Array(0);

  /** Ranks the entries in key order, so a policy's derived entries sort by number rather than by string. */
  rank(): void {
    // The keys alone, in the sort's own order (UTF-16 code units, as `<` compares): a comparator
    // called from the sort costs a function call per comparison, a hundred thousand keys times 17.
    const sorted = [...this.byKey.keys()].sort().map((key) => this.byKey.get(key) as Judged<T>);
    this.values = sorted.map((entry) => entry.value);
    this.ranks = new Int32Array(sorted.length);
    sorted.forEach((entry, rank) => (this.ranks[entry.index] = rank));
  }

  /** The rank of the entry with this key, or -1 when no triple named it. */
  rankOf(key: string): number {
    const entry = this.byKey.get(key);
    return entry === undefined ? -1 : (this.ranks[entry.index] as number);
  }
}

/** How a line that blames a fact source says so, and what to change. */
const FROM_FACTS = " from this fact source's answer";
const FIX_FACTS = "fix the data in the store, or the source's CONSTRUCT";
/** What every fact source's origin starts with (a policy file's is an absolute path). */
const FACTS_ORIGIN = factOrigin('');

/**
 * The fact source (`facts:<name>`) whose answer holds `term` when no policy file states it: a
 * derived term the load refuses then came from the store, and the line names the source rather
 * than the policy file. Blank nodes are compared as the engines see them (skolemIri).
 */
function factSourceOf(document: PolicyDocument, term: ClosureTerm): string | undefined {
  const id = term.id;
  const holds = (quad: Quad) =>
    [quad.subject, quad.object].some((part) => (part.termType === 'BlankNode' ? skolemIri(part.value) : part.id) === id);
  let source: string | undefined;
  for (const { origin, first, count } of document.origins) {
    const fromFacts = origin.startsWith(FACTS_ORIGIN);
    if (fromFacts && source !== undefined) continue;
    for (let at = first; at < first + count; at += 1) {
      if (!holds(document.quads[at] as Quad)) continue;
      if (!fromFacts) return undefined;
      source = origin;
      break;
    }
  }
  return source;
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
  const problem = iriSpliceProblem(object.value) ?? storeAliasProblem(object.value);
  return problem === undefined ? undefined : `the IRI ${problem}`;
}

/** The principal a term names, or why it names none. */
function readPrincipal(object: Quad['object'] | BlankNode): Principal | string {
  if (object.termType === 'NamedNode') {
    if (object.value === guard.Everyone) return { kind: 'everyone' };
    if (object.value === guard.AuthenticatedAgent) return { kind: 'authenticated' };
    if (isReservedIri(object.value)) return 'the IRI is reserved by the rewriter (urn:x-sparql-guard:)';
    // guard:Anonymous is the one agent IRI of the namespace; its other terms are no principal.
    if (object.value.startsWith(GUARD) && object.value !== guard.Anonymous) {
      return `guard:${object.value.slice(GUARD.length)} is not a principal (an agent IRI, guard:Everyone, guard:AuthenticatedAgent or guard:Anonymous)`;
    }
    const problem = object.value.startsWith(GUARD) ? undefined : findAgentIriProblem(object.value);
    if (problem !== undefined) return `the agent IRI ${problem}`;
    return { kind: 'agent', agent: object.value };
  }
  if (object.termType === 'Literal' && object.datatype.value === XSD_STRING && object.language === '' && object.value !== '') {
    return { kind: 'group', group: object.value };
  }
  return 'a principal must be an agent IRI or a non-empty plain string (group name)';
}
