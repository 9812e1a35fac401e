// The store suite (npm run test:stores): each hazard the guard defends against, shown on the real store asked directly, then closed through the guard.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkDatasetSupport } from '../../src/upstream/check-dataset-support.js';
import { createUpstream } from '../../src/upstream/create-upstream.js';
import { assertNoLeak, rigStores, send, startSecurityGuard, type StoreUnderTest } from '../helpers/rig-stores.js';
import type { TestGuard } from '../helpers/start-test-guard.js';

const P = 'PREFIX ex: <http://example.org/>\nPREFIX res: <http://example.org/res/>\n';
const SECRET = 'http://example.org/g/secret';

interface Hazard {
  /** Rig store names the hazard is known on (rig probes/RESULTS.md, or found by test/security). */
  readonly stores: readonly string[];
  readonly name: string;
  readonly query: string;
  readonly params?: Readonly<Record<string, readonly string[]>>;
  readonly accept?: string;
  /** Not closed by the guard yet: reported as a node:test todo (see test/security/probes.test.ts). */
  readonly knownLeak?: string;
}

const HAZARDS: readonly Hazard[] = [
  {
    stores: ['virtuoso'],
    name: 'no dataset clause means every graph (a01)',
    query: `${P}SELECT ?o WHERE { res:item1 ex:secretPredicate ?o }`,
  },
  {
    stores: ['virtuoso'],
    name: 'FROM without FROM NAMED leaves GRAPH ?g open (a11)',
    query: `${P}SELECT ?o FROM <http://example.org/g/public1> WHERE { GRAPH ?g { res:item1 ex:secretPredicate ?o } }`,
  },
  {
    stores: ['virtuoso'],
    name: 'protocol default-graph-uri merged with the query FROM (b02)',
    query: `${P}SELECT ?o FROM <${SECRET}> WHERE { res:item1 ex:secretPredicate ?o }`,
    params: { 'default-graph-uri': ['http://example.org/g/public1'] },
  },
  {
    stores: ['virtuoso'],
    name: 'DEFINE input:default-graph-uri adds a graph (c10)',
    query: `DEFINE input:default-graph-uri <${SECRET}>\n${P}SELECT ?o FROM <http://example.org/g/public1> WHERE { res:item1 ex:secretPredicate ?o }`,
  },
  {
    stores: ['virtuoso'],
    name: 'FROM inside a sub-select is applied (a14)',
    query: `${P}SELECT ?o FROM <http://example.org/g/public1> WHERE { { SELECT ?o FROM <${SECRET}> WHERE { res:item1 ex:secretPredicate ?o } } }`,
  },
  {
    stores: ['virtuoso'],
    name: 'a transitive path inside GRAPH ?g leaves FROM NAMED (found here)',
    query: `${P}SELECT ?o FROM <urn:x-sparql-guard:empty> FROM NAMED <http://example.org/g/public1> WHERE { GRAPH ?g { res:item5 (ex:seeAlso|ex:secretPredicate)+ ?o } }`,
  },
  {
    stores: ['jena', 'jena-arq', 'jena-mem'],
    name: 'FROM <urn:x-arq:UnionGraph> is every named graph (c01)',
    query: `${P}SELECT ?o FROM <urn:x-arq:UnionGraph> WHERE { res:item1 ex:secretPredicate ?o }`,
  },
  {
    stores: ['jena', 'jena-arq', 'jena-mem'],
    name: 'DESCRIBE without FROM reads every named graph (d01)',
    query: `${P}DESCRIBE res:item1`,
    accept: 'application/n-triples',
  },
  {
    stores: ['jena-arq'],
    name: 'DESCRIBE ... FROM <public1> reads the whole dataset (d02)',
    query: `${P}DESCRIBE res:item1 FROM <http://example.org/g/public1>`,
    accept: 'application/n-triples',
  },
  {
    stores: ['virtuoso'],
    name: 'bif: SQL built-ins run (found here)',
    query: `SELECT ?b FROM <http://example.org/g/public1> WHERE { BIND(<bif:concat>("CANARY-", "SECRET") AS ?b) }`,
  },
  {
    stores: ['jena', 'jena-arq', 'jena-mem'],
    name: 'ARQ property functions run (apf:concat, found here)',
    query: `SELECT ?b FROM <http://example.org/g/public1> WHERE { ?b <http://jena.apache.org/ARQ/property#concat> ("CANARY-" "SECRET") }`,
  },
  {
    stores: ['jena', 'jena-arq', 'jena-mem'],
    name: 'java: function classes load by name (found here)',
    query: `SELECT ?b FROM <http://example.org/g/public1> WHERE { BIND(<java:org.apache.jena.sparql.function.library.strjoin>("", "CANARY-", "SECRET") AS ?b) }`,
  },
  {
    stores: ['virtuoso'],
    name: 'an EXISTS in a SELECT expression reads every graph, not FROM (found by the rows oracle on the view in the store)',
    query: `${P}SELECT (IF(EXISTS { res:item1 ex:secretPredicate "CANARY-SECRET-1" }, "CANARY-SECRET-1 is stored", "no") AS ?k) FROM <http://example.org/g/public1> WHERE { }`,
  },
  {
    stores: ['virtuoso'],
    name: 'a NOT EXISTS in an aggregate of the SELECT clause reads every graph, not FROM (found here)',
    query: `${P}SELECT (SAMPLE(IF(NOT EXISTS { res:item1 ex:secretPredicate "CANARY-SECRET-1" }, "no", "CANARY-SECRET-1 is stored")) AS ?k) FROM <http://example.org/g/public1> WHERE { ?s ?p ?o }`,
  },
  {
    stores: ['oxigraph'],
    name: 'the union-default-graph parameter replaces FROM (c09)',
    query: `${P}SELECT ?o FROM <http://example.org/g/public1> WHERE { res:item1 ex:secretPredicate ?o }`,
    params: { 'union-default-graph': [''] },
  },
];

