// Rows and columns where every other way of granting meets them on the same graphs and subjects: a row rule reading
// a directory the application keeps, a claim in a row rule and in a graph template, a prefix grant, graphs and callers
// derived by N3 rules from facts a fact source reads from the store, hidden paths and Everyone. Each caller's answers
// are held to its view, built by hand from the definition (docs/policies.md, "Rows and columns") over the store's
// data as it is; the facts and the row data are then changed in the store and the answers held to the new view.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import oxigraph from 'oxigraph';
import sparqljs from 'sparqljs';
import { rewriteDescribe } from '../../../src/sparql/rewrite-describe.js';
import { canonical } from '../../helpers/redaction-oracle.js';
import { buildView, graphsOf, type RowCaller, type RowPolicy } from '../../helpers/row-view.js';
import { startTestGuard, type TestGuard } from '../../helpers/start-test-guard.js';
import { startTestIssuer, type TestIssuer } from '../../helpers/start-test-issuer.js';
import { startWritableStore, type WritableStore } from '../../helpers/start-writable-store.js';
import { storesUnderTest } from '../../helpers/rig-stores.js';
import { updateLabStore } from '../../helpers/lab-update.js';
import { insertOf } from '../../helpers/rows-stores.js';
import { mulberry32 } from '../../w3c/w3c-evaluation.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
/** Datasets drawn per query and caller beside the query as written (RULES_CLAIMS_DATASETS). */
const SAMPLE = Number(process.env['RULES_CLAIMS_DATASETS'] ?? 2);

const EX = 'http://example.org/h5#';
/** The run's own graph names, so that a shared lab store holds them beside every other run's. */
const G = `http://example.org/rules-claims-${process.pid}/`;
const AG = 'http://example.org/agents/';
const APP = 'http://example.org/app#';
const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const PREFIXES = `PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>\nPREFIX ex: <${EX}>\nPREFIX ag: <${AG}>\nPREFIX app: <${APP}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n`;

const DATA = `@prefix ex: <${EX}> .
@prefix ag: <${AG}> .
@prefix app: <${APP}> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<${G}hr> {
  ag:alice a ex:Person , ex:Public ; ex:name "Alice" ; ex:dept "sales" ; ex:salary 9000 ; ex:ssn "111" ; ex:manager ag:bob ; ex:friend _:ghost .
  ag:bob a ex:Person ; ex:name "Bob" ; ex:dept "ops" ; ex:salary 8000 ; ex:ssn "222" ; ex:manager ag:carol .
  ag:carol a ex:Person ; ex:name "Carol"@en ; ex:dept "sales"@en ; ex:salary 7000.0 ; ex:manager ag:bob .
  ag:dave a ex:Person , ex:Public ; ex:name "Dave" ; ex:dept "sales"^^xsd:string ; ex:salary "09000"^^xsd:integer ; ex:manager ag:bob .
  _:ghost a ex:Person ; ex:name "Ghost" ; ex:dept "sales" ; ex:manager ag:bob ; ex:salary 1 .
  _:anon ex:name "Anon" ; ex:dept "ops" ; ex:friend _:ghost ; ex:salary 2 .
}
<${G}directory> {
  ag:alice ex:worksIn "sales" .
  ag:bob ex:worksIn "ops" .
  ag:jo ex:worksIn "ops" .
}
<${G}proj/apollo> {
  ex:t1 a ex:Task ; ex:title "Launch" ; ex:cost 100 ; ex:status "open" ; ex:owner ag:alice .
  ex:t2 a ex:Task ; ex:title "Land" ; ex:cost 100.0 ; ex:status "closed" ; ex:owner ag:bob ; ex:next ex:t1 .
  ex:t3 a ex:Task ; ex:title "Orbit" ; ex:cost "1e2"^^xsd:double ; ex:status "open"@en ; ex:next ex:t2 .
  _:t4 ex:title "Hidden step" ; ex:status "open" ; ex:next ex:t3 ; ex:cost 100 .
}
<${G}proj/gemini> {
  ex:t1 ex:title "Launch (gemini copy)" ; ex:cost 50 ; ex:status "open" .
  ex:g1 a ex:Task ; ex:title "Dock" ; ex:cost 70 ; ex:status "open" ; ex:next ex:t1 .
}
<${G}app> {
  ag:dan app:memberOf app:apollo .
  ag:bob app:memberOf app:gemini .
  <${G}proj/apollo> app:partOf app:apollo .
  <${G}proj/gemini> app:partOf app:gemini .
}
<${G}tenants/acme/one> {
  ex:a1 a ex:Public ; ex:name "acme one" ; ex:cost 5 ; ex:secret "s1" .
  ex:a2 ex:name "acme two private" ; ex:cost 6 ; ex:next ex:a1 .
}
<${G}tenants/acme/two> {
  ex:a1 ex:name "acme one again" ; ex:cost 5.0 .
  ex:a3 a ex:Public ; ex:name "three" ; ex:secret "s3" ; ex:next ex:a2 .
}
<${G}tenants/acme-evil/x> { ex:e1 a ex:Public ; ex:name "evil" . }
<${G}users/alice/notes> { ex:n1 a ex:Note ; ex:text "mine" ; ex:private "p" . ex:n2 ex:text "draft" . }
<${G}users/jo/notes> { ex:n3 a ex:Note ; ex:text "jo's" ; ex:private "q" . }
`;

