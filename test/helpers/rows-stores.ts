// The rows fixtures in front of every store under test: the data written under graph names of the run into each lab store, a guard over the rows policies, and its callers.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe } from 'node:test';
import oxigraph from 'oxigraph';
import sparqljs from 'sparqljs';
import { rewriteDescribe } from '../../src/sparql/rewrite-describe.js';
import { canonical } from './redaction-oracle.js';
import { updateLabStore } from './lab-update.js';
import { buildView, grantedGraphs, readRowPolicies, type RowCaller } from './row-view.js';
import { describeAbsentLabStores, oneStorePerEngine, storesUnderTest, type StoreUnderTest } from './rig-stores.js';
import { sha256, startTestGuard, type TestGuard } from './start-test-guard.js';
import { startTestIssuer, type TestIssuer } from './start-test-issuer.js';

export { updateLabStore } from './lab-update.js';

export const ROWS_FIXTURES = resolve('test/fixtures/security/rows');
export const ROWS_EX = 'http://example.org/rows#';
export const AGENTS = 'http://example.org/agents/';
/** The graph base the fixture files are written with. */
const FIXTURE_BASE = 'http://example.org/rows/';

/** The API-key callers of the rows policies (policies.ttl names what each sees). */
export const ROWS_CALLERS = {
  alice: { agent: `${AGENTS}alice`, groups: [] },
  pub: { agent: `${AGENTS}pub`, groups: ['public'] },
  bob: { agent: `${AGENTS}bob`, groups: ['staff', 'team-b'] },
  cat: { agent: `${AGENTS}cat`, groups: ['contractor'] },
  dan: { agent: `${AGENTS}dan`, groups: [] },
  erin: { agent: `${AGENTS}erin`, groups: [] },
  gil: { agent: `${AGENTS}gil`, groups: [] },
  keeperMain: { agent: `${AGENTS}keeper-main`, groups: ['keeper-main'] },
  keeperBoth: { agent: `${AGENTS}keeper-both`, groups: ['keeper-both'] },
} as const;
export type RowsCallerName = keyof typeof ROWS_CALLERS;

export const keyOf = (name: RowsCallerName): string => `rows-key-${name}-0123456789abcdef`;

/** The rows data and policies with the graphs under `base`, and the graph names. */
export interface RowsFixture {
  readonly data: string;
  readonly policies: string;
  readonly graphs: {
    readonly main: string;
    readonly second: string;
    readonly members: string;
    readonly orgs: string;
    readonly odd: string;
  };
}

/** The fixture files with their graph names moved under `base` (a run's own names in a shared lab store). */
export function rowsFixture(base = FIXTURE_BASE): RowsFixture {
  const read = (file: string): string => readFileSync(join(ROWS_FIXTURES, file), 'utf8').replaceAll(FIXTURE_BASE, base);
  return {
    data: read('data.trig'),
    policies: read('policies.ttl'),
    graphs: { main: `${base}main`, second: `${base}second`, members: `${base}members`, orgs: `${base}orgs`, odd: `${base}odd` },
  };
}

/** An update writing a TriG text, graph by graph: INSERT with an empty WHERE, so blank nodes are allowed (Virtuoso refuses them in INSERT DATA) and one label stays one node across graphs, as in the file. */
export function insertOf(trig: string): string {
  const store = new oxigraph.Store();
  store.load(trig, { format: 'application/trig' });
  const graphs = [...new Set(store.match(null, null, null, null).map((quad) => quad.graph.value))];
  const blocks = graphs.map(
    (graph) => `GRAPH <${graph}> { ${store.dump({ format: 'application/n-triples', from_graph_name: oxigraph.namedNode(graph) })} }`,
  );
  return `INSERT { ${blocks.join('\n')} } WHERE {}`;
}

/** A guard over the rows policies in front of one store, with the callers' credentials. */
export interface RowsGuard {
  readonly test: TestGuard;
  readonly endpoint: string;
  readonly fixture: RowsFixture;
  readonly store: StoreUnderTest;
  /** Signs a JWT of the regional caller (group regional) with these claims beside sub. */
  token(claims: Readonly<Record<string, unknown>>): Promise<string>;
}

