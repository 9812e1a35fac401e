// {path}/explain over HTTP: the documented fields, policies in order of listing, the refusals of the query endpoint, 404 when off, never a query to the store.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const G = 'http://example.org/graphs/';
const P = 'http://example.org/policies/';
const ORDER_POLICIES = resolve('test/fixtures/explain/listing-order.ttl');
const SELECT = 'SELECT * WHERE { ?s ?p ?o }';
/** Reads the default graph and named graphs: the dataset lists the grant in FROM and in FROM NAMED. */
const BOTH = 'SELECT * WHERE { { ?s ?p ?o } UNION { GRAPH ?g { ?s ?p ?o } } }';

/**
 * A store that answers the guard's dataset check (two ASK probes over the reserved empty
 * graph) and counts every other query it receives: explain must send none.
 */
let store: Server;
let storeUrl: string;
let queriesRun = 0;
let t: TestGuard;
before(async () => {
  store = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const query = new URLSearchParams(body).get('query') ?? '';
      const probe = query.startsWith('ASK') && query.includes('urn:x-sparql-guard:empty');
      if (!probe) queriesRun += 1;
      response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
      response.end(
        JSON.stringify(
          probe ? { head: {}, boolean: /WHERE \{\s*\}$/.test(query.trim()) } : { head: { vars: [] }, results: { bindings: [] } },
        ),
      );
    });
  });
  await new Promise<void>((done) => store.listen(0, '127.0.0.1', done));
  storeUrl = `http://127.0.0.1:${(store.address() as AddressInfo).port}/sparql`;
  t = await startTestGuard({ explain: true, upstream: storeUrl, policies: [ORDER_POLICIES] });
});
after(async () => {
  await t.close();
  await new Promise<void>((done) => store.close(() => done()));
});

const explainUrl = (query: string, params = '') => `${t.endpoint}/explain?query=${encodeURIComponent(query)}${params}`;
const asBeta = { authorization: `Bearer ${KEYS.beta}` };

describe('explain answers', () => {
  it('has exactly the documented fields, with policies as <iri> in order of listing', async () => {
    const response = await fetch(explainUrl(SELECT), { headers: asBeta });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    const explain = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(explain), ['agent', 'groups', 'policies', 'query', 'form']);
    assert.equal(explain.agent, 'http://example.org/agents/beta-user');
    assert.deepEqual(explain.groups, ['beta']);
    // Listing order of the file, not Everyone / AuthenticatedAgent / agent / group order.
    assert.deepEqual(explain.policies, [`<${P}z-beta>`, `<${P}y-everyone>`, `<${P}x-authenticated>`, `<${P}w-own>`]);
    assert.equal(explain.form, 'select');
  });

  it('shows the rewritten query with FROM and FROM NAMED for exactly the granted graphs', async () => {
    const explain = (await (await fetch(explainUrl(BOTH), { headers: asBeta })).json()) as { query: string };
    const from = [...explain.query.matchAll(/FROM <([^>]+)>/g)].map((match) => match[1]);
    const named = [...explain.query.matchAll(/FROM NAMED <([^>]+)>/g)].map((match) => match[1]);
    assert.deepEqual(from.sort(), [`${G}a`, `${G}b`, `${G}secret`]);
    assert.deepEqual(named.sort(), [`${G}a`, `${G}b`, `${G}secret`]);

    const anonymous = (await (await fetch(explainUrl(SELECT))).json()) as {
      agent: string;
      groups: string[];
      policies: string[];
      query: string;
    };
    assert.equal(anonymous.agent, 'https://w3id.org/sparql-guard#Anonymous');
    assert.deepEqual(anonymous.groups, []);
    assert.deepEqual(anonymous.policies, [`<${P}y-everyone>`]);
    assert.doesNotMatch(anonymous.query, /graphs\/(b|secret)/);
  });

  it('intersects a protocol dataset with the grant, and names the empty graph when nothing is left', async () => {
    const dataset = `&default-graph-uri=${encodeURIComponent(`${G}b`)}&named-graph-uri=${encodeURIComponent(`${G}secret`)}`;
    const beta = (await (await fetch(explainUrl(BOTH, dataset), { headers: asBeta })).json()) as { query: string };
    assert.match(beta.query, new RegExp(`FROM <${G}b>\\s+FROM NAMED <${G}secret>`));
    const anonymous = (await (await fetch(explainUrl(SELECT, dataset))).json()) as { query: string };
    assert.match(anonymous.query, /FROM <urn:x-sparql-guard:empty>\s+FROM NAMED <urn:x-sparql-guard:empty>/);
  });

  it('gives the form of each query form, in lower case', async () => {
    const forms: [string, string][] = [
      ['SELECT * { ?s ?p ?o }', 'select'],
      ['ASK { ?s ?p ?o }', 'ask'],
      ['CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }', 'construct'],
      ['DESCRIBE <http://example.org/x>', 'describe'],
    ];
    for (const [query, form] of forms) {
      const explain = (await (await fetch(explainUrl(query))).json()) as { form: string };
      assert.equal(explain.form, form, query);
    }
  });

  it('takes POST form bodies and application/sparql-query bodies like the query endpoint', async () => {
    const form = await fetch(`${t.endpoint}/explain`, {
      method: 'POST',
      headers: { ...asBeta, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ query: 'ASK {}' }),
    });
    assert.equal(form.status, 200);
    assert.equal(((await form.json()) as { form: string }).form, 'ask');
    const direct = await fetch(`${t.endpoint}/explain`, {
      method: 'POST',
      headers: { 'x-api-key': KEYS.beta, 'content-type': 'application/sparql-query' },
      body: 'CONSTRUCT WHERE { ?s ?p ?o }',
    });
    assert.equal(direct.status, 200);
    assert.equal(((await direct.json()) as { form: string }).form, 'construct');
  });

  it('never sends a query to the store', async () => {
    const before = queriesRun;
    for (let i = 0; i < 5; i += 1) await (await fetch(explainUrl(`SELECT * { ?s ?p ?o } LIMIT ${i + 1}`), { headers: asBeta })).text();
    assert.equal(queriesRun, before);
    // The same request on the query endpoint does reach the store: the counter can move.
    await (await fetch(`${t.endpoint}?query=${encodeURIComponent(SELECT)}`, { headers: asBeta })).text();
    assert.equal(queriesRun, before + 1);
  });
});

