// The rows oracle on every store: for each caller of the rows policies, every query of the corpus answers through the guard as the caller's unrewritten query over its materialised view V_c(g) does.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import oxigraph from 'oxigraph';
import { embeddedSources } from '../../helpers/query-corpus.js';
import { oracleCorpus, runOracle, sampleOf, type OracleVocabulary } from '../../helpers/redaction-oracle.js';
import { buildView, grantedGraphs, readRowPolicies, type RowCaller } from '../../helpers/row-view.js';
import {
  AGENTS,
  ROWS_CALLERS,
  ROWS_EX,
  describeRowsOnEveryStore,
  keyOf,
  rowsAttacks,
  type RowsCallerName,
  type RowsGuard,
} from '../../helpers/rows-stores.js';
import { oneStorePerEngine, type StoreUnderTest } from '../../helpers/rig-stores.js';

const SEED = Number(process.env['ORACLE_SEED'] ?? 32);
/** Queries per caller, sampled from the corpus with the seed: ROWS_ORACLE_QUERIES overrides (the lab stores take a third). */
const SAMPLE = Number(process.env['ROWS_ORACLE_QUERIES'] ?? 120);

/** A caller of the rows oracle: its credential, its identity as the definition binds it, and the unrestricted caller of the same graphs. */
interface OracleCaller {
  readonly name: string;
  readonly identity: RowCaller;
  readonly credential: (rows: RowsGuard) => Promise<string>;
  readonly full: RowsCallerName;
}

const apiKeyCaller = (name: RowsCallerName, full: RowsCallerName, what: string): OracleCaller => ({
  name: `${name} (${what})`,
  identity: ROWS_CALLERS[name],
  credential: () => Promise.resolve(keyOf(name)),
  full,
});

const CALLERS: readonly OracleCaller[] = [
  apiKeyCaller('alice', 'keeperBoth', 'membership over an ungranted rowData graph; a class rule in the second graph'),
  apiKeyCaller('pub', 'keeperBoth', 'class rule and a column list in both graphs'),
  apiKeyCaller('bob', 'keeperMain', 'group rule, hidePath'),
  apiKeyCaller('cat', 'keeperBoth', 'readPath with hidePath, lifted by a class rule; second graph unrestricted'),
  apiKeyCaller('dan', 'keeperMain', 'membership rows lifted by a policy without a row rule'),
  apiKeyCaller('erin', 'keeperMain', 'a pattern joining two rowData graphs'),
  {
    name: 'jo (JWT claim region)',
    identity: { agent: `${AGENTS}jo`, groups: ['regional'], claims: new Map([['region', 'north']]) },
    credential: (rows) => rows.token({ region: 'north' }),
    full: 'keeperMain',
  },
];

/** The oracle's tests over one guard: every caller, its sample of the corpus. */
function oracleSuite(rows: () => RowsGuard, store: StoreUnderTest): void {
  const sample = store.queryUrl === undefined ? SAMPLE : Math.ceil(SAMPLE / 3);
  for (const [index, caller] of CALLERS.entries()) {
    it(`${caller.name}: no answer holds more or less than the view's`, { timeout: 600_000 }, async () => {
      const { fixture, endpoint } = rows();
      const data = new oxigraph.Store();
      data.load(fixture.data, { format: 'application/trig' });
      const policies = readRowPolicies(fixture.policies);
      const granted = grantedGraphs(policies, caller.identity);
      const vocabulary: OracleVocabulary = {
        namespace: ROWS_EX,
        locals: ['name', 'budget', 'team', 'region', 'lead', 'note', 'text', 'email', 'phone', 'salary', 'member', 'nothing'],
        nodes: ['?a', '?b', '?c', '[]', 'ex:p1', 'ex:p2', 'ex:alice', 'ex:Project', 'ex:PublicRecord', '"Apollo"', '100', '"team-a"'],
        graphs: [fixture.graphs.main, fixture.graphs.second, fixture.graphs.members],
      };
      const corpus = [
        ...oracleCorpus(SEED, vocabulary, rowsAttacks(fixture.graphs), 400),
        ...embeddedSources().map((source) => ({ source: 'corpus', query: source.query })),
      ];
      const queries = sampleOf(corpus, sample, SEED + index);
      const { counts, failures, deviations } = await runOracle({
        endpoint,
        key: await caller.credential(rows()),
        fullKey: keyOf(caller.full),
        data: fixture.data,
        granted,
        hidden: new Map(),
        view: buildView(data, policies, caller.identity),
        queries,
        store: store.name,
      });
      process.stdout.write(`# rows oracle, ${store.name}, ${caller.name}: ${queries.length} queries ${JSON.stringify(counts)}\n`);
      for (const deviation of deviations) process.stdout.write(`#   store-deviates: ${deviation}\n`);
      assert.deepEqual(failures, []);
      // A column list refuses every query naming another predicate: most of the queries answered are compared.
      const answered = queries.length - counts.refused - counts.invalid;
      assert.ok(counts.equal > answered / 2, `most answered queries are compared (${counts.equal} of ${answered})`);
    });
  }
}