/** Starts a guard over `fixture`'s policies in front of `store` (the data already there), API keys and JWT callers configured. */
export async function startRowsGuard(
  store: StoreUnderTest,
  fixture: RowsFixture,
  issuer: TestIssuer,
  config: Record<string, unknown> = {},
): Promise<{ guard: TestGuard; cleanup: () => void }> {
  const folder = mkdtempSync(join(tmpdir(), 'rows-fixture-'));
  writeFileSync(join(folder, 'policies.ttl'), fixture.policies);
  writeFileSync(join(folder, 'data.trig'), fixture.data);
  const guard = await startTestGuard({
    policies: [join(folder, 'policies.ttl')],
    explain: true,
    auth: {
      apiKeys: Object.entries(ROWS_CALLERS).map(([name, caller]) => ({
        agent: caller.agent,
        groups: [...caller.groups],
        sha256: sha256(keyOf(name as RowsCallerName)),
      })),
      jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUri: issuer.jwksUri, agentPrefix: AGENTS, groupsClaim: 'groups' },
      trustedHeaders: { agent: 'x-rows-user', groups: 'x-rows-groups', agentPrefix: AGENTS },
    },
    ...(store.queryUrl === undefined
      ? { embedded: { data: [join(folder, 'data.trig')] } }
      : { upstream: store.queryUrl, embedded: undefined }),
    ...config,
  });
  return { guard, cleanup: () => rmSync(folder, { recursive: true, force: true }) };
}

/**
 * Declares `suite` once per store under test (the embedded store, then each lab store that is up; those `stores` keeps):
 * the rows data written into the lab store under graph names of this run (removed afterwards), a
 * guard over the rows policies in front of it.
 */
export function describeRowsOnEveryStore(
  title: string,
  suite: (rows: () => RowsGuard, store: StoreUnderTest) => void,
  config: Record<string, unknown> = {},
  stores: (store: StoreUnderTest) => boolean = oneStorePerEngine,
  /** Other policies than the fixture's, written with the run's graph base (`g:` of the fixture file). */
  policies?: (base: string) => string,
): void {
  for (const store of storesUnderTest(true).filter(stores)) {
    describe(`${title} [${store.name}]`, () => {
      let running: RowsGuard | undefined;
      let teardown: (() => Promise<void>) | undefined;
      before(async () => {
        const base = store.queryUrl === undefined ? FIXTURE_BASE : `http://example.org/rows-${process.pid}-${Date.now()}/`;
        const fixture = policies === undefined ? rowsFixture(base) : { ...rowsFixture(base), policies: policies(base) };
        if (store.queryUrl !== undefined) await updateLabStore(store, insertOf(fixture.data));
        const issuer = await startTestIssuer();
        const { guard, cleanup } = await startRowsGuard(store, fixture, issuer, config);
        running = {
          test: guard,
          endpoint: guard.endpoint,
          fixture,
          store,
          token: (claims) => issuer.sign({ claims: { sub: 'jo', groups: ['regional'], ...claims } }),
        };
        teardown = async () => {
          await guard.close();
          await issuer.close();
          cleanup();
          if (store.queryUrl !== undefined)
            for (const graph of Object.values(fixture.graphs)) await updateLabStore(store, `DROP SILENT GRAPH <${graph}>`);
        };
      });
      after(async () => {
        await teardown?.();
      });
      suite(() => {
        assert.ok(running, 'guard started');
        return running;
      }, store);
    });
  }
  describeAbsentLabStores(title, stores);
}

/** A rows caller: an API key by name, a JWT, trusted headers, or anonymous (undefined). */
export type RowsCaller = RowsCallerName | { readonly token: string } | { readonly headers: Readonly<Record<string, string>> } | undefined;

/** One request through the guard as a rows caller (API key name, a JWT, or anonymous); the raw answer. */
export async function askRows(
  endpoint: string,
  query: string,
  caller: RowsCaller,
  options: { readonly accept?: string; readonly params?: Readonly<Record<string, readonly string[]>> } = {},
): Promise<{ readonly status: number; readonly body: string }> {
  const credential =
    caller === undefined || (typeof caller !== 'string' && !('token' in caller))
      ? undefined
      : typeof caller === 'string'
        ? keyOf(caller)
        : caller.token;
  const trusted = caller !== undefined && typeof caller !== 'string' && 'headers' in caller ? caller.headers : {};
  const body = new URLSearchParams({ query });
  for (const [name, values] of Object.entries(options.params ?? {})) for (const value of values) body.append(name, value);
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: options.accept ?? 'application/sparql-results+json, application/n-triples;q=0.9',
      ...(credential === undefined ? {} : { authorization: `Bearer ${credential}` }),
      ...trusted,
    },
    body,
  });
  return { status: response.status, body: await response.text() };
}

/** The identity the definition binds for an API-key caller. */
export const identityOf = (name: RowsCallerName): RowCaller => ROWS_CALLERS[name];

/**
 * The answer of `query` (no FROM, no FROM NAMED) over `identity`'s view of `fixture`, canonical as
 * the oracle compares: the default graph the merge of the granted graphs' views, each named graph its view.
 */