async function direct(store: StoreUnderTest, hazard: Hazard): Promise<string> {
  const body = new URLSearchParams({ query: hazard.query });
  for (const [name, values] of Object.entries(hazard.params ?? {})) for (const value of values) body.append(name, value);
  const response = await fetch(store.queryUrl ?? '', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: hazard.accept ?? 'application/sparql-results+json' },
    body,
  });
  return response.text();
}

for (const store of rigStores()) {
  const hazards = HAZARDS.filter((hazard) => hazard.stores.includes(store.name));
  describe(`store hazards [${store.name}]`, () => {
    let guard: TestGuard;
    before(async () => {
      guard = await startSecurityGuard(store);
    });
    after(() => guard?.close());
    for (const hazard of hazards) {
      const options = hazard.knownLeak === undefined ? {} : { todo: `known leak: ${hazard.knownLeak}` };
      it(`${hazard.name}: the store leaks when asked directly, the guard does not`, options, async () => {
        assert.match(await direct(store, hazard), /CANARY-SECRET/, 'the hazard is real on this store');
        const answer = await send(guard.endpoint, hazard.query, { caller: 'reader', params: hazard.params, accept: hazard.accept });
        assertNoLeak(answer.body, 'reader', hazard.name);
      });
    }
    it('honours FROM / FROM NAMED (the start-up check)', async () => {
      const upstream = createUpstream({ url: store.queryUrl ?? '', headers: {}, timeoutMs: 5000 });
      try {
        assert.equal((await checkDatasetSupport(upstream, AbortSignal.timeout(5000))).kind, 'honoured');
      } finally {
        await upstream.close();
      }
    });
    // rowChecks "exists" writes FILTER(EXISTS), which Virtuoso 7.2 drops inside OPTIONAL: the start refuses Virtuoso, and only Virtuoso.
    const virtuoso = store.name === 'virtuoso';
    it(`rowChecks "exists": the start-up check ${virtuoso ? 'refuses the store, and the guard does not start' : 'passes'}`, async () => {
      const upstream = createUpstream({ url: store.queryUrl ?? '', headers: {}, timeoutMs: 5000 });
      try {
        const support = await checkDatasetSupport(upstream, AbortSignal.timeout(5000), 'exists');
        if (!virtuoso) return assert.equal(support.kind, 'honoured');
        assert.equal(support.kind, 'ignored');
        assert.match(
          support.kind === 'ignored' ? `${support.reason}: ${support.fix}` : '',
          /Server: Virtuoso\/.*drops FILTER\(EXISTS\) inside OPTIONAL.*set rowChecks to "join"/,
        );
      } finally {
        await upstream.close();
      }
      if (virtuoso)
        await assert.rejects(
          startSecurityGuard(store, { rowChecks: 'exists' }),
          /says it is Virtuoso.*refusing to serve .*: set rowChecks to "join"$/,
        );
      else await (await startSecurityGuard(store, { rowChecks: 'exists' })).close();
    });
  });
}

const unionUrl = process.env.RIG_OXIGRAPH_UNION_QUERY;
describe('store hazards [oxigraph-union]', { skip: unionUrl ? false : 'RIG_OXIGRAPH_UNION_QUERY is not set' }, () => {
  it('ignores FROM: the check says so, and the guard refuses to start', async () => {
    const upstream = createUpstream({ url: unionUrl ?? '', headers: {}, timeoutMs: 5000 });
    try {
      assert.equal((await checkDatasetSupport(upstream, AbortSignal.timeout(5000))).kind, 'ignored');
    } finally {
      await upstream.close();
    }
    await assert.rejects(startSecurityGuard({ name: 'oxigraph-union', queryUrl: unionUrl }), /ignores FROM/);
  });
});

describe('store suite', () => {
  it('names the stores it ran against', () => {
    process.stdout.write(
      `# store suite: ${
        rigStores()
          .map((s) => s.name)
          .join(', ') || 'no rig store in the environment (RIG_*_QUERY)'
      }\n`,
    );
  });
});
