// Proves the forwarded dataset of a large grant: only the part a query reads, one text per grant, and a store's size refusal told in one line.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startStubStore, type StubStore } from '../helpers/start-stub-store.js';
import type { Grant } from '../../src/policy/policy-set.js';
import { createPlanner } from '../../src/sparql/create-planner.js';
import { encodeQueryForm } from '../../src/url-encoded-form.js';

const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-grant-size-'));
const KEYS = { small: 'grant-size-small-key-0123456789', large: 'grant-size-large-key-0123456789' } as const;
const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';
const GRAPHS = 'SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g';

/** A policy file granting `small` 10 graphs and `large` `graphs` graphs. */
function writePolicies(graphs: number): string {
  const file = join(folder, `policies-${graphs}.ttl`);
  const list = (n: number) => Array.from({ length: n }, (_, i) => `<https://grant-size.example.org/g${i}>`).join(', ');
  writeFileSync(
    file,
    '@prefix guard: <https://w3id.org/sparql-guard#> .\n' +
      `<https://grant-size.example.org/p/small> a guard:Policy ; guard:agent <https://grant-size.example.org/small> ; guard:readGraph ${list(10)} .\n` +
      `<https://grant-size.example.org/p/large> a guard:Policy ; guard:agent <https://grant-size.example.org/large> ; guard:readGraph ${list(graphs)} .\n`,
  );
  return file;
}

const API_KEYS = [
  { agent: 'https://grant-size.example.org/small', groups: [], sha256: sha256(KEYS.small) },
  { agent: 'https://grant-size.example.org/large', groups: [], sha256: sha256(KEYS.large) },
];

async function ask(endpoint: string, key: string, query: string): Promise<{ status: number; body: string; code: string | null }> {
  const response = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/sparql-results+json',
      authorization: `Bearer ${key}`,
    },
    body: new URLSearchParams({ query }),
  });
  return { status: response.status, body: await response.text(), code: response.headers.get('sparql-guard-error') };
}

after(() => rmSync(folder, { recursive: true, force: true }));

describe('the dataset text of a grant', () => {
  const planner = createPlanner({
    baseIri: 'http://localhost/',
    maxQueryDepth: 64,
    planCache: { maxEntries: 100, maxBytes: 1 << 24 },
    allowedFunctions: [],
  });
  const grant: Grant = {
    policies: ['https://grant-size.example.org/p/large'],
    graphs: new Set(Array.from({ length: 5000 }, (_, i) => `https://grant-size.example.org/g${i}`)),
    hiddenByGraph: new Map(),
  };

  it('is built once per grant and sent as its own part, the same Buffer on every request', () => {
    for (const query of [COUNT, GRAPHS, 'ASK { ?s ?p ?o }']) {
      const first = planner.plan({ query, defaultGraphs: [], namedGraphs: [] }, grant);
      const again = planner.plan({ query: query + ' ', defaultGraphs: [], namedGraphs: [] }, grant);
      const large = (plan: typeof first) => plan.formParts.find((part) => part.length >= 16 * 1024);
      assert.ok(large(first) !== undefined, 'the dataset is a part of its own');
      assert.equal(large(again), large(first), 'the same Buffer, not a copy');
      // The parts are the body encodeQueryForm writes for the text, byte for byte.
      assert.ok(Buffer.concat(first.formParts).equals(encodeQueryForm(first.query)));
      assert.ok(first.formBody.equals(encodeQueryForm(first.query)));
      assert.equal(first.formBytes, first.formBody.length);
      assert.equal(first.datasetGraphs, 5000);
    }
  });

  it('is another one for another grant of the same graphs', () => {
    const copy: Grant = { ...grant, graphs: new Set(grant.graphs) };
    const a = planner.plan({ query: COUNT, defaultGraphs: [], namedGraphs: [] }, grant);
    const b = planner.plan({ query: COUNT, defaultGraphs: [], namedGraphs: [] }, copy);
    assert.ok(Buffer.concat(a.formParts).equals(Buffer.concat(b.formParts)));
  });
});

