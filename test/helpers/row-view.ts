// The rows oracle's reference: a caller's view V_c(g) of every graph it reads, materialised into a separate embedded Oxigraph store by evaluating the definition directly.

import oxigraph from 'oxigraph';

const GUARD = 'https://w3id.org/sparql-guard#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const XSD_STRING = 'http://www.w3.org/2001/XMLSchema#string';

/** One policy as the definition reads it: whom it applies to, what it grants, its columns and its row rule. */
export interface RowPolicy {
  readonly iri: string;
  readonly agents: readonly string[];
  readonly groups: readonly string[];
  readonly graphs: readonly string[];
  /** `guard:readGraphTemplate` texts, as written: `{agent}` and `{group}` are filled in per caller (graphsOf). */
  readonly templates?: readonly string[];
  /** `guard:readGraphPrefix` values: every non-empty graph of the data whose IRI starts with one (graphsOf). */
  readonly prefixes?: readonly string[];
  /** The `guard:readPath` allow-list; undefined when the policy lists none (every predicate). */
  readonly readPaths: ReadonlySet<string> | undefined;
  readonly hidePaths: ReadonlySet<string>;
  /** The row pattern (a basic graph pattern over ?this), prefixed by the file's prefixes; undefined without a row rule. */
  readonly rowPattern: string | undefined;
  /** The graphs the row pattern reads; empty = the granted graph itself. */
  readonly rowData: readonly string[];
}

/** Who asks, as the guard binds it into a row pattern. */
export interface RowCaller {
  /** The agent IRI; undefined for an anonymous caller (?agent then has no value). */
  readonly agent: string | undefined;
  readonly groups: readonly string[];
  /** A JWT caller's string claims, by name (?claim_NAME). */
  readonly claims?: ReadonlyMap<string, string>;
}

/** The `@prefix` and `PREFIX` declarations of a Turtle text, as SPARQL PREFIX lines. */
function prefixesOf(turtle: string): string {
  return [...turtle.matchAll(/(?:@prefix|PREFIX)\s+([A-Za-z][\w.-]*)?:\s*<([^>]*)>/gi)]
    .map((match) => `PREFIX ${match[1] ?? ''}: <${match[2] ?? ''}>`)
    .join('\n');
}

/**
 * Reads the policies of a Turtle policy file without the guard's loader: each `guard:Policy`
 * with its principals, granted graphs, readPath and hidePath lists, and its row rule
 * (`guard:rowPattern` with the file's prefixes, or `guard:rowClass <C>` as `?this a <C>`).
 */
export function readRowPolicies(turtle: string): RowPolicy[] {
  const store = new oxigraph.Store();
  store.load(turtle, { format: 'text/turtle', base_iri: 'http://localhost/' });
  const prefixes = prefixesOf(turtle);
  const policies = store.match(null, oxigraph.namedNode(RDF_TYPE), oxigraph.namedNode(`${GUARD}Policy`), null).map((quad) => quad.subject);
  return policies.map((policy) => {
    const values = (local: string): string[] =>
      store.match(policy, oxigraph.namedNode(GUARD + local), null, null).map((quad) => quad.object.value);
    const readPaths = values('readPath');
    const patterns = [...values('rowPattern'), ...values('rowClass').map((iri) => `?this a <${iri}>`)];
    if (patterns.length > 1) throw new Error(`${policy.value}: the oracle reads one row rule per policy`);
    return {
      iri: policy.value,
      agents: values('agent'),
      groups: values('group'),
      graphs: values('readGraph'),
      templates: values('readGraphTemplate'),
      prefixes: values('readGraphPrefix'),
      readPaths: readPaths.length === 0 ? undefined : new Set(readPaths),
      hidePaths: new Set(values('hidePath')),
      rowPattern: patterns[0] === undefined ? undefined : `${prefixes}\n${patterns[0]}`,
      rowData: values('rowData'),
    };
  });
}

/** A value as RFC 6570 simple expansion writes it: every byte of its UTF-8 but A-Z a-z 0-9 - . _ ~ percent-encoded. */
const encodeValue = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The graphs `policy` grants `caller` over `data`: its readGraph IRIs, its templates filled in with the caller's
 * agent (`{agent}`) and each of its groups (`{group}`; an anonymous caller fills none), and the non-empty graphs of
 * `data` under its prefixes.
 */
export function graphsOf(policy: RowPolicy, caller: RowCaller, data?: oxigraph.Store): string[] {
  const graphs = [...policy.graphs];
  for (const template of policy.templates ?? []) {
    if (caller.agent === undefined) continue;
    if (template.includes('{agent}')) graphs.push(template.replaceAll('{agent}', encodeValue(caller.agent)));
    else if (template.includes('{group}'))
      for (const group of caller.groups) graphs.push(template.replaceAll('{group}', encodeValue(group)));
    else throw new Error(`${policy.iri}: the oracle fills {agent} and {group} only`);
  }
  if ((policy.prefixes ?? []).length > 0) {
    if (data === undefined) throw new Error(`${policy.iri}: a prefix grant needs the data to list`);
    const names = new Set(data.match(null, null, null, null).map((quad) => quad.graph.value));
    for (const name of names) if (policy.prefixes?.some((prefix) => name.startsWith(prefix))) graphs.push(name);
  }
  return [...new Set(graphs)];
}

