// Queries the fuzz test found, each kept as the case it was found as: the embedded store's worker dies on it, and the guard replaces it and keeps serving.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CALLERS, assertNoLeak, startSecurityGuard } from '../helpers/rig-stores.js';
import type { TestGuard } from '../helpers/start-test-guard.js';

/**
 * Seed 7, request 6,638 of the fuzz run: as the reader (public1 and teamA), Oxigraph 0.5.11's sort
 * panics with "user-provided comparison function does not correctly implement a total order" (the
 * smallest form found: `... OPTIONAL { ?o ?p2 ?o2 } } ORDER BY ?s ?o2` over those two graphs), a
 * WASM trap that leaves the instance unusable.
 */
const TOTAL_ORDER_PANIC =
  'PREFIX : <http://exa.org/>\n\nSELECT * WHERE { ?s ?p ?o OPTIONAL {?o ?p2 ?o2 } } ORDER BY ?s ?p ?o ?s ?p ?o ?2 ?o2';
const COUNT = 'SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }';

async function ask(guard: TestGuard, query: string): Promise<{ status: number; body: string }> {
  const response = await fetch(guard.endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/sparql-results+json',
      authorization: `Bearer ${CALLERS.reader}`,
    },
    body: new URLSearchParams({ query }),
  });
  return { status: response.status, body: await response.text() };
}

describe('queries found by fuzzing (embedded store)', () => {
  let guard: TestGuard;
  before(async () => {
    guard = await startSecurityGuard({ name: 'embedded', queryUrl: undefined });
  });
  after(async () => {
    await guard?.close();
  });

  it('a sort that panics in Oxigraph ("not a total order"): the worker is replaced, the guard answers the next queries as before', async () => {
    const before = await ask(guard, COUNT);
    assert.equal(before.status, 200, before.body);
    const events = () => guard.logs.filter((line) => line.event === 'embedded-store').map((line) => `${line.level}: ${line.message}`);

    const crashed = await ask(guard, TOTAL_ORDER_PANIC);
    assert.ok(crashed.status >= 500, `status ${crashed.status}: ${crashed.body.slice(0, 200)}`);
    assert.doesNotMatch(crashed.body, /^internal error/, 'the store failed, not the guard');
    assertNoLeak(crashed.body, 'reader', 'the panicking query');

    let after: { status: number; body: string } | undefined;
    for (let attempt = 0; attempt < 100 && after?.status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      after = await ask(guard, COUNT);
    }
    assert.equal(after?.status, 200, after?.body);
    assert.equal(after?.body, before.body, 'the replaced worker holds the same data');
    assert.ok(
      events().some((line) => line.startsWith('error: embedded store worker exited')),
      `Oxigraph no longer dies on this query (keep another that kills the worker to test its replacement):\n${events().join('\n')}`,
    );
    assert.ok(
      events().some((line) => line.startsWith('info: embedded store restarted')),
      events().join('\n'),
    );
    assert.equal((await fetch(`${guard.guard.url}/healthz`)).status, 200);
  });
});