describe('a store that refuses a large query', () => {
  let store: StubStore;
  let t: TestGuard;
  before(async () => {
    store = await startStubStore({ status: 400, body: 'Virtuoso 37000 Error SP030: SPARQL compiler: Too many arguments' });
    t = await startTestGuard({ upstream: store.url, embedded: undefined, policies: [writePolicies(1500)], auth: { apiKeys: API_KEYS } });
  });
  after(async () => {
    await t.close();
    await store.close();
  });

  it("gives the caller of a large grant one line that says the query as forwarded is too large, with the store's status", async () => {
    const { status, body, code } = await ask(t.endpoint, KEYS.large, COUNT);
    assert.equal(status, 400, body);
    assert.equal(code, 'store_refused');
    assert.match(
      body,
      /store refused the query as forwarded \(HTTP 400\): with 1,500 graphs in its dataset, \d+ KiB, it is larger than the store accepts/,
    );
    assert.match(body, /name fewer graphs with FROM \/ FROM NAMED/);
    assert.doesNotMatch(body, /Virtuoso|SP030|grant-size\.example\.org/);
  });

  it('says the same at any grant size when the store names the cause (Virtuoso\'s "Too many arguments")', async () => {
    const { status, body, code } = await ask(t.endpoint, KEYS.small, COUNT);
    assert.equal(status, 400, body);
    assert.equal(code, 'store_refused');
    assert.match(body, /with 10 graphs in its dataset, \d+ KiB, it is larger than the store accepts/);
    assert.doesNotMatch(body, /Virtuoso|grant-size\.example\.org/);
  });

  it('forwards the grant only in the part of the dataset the query reads', () => {
    const forwarded = store.queries.filter((query) => query.includes('grant-size.example.org/g1499'));
    assert.ok(forwarded.length > 0);
    for (const query of forwarded) {
      assert.equal((query.match(/FROM <https/g) ?? []).length, 1500);
      assert.equal((query.match(/^FROM NAMED <urn:x-sparql-guard:empty>$/gm) ?? []).length, 1);
    }
  });
});

describe('a caller granted thousands of graphs, on the embedded store', () => {
  let t: TestGuard;
  before(async () => {
    t = await startTestGuard({ policies: [writePolicies(5000)], auth: { apiKeys: API_KEYS }, explain: true });
  });
  after(() => t.close());

  it('answers queries over the default graph and over named graphs', async () => {
    for (const query of [COUNT, GRAPHS]) {
      const { status, body } = await ask(t.endpoint, KEYS.large, query);
      assert.equal(status, 200, body);
    }
  });

  it('writes FROM NAMED only for a query with GRAPH, FROM only for one that reads the default graph', async () => {
    const explain = async (query: string) => {
      const response = await fetch(`${t.endpoint}/explain?query=${encodeURIComponent(query)}`, {
        headers: { authorization: `Bearer ${KEYS.large}` },
      });
      return ((await response.json()) as { query: string }).query;
    };
    const count = await explain(COUNT);
    assert.equal((count.match(/FROM <https/g) ?? []).length, 5000);
    assert.match(count, /^FROM NAMED <urn:x-sparql-guard:empty>$/m);
    const graphs = await explain(GRAPHS);
    assert.equal((graphs.match(/FROM NAMED <https/g) ?? []).length, 5000);
    assert.match(graphs, /FROM <urn:x-sparql-guard:empty>/);
  });
});

const virtuoso = process.env.RIG_VIRTUOSO_QUERY;
describe(
  'Virtuoso refusing a grant of 5,000 graphs (lab)',
  { skip: virtuoso ? false : 'the lab is not up: RIG_VIRTUOSO_QUERY is not set' },
  () => {
    let t: TestGuard;
    before(async () => {
      t = await startTestGuard({ upstream: virtuoso, embedded: undefined, policies: [writePolicies(5000)], auth: { apiKeys: API_KEYS } });
    });
    after(() => t.close());

    it("answers Virtuoso's 400 with one line that names the grant size, where Virtuoso quotes the query past 4,094 graphs in FROM", async () => {
      const { status, body, code } = await ask(t.endpoint, KEYS.large, COUNT);
      assert.equal(status, 400, body);
      assert.equal(code, 'store_refused');
      assert.match(body, /HTTP 400\): with 5,000 graphs in its dataset, \d+ KiB, it is larger than the store accepts/);
      assert.doesNotMatch(body.trim(), /\n/);
    });

    it('still answers the small grant', async () => {
      assert.equal((await ask(t.endpoint, KEYS.small, COUNT)).status, 200);
    });
  },
);