/** The policies that apply to `caller`: by agent IRI, group, guard:AuthenticatedAgent or guard:Everyone. */
export function policiesFor(policies: readonly RowPolicy[], caller: RowCaller): RowPolicy[] {
  return policies.filter(
    (policy) =>
      policy.agents.includes(`${GUARD}Everyone`) ||
      (caller.agent !== undefined && (policy.agents.includes(caller.agent) || policy.agents.includes(`${GUARD}AuthenticatedAgent`))) ||
      policy.groups.some((group) => caller.groups.includes(group)),
  );
}

/** A term as a map key: blank nodes of one store keep their labels between match and query. */
const keyOf = (term: oxigraph.Term): string => `${term.termType} ${term.value}`;

const isString = (term: oxigraph.Term | undefined, value: string): boolean =>
  term?.termType === 'Literal' && term.language === '' && term.datatype.value === XSD_STRING && term.value === value;

/**
 * The subjects s for which `pattern` has a solution over `rowData` (merged as one default graph of
 * `data`) with ?this = s and the caller's identity bound: ?agent its IRI, ?group one of its groups
 * (a string), ?claim_NAME its string claim NAME. A variable the caller has no value for matches
 * nothing. The identity is compared after evaluation, never written into the query text.
 * `all` is returned when a solution leaves ?this unbound (a pattern not over ?this holds for every s).
 */
export function rowSubjects(data: oxigraph.Store, pattern: string, rowData: readonly string[], caller: RowCaller): Set<string> | 'all' {
  const body = pattern.replace(/^PREFIX[^\n]*\n/gim, '');
  const identity = [...new Set([...body.matchAll(/[?$](agent|group|claim_[A-Za-z0-9_]+)\b/g)].map((match) => match[1] ?? ''))];
  const prologue = pattern.slice(0, pattern.length - body.length);
  const projection = ['?this', ...identity.map((name) => `?${name}`)].join(' ');
  const solutions = data.query(`${prologue}SELECT DISTINCT ${projection} WHERE { ${body} }`, {
    default_graph: rowData.map((graph) => oxigraph.namedNode(graph)),
  }) as Map<string, oxigraph.Term>[];
  const holds = (solution: Map<string, oxigraph.Term>): boolean =>
    identity.every((name) => {
      const term = solution.get(name);
      if (name === 'agent') return caller.agent !== undefined && term?.termType === 'NamedNode' && term.value === caller.agent;
      if (name === 'group') return caller.groups.some((group) => isString(term, group));
      const claim = caller.claims?.get(name.slice('claim_'.length));
      return claim !== undefined && isString(term, claim);
    });
  const subjects = new Set<string>();
  for (const solution of solutions.filter(holds)) {
    const subject = solution.get('this');
    if (subject === undefined) return 'all';
    subjects.add(keyOf(subject));
  }
  return subjects;
}

/**
 * The caller's view: a new store holding, for every graph g some applicable policy grants,
 * `V_c(g) = { (s p o) in g | some P granting g has vis_P(p) and row_P(s) }` under g's own name,
 * where vis_P(p) = (P lists no readPath or lists p) and p is not a hidePath of P, and row_P(s) =
 * P has no row rule or its pattern holds for s in the unrestricted rowData graphs (default: g).
 */
export function buildView(data: oxigraph.Store, policies: readonly RowPolicy[], caller: RowCaller): oxigraph.Store {
  const applying = policiesFor(policies, caller);
  const view = new oxigraph.Store();
  const grants = new Map(applying.map((policy) => [policy, graphsOf(policy, caller, data)]));
  const graphs = [...new Set([...grants.values()].flat())];
  for (const graph of graphs) {
    const granting = applying.filter((policy) => grants.get(policy)?.includes(graph) === true);
    const rows = granting.map((policy) =>
      policy.rowPattern === undefined
        ? ('all' as const)
        : rowSubjects(data, policy.rowPattern, policy.rowData.length > 0 ? policy.rowData : [graph], caller),
    );
    for (const quad of data.match(null, null, null, oxigraph.namedNode(graph))) {
      const visible = granting.some((policy, index) => {
        const row = rows[index];
        const column =
          (policy.readPaths === undefined || policy.readPaths.has(quad.predicate.value)) && !policy.hidePaths.has(quad.predicate.value);
        return column && (row === 'all' || row?.has(keyOf(quad.subject)) === true);
      });
      if (visible) view.add(quad);
    }
  }
  return view;
}

/** The graphs `caller` reads under `policies`, sorted. */
export function grantedGraphs(policies: readonly RowPolicy[], caller: RowCaller, data?: oxigraph.Store): string[] {
  return [...new Set(policiesFor(policies, caller).flatMap((policy) => graphsOf(policy, caller, data)))].sort();
}
