// Compiles the worker's validated policies into the frozen look-up table that grantFor reads (on the serving thread).

import { createPacer } from '../../create-pacer.js';
import { findPrincipal, principalKey, principalName, PRINCIPAL_KINDS, type PrincipalIndex } from '../principal-index.js';
import type { AttachedPolicies } from './worker-messages.js';
import type { PolicyRestriction } from './read-row-rule.js';
import { compileGraphTemplate, type GraphTemplate } from '../compile-graph-template.js';
import { composeGrant, mergeInOrder } from '../grant.js';
import type {
  CompiledPolicy,
  PoliciesByName,
  ListedPrincipal,
  PolicyLimits,
  PolicySet,
  Principal,
  PrincipalEntry,
  PrincipalListing,
} from '../policy-set.js';

/**
 * Builds the policies from the worker's tables (each principal and graph once, ranges of numbers
 * per policy) and the look-up by principal, and precomputes the grants of the callers that only
 * Everyone / AuthenticatedAgent match, the common case. Everything returned is frozen: hand it
 * tables no one else holds. This runs on the thread that serves requests, where a load may
 * bring as many principals as the store has members: nothing here is made per principal. The
 * look-up searches the worker's PrincipalIndex in place, and makes a principal's list of
 * policies when a caller first needs it; a policy's principals are made when first read (by
 * operator tools). It gives the event loop a turn every few milliseconds; the caller keeps its
 * previous set until the promise settles. `prefixGraphs` holds, per `guard:readGraphPrefix` of
 * the policies, the graphs the store listed under it (listPrefixGraphs): each policy with that
 * prefix grants them too.
 */
export async function compilePolicySet(
  attached: AttachedPolicies,
  prefixGraphs: ReadonlyMap<string, readonly string[]> = new Map(),
): Promise<PolicySet> {
  const { principalStarts, principalIndexes, graphStarts, graphIndexes, principals: index } = attached;
  // One frozen object per principal, shared by every policy naming it, made when first asked for.
  const principalObjects: (Principal | undefined)[] = [];
  const principalAt = (at: number): Principal =>
    (principalObjects[at] ??= principalOf(PRINCIPAL_KINDS[index.kinds[at] as number], principalName(index, at)));
  const graphTable = attached.graphs;
  const pace = createPacer();
  const frozen: CompiledPolicy[] = [];
  for (let at = 0; at < attached.iris.length; at += 1) {
    const firstGraph = graphStarts[at] as number;
    const graphs = new Array<string>((graphStarts[at + 1] as number) - firstGraph);
    for (let k = 0; k < graphs.length; k += 1) graphs[k] = graphTable[graphIndexes[firstGraph + k] as number] as string;
    const graphPrefixes = attached.graphPrefixes[at] as readonly string[];
    if (graphPrefixes.length > 0) addListedGraphs(graphs, graphPrefixes, prefixGraphs);
    const firstPrincipal = principalStarts[at] as number;
    const endPrincipal = principalStarts[at + 1] as number;
    let principals: readonly Principal[] | undefined;
    frozen.push(
      Object.freeze({
        iri: attached.iris[at] as string,
        file: attached.files[attached.fileIndexes[at] as number] as string,
        order: attached.orders[at] as number,
        hidePaths: Object.freeze(attached.hidePaths[at] as readonly string[]),
        graphTemplates: compileTemplates(attached.graphTemplates[at] ?? []),
        graphPrefixes: Object.freeze(graphPrefixes),
        limits: Object.freeze(attached.limits[at] as PolicyLimits),
        ...restrictionOf(attached.restrictions[at]),
        graphs: Object.freeze(graphs),
        get principals(): readonly Principal[] {
          if (principals === undefined) {
            const list = new Array<Principal>(endPrincipal - firstPrincipal);
            for (let k = 0; k < list.length; k += 1) list[k] = principalAt(principalIndexes[firstPrincipal + k] as number);
            principals = Object.freeze(list);
          }
          return principals;
        },
      }),
    );
    const turn = pace();
    if (turn !== undefined) await turn;
  }

  const policiesOf = createPolicyLists(index, frozen);
  const special = (kind: number): readonly CompiledPolicy[] => {
    const at = findPrincipal(index, kind, '');
    return at < 0 ? NO_POLICIES : policiesOf(at);
  };
  const everyone = special(PRINCIPAL_KINDS.indexOf('everyone'));
  const authenticated = special(PRINCIPAL_KINDS.indexOf('authenticated'));
  const byName = (kind: number): PoliciesByName =>
    Object.freeze({
      get(name: string) {
        const at = findPrincipal(index, kind, name);
        return at < 0 ? undefined : policiesOf(at);
      },
    });
  const agents = byName(PRINCIPAL_KINDS.indexOf('agent'));
  const groups = byName(PRINCIPAL_KINDS.indexOf('group'));

  const everyoneAndAuthenticated = mergeInOrder([everyone, authenticated]);
  const templateClaims = [...new Set(frozen.flatMap((policy) => policy.graphTemplates.flatMap((template) => template.claims)))].sort();
  const baseTemplates = everyoneAndAuthenticated.some((policy) => policy.graphTemplates.length > 0);
  // The listing per principal serves operator tools only: built when first read, not at every reload.
  let listing: PrincipalListing | undefined;
  let principals: readonly PrincipalEntry[] | undefined;

  return Object.freeze({
    policies: Object.freeze(frozen),
    get principals() {
      return (principals ??= entriesOf((listing ??= listPrincipals(frozen))));
    },
    get listing() {
      return (listing ??= listPrincipals(frozen));
    },
    lookup: Object.freeze({
      everyone,
      authenticated,
      agents,
      groups,
      templateClaims: Object.freeze(templateClaims),
      baseTemplates,
      // With a template among them, each caller's grant is its own (grantFor).
      everyoneGrant: everyone.length > 0 && !baseTemplates ? composeGrant(everyone) : undefined,
      authenticatedGrant: everyoneAndAuthenticated.length > 0 && !baseTemplates ? composeGrant(everyoneAndAuthenticated) : undefined,
    }),
  });
}