// Every engine: Jena's variants answer the guard's text as jena does (rig-stores.ts, oneStorePerEngine).
describeRowsOnEveryStore('rows oracle: every answer equals the unrewritten query over the caller view', oracleSuite, {}, oneStorePerEngine);

// The checks as FILTER(EXISTS) (config rowChecks "exists") on the stores the configuration docs name for it: Oxigraph and Jena.
describeRowsOnEveryStore(
  'rows oracle, rowChecks exists',
  (rows, store) => {
    it('each row check is a FILTER(EXISTS), no join', async () => {
      const query = `PREFIX ex: <${ROWS_EX}>\nSELECT ?n ?t WHERE { ?s ex:name ?n . OPTIONAL { ?p ex:note ?x . ?x ex:text ?t } }`;
      const response = await fetch(`${rows().endpoint}/explain`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${keyOf('alice')}` },
        body: new URLSearchParams({ query, 'default-graph-uri': rows().fixture.graphs.main }),
      });
      assert.equal(response.status, 200);
      const rewritten = ((await response.json()) as { query: string }).query;
      assert.doesNotMatch(rewritten, /SELECT DISTINCT/, rewritten);
      assert.equal(rewritten.match(/FILTER\(!NOT EXISTS/g)?.length, 3, rewritten);
    });
    oracleSuite(rows, store);
  },
  { rowChecks: 'exists' },
  ({ name }) => ['embedded', 'oxigraph', 'jena'].includes(name),
);

// The dataset as graph filters (config datasetForm "graph-filters": no FROM, a sameTerm filter per GRAPH) on the embedded
// store (where it kills the mutant graph-filter-default-reads-named): a triple pattern the form failed to hold would read
// every graph of the store, the rules' rowData graphs among them.
describeRowsOnEveryStore(
  'rows oracle, datasetForm graph-filters',
  (rows, store) => {
    it('the forwarded query names no dataset: a filter holds each GRAPH (explain: `forwarded` beside the clauses of `query`)', async () => {
      const query = `PREFIX ex: <${ROWS_EX}>\nSELECT ?n ?t WHERE { ?s ex:name ?n . OPTIONAL { ?p ex:note ?x . ?x ex:text ?t } }`;
      const response = await fetch(`${rows().endpoint}/explain`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${keyOf('alice')}` },
        body: new URLSearchParams({ query }),
      });
      assert.equal(response.status, 200);
      // Explain's query is the contract's, with FROM; `forwarded` is the text sent.
      const explained = (await response.json()) as { query: string; forwarded?: string };
      assert.match(explained.query, /^FROM </m, explained.query);
      const rewritten = explained.forwarded ?? '';
      assert.doesNotMatch(rewritten, /\bFROM\b/, rewritten);
      const graphs = rewritten.match(/GRAPH \?graph_\d+/g) ?? [];
      assert.ok(graphs.length >= 3, rewritten);
      for (const graph of graphs) assert.match(rewritten, new RegExp(`SAMETERM\\(\\${graph.slice(6)}, <`), rewritten);
    });
    oracleSuite(rows, store);
  },
  { datasetForm: 'graph-filters' },
  // Virtuoso gets the form from the default above (datasetForm "auto"), and the clauses below.
  ({ name }) => name === 'embedded',
);

// The clauses on Virtuoso, where datasetForm "auto" sends graph filters but the config may still fix the clauses.
describeRowsOnEveryStore('rows oracle, datasetForm clauses', oracleSuite, { datasetForm: 'clauses' }, ({ name }) => name === 'virtuoso');
