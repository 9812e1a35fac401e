// What a caller may read: how a Grant is composed from the compiled policies that apply to the caller (on the serving thread, per request).

import type { Caller } from '../auth/caller.js';
import type { TemplateValues } from './compile-graph-template.js';
import type { Columns, CompiledPolicy, GraphView, Grant, PolicyLimits, PolicySet, RowGrant } from './policy-set.js';

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
  /** Per graph, the policies granting it, when one of them lists columns or has a row rule. */
  const restricting = new Map<string, CompiledPolicy[]>();
  for (const policy of policies) {
    let own = policy.graphs;
    if (values !== undefined && policy.graphTemplates.length > 0) {
      const expanded = policy.graphTemplates.flatMap((template) => template.expand(values));
      for (const graph of expanded) fromTemplates.add(graph);
      // Each graph once: a policy that names it and fills a template with it (or two templates) grants it once, so its
      // row rule stands once in the view (explain, check --why, the audit record and the forwarded checks).
      own = [...new Set([...own, ...expanded])];
    }
    for (const graph of own) {
      if (policy.readPaths !== undefined || policy.rowRule !== undefined || restricting.has(graph)) {
        const list =
          restricting.get(graph) ?? policies.filter((earlier) => earlier.order < policy.order && grantsGraph(earlier, graph, values));
        list.push(policy);
        restricting.set(graph, list);
      }
      const sofar = hidden.get(graph);
      if (!graphs.has(graph)) {
        graphs.add(graph);
        hidden.set(graph, new Set(policy.hidePaths));
      } else if (sofar !== undefined && sofar.size > 0) {
        for (const path of sofar) if (!policy.hidePaths.includes(path)) sofar.delete(path);
      }
    }
  }
  const views = new Map<string, GraphView>();
  for (const [graph, list] of restricting) {
    hidden.delete(graph);
    const view = viewOf(list);
    if (view !== undefined) views.set(graph, view);
    else {
      const open = list.reduce<Columns | undefined>((sofar, policy) => mergeColumns(sofar, columnsOf(policy)), undefined);
      if (open !== undefined && open.set.size > 0) hidden.set(graph, new Set(open.set));
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
    ...(views.size > 0 && { views }),
    ...(fromTemplates.size > 0 && { templateGraphs: Object.freeze([...fromTemplates].sort()) }),
  });
}

/** True when `policy` grants `graph` to the caller of `values` (its own graphs or its templates' expansion). */
function grantsGraph(policy: CompiledPolicy, graph: string, values: TemplateValues | undefined): boolean {
  if (policy.graphs.includes(graph)) return true;
  return values !== undefined && policy.graphTemplates.some((template) => template.expand(values).includes(graph));
}

/** The columns one policy shows: its readPath list less its hidden paths, else every predicate but its hidden ones. */
export function columnsOf(policy: CompiledPolicy): Columns {
  if (policy.readPaths === undefined) return { allow: false, set: new Set(policy.hidePaths) };
  return { allow: true, set: new Set(policy.readPaths.filter((path) => !policy.hidePaths.includes(path))) };
}

/** The columns either shows (a policy that shows a predicate lifts it, as hidePath does). */
function mergeColumns(a: Columns | undefined, b: Columns): Columns {
  if (a === undefined) return b;
  if (!a.allow && !b.allow) return { allow: false, set: new Set([...a.set].filter((path) => b.set.has(path))) };
  if (a.allow && b.allow) return { allow: true, set: new Set([...a.set, ...b.set]) };
  const [hide, allow] = a.allow ? [b, a] : [a, b];
  return { allow: false, set: new Set([...hide.set].filter((path) => !allow.set.has(path))) };
}

/** True when every predicate `inner` shows, `outer` shows too. */
function covers(outer: Columns, inner: Columns): boolean {
  if (!outer.allow)
    return inner.allow ? [...inner.set].every((path) => !outer.set.has(path)) : [...outer.set].every((path) => inner.set.has(path));
  return inner.allow && [...inner.set].every((path) => outer.set.has(path));
}

