// What a store's answer headers may tell a caller: none of the store's own headers (they can quote the rewrite or measure data the caller cannot read), but that the answer is partial.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { PARTIAL_HEADER } from '../../src/http/request-state.js';
import { startStubStore, type StubStore } from '../helpers/start-stub-store.js';
import { HIDDEN_SALARY_API_KEYS, HIDDEN_SALARY_KEYS, HIDDEN_PATHS_FIXTURES } from '../helpers/hidden-salary-stores.js';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { resolve } from 'node:path';

/** Staff: teamA and secret granted, ex:salary hidden; none of the three is in the caller's query. */
const REWRITE = ['http://example.org/g/teamA', 'http://example.org/g/secret', 'http://example.org/salary'];
const SIMPLE = 'SELECT * WHERE { ?s ?p ?o } LIMIT 3';

/** The guard in front of `upstream`, for the hidden-salary staff caller (rig dataset policies), explain off. */
function startGuardFor(upstream: string): Promise<TestGuard> {
  return startTestGuard({
    upstream,
    embedded: undefined,
    explain: false,
    timeoutMs: 20_000,
    policies: [resolve(HIDDEN_PATHS_FIXTURES, 'rig-policies.ttl')],
    auth: { apiKeys: HIDDEN_SALARY_API_KEYS },
    cors: { origins: ['https://app.example'], credentials: false },
  });
}

async function ask(t: TestGuard, query: string, accept = 'application/sparql-results+json') {
  const response = await fetch(t.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Bearer ${HIDDEN_SALARY_KEYS.staff}`,
      origin: 'https://app.example',
      accept,
    },
    body: new URLSearchParams({ query }),
  });
  return { status: response.status, headers: response.headers, body: await response.text() };
}

/** No header of the answer names a piece of the rewrite or is one of the store's own. */
function assertNoStoreHeaders(headers: Headers): void {
  for (const [name, value] of headers) {
    for (const piece of REWRITE) assert.ok(!value.includes(piece), `${name}: ${value} names ${piece}`);
    assert.doesNotMatch(
      name,
      /^x-(sql|exec|sparql)-|^(link|location|content-location|content-range|set-cookie|etag|last-modified|refresh|content-disposition)$/,
    );
  }
}

describe("a store's partial answer (Virtuoso's anytime query and row cap), stub in Virtuoso's headers", () => {
  const open: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const item of open.reverse()) await item.close();
  });
  const start = async (headers: Record<string, string>): Promise<{ t: TestGuard; store: StubStore }> => {
    const store = await startStubStore({ headers, server: 'Virtuoso/07.20.3229 (Linux) x86_64-pc-linux-gnu' });
    open.push(store);
    const t = await startGuardFor(store.url);
    open.push(t);
    return { t, store };
  };

  it("an anytime answer cut by the store's time limit: 200, sparql-guard-partial: time-limit, none of Virtuoso's X-SQL / X-Exec headers", async () => {
    // Virtuoso 7.2.5's words for a query stopped by `MaxQueryExecutionTime` (or the `timeout` parameter), measured on the lab.
    const { t, store } = await start({
      'x-sql-state': 'S1TAT',
      'x-sql-message':
        'RC...: Returning incomplete results, query interrupted by result timeout.  Activity:  1.379M rnd  3.093M seq      0 same seg',
      'x-exec-milliseconds': '2001',
      'x-exec-db-activity': ' 1.379M rnd  3.093M seq      0 same seg   725.1K same pg',
      // A store's headers that could carry the forwarded text or the store's address: never relayed.
      'content-location': `/sparql?query=${encodeURIComponent('FROM <http://example.org/g/secret>')}`,
      link: '<http://example.org/g/teamA>; rel="describedby"',
      location: 'http://store.internal:8890/sparql',
    });
    const { status, headers } = await ask(t, SIMPLE);
    assert.equal(status, 200);
    assert.equal(headers.get(PARTIAL_HEADER), 'time-limit');
    assertNoStoreHeaders(headers);
    assert.match(store.queries.at(-1) ?? '', /FROM <http:\/\/example\.org\/g\/secret>/, 'the forwarded text held the rewrite');
    // A script in a browser may read it.
    assert.match(headers.get('access-control-expose-headers') ?? '', new RegExp(`\\b${PARTIAL_HEADER}\\b`, 'i'));
    const line = t.logs.findLast((each) => each.status === 200 && each.event === undefined);
    assert.equal(line?.partial, 'time-limit');
  });

  it("an answer at the store's row cap (X-SPARQL-MaxRows): sparql-guard-partial: row-limit", async () => {
    const { t } = await start({ 'x-sparql-maxrows': '10000' });
    const { status, headers } = await ask(t, SIMPLE);
    assert.equal(status, 200);
    assert.equal(headers.get(PARTIAL_HEADER), 'row-limit');
    assertNoStoreHeaders(headers);
  });

  it('both: both named', async () => {
    const { t } = await start({ 'x-sql-state': 'S1TAT', 'x-sparql-maxrows': '10000' });
    const { headers } = await ask(t, SIMPLE);
    assert.equal(headers.get(PARTIAL_HEADER), 'time-limit, row-limit');
  });

  it('a whole answer says nothing', async () => {
    const { t } = await start({});
    const { status, headers } = await ask(t, SIMPLE);
    assert.equal(status, 200);
    assert.equal(headers.get(PARTIAL_HEADER), null);
    const line = t.logs.findLast((each) => each.status === 200 && each.event === undefined);
    assert.equal(line?.partial, undefined);
  });
});

describe(
  "the lab's Virtuoso cutting an answer at ResultSetMaxRows (10,000 rows)",
  { skip: process.env.RIG_VIRTUOSO_QUERY ? false : 'RIG_VIRTUOSO_QUERY is not set (the store lab is not up)' },
  () => {
    let t: TestGuard;
    before(async () => {
      t = await startGuardFor(process.env.RIG_VIRTUOSO_QUERY!);
    });
    after(() => t.close());

    it("a cross product over the caller's graphs comes back as 10,000 rows named row-limit; none of its headers passes", async () => {
      const { status, headers, body } = await ask(t, 'SELECT ?s ?o WHERE { ?s ?p ?o . ?a ?b ?c }', 'text/csv');
      assert.equal(status, 200);
      assert.equal(body.trim().split('\n').length - 1, 10_000);
      assert.equal(headers.get(PARTIAL_HEADER), 'row-limit');
      assertNoStoreHeaders(headers);
    });

    it('a small answer is not named partial', async () => {
      const { status, headers, body } = await ask(t, SIMPLE, 'text/csv');
      assert.equal(status, 200, body);
      assert.equal(headers.get(PARTIAL_HEADER), null);
    });
  },
);
