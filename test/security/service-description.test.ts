// Attacks on the service description: a caller learns its own grant and nothing about anyone else's.

import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { Parser, type Quad } from 'n3';
import { after, before, describe, it } from 'node:test';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const SD = 'http://www.w3.org/ns/sparql-service-description#';
const GUARD = 'https://w3id.org/sparql-guard#';
const G = 'http://example.org/graphs/';

let t: TestGuard;
let closed: TestGuard;
before(async () => {
  t = await startTestGuard();
  closed = await startTestGuard({ policies: [resolve('test/fixtures/integration/no-policies.ttl')], ui: false });
});
after(async () => {
  await Promise.all([t.close(), closed.close()]);
});

async function describeAs(guard: TestGuard, accept: string, headers: Record<string, string> = {}) {
  const response = await fetch(guard.endpoint, { headers: { accept, ...headers } });
  return { response, text: await response.text() };
}

function parse(text: string, baseIRI: string, format: string): Quad[] {
  return new Parser({ baseIRI, format }).parse(text);
}

const objects = (quads: Quad[], predicate: string) => quads.filter((q) => q.predicate.value === predicate).map((q) => q.object.value);

describe('service description', () => {
  it('describes the endpoint in Turtle: endpoint, SPARQL 1.1 Query, result formats, and the caller dataset', async () => {
    const { response, text } = await describeAs(t, 'text/turtle', { authorization: `Bearer ${KEYS.beta}` });
    assert.equal(response.status, 200, text);
    assert.match(response.headers.get('content-type') ?? '', /^text\/turtle/);
    assert.match(response.headers.get('vary') ?? '', /Accept/);
    const quads = parse(text, t.endpoint, 'text/turtle');
    assert.deepEqual(objects(quads, `${SD}endpoint`), [t.endpoint]);
    assert.deepEqual(objects(quads, `${SD}supportedLanguage`), [`${SD}SPARQL11Query`]);
    assert.ok(objects(quads, `${SD}resultFormat`).includes('http://www.w3.org/ns/formats/SPARQL_Results_JSON'));
    assert.deepEqual(objects(quads, `${SD}name`).sort(), [`${G}a`, `${G}b`]);
    assert.deepEqual(objects(quads, `${GUARD}agent`), ['http://example.org/agents/beta-user']);
    assert.deepEqual(objects(quads, `${GUARD}group`), ['beta']);
  });

  it('serves the same statements as N-Triples (absolute IRIs) and JSON-LD', async () => {
    const nt = await describeAs(t, 'application/n-triples', { 'x-api-key': KEYS.keeper });
    assert.equal(nt.response.status, 200, nt.text);
    const quads = parse(nt.text, 'http://unused.example/', 'application/n-triples');
    assert.deepEqual(objects(quads, `${SD}endpoint`), [t.endpoint]);
    assert.deepEqual(objects(quads, `${SD}name`).sort(), [`${G}a`, `${G}b`, `${G}secret`]);
    const jsonld = await describeAs(t, 'application/ld+json', { 'x-api-key': KEYS.keeper });
    assert.match(jsonld.response.headers.get('content-type') ?? '', /^application\/ld\+json/);
    const json = JSON.parse(jsonld.text) as {
      'sd:defaultDataset': { 'sd:namedGraph': { 'sd:name': { '@id': string } }[] };
      'guard:caller': { 'guard:agent': { '@id': string } };
    };
    assert.deepEqual(
      json['sd:defaultDataset']['sd:namedGraph'].map((graph) => graph['sd:name']['@id']),
      [`${G}a`, `${G}b`, `${G}secret`],
    );
    assert.equal(json['guard:caller']['guard:agent']['@id'], 'http://example.org/agents/keeper');
  });

  it('negotiates as clients ask: q-values decide, */* and text/* alone keep the protocol 400', async () => {
    const comunicaLike = await describeAs(
      t,
      'application/n-quads,application/trig;q=0.95,application/ld+json;q=0.9,text/turtle;q=0.6,text/html;q=0.2',
    );
    assert.match(comunicaLike.response.headers.get('content-type') ?? '', /^application\/ld\+json/);
    for (const accept of ['*/*', 'text/*', 'application/sparql-results+json', 'text/turtle;q=0']) {
      const { response, text } = await describeAs(t, accept);
      assert.equal(response.status, 400, accept);
      assert.equal(text, 'the query parameter is missing\n');
    }
    const withQueryString = await fetch(`${t.endpoint}?default-graph-uri=${encodeURIComponent(`${G}a`)}`, {
      headers: { accept: 'text/turtle' },
    });
    assert.equal(withQueryString.status, 400, 'a query string means a protocol request');
  });

  it('never names a graph outside the grant, nor a policy: anonymous sees the public graph only', async () => {
    const { response, text } = await describeAs(t, 'text/turtle');
    assert.equal(response.status, 200);
    const quads = parse(text, t.endpoint, 'text/turtle');
    assert.deepEqual(objects(quads, `${SD}name`), [`${G}a`]);
    assert.deepEqual(objects(quads, `${GUARD}agent`), [`${GUARD}Anonymous`]);
    for (const [key, hidden] of [
      [undefined, /graphs\/(b|secret)/],
      [KEYS.beta, /graphs\/secret/],
      [KEYS.keeper, /nomatch/],
    ] as const) {
      for (const accept of ['text/turtle', 'application/n-triples', 'application/ld+json']) {
        const answer = await describeAs(t, accept, key === undefined ? {} : { 'x-api-key': key });
        assert.doesNotMatch(answer.text, hidden, `${accept} as ${key ?? 'anonymous'}`);
        assert.doesNotMatch(answer.text, /example\.org\/policies/, 'no policy IRI');
      }
    }
  });

  it('has the query rules for credentials: 401 with a challenge for a bad key, 403 for a caller without policy', async () => {
    const bad = await describeAs(t, 'text/turtle', { authorization: 'Bearer not-a-key' });
    assert.equal(bad.response.status, 401);
    assert.ok(bad.response.headers.get('www-authenticate'));
    assert.match(bad.text, /^[^\n]+\n$/);
    const anonymous = await describeAs(closed, 'text/turtle');
    assert.equal(anonymous.response.status, 401);
    const lonely = await describeAs(closed, 'text/turtle', { 'x-api-key': KEYS.lonely });
    assert.equal(lonely.response.status, 403);
    assert.doesNotMatch(lonely.text, /graphs/);
  });

  it('refuses a Host header it would have to echo into an absolute IRI', async () => {
    const { request } = await import('node:http');
    const url = new URL(t.endpoint);
    const status = await new Promise<number>((resolvePromise, reject) => {
      const outgoing = request(
        { host: url.hostname, port: url.port, path: url.pathname, headers: { host: 'evil.example/x#', accept: 'application/n-triples' } },
        (incoming) => {
          incoming.resume();
          resolvePromise(incoming.statusCode ?? 0);
        },
      );
      outgoing.on('error', reject);
      outgoing.end();
    });
    assert.equal(status, 400);
  });

  it('logs the describing caller', async () => {
    const before = t.logs.length;
    await describeAs(t, 'text/turtle', { 'x-api-key': KEYS.beta });
    assert.equal(t.logs.slice(before).find((line) => line.path === '/sparql')?.agent, 'http://example.org/agents/beta-user');
  });
});