const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix ex: <${EX}> .
@prefix app: <${APP}> .
@prefix proj: <https://example.org/projects#> .
@prefix coll: <https://example.org/graph-collections#> .
@prefix pol: <http://example.org/policies/h5/> .
pol:staff-hr a guard:Policy ; guard:agent guard:AuthenticatedAgent ; guard:readGraph <${G}hr> ;
    guard:rowPattern "?this ex:dept ?d . ?agent ex:worksIn ?d" ; guard:rowData <${G}directory> ;
    guard:readPath rdf:type, ex:name, ex:dept, ex:manager, ex:friend .
pol:mgr a guard:Policy ; guard:group "mgr" ; guard:readGraph <${G}hr> ;
    guard:rowPattern "?this ex:manager ?agent" ; guard:readPath ex:salary, ex:name .
pol:hr a guard:Policy ; guard:group "hr" ; guard:readGraph <${G}hr> ; guard:hidePath ex:ssn .
pol:dept-claim a guard:Policy ; guard:group "jwt" ; guard:readGraph <${G}hr> ;
    guard:rowPattern "?this ex:dept ?claim_dept" ; guard:readPath ex:name, ex:salary .
pol:public a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph <${G}hr> ; guard:rowClass ex:Public ; guard:readPath ex:name .
pol:notes a guard:Policy ; guard:agent guard:AuthenticatedAgent ; guard:readGraphTemplate "${G}users/{claim.sub}/notes" ;
    guard:rowClass ex:Note ; guard:hidePath ex:private .
pol:acme a guard:Policy ; guard:group "acme" ; guard:readGraphPrefix "${G}tenants/acme/" ; guard:rowClass ex:Public ;
    guard:readPath rdf:type, ex:name, ex:cost .
pol:acme-admin a guard:Policy ; guard:group "acme-admin" ; guard:readGraphPrefix "${G}tenants/acme/" ; guard:hidePath ex:secret .
pol:project-apollo a guard:Policy ; guard:group "project-apollo" ; proj:forProject app:apollo ;
    guard:rowPattern "?this ex:status 'open'" ; guard:readPath rdf:type, ex:title, ex:cost, ex:status, ex:next, ex:owner .
pol:project-gemini a guard:Policy ; guard:group "project-gemini" ; proj:forProject app:gemini ; guard:hidePath ex:cost .
pol:coll a guard:Policy ; guard:group "coll" ; coll:readCollection ex:shared ;
    guard:rowPattern "?this ex:manager ?m . ?m ex:dept 'ops'" ; guard:readPath ex:name, ex:title, ex:next, rdf:type, ex:manager .