const NO_TEMPLATES: readonly GraphTemplate[] = Object.freeze([]);
const NO_POLICIES: readonly CompiledPolicy[] = Object.freeze([]);

/**
 * Principal number -> its policies in order of listing, frozen: made when a caller first needs
 * them and kept with the set (at most one list per principal; principals with the same
 * policies share one).
 */
function createPolicyLists(index: PrincipalIndex, policies: readonly CompiledPolicy[]): (at: number) => readonly CompiledPolicy[] {
  const made: (readonly CompiledPolicy[] | undefined)[] = [];
  const shared = new Map<string, readonly CompiledPolicy[]>();
  return (at) => {
    let list = made[at];
    if (list === undefined) {
      const numbers = index.policies.subarray(index.policyStarts[at] as number, index.policyStarts[at + 1] as number);
      const key = numbers.join(',');
      list = shared.get(key);
      if (list === undefined) shared.set(key, (list = Object.freeze(Array.from(numbers, (number) => policies[number] as CompiledPolicy))));
      made[at] = list;
    }
    return list;
  };
}

/** The templates of one policy, compiled (the worker validated them: a failure here is a bug, and fails the load). */
function compileTemplates(texts: readonly string[]): readonly GraphTemplate[] {
  return texts.length === 0 ? NO_TEMPLATES : Object.freeze(texts.map((text) => compileGraphTemplate(text)));
}

/** Appends to a policy's graphs those listed under its prefixes that it does not grant already, sorted. */
function addListedGraphs(graphs: string[], prefixes: readonly string[], prefixGraphs: ReadonlyMap<string, readonly string[]>): void {
  const known = new Set(graphs);
  const listed = new Set<string>();
  for (const prefix of prefixes) {
    // A prefix the load did not list grants nothing: the listing is what makes a graph granted.
    for (const graph of prefixGraphs.get(prefix) ?? []) if (!known.has(graph)) listed.add(graph);
  }
  graphs.push(...[...listed].sort());
}