describe('explain refuses exactly what the query endpoint refuses', () => {
  const big = 'x'.repeat(1024 * 1024 + 1);
  const cases: { name: string; init: (path: string) => [string, RequestInit] }[] = [
    { name: 'missing query', init: (path) => [path, {}] },
    { name: 'unparseable query', init: (path) => [`${path}?query=${encodeURIComponent('SELECT * {')}`, {}] },
    { name: 'query given twice', init: (path) => [`${path}?query=ASK%7B%7D&query=ASK%7B%7D`, {}] },
    { name: 'update parameter', init: (path) => [`${path}?update=${encodeURIComponent('CLEAR ALL')}`, {}] },
    { name: 'update operation', init: (path) => [`${path}?query=${encodeURIComponent('DELETE WHERE { ?s ?p ?o }')}`, {}] },
    {
      name: 'application/sparql-update',
      init: (path) => [path, { method: 'POST', headers: { 'content-type': 'application/sparql-update' }, body: 'CLEAR ALL' }],
    },
    {
      name: 'SERVICE',
      init: (path) => [`${path}?query=${encodeURIComponent('SELECT * { SERVICE <http://x.example/> { ?s ?p ?o } }')}`, {}],
    },
    { name: 'unknown key', init: (path) => [`${path}?query=ASK%7B%7D`, { headers: { authorization: 'Bearer nope-nope-nope' } }] },
    {
      name: 'two different keys',
      init: (path) => [`${path}?query=ASK%7B%7D`, { headers: { authorization: `Bearer ${KEYS.beta}`, 'x-api-key': KEYS.keeper } }],
    },
    {
      name: 'unsupported media type',
      init: (path) => [path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'ASK {}' }],
    },
    {
      name: 'body over 1 MiB',
      init: (path) => [path, { method: 'POST', headers: { 'content-type': 'application/sparql-query' }, body: big }],
    },
    { name: 'another method', init: (path) => [`${path}?query=ASK%7B%7D`, { method: 'PUT' }] },
  ];
  for (const { name, init } of cases) {
    it(name, async () => {
      const [queryUrl, queryInit] = init(t.endpoint);
      const [explainPath, explainInit] = init(`${t.endpoint}/explain`);
      const viaQuery = await fetch(queryUrl, queryInit);
      const viaExplain = await fetch(explainPath, explainInit);
      const [queryBody, explainBody] = [await viaQuery.text(), await viaExplain.text()];
      assert.ok(viaQuery.status >= 400, `the query endpoint refuses: ${viaQuery.status}`);
      assert.equal(viaExplain.status, viaQuery.status);
      assert.equal(explainBody, queryBody);
      assert.equal(viaExplain.headers.get('www-authenticate'), viaQuery.headers.get('www-authenticate'));
      assert.equal(viaExplain.headers.get('allow'), viaQuery.headers.get('allow'));
      assert.match(viaExplain.headers.get('content-type') ?? '', /^text\/plain/);
    });
  }

  it('a caller no policy applies to: 401 anonymous, 403 identified, on both', async () => {
    const lonely = await startTestGuard({ explain: true, policies: [resolve('test/fixtures/integration/no-policies.ttl')] });
    try {
      for (const [headers, status] of [
        [{}, 401],
        [{ 'x-api-key': KEYS.lonely }, 403],
      ] as const) {
        const viaQuery = await fetch(`${lonely.endpoint}?query=ASK%7B%7D`, { headers });
        const viaExplain = await fetch(`${lonely.endpoint}/explain?query=ASK%7B%7D`, { headers });
        assert.equal(viaQuery.status, status);
        assert.equal(viaExplain.status, status);
        assert.equal(await viaExplain.text(), await viaQuery.text());
      }
    } finally {
      await lonely.close();
    }
  });
});

describe('explain off (the default)', () => {
  it('answers 404 to every method on {path}/explain, while {path} still works', async () => {
    const off = await startTestGuard({ upstream: storeUrl, policies: [ORDER_POLICIES] });
    try {
      for (const method of ['GET', 'POST', 'OPTIONS', 'PUT']) {
        const response = await fetch(`${off.endpoint}/explain?query=ASK%7B%7D`, { method, headers: asBeta });
        assert.equal(response.status, 404, method);
        assert.match(await response.text(), /^[^\n]+\n$/);
      }
      assert.equal((await fetch(`${off.endpoint}?query=ASK%7B%7D`, { headers: asBeta })).status, 200);
    } finally {
      await off.close();
    }
  });
});