<${G}proj/apollo> coll:inCollection ex:shared .
<${G}hr> coll:inCollection ex:shared .
`;

const FACTS_QUERY = `PREFIX app: <${APP}> PREFIX proj: <https://example.org/projects#>
CONSTRUCT { ?agent proj:memberOf ?project . ?graph proj:belongsTo ?project }
WHERE { GRAPH <${G}app> { { ?agent app:memberOf ?project } UNION { ?graph app:partOf ?project } } }`;

/** The policies as the definition reads them, their graphs to be filled per caller. */
function policy(iri: string, fields: Partial<RowPolicy>): RowPolicy {
  return {
    iri,
    agents: [],
    groups: [],
    graphs: [],
    readPaths: undefined,
    hidePaths: new Set(),
    rowPattern: undefined,
    rowData: [],
    ...fields,
  };
}
const pfx = `PREFIX ex: <${EX}>\n`;
const cols = (...locals: string[]): Set<string> => new Set(locals.map((local) => (local === 'a' ? RDF_TYPE : EX + local)));
const DEFS = {
  staffHr: policy('staff-hr', {
    graphs: [`${G}hr`],
    rowPattern: `${pfx}?this ex:dept ?d . ?agent ex:worksIn ?d`,
    rowData: [`${G}directory`],
    readPaths: cols('a', 'name', 'dept', 'manager', 'friend'),
  }),
  mgr: policy('mgr', { graphs: [`${G}hr`], rowPattern: `${pfx}?this ex:manager ?agent`, readPaths: cols('salary', 'name') }),
  hr: policy('hr', { graphs: [`${G}hr`], hidePaths: cols('ssn') }),
  deptClaim: policy('dept-claim', { graphs: [`${G}hr`], rowPattern: `${pfx}?this ex:dept ?claim_dept`, readPaths: cols('name', 'salary') }),
  public: policy('public', { graphs: [`${G}hr`], rowPattern: `${pfx}?this a ex:Public`, readPaths: cols('name') }),
  notes: (sub: string) =>
    policy('notes', { graphs: [`${G}users/${sub}/notes`], rowPattern: `${pfx}?this a ex:Note`, hidePaths: cols('private') }),
  acme: policy('acme', { prefixes: [`${G}tenants/acme/`], rowPattern: `${pfx}?this a ex:Public`, readPaths: cols('a', 'name', 'cost') }),
  acmeAdmin: policy('acme-admin', { prefixes: [`${G}tenants/acme/`], hidePaths: cols('secret') }),
  apollo: (graphs: string[]) =>
    policy('project-apollo', {
      graphs,
      rowPattern: `${pfx}?this ex:status 'open'`,
      readPaths: cols('a', 'title', 'cost', 'status', 'next', 'owner'),
    }),
  gemini: (graphs: string[]) => policy('project-gemini', { graphs, hidePaths: cols('cost') }),
  coll: policy('coll', {
    graphs: [`${G}proj/apollo`, `${G}hr`],
    rowPattern: `${pfx}?this ex:manager ?m . ?m ex:dept 'ops'`,
    readPaths: cols('name', 'title', 'next', 'a', 'manager'),
  }),
};

/** The facts of the application graph: who is a member of which project, and which graphs belong to it. */
function projectsOf(data: oxigraph.Store): { members: Map<string, string[]>; graphs: Map<string, string[]> } {
  const members = new Map<string, string[]>();
  const graphs = new Map<string, string[]>();
  for (const quad of data.match(null, null, null, oxigraph.namedNode(`${G}app`))) {
    const target = quad.predicate.value === `${APP}memberOf` ? members : quad.predicate.value === `${APP}partOf` ? graphs : undefined;
    target?.set(quad.object.value, [...(target.get(quad.object.value) ?? []), quad.subject.value]);
  }
  return { members, graphs };
}

interface Caller {
  /** How the guard is asked: trusted headers, a JWT's claims, or anonymous. */
  readonly ask: { readonly headers?: Record<string, string>; readonly claims?: Record<string, unknown> };
  readonly identity: RowCaller;
  /** The policies that apply to the caller under the data's facts, with the graphs each grants it. */
  policies(data: oxigraph.Store): RowPolicy[];
}

const projectPolicies = (agent: string, data: oxigraph.Store): RowPolicy[] => {
  const { members, graphs } = projectsOf(data);
  const out: RowPolicy[] = [];
  if (members.get(`${APP}apollo`)?.includes(agent) === true) out.push(DEFS.apollo(graphs.get(`${APP}apollo`) ?? []));
  if (members.get(`${APP}gemini`)?.includes(agent) === true) out.push(DEFS.gemini(graphs.get(`${APP}gemini`) ?? []));
  return out;
};

const CALLERS: Record<string, Caller> = {
  alice: {
    ask: { headers: { 'x-h5-user': 'alice', 'x-h5-groups': 'mgr' } },
    identity: { agent: `${AG}alice`, groups: ['mgr'] },
    policies: (data) => [DEFS.staffHr, DEFS.mgr, DEFS.public, ...projectPolicies(`${AG}alice`, data)],
  },
  bob: {
    ask: { headers: { 'x-h5-user': 'bob', 'x-h5-groups': 'mgr,acme' } },
    identity: { agent: `${AG}bob`, groups: ['mgr', 'acme'] },
    policies: (data) => [DEFS.staffHr, DEFS.mgr, DEFS.public, DEFS.acme, ...projectPolicies(`${AG}bob`, data)],
  },
  carol: {
    ask: { headers: { 'x-h5-user': 'carol', 'x-h5-groups': 'hr,coll' } },
    identity: { agent: `${AG}carol`, groups: ['hr', 'coll'] },
    policies: (data) => [DEFS.staffHr, DEFS.hr, DEFS.public, DEFS.coll, ...projectPolicies(`${AG}carol`, data)],
  },
  dan: {
    ask: { headers: { 'x-h5-user': 'dan', 'x-h5-groups': 'acme,coll' } },
    identity: { agent: `${AG}dan`, groups: ['acme', 'coll'] },
    policies: (data) => [DEFS.staffHr, DEFS.public, DEFS.acme, DEFS.coll, ...projectPolicies(`${AG}dan`, data)],
  },
  jo: {
    ask: { claims: { sub: 'jo', dept: 'sales', groups: ['jwt', 'acme-admin'] } },
    identity: {
      agent: `${AG}jo`,
      groups: ['jwt', 'acme-admin'],
      claims: new Map([
        ['sub', 'jo'],
        ['dept', 'sales'],
      ]),
    },
    policies: (data) => [DEFS.staffHr, DEFS.deptClaim, DEFS.public, DEFS.notes('jo'), DEFS.acmeAdmin, ...projectPolicies(`${AG}jo`, data)],
  },
  jwtAlice: {
    ask: { claims: { sub: 'alice', dept: 'ops', groups: ['jwt', 'acme'] } },
    identity: {
      agent: `${AG}alice`,
      groups: ['jwt', 'acme'],
      claims: new Map([
        ['sub', 'alice'],
        ['dept', 'ops'],
      ]),
    },
    policies: (data) => [DEFS.staffHr, DEFS.deptClaim, DEFS.public, DEFS.notes('alice'), DEFS.acme, ...projectPolicies(`${AG}alice`, data)],
  },
  anonymous: { ask: {}, identity: { agent: undefined, groups: [] }, policies: () => [DEFS.public] },
};

/** A caller's view of `data` and the graphs it is granted, as the definition reads them. */
interface View {
  readonly store: oxigraph.Store;
  readonly data: oxigraph.Store;
  readonly granted: readonly oxigraph.NamedNode[];
}

function viewOf(data: oxigraph.Store, caller: Caller): View {
  // Every policy here was chosen for the caller (its principals and the derived grants, by hand): each applies to
  // everyone in the view builder, whose row rules bind the caller's own identity.
  const policies = caller.policies(data).map((one) => ({ ...one, agents: ['https://w3id.org/sparql-guard#Everyone'] }));
  const store = buildView(data, policies, caller.identity);
  const granted = [...new Set(policies.flatMap((one) => graphsOf(one, caller.identity, data)))];
  return { store, data, granted: granted.map((graph) => oxigraph.namedNode(graph)) };
}

const copyOf = (graph: oxigraph.NamedNode): oxigraph.NamedNode => oxigraph.namedNode(`urn:x-h5:default:${graph.value}`);

/**
 * The view with a copy of each of `defaults` that the merged default graph reads: a triple that another of them holds
 * outside its view is left out of the copy, as the guard withholds it (docs/policies.md, "Rows and columns": the
 * multiplicity rule; less than the view, never more). Each graph stays a graph of its own, so a store that counts a
 * triple of two graphs twice counts it twice here too.
 */
function withheldCopies(view: View, defaults: readonly oxigraph.NamedNode[]): oxigraph.Store {
  const store = new oxigraph.Store(view.store.match(null, null, null, null));
  for (const graph of defaults) {
    for (const quad of view.store.match(null, null, null, graph)) {
      const withheld = defaults.some(
        (other) =>
          !other.equals(graph) &&
          view.data.match(quad.subject, quad.predicate, quad.object, other).length > 0 &&
          view.store.match(quad.subject, quad.predicate, quad.object, other).length === 0,
      );
      if (!withheld) store.add(oxigraph.quad(quad.subject, quad.predicate, quad.object, copyOf(graph)));
    }
  }
  return store;
}

/** The answer of `query` over a caller's view, canonical; a FROM or FROM NAMED clause is intersected with the grant. */
function viewAnswer(view: View, query: string): string[] {
  const { granted } = view;
  const tree = new sparqljs.Parser().parse(query);
  const graphForm = tree.type === 'query' && (tree.queryType === 'CONSTRUCT' || tree.queryType === 'DESCRIBE');
  const asked =
    tree.type === 'query' && tree.queryType === 'DESCRIBE'
      ? new sparqljs.Generator().stringify(rewriteDescribe(tree) as unknown as sparqljs.SparqlQuery)
      : query;
  const from = tree.type === 'query' ? tree.from : undefined;
  const named = (from?.default.length ?? 0) + (from?.named.length ?? 0) > 0;
  const requested = (iris: readonly { value: string }[] | undefined) =>
    !named ? granted : granted.filter((graph) => (iris ?? []).some(({ value }) => value === graph.value));
  const defaults = requested(from?.default);
  const answer = withheldCopies(view, defaults).query(asked, {
    default_graph: defaults.length === 0 ? [oxigraph.namedNode('urn:x-oracle:empty')] : defaults.map(copyOf),
    named_graphs: requested(from?.named),
    results_format: graphForm ? 'application/n-triples' : 'application/sparql-results+json',
  }) as string;
  return canonical(answer, graphForm);
}

const QUERIES = [
  'SELECT * WHERE { ?s ?p ?o }',
  'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }',
  'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g',
  'SELECT ?p (COUNT(*) AS ?n) (COUNT(DISTINCT ?s) AS ?subjects) WHERE { ?s ?p ?o } GROUP BY ?p',
  'SELECT (COUNT(DISTINCT ?s) AS ?n) WHERE { ?s ?p ?o }',
  'SELECT ?s (COUNT(*) AS ?c) WHERE { ?s ?p ?o } GROUP BY ?s HAVING (COUNT(*) > 2)',
  'SELECT ?d (SUM(?x) AS ?total) (MAX(?x) AS ?top) (COUNT(?x) AS ?n) WHERE { ?s ex:dept ?d OPTIONAL { ?s ex:salary ?x } } GROUP BY ?d',
  'SELECT ?d (STRLEN(GROUP_CONCAT(?n; separator="|")) AS ?len) (SAMPLE(?one) AS ?only) WHERE { ?s ex:dept ?d ; ex:name ?n BIND(1 AS ?one) } GROUP BY ?d',
  'SELECT ?s (SAMPLE(?n) AS ?name) WHERE { ?s ex:name ?n } GROUP BY ?s HAVING (COUNT(?n) = 1)',
  'SELECT ?s ?n ?x WHERE { ?s ex:name ?n OPTIONAL { ?s ex:salary ?x } }',
  'SELECT ?s ?n WHERE { ?s ex:name ?n MINUS { ?s ex:salary ?x } }',
  'SELECT ?s ?n WHERE { ?s ex:name ?n MINUS { ?s a ex:Public } }',
  'SELECT ?s WHERE { ?s ex:dept ?d FILTER NOT EXISTS { ?s ex:salary ?x } }',
  'SELECT ?s WHERE { ?s ex:name ?n FILTER EXISTS { ?s ex:salary ?x } }',
  'SELECT ?s ?m ?n WHERE { ?s ex:manager ?m . ?m ex:name ?n }',
  'SELECT ?m WHERE { ?s ex:manager ?m FILTER NOT EXISTS { ?m ?p ?o } }',
  'SELECT ?s ?n WHERE { ?s ex:manager/ex:name ?n }',
  'SELECT ?s ?r WHERE { ?s ^ex:manager ?r }',
  'SELECT ?s ?v WHERE { ?s (ex:name|ex:title|ex:salary) ?v }',
  'SELECT ?s ?o WHERE { ?s ex:next/ex:next ?o }',
  'SELECT ?s ?o WHERE { ?s ex:next+ ?o }',
  'SELECT ?s ?o WHERE { ?s ex:next* ?o FILTER(isIRI(?s)) }',
  'SELECT ?o WHERE { ex:t3 ex:next? ?o }',
  'SELECT ?s ?o WHERE { ?s ^ex:next/ex:title ?o }',
  'SELECT ?s ?o WHERE { ?s !(ex:ssn|ex:secret) ?o }',
  'SELECT ?s ?o WHERE { ?s !(rdf:type|^ex:next) ?o }',
  'SELECT ?s ?n WHERE { { SELECT ?s WHERE { ?s ex:salary ?x FILTER(isIRI(?s)) } ORDER BY DESC(?x) ?s LIMIT 2 } ?s ex:name ?n }',
  'SELECT ?s WHERE { ?s ex:name ?n FILTER(isIRI(?s)) } ORDER BY ?s LIMIT 3 OFFSET 1',
  'SELECT ?s ?c WHERE { { SELECT ?s (COUNT(?p) AS ?c) WHERE { ?s ?p ?o } GROUP BY ?s } FILTER(?c >= 2) }',
  'SELECT ?s ?v ?str WHERE { VALUES ?s { ag:alice ag:bob ag:carol ex:t1 ex:a1 } ?s ?p ?v BIND(STR(?v) AS ?str) }',
  'SELECT ?s ?n WHERE { ?s ex:name ?n } VALUES ?n { "Alice" "Carol"@en "acme one" "Ghost" }',
  'SELECT ?n WHERE { ?s ex:name ?n FILTER(isBlank(?s)) }',
  'SELECT ?f ?n WHERE { ?s ex:friend ?f . ?f ex:name ?n }',
  'SELECT ?s WHERE { ?s ex:cost 100 }',
  'SELECT ?s ?c WHERE { ?s ex:cost ?c FILTER(?c = 100) }',
  'SELECT ?s WHERE { ?s ex:dept "sales" }',
  'SELECT ?s ?d WHERE { ?s ex:dept ?d FILTER(STR(?d) = "sales") }',
  'SELECT ?s WHERE { ?s ex:salary 9000 }',
  'SELECT ?s WHERE { ?s ex:status "open" }',
  'SELECT ?s ?t WHERE { ?s a ?t }',
  'SELECT ?s WHERE { ?s a ex:Person }',
  'SELECT (COUNT(*) AS ?n) WHERE { ?s a ex:Public }',
  'SELECT ?s ?t WHERE { ?s ex:title ?t FILTER NOT EXISTS { ?s a ex:Task } }',
  'ASK { ag:carol ex:salary ?x }',
  'ASK { ?s ex:ssn ?x }',
  'ASK { ?s ex:secret ?x }',
  'SELECT ?g ?s ?n WHERE { GRAPH ?g { ?s ex:name ?n } }',
  'SELECT ?g ?s ?t WHERE { GRAPH ?g { ?s ex:title ?t OPTIONAL { ?s ex:cost ?c } } }',
  `SELECT * WHERE { GRAPH <${G}hr> { ?s ?p ?o } }`,
  `SELECT * WHERE { GRAPH <${G}directory> { ?s ?p ?o } }`,
  `SELECT * FROM <${G}hr> WHERE { ?s ?p ?o }`,
  `SELECT * FROM <${G}proj/apollo> FROM <${G}proj/gemini> WHERE { ?s ?p ?o }`,
  `SELECT ?s ?c FROM <${G}tenants/acme/one> FROM <${G}tenants/acme/two> WHERE { ?s ex:cost ?c }`,
  `SELECT * FROM NAMED <${G}hr> FROM NAMED <${G}proj/apollo> WHERE { GRAPH ?g { ?s ?p ?o } }`,
  `SELECT * FROM <${G}hr> FROM NAMED <${G}proj/apollo> WHERE { ?s ?p ?o GRAPH ?g { ?x ex:owner ?s } }`,
  `SELECT * FROM <${G}tenants/acme-evil/x> WHERE { ?s ?p ?o }`,
  'SELECT ?s ?o WHERE { GRAPH ?g { ?s ex:next ?o } GRAPH ?h { ?o ex:title ?t } }',
  'CONSTRUCT { ?s ?p ?o } WHERE { GRAPH ?g { ?s ?p ?o } }',
  'CONSTRUCT WHERE { ?s ?p ?o }',
  'CONSTRUCT { ?s ex:boss ?n } WHERE { ?s ex:manager ?m . ?m ex:name ?n }',
  'DESCRIBE ag:alice ag:bob ex:t1 ex:a1',
  'DESCRIBE ?s WHERE { ?s ex:status ?st }',
  'DESCRIBE ?m WHERE { ?s ex:manager ?m }',
  'SELECT ?s ?o WHERE { ?s ex:next ?o FILTER EXISTS { ?o ex:title ?t } }',
  'SELECT * WHERE { ?s ex:name ?n . OPTIONAL { ?s ex:dept ?d } . OPTIONAL { ?s ex:manager ?m . ?m ex:salary ?ms } }',
].map((query) => `${PREFIXES}${query}`);

/** One request through the guard as `caller`. */
async function ask(
  t: TestGuard,
  issuer: TestIssuer,
  caller: Caller,
  query: string,
  params: Record<string, readonly string[]> = {},
): Promise<{ status: number; body: string }> {
  const body = new URLSearchParams({ query });
  for (const [name, values] of Object.entries(params)) for (const value of values) body.append(name, value);
  const graphForm = /\b(?:CONSTRUCT|DESCRIBE)\b/.test(query);
  const token = caller.ask.claims === undefined ? undefined : await issuer.sign({ claims: caller.ask.claims });
  const response = await fetch(t.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: graphForm ? 'application/n-triples' : 'application/sparql-results+json',
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...caller.ask.headers,
    },
    body,
  });
  return { status: response.status, body: await response.text() };
}

/** `query` with `clauses` (FROM, FROM NAMED) where the grammar takes them: before WHERE, an ASK's group, or at the end of a DESCRIBE. */
function withDataset(query: string, clauses: string): string {
  if (/ WHERE \{/.test(query)) return query.replace(/ WHERE \{/, ` ${clauses} WHERE {`);
  if (/\bASK \{/.test(query)) return query.replace(/\bASK \{/, `ASK ${clauses} {`);
  return `${query} ${clauses}`;
}

/** What `got` holds beyond `want`, and what it lacks, as multisets. */
function difference(got: readonly string[], want: readonly string[]): { extra: string[]; missing: string[] } {
  const left = new Map<string, number>();
  for (const item of want) left.set(item, (left.get(item) ?? 0) + 1);
  const extra: string[] = [];
  for (const item of got) {
    const count = left.get(item) ?? 0;
    if (count === 0) extra.push(item);
    else left.set(item, count - 1);
  }
  const missing = [...left].flatMap(([item, count]) => Array<string>(count).fill(item));
  return { extra, missing };
}

/** Refusals the design names for row and column rules. */
const BY_DESIGN = /the query uses a hidden path|a path of variable length|a negated property set cannot be held/;

/**
 * The embedded store and the lab's Oxigraph: Jena and Virtuoso answer parts of this data otherwise than SPARQL 1.1
 * over any dataset, the caller's view or the whole store alike (run on the lab, 2026-12-01, every difference was one
 * of these): Jena counts a triple of two merged default graphs once, binds `ex:t3 ex:next? ?o` to the constant over
 * an empty dataset, keeps both directions' duplicates of `!(a|^b)` and gives STR of a blank node a value; Virtuoso
 * 7.2 answers the decimal 7000.0 as the integer 7000 and takes 5 and 5.0 for one term. The view built here is
 * Oxigraph's, so on those stores the comparison would judge the store, not the guard.
 */
const SPARQL_AS_OXIGRAPH = new Set(['embedded', 'oxigraph']);

for (const target of storesUnderTest().filter(({ name }) => SPARQL_AS_OXIGRAPH.has(name))) {
  describe(`rows and columns beside templates, prefixes, rules and facts from the store [${target.name}]`, () => {
    let t: TestGuard;
    let issuer: TestIssuer;
    let folder: string;
    let writable: WritableStore | undefined;
    /** The store's data as the application keeps it: the view is built from it. */
    const data = new oxigraph.Store();
    data.load(DATA, { format: 'application/trig' });
    const update = async (text: string): Promise<void> => {
      await (writable === undefined ? updateLabStore(target, text) : writable.update(text));
      data.update(text);
    };

    before(async () => {
      folder = mkdtempSync(join(tmpdir(), 'rows-rules-claims-'));
      writeFileSync(join(folder, 'data.trig'), DATA);
      writeFileSync(join(folder, 'policies.ttl'), POLICIES);
      // The embedded store cannot be written to: the same Oxigraph over HTTP, writable, stands in for it.
      if (target.queryUrl === undefined) writable = await startWritableStore([join(folder, 'data.trig')]);
      else await updateLabStore(target, insertOf(DATA));
      issuer = await startTestIssuer();
      t = await startTestGuard({
        policies: [join(folder, 'policies.ttl')],
        rules: [resolve('rules/examples/project-membership.n3'), resolve('rules/examples/graph-collections.n3')],
        facts: [{ name: 'projects', query: FACTS_QUERY, refreshMs: 1000 }],
        upstream: writable?.queryUrl ?? target.queryUrl,
        embedded: undefined,
        auth: {
          trustedHeaders: { agent: 'x-h5-user', groups: 'x-h5-groups', agentPrefix: AG },
          jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUri: issuer.jwksUri, agentPrefix: AG, groupsClaim: 'groups' },
        },
      });
    });
    after(async () => {
      await t?.close();
      await issuer?.close();
      await writable?.close();
      if (target.queryUrl !== undefined)
        for (const graph of new Set(data.match(null, null, null, null).map((quad) => quad.graph.value)))
          await updateLabStore(target, `DROP SILENT GRAPH <${graph}>`);
      rmSync(folder, { recursive: true, force: true });
    });

    /**
     * Asks every query of every caller as written, and with the protocol's dataset naming one or two graphs (any graph
     * of the data, the rules' data and a look-alike of the prefix included; named-graph-uri for the queries with GRAPH),
     * SAMPLE of those drawn per query: each answer must be the view's, or a refusal the design names.
     */
    const compareAll = async (): Promise<void> => {
      const random = mulberry32(SEED);
      const graphs = [...new Set(data.match(null, null, null, null).map((quad) => quad.graph.value))].sort();
      const wrong: string[] = [];
      let compared = 0;
      let nonEmpty = 0;
      for (const [name, caller] of Object.entries(CALLERS)) {
        const view = viewOf(data, caller);
        for (const query of QUERIES) {
          const variants: Record<string, string[]>[] = [{}];
          if (!/\bFROM\b/.test(query)) {
            const key = /\bGRAPH\b/.test(query) ? 'named-graph-uri' : 'default-graph-uri';
            const pick = (): string => graphs[Math.floor(random() * graphs.length)] ?? '';
            for (let drawn = 0; drawn < SAMPLE; drawn++) variants.push({ [key]: random() < 0.5 ? [pick()] : [pick(), pick()] });
          }
          for (const params of variants) {
            const answer = await ask(t, issuer, caller, query, params);
            const written = Object.entries(params)
              .flatMap(([key, names]) => names.map((graph) => `${key === 'named-graph-uri' ? 'FROM NAMED' : 'FROM'} <${graph}>`))
              .join(' ');
            const asWritten = written === '' ? query : withDataset(query, written);
            const label = `${name}: ${asWritten.slice(PREFIXES.length)}`;
            if (answer.status === 403 && BY_DESIGN.test(answer.body)) continue;
            if (answer.status !== 200) {
              wrong.push(`${label}: ${answer.status} ${answer.body.slice(0, 300)}`);
              continue;
            }
            const graphForm = /\b(?:CONSTRUCT|DESCRIBE)\b/.test(query);
            const want = viewAnswer(view, asWritten);
            compared++;
            if (want.length > 0 && want[0] !== 'false') nonEmpty++;
            const got = canonical(answer.body, graphForm);
            if (JSON.stringify(got) !== JSON.stringify(want)) {
              const { extra, missing } = difference(got, want);
              wrong.push(
                `${label}\n  more than the view: ${extra.join(' | ').slice(0, 1500)}\n  less: ${missing.join(' | ').slice(0, 1500)}`,
              );
            }
          }
        }
      }
      assert.deepEqual(wrong, []);
      // Most answers compared hold something: the views are not empty by mistake.
      assert.ok(nonEmpty >= compared / 4, `${nonEmpty} of ${compared} answers hold something`);
    };

    it('every caller: each answer is its view, or a refusal the design names', async () => {
      await compareAll();
    });

    it('after the application changes the facts, the row data and the records, every answer is the new view', async () => {
      await update(`PREFIX ex: <${EX}> PREFIX ag: <${AG}> PREFIX app: <${APP}>
        DELETE DATA { GRAPH <${G}app> { ag:dan app:memberOf app:apollo . ag:bob app:memberOf app:gemini } } ;
        INSERT DATA { GRAPH <${G}app> { ag:dan app:memberOf app:gemini . ag:jo app:memberOf app:apollo .
                                         ag:carol app:memberOf app:apollo . <${G}proj/gemini> app:partOf app:apollo } } ;
        DELETE DATA { GRAPH <${G}directory> { ag:alice ex:worksIn "sales" . ag:jo ex:worksIn "ops" } } ;
        INSERT DATA { GRAPH <${G}directory> { ag:alice ex:worksIn "ops" . ag:jo ex:worksIn "sales"@en } } ;
        DELETE DATA { GRAPH <${G}hr> { ag:carol ex:dept "sales"@en } } ;
        INSERT DATA { GRAPH <${G}hr> { ag:carol ex:dept "ops" . ag:bob ex:manager ag:alice } } ;
        INSERT DATA { GRAPH <${G}tenants/acme/three> { ex:a4 a ex:Public ; ex:name "four" ; ex:cost 4 ; ex:secret "s4" } }`);
      // The facts and the prefix's new graph reach the guard at its next refresh (refreshMs 1000): wait until dan's
      // graphs are the new view's (gemini in, apollo out, a third acme graph).
      const probe = `${PREFIXES}SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }`;
      const dan = CALLERS['dan'] as Caller;
      const started = Date.now();
      for (;;) {
        const answer = await ask(t, issuer, dan, probe);
        const want = viewAnswer(viewOf(data, dan), probe);
        if (answer.status === 200 && JSON.stringify(canonical(answer.body, false)) === JSON.stringify(want)) break;
        assert.ok(Date.now() - started < 20000, `the facts did not reach the guard: ${answer.status} ${answer.body.slice(0, 500)}`);
        await new Promise((done) => setTimeout(done, 100));
      }
      await compareAll();
    });
  });
}