/** The frozen principal of a kind and its agent IRI or group name. */
function principalOf(kind: (typeof PRINCIPAL_KINDS)[number] | undefined, name: string): Principal {
  switch (kind) {
    case 'everyone':
      return Object.freeze({ kind });
    case 'authenticated':
      return Object.freeze({ kind });
    case 'agent':
      return Object.freeze({ kind, agent: name });
    case 'group':
      return Object.freeze({ kind, group: name });
    default:
      throw new Error('unknown principal kind from the policy worker');
  }
}

/** Every principal with its policies, in order of its first policy, and the union of their graphs as sorted graph numbers. */
function listPrincipals(policies: readonly CompiledPolicy[]): PrincipalListing {
  // A principal object is usually shared by all its policies (the worker interns them): label each once.
  const labels = new Map<Principal, string>();
  const entries = new Map<string, { principal: Principal; label: string; policies: CompiledPolicy[]; positions: number[] }>();
  // A member of a deep group has hundreds of policies: unions run over graph numbers in sorted order, not strings.
  const sorted = [...new Set(policies.flatMap((policy) => policy.graphs))].sort();
  const number = new Map(sorted.map((graph, index) => [graph, index]));
  const numbersOf = new Array<Int32Array>(policies.length);
  for (const [at, policy] of policies.entries()) {
    const numbers = new Int32Array(policy.graphs.length);
    for (let k = 0; k < numbers.length; k += 1) numbers[k] = number.get(policy.graphs[k] as string) ?? 0;
    numbersOf[at] = numbers;
    for (const principal of policy.principals) {
      let label = labels.get(principal);
      if (label === undefined) labels.set(principal, (label = principalKey(principal)));
      const known = entries.get(label);
      if (known === undefined) entries.set(label, { principal, label, policies: [policy], positions: [at] });
      else {
        known.policies.push(policy);
        known.positions.push(at);
      }
    }
  }
  // Each union is a bitset over the sorted graph numbers, read back in ascending order: no sort, no duplicate check.
  const words = new Int32Array(Math.ceil(sorted.length / 32));
  const union = new Int32Array(sorted.length);
  const listed: ListedPrincipal[] = [];
  for (const { principal, label, policies: list, positions } of entries.values()) {
    for (const position of positions) {
      const numbers = numbersOf[position] as Int32Array;
      for (let at = 0; at < numbers.length; at += 1) {
        const graph = numbers[at] as number;
        words[graph >>> 5] = (words[graph >>> 5] as number) | (1 << (graph & 31));
      }
    }
    let size = 0;
    for (let word = 0; word < words.length; word += 1) {
      let bits = words[word] as number;
      if (bits === 0) continue;
      words[word] = 0;
      while (bits !== 0) {
        const lowest = bits & -bits;
        union[size] = (word << 5) + 31 - Math.clz32(lowest);
        size += 1;
        bits ^= lowest;
      }
    }
    listed.push(Object.freeze({ principal, label, policies: Object.freeze(list), graphs: union.slice(0, size) }));
  }
  return Object.freeze({ graphs: Object.freeze(sorted), entries: Object.freeze(listed) });
}

/** The listing with each union of graphs as IRIs. */
function entriesOf(listing: PrincipalListing): readonly PrincipalEntry[] {
  return Object.freeze(
    listing.entries.map(({ principal, label, policies, graphs: numbers }) => {
      const graphs = new Array<string>(numbers.length);
      for (let at = 0; at < numbers.length; at += 1) graphs[at] = listing.graphs[numbers[at] as number] as string;
      return Object.freeze({ principal, label, policies, graphs: Object.freeze(graphs) });
    }),
  );
}

/** A policy's columns and row rule, frozen, as CompiledPolicy holds them (absent members when it states none). */
function restrictionOf(restriction: PolicyRestriction | undefined): Pick<CompiledPolicy, 'readPaths' | 'rowRule'> {
  if (restriction === undefined) return {};
  const { readPaths, rowRule } = restriction;
  return {
    ...(readPaths !== undefined && { readPaths: Object.freeze([...readPaths]) }),
    ...(rowRule !== undefined && { rowRule: Object.freeze({ ...rowRule }) }),
  };
}