export function viewAnswer(fixture: RowsFixture, identity: RowCaller, query: string): string[] {
  const data = new oxigraph.Store();
  data.load(fixture.data, { format: 'application/trig' });
  const policies = readRowPolicies(fixture.policies);
  const view = buildView(data, policies, identity);
  const granted = grantedGraphs(policies, identity, data).map((graph) => oxigraph.namedNode(graph));
  const tree = new sparqljs.Parser().parse(query);
  const graph = tree.type === 'query' && (tree.queryType === 'CONSTRUCT' || tree.queryType === 'DESCRIBE');
  const asked =
    tree.type === 'query' && tree.queryType === 'DESCRIBE'
      ? new sparqljs.Generator().stringify(rewriteDescribe(tree) as unknown as sparqljs.SparqlQuery)
      : query;
  // A dataset the query names is the requested graphs the caller is granted (docs/design/sparql.md#rewriting).
  const from = tree.type === 'query' ? tree.from : undefined;
  const requested = (iris: readonly { value: string }[] | undefined) =>
    iris === undefined || (from?.default.length ?? 0) + (from?.named.length ?? 0) === 0
      ? granted
      : granted.filter((graph) => iris.some(({ value }) => value === graph.value));
  const defaults = requested(from?.default);
  const answer = view.query(asked, {
    default_graph: defaults.length === 0 ? [oxigraph.namedNode('urn:x-oracle:empty')] : defaults,
    named_graphs: requested(from?.named),
    results_format: graph ? 'application/n-triples' : 'application/sparql-results+json',
  }) as string;
  return canonical(answer, graph);
}

/** Asks `query` through the guard as `caller` and holds the answer (200) to `identity`'s view; returns the body. */
export async function assertAsView(rows: RowsGuard, caller: RowsCaller, identity: RowCaller, query: string): Promise<string> {
  const graph = /\b(?:CONSTRUCT|DESCRIBE)\b/i.test(query);
  // Virtuoso 7.2 answers a graph query in the first type the client accepts, a results format included.
  const answer = await askRows(rows.endpoint, query, caller, graph ? { accept: 'application/n-triples' } : {});
  assert.equal(answer.status, 200, `${query}: ${answer.body.slice(0, 200)}`);
  assert.deepEqual(canonical(answer.body, graph), viewAnswer(rows.fixture, identity, query), query);
  return answer.body;
}

/** Asks `query` through the guard as `caller` and holds the answer (200) to at most `identity`'s view: a documented case may return less, never more. */
export async function assertWithinView(rows: RowsGuard, caller: RowsCaller, identity: RowCaller, query: string): Promise<string> {
  const graph = /\b(?:CONSTRUCT|DESCRIBE)\b/i.test(query);
  // Virtuoso 7.2 answers a graph query in the first type the client accepts, a results format included.
  const answer = await askRows(rows.endpoint, query, caller, graph ? { accept: 'application/n-triples' } : {});
  assert.equal(answer.status, 200, `${query}: ${answer.body.slice(0, 200)}`);
  const left = new Map<string, number>();
  for (const item of viewAnswer(rows.fixture, identity, query)) left.set(item, (left.get(item) ?? 0) + 1);
  for (const item of canonical(answer.body, graph)) {
    assert.ok((left.get(item) ?? 0) > 0, `${query}: more than the view: ${item}`);
    left.set(item, (left.get(item) ?? 0) - 1);
  }
  return answer.body;
}

/** The values of `variable` in a SPARQL JSON answer, blank nodes as `_:`, IRIs of the rows namespace as `ex:local`, sorted. */
export function valuesOf(body: string, variable: string): string[] {
  const json = JSON.parse(body) as { results?: { bindings: Record<string, { type: string; value: string }>[] } };
  return (json.results?.bindings ?? [])
    .map((row) => row[variable])
    .map((term) => (term === undefined ? 'UNBOUND' : term.type === 'bnode' ? '_:' : term.value.replace(ROWS_EX, 'ex:')))
    .sort();
}

/**
 * Findings of the rows suites that the rewrite does not meet yet: each test that shows one runs as
 * a node:test todo with its reason, so `npm test` stays green while the finding stays visible. Each
 * is a refusal or an answer with less than the view, never more.
 */
export const ROWS_FINDINGS = {} as const;

