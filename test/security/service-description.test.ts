// Attacks on the service description: a caller learns its own grant and nothing about anyone else's.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Parser, type Quad } from 'n3';
import { after, before, describe, it } from 'node:test';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const SD = 'http://www.w3.org/ns/sparql-service-description#';
const GUARD = 'https://w3id.org/sparql-guard#';
const G = 'http://example.org/graphs/';

let t: TestGuard;
let closed: TestGuard;
let demo: TestGuard;
before(async () => {
  t = await startTestGuard();
  closed = await startTestGuard({ policies: [resolve('test/fixtures/integration/no-policies.ttl')], ui: false });
  // The demo as `npm start` serves it: carol reads the people graph without the salaries, alice with them.
  const demoConfig = JSON.parse(readFileSync('policies/demo.json', 'utf8')) as { auth: unknown };
  demo = await startTestGuard({
    policies: [resolve('policies/demo.ttl')],
    auth: demoConfig.auth,
    embedded: { data: [resolve('policies/demo.trig')] },
  });
});
after(async () => {
  await Promise.all([t.close(), closed.close(), demo.close()]);
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

  it("lists each granted graph's predicates hidden from the caller, in every format, and none where nothing is hidden", async () => {
    const CAROL = 'sg_demo_carol_3f6b8e21c9a0d457';
    const ALICE = 'sg_demo_alice_hr_7c1e5a93f04b2d68';
    const PEOPLE = 'https://example.org/graphs/people';
    const SALARY = 'https://example.org/ns#salary';
    /** Graph name -> hidden predicates, from the parsed statements. */
    const hiddenByGraph = (quads: Quad[]) => {
      const found: Record<string, string[]> = {};
      for (const name of quads.filter((q) => q.predicate.value === `${SD}name`)) {
        found[name.object.value] = quads
          .filter((q) => q.subject.equals(name.subject) && q.predicate.value === `${GUARD}hidePath`)
          .map((q) => q.object.value);
      }
      return found;
    };
    const carol = parse((await describeAs(demo, 'text/turtle', { authorization: `Bearer ${CAROL}` })).text, demo.endpoint, 'text/turtle');
    assert.deepEqual(hiddenByGraph(carol), {
      [PEOPLE]: [SALARY],
      'https://example.org/graphs/projects': [],
      'https://example.org/graphs/public': [],
    });
    const nt = await describeAs(demo, 'application/n-triples', { 'x-api-key': CAROL });
    assert.deepEqual(hiddenByGraph(parse(nt.text, 'http://unused.example/', 'application/n-triples'))[PEOPLE], [SALARY]);
    const jsonld = JSON.parse((await describeAs(demo, 'application/ld+json', { 'x-api-key': CAROL })).text) as {
      'sd:defaultDataset': { 'sd:namedGraph': { 'sd:name': { '@id': string }; 'guard:hidePath'?: { '@id': string }[] }[] };
    };
    const people = jsonld['sd:defaultDataset']['sd:namedGraph'].find((graph) => graph['sd:name']['@id'] === PEOPLE);
    assert.deepEqual(people?.['guard:hidePath'], [{ '@id': SALARY }]);
    // alice's hr policy grants the people graph without hiding: the salaries are hers to read.
    const alice = parse((await describeAs(demo, 'text/turtle', { authorization: `Bearer ${ALICE}` })).text, demo.endpoint, 'text/turtle');
    assert.deepEqual(objects(alice, `${GUARD}hidePath`), []);
    assert.deepEqual(hiddenByGraph(alice)[PEOPLE], []);
  });

  it('logs the describing caller', async () => {
    const before = t.logs.length;
    await describeAs(t, 'text/turtle', { 'x-api-key': KEYS.beta });
    assert.equal(t.logs.slice(before).find((line) => line.path === '/sparql')?.agent, 'http://example.org/agents/beta-user');
  });
});