/** The view of a graph granted by `list` (in order of listing), or undefined when it is one of hidden paths only. */
function viewOf(list: readonly CompiledPolicy[]): GraphView | undefined {
  let open: Columns | undefined;
  for (const policy of list) if (policy.rowRule === undefined) open = mergeColumns(open, columnsOf(policy));
  const rows: RowGrant[] = [];
  for (const policy of list) {
    if (policy.rowRule === undefined) continue;
    const columns = columnsOf(policy);
    if (open === undefined || !covers(open, columns)) rows.push({ policy: policy.iri, columns, rule: policy.rowRule });
  }
  if (rows.length === 0 && (open === undefined || !open.allow)) return undefined;
  return Object.freeze({ open, rows: Object.freeze(rows) });
}

/**
 * The columns a caller may read of a graph with a view, over all its policies: the predicates shown
 * (`allow`) when every policy lists its columns, else the predicates no policy shows. For the service
 * description and `check`.
 */
export function viewColumns(view: GraphView): Columns {
  const all = [...(view.open === undefined ? [] : [view.open]), ...view.rows.map(({ columns }) => columns)];
  return all.reduce<Columns | undefined>((sofar, columns) => mergeColumns(sofar, columns), undefined) ?? { allow: true, set: new Set() };
}

/** Columns as explain and check print them: the predicates shown, or the predicates hidden. */
export type ColumnsSummary = { readonly readPath: readonly string[] } | { readonly hidePath: readonly string[] };

/** One graph's view as explain and check print it, IRIs in angle brackets. */
export interface ViewSummary {
  readonly graph: string;
  /** The columns of the policies without a row rule; null when every policy granting the graph has one. */
  readonly open: ColumnsSummary | null;
  /** Per policy with a row rule: its rule as written, the graphs it reads and its columns. */
  readonly rows: readonly {
    readonly policy: string;
    readonly rule: string;
    readonly data: readonly string[];
    readonly columns: ColumnsSummary;
  }[];
}

/** The views of a grant, graphs sorted (docs/policies.md, "Rows and columns"). */
export function summariseViews(views: ReadonlyMap<string, GraphView>): ViewSummary[] {
  const columns = (value: Columns): ColumnsSummary => {
    const list = [...value.set].sort().map((iri) => `<${iri}>`);
    return value.allow ? { readPath: list } : { hidePath: list };
  };
  return [...views]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([graph, view]) => ({
      graph: `<${graph}>`,
      open: view.open === undefined ? null : columns(view.open),
      rows: view.rows.map(({ policy, rule, columns: own }) => ({
        policy: `<${policy}>`,
        rule: rule.source,
        data: rule.data.length === 0 ? [`<${graph}>`] : rule.data.map((iri) => `<${iri}>`),
        columns: columns(own),
      })),
    }));
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
 * `check --why`), IRIs bare. `hidePath`: the predicates kept out of reach there. `columns`: the
 * columns of the policies without a row rule (the predicates shown, or those hidden). `rows`: a
 * policy's row rule, as written, and the columns it shows. An open list: a new kind of
 * restriction adds its own `kind` with its own fields.
 */
export type GraphRestriction =
  | { readonly kind: 'hidePath'; readonly predicates: readonly string[] }
  | ({ readonly kind: 'columns' } & BareColumns)
  | { readonly kind: 'rows'; readonly policy: string; readonly rule: string; readonly columns: BareColumns };

/** Columns with bare IRIs: the predicates shown (`readPath`), or those hidden (`hidePath`). */
type BareColumns = { readonly readPath: readonly string[] } | { readonly hidePath: readonly string[] };

function bareColumns(value: Columns): BareColumns {
  const list = [...value.set].sort();
  return value.allow ? { readPath: list } : { hidePath: list };
}

/** The restrictions of `grant` in `graph`, in a fixed order of kinds; [] when none applies. */
export function restrictionsIn(grant: Grant, graph: string): GraphRestriction[] {
  const restrictions: GraphRestriction[] = [];
  const hidden = grant.hiddenByGraph.get(graph);
  if (hidden !== undefined) restrictions.push({ kind: 'hidePath', predicates: [...hidden].sort() });
  const view = grant.views?.get(graph);
  if (view !== undefined) {
    if (view.open !== undefined) restrictions.push({ kind: 'columns', ...bareColumns(view.open) });
    for (const row of view.rows)
      restrictions.push({ kind: 'rows', policy: row.policy, rule: row.rule.source, columns: bareColumns(row.columns) });
  }
  return restrictions;
}