/** The attacks of the rows bypass classes, spelt out over the rows vocabulary (`ex:`, the graphs by name). */
export function rowsAttacks(graphs: RowsFixture['graphs']): string[] {
  const p = `PREFIX ex: <${ROWS_EX}>\n`;
  return [
    'SELECT * WHERE { ?s ?p ?o }',
    'SELECT * WHERE { GRAPH ?g { ?s ?p ?o } }',
    'CONSTRUCT WHERE { ?s ?p ?o }',
    `${p}SELECT (COUNT(*) AS ?n) WHERE { ?s a ex:Project }`,
    `${p}SELECT ?t (COUNT(?s) AS ?n) (SUM(?b) AS ?total) WHERE { ?s ex:team ?t OPTIONAL { ?s ex:budget ?b } } GROUP BY ?t`,
    `${p}SELECT ?s WHERE { ?s ex:name ?n FILTER NOT EXISTS { ?s a ex:Project } }`,
    `${p}SELECT ?s WHERE { ?s ex:name ?n MINUS { ?s ex:budget ?b } }`,
    `${p}SELECT ?s WHERE { ?s ex:name ?n OPTIONAL { ?s ex:salary ?x } FILTER(!BOUND(?x)) }`,
    `${p}SELECT ?s ?n WHERE { ?s ex:lead/ex:name ?n }`,
    `${p}SELECT ?s ?n WHERE { ?s ^ex:lead/ex:name ?n }`,
    `${p}SELECT ?s ?v WHERE { ?s (ex:name|ex:email|ex:salary) ?v }`,
    `${p}SELECT ?s ?t WHERE { ?s ex:note/ex:text ?t }`,
    `${p}SELECT ?s ?o WHERE { ?s ex:note* ?o }`,
    `${p}SELECT ?o WHERE { ex:p2 ex:nothing? ?o }`,
    `${p}SELECT ?x ?t WHERE { ?p ex:note ?x . ?x ?q ?t }`,
    `${p}SELECT ?s ?n WHERE { ?s a ex:PublicRecord ; ex:name ?n FILTER(isBlank(?s)) }`,
    `${p}DESCRIBE ex:p2`,
    `${p}DESCRIBE ?s WHERE { ?s ex:budget ?b FILTER(?b > 50) }`,
    `${p}ASK { ex:p2 ?p ?o }`,
    `${p}ASK { ?s ex:salary ?x }`,
    `SELECT * FROM <${graphs.members}> WHERE { ?s ?p ?o }`,
    `SELECT * FROM NAMED <${graphs.members}> WHERE { GRAPH ?g { ?s ?p ?o } }`,
    `SELECT * WHERE { GRAPH <${graphs.members}> { ?s ?p ?o } }`,
    // Naming a rule's data graph beside a granted one: the rule must still read it (it was left out of FROM NAMED).
    `${p}SELECT ?s ?n WHERE { ?s ex:name ?n FILTER NOT EXISTS { GRAPH <${graphs.members}> { ?s ?p ?o } } }`,
    `SELECT * FROM NAMED <${graphs.members}> FROM NAMED <${graphs.main}> WHERE { GRAPH ?g { ?s ?p ?o } }`,
    `${p}SELECT ?s ?n WHERE { { GRAPH <${graphs.main}> { ?s ex:name ?n } } UNION { GRAPH <${graphs.members}> { ?s ?p ?n } } }`,
    `${p}SELECT ?s ?b WHERE { GRAPH <${graphs.second}> { ?s ex:budget ?b } }`,
    `${p}SELECT ?g ?s ?n WHERE { GRAPH ?g { ?s ex:name ?n } }`,
    `${p}SELECT ?s ?n FROM <${graphs.main}> FROM <${graphs.second}> WHERE { ?s ex:name ?n }`,
    `${p}SELECT ?s WHERE { ?s ex:member ?a }`,
    `${p}SELECT ?s ?n WHERE { { SELECT ?s WHERE { ?s ex:budget ?b } } ?s ex:name ?n }`,
    `${p}SELECT ?s ?x WHERE { ?s ex:name ?n BIND(CONCAT(STR(?s), ?n) AS ?x) VALUES ?s { ex:p1 ex:p2 ex:p3 ex:r1 } }`,
    `${p}SELECT ?s ?o WHERE { ?s ex:lead ?o FILTER EXISTS { ?o ex:name ?n } }`,
    `${p}CONSTRUCT { ?s ex:seen ?o } WHERE { ?s ex:lead ?o . ?o ex:salary ?x }`,
    // A DISTINCT or grouped sub-select joined with a pattern outside it: Virtuoso 7.2.5 dropped a FILTER(EXISTS) inside it.
    `${p}SELECT ?s ?q ?r WHERE { { SELECT DISTINCT ?s WHERE { ?s ?p ?o FILTER(?p = ex:salary) } } ?s ?q ?r }`,
    `${p}SELECT ?s ?n WHERE { { SELECT ?s (COUNT(*) AS ?c) WHERE { ?s ?p ?o FILTER(?p IN (ex:salary, ex:budget, ex:team)) } GROUP BY ?s } ?s ex:name ?n }`,
    `${p}SELECT DISTINCT ?s WHERE { ?s ?q ?r { SELECT DISTINCT ?s WHERE { ?s ?p ?o } } }`,
    `${p}SELECT ?s ?n WHERE { { SELECT DISTINCT ?s WHERE { { ?s ?p ?o FILTER(?p != ex:name) } } } ?s ex:name ?n }`,
    `${p}DESCRIBE ?s WHERE { ?s ?p ?o FILTER(?p = ex:team) }`,
  ];
}
