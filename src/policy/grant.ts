// What a caller may read: the Grant type, and how it is composed from the compiled policies that apply to the caller (on the serving thread, per request).

import type { Caller } from '../auth/caller.js';
import type { TemplateValues } from './compile-graph-template.js';
import type { CompiledPolicy, PolicyLimits, PolicySet } from './policy-set.js';

/**
 * The graphs the policies of one caller grant, computed per request by map
 * look-ups in the compiled policy set.
 */
export interface Grant {
  /**
   * The caller's limits: per kind, the largest value among its policies that set one
   * (the most generous policy wins, as graphs are a union); a kind absent, or no limits at
   * all, = no policy sets it.
   */
  readonly limits?: PolicyLimits;
  /** Policy IRIs (bare, without angle brackets), in order of listing. */
  readonly policies: readonly string[];
  /** Every graph IRI granted for reading by at least one of those policies. */
  readonly graphs: ReadonlySet<string>;
  /**
   * Per granted graph, the predicates that stay hidden in it (docs/design/policy.md#vocabulary:
   * intersection of the hidePath sets of the caller's policies granting that
   * graph). Graphs with nothing hidden are absent.
   */
  readonly hiddenByGraph: ReadonlyMap<string, ReadonlySet<string>>;
  /** The graphs this caller's graph templates gave (`guard:readGraphTemplate`), sorted, also in `graphs`; absent when none. */
  readonly templateGraphs?: readonly string[];
}

/**
 * The grant of `caller`: the policies for Everyone, for AuthenticatedAgent
 * (authenticated callers only), for its agent IRI and for each of its groups,
 * merged in order of listing without duplicates (docs/design/policy.md#vocabulary).
 * `undefined` when no policy applies; the caller of this function answers
 * 401 or 403 (docs/design/auth.md#identity). No reasoning happens here. The graph templates
 * of those policies are expanded for the caller (compileGraphTemplate): a value that
 * cannot fill one throws TemplateValueError.
 */
export function grantFor(set: PolicySet, caller: Caller): Grant | undefined {
  const { lookup } = set;
  const extra: (readonly CompiledPolicy[])[] = [];
  const own = lookup.agents.get(caller.agent);
  if (own !== undefined) extra.push(own);
  for (const group of caller.groups) {
    const list = lookup.groups.get(group);
    if (list !== undefined) extra.push(list);
  }
  // The common case (no policy names this agent or its groups) was computed at load.
  if (extra.length === 0 && !lookup.baseTemplates) return caller.authenticated ? lookup.authenticatedGrant : lookup.everyoneGrant;

  const base = caller.authenticated ? [lookup.everyone, lookup.authenticated] : [lookup.everyone];
  const policies = mergeInOrder([...base, ...extra]);
  if (policies.length === 0) return undefined;
  // The anonymous caller has no identity to name a graph after: its templates expand to nothing.
  const values: TemplateValues = { agent: caller.authenticated ? caller.agent : undefined, groups: caller.groups, claims: caller.claims };
  return composeGrant(policies, values);
}

/**
 * `policies` must be in order of listing and without duplicates. Hidden paths
 * per graph are the intersection of the hidePath sets of the policies that
 * grant that graph (docs/design/policy.md#vocabulary): a policy granting the graph without
 * hiding p lifts p. Graphs left with nothing hidden are absent. With `values`, each policy's
 * graph templates add the graphs they give that caller, as if the policy named them.
 */
export function composeGrant(policies: readonly CompiledPolicy[], values?: TemplateValues): Grant {
  const graphs = new Set<string>();
  const hidden = new Map<string, Set<string>>();
  const fromTemplates = new Set<string>();
  for (const policy of policies) {
    let own = policy.graphs;
    if (values !== undefined && policy.graphTemplates.length > 0) {
      const expanded = policy.graphTemplates.flatMap((template) => template.expand(values));
      for (const graph of expanded) fromTemplates.add(graph);
      own = [...own, ...expanded];
    }
    for (const graph of own) {
      const sofar = hidden.get(graph);
      if (!graphs.has(graph)) {
        graphs.add(graph);
        hidden.set(graph, new Set(policy.hidePaths));
      } else if (sofar !== undefined && sofar.size > 0) {
        for (const path of sofar) if (!policy.hidePaths.includes(path)) sofar.delete(path);
      }
    }
  }
  for (const [graph, paths] of hidden) if (paths.size === 0) hidden.delete(graph);
  const limits: { -readonly [K in keyof PolicyLimits]: number } = {};
  for (const policy of policies) {
    for (const [kind, value] of Object.entries(policy.limits) as [keyof PolicyLimits, number][]) {
      limits[kind] = Math.max(limits[kind] ?? 0, value);
    }
  }
  return Object.freeze({
    limits: Object.freeze(limits),
    policies: Object.freeze(policies.map((policy) => policy.iri)),
    graphs,
    hiddenByGraph: hidden,
    ...(fromTemplates.size > 0 && { templateGraphs: Object.freeze([...fromTemplates].sort()) }),
  });
}

/** Merges lists that are each in order of listing into one, in order and without duplicates. */
export function mergeInOrder(lists: readonly (readonly CompiledPolicy[])[]): CompiledPolicy[] {
  const nonEmpty = lists.filter((list) => list.length > 0);
  if (nonEmpty.length === 1 && nonEmpty[0] !== undefined) return [...nonEmpty[0]];
  const byOrder = new Map<number, CompiledPolicy>();
  for (const list of nonEmpty) for (const policy of list) byOrder.set(policy.order, policy);
  return [...byOrder.values()].sort((a, b) => a.order - b.order);
}

const sortedBySet = new WeakMap<ReadonlySet<string>, readonly string[]>();

/** The granted graphs sorted, remembered per grant set (policy look-up hands out the same set again). */
export function sortedGraphs(grant: Grant): readonly string[] {
  let sorted = sortedBySet.get(grant.graphs);
  if (sorted === undefined) {
    sorted = [...grant.graphs].sort();
    sortedBySet.set(grant.graphs, sorted);
  }
  return sorted;
}

/**
 * A restriction that applies to a caller in one granted graph, for operators (audit records,
 * `check --why`). `hidePath`: the predicates kept out of reach there. An open list: each kind of
 * restriction a policy can state (columns, rows) adds its own `kind` with its own fields.
 */
export type GraphRestriction = { readonly kind: 'hidePath'; readonly predicates: readonly string[] };

/** The restrictions of `grant` in `graph`, in a fixed order of kinds; [] when none applies. */
export function restrictionsIn(grant: Grant, graph: string): GraphRestriction[] {
  const restrictions: GraphRestriction[] = [];
  const hidden = grant.hiddenByGraph.get(graph);
  if (hidden !== undefined) restrictions.push({ kind: 'hidePath', predicates: [...hidden].sort() });
  return restrictions;
}
