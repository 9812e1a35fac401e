// The guard refuses, in front of a store that names itself Virtuoso, the queries Virtuoso 7.2.5 answers beyond the view, and
// forwards them to any other store. The store is a stub only for its Server header (the lab's Virtuoso runs the attack itself:
// test/security/rows/negation-beside-checks.test.ts).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { EXISTS_BESIDE_NEGATION, EXISTS_IN_PROJECTION } from '../../src/http/refuse-for-store.js';
import { startStubStore, type StubStore } from '../helpers/start-stub-store.js';
import { sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const EX = 'http://example.org/rows#';
const KEYS = { alice: 'refuse-key-alice-0123456789abcdef', bob: 'refuse-key-bob-0123456789abcdef' } as const;

/** alice: two policies on one graph showing different columns, one for a rule's rows (her check is a filter with an EXISTS); bob: one rule (joins). */
const POLICIES = `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix ex: <${EX}> .
<urn:x:alice-open> a guard:Policy ; guard:agent <urn:x:alice> ; guard:readGraph <urn:g:main> ; guard:readPath ex:budget, ex:team .
<urn:x:alice-rows> a guard:Policy ; guard:agent <urn:x:alice> ; guard:readGraph <urn:g:main> ;
  guard:rowPattern "?this ex:lead ?l" ; guard:readPath ex:name .
<urn:x:bob-rows> a guard:Policy ; guard:agent <urn:x:bob> ; guard:readGraph <urn:g:main> ; guard:rowPattern "?this ex:team ?t" .
`;

const NEGATIONS = [
  'SELECT * WHERE { ?s ?p ?o MINUS { ?s ?p ?o } }',
  'SELECT * WHERE { ?s ?p ?o FILTER NOT EXISTS { ?s ?p ?o } }',
  'SELECT * WHERE { ?s ?p ?o FILTER(!EXISTS { ?s ?p ?o }) }',
  'SELECT * WHERE { ?s ?p ?o FILTER EXISTS { ?s ?p ?o } }',
  'SELECT * WHERE { { SELECT ?s WHERE { ?s ?p ?o MINUS { ?s ?q ?x } } } }',
];

for (const [server, refused] of [
  ['Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu', true],
  ['Apache Jena Fuseki', false],
  [undefined, false],
] as const) {
  describe(`queries beside a filter-form row check, store Server: ${server ?? '(none)'}`, () => {
    let store: StubStore;
    let guard: TestGuard;
    let folder: string;
    before(async () => {
      folder = mkdtempSync(join(tmpdir(), 'refuse-for-store-'));
      writeFileSync(join(folder, 'policies.ttl'), POLICIES);
      store = await startStubStore(server === undefined ? {} : { server });
      guard = await startTestGuard({
        upstream: store.url,
        embedded: undefined,
        policies: [join(folder, 'policies.ttl')],
        auth: {
          apiKeys: [
            { agent: 'urn:x:alice', groups: [], sha256: sha256(KEYS.alice) },
            { agent: 'urn:x:bob', groups: [], sha256: sha256(KEYS.bob) },
          ],
        },
      });
    });
    after(async () => {
      await guard.close();
      await store.close();
      rmSync(folder, { recursive: true, force: true });
    });
    const ask = async (query: string, key: string) => {
      const response = await fetch(guard.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${key}` },
        body: new URLSearchParams({ query }),
      });
      return { status: response.status, body: await response.text(), error: response.headers.get('sparql-guard-error') };
    };

    it(refused ? 'alice: each is refused, one line, and never reaches the store' : 'alice: each is forwarded', async () => {
      for (const query of NEGATIONS) {
        const before = store.queries.length;
        const answer = await ask(query, KEYS.alice);
        if (refused) {
          assert.equal(answer.status, 403, query);
          assert.equal(answer.body, `${EXISTS_BESIDE_NEGATION}\n`);
          assert.equal(answer.error, 'forbidden');
          assert.equal(store.queries.length, before, `${query} reached the store`);
        } else {
          assert.equal(answer.status, 200, `${query}: ${answer.body}`);
          assert.match(store.queries.at(-1) ?? '', /NOT EXISTS \{ GRAPH <urn:g:main>/, 'the forwarded text holds the filter-form check');
        }
      }
    });

    // Virtuoso 7.2.5 reads an EXISTS in a SELECT expression over every graph of the store (test/stores/store-hazards.test.ts).
    it(
      refused ? 'an EXISTS in a SELECT expression, at any depth: refused for every caller' : 'an EXISTS in a SELECT expression: forwarded',
      async () => {
        for (const query of [
          'SELECT (IF(EXISTS { ?s ?p "x" }, 1, 0) AS ?k) WHERE { }',
          'SELECT (SUM(IF(NOT EXISTS { ?s ?p ?o }, 1, 0)) AS ?k) WHERE { ?s ?p ?o }',
          'SELECT ?k WHERE { { SELECT (EXISTS { ?s ?p ?o } AS ?k) WHERE { } } }',
        ])
          for (const key of [KEYS.alice, KEYS.bob]) {
            const before = store.queries.length;
            const answer = await ask(query, key);
            if (refused) {
              assert.equal(answer.status, 403, query);
              assert.equal(answer.body, `${EXISTS_IN_PROJECTION}\n`);
              assert.equal(store.queries.length, before, `${query} reached the store`);
            } else assert.equal(answer.status, 200, `${query}: ${answer.body}`);
          }
        // The same test in a BIND or a FILTER reads the query's dataset only: forwarded.
        for (const query of ['SELECT ?k WHERE { BIND(EXISTS { ?s ?p "x" } AS ?k) }', 'SELECT ?s WHERE { ?s ?p ?o FILTER(?o != 1) }'])
          assert.equal((await ask(query, KEYS.bob)).status, 200, query);
      },
    );

    it('alice without negation, and bob (joins) with it, are forwarded', async () => {
      assert.equal((await ask('SELECT * WHERE { ?s ?p ?o }', KEYS.alice)).status, 200);
      assert.equal((await ask('SELECT * WHERE { ?s ?p ?o OPTIONAL { ?s ?p ?x } }', KEYS.alice)).status, 200);
      for (const query of NEGATIONS) {
        const answer = await ask(query, KEYS.bob);
        assert.equal(answer.status, 200, `${query}: ${answer.body}`);
        assert.doesNotMatch(store.queries.at(-1) ?? '', /!NOT EXISTS/, 'bob is checked by joins only');
      }
    });
  });
}
