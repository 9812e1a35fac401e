// Liveness (/healthz) never depends on the store; readiness (/readyz) follows the policies, the store's dataset check and draining.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KEYS, startTestGuard } from '../helpers/start-test-guard.js';
import { startStubStore } from '../helpers/start-stub-store.js';

const SELECT = 'SELECT * WHERE { ?s ?p ?o }';

async function probe(url: string): Promise<{ status: number; body: string; type: string | null }> {
  const response = await fetch(url);
  return { status: response.status, body: await response.text(), type: response.headers.get('content-type') };
}

describe('probes', () => {
  it('an unreachable store: /healthz 200 ok, /readyz 503 with the reason on one line', async () => {
    const t = await startTestGuard({ upstream: 'http://127.0.0.1:1/sparql', timeoutMs: 1000 });
    try {
      assert.deepEqual(await probe(`${t.guard.url}/healthz`), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
      const ready = await probe(`${t.guard.url}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(ready.body, /^upstream not verified: upstream unreachable[^\n]*\n$/);
      assert.equal(ready.type, 'text/plain; charset=utf-8');
    } finally {
      await t.close();
    }
  });

  it('/healthz sends nothing to the store; /readyz is 200 once the check passed', async () => {
    const store = await startStubStore();
    const t = await startTestGuard({ upstream: store.url });
    try {
      const before = store.queries.length;
      for (let i = 0; i < 5; i += 1) assert.equal((await probe(`${t.guard.url}/healthz`)).status, 200);
      assert.equal(store.queries.length, before, 'no request reached the store');
      assert.deepEqual(await probe(`${t.guard.url}/readyz`), { status: 200, body: 'ok', type: 'text/plain; charset=utf-8' });
    } finally {
      await t.close();
      await store.close();
    }
  });

  it('draining: /readyz 503 at once, while /healthz and queries are still answered', async () => {
    const t = await startTestGuard();
    try {
      assert.equal((await probe(`${t.guard.url}/readyz`)).status, 200);
      t.guard.readiness.startDraining();
      assert.deepEqual(await probe(`${t.guard.url}/readyz`), {
        status: 503,
        body: 'draining: the guard is shutting down\n',
        type: 'text/plain; charset=utf-8',
      });
      assert.equal((await probe(`${t.guard.url}/healthz`)).status, 200);
      const query = await fetch(`${t.endpoint}?query=${encodeURIComponent(SELECT)}`, { headers: { 'x-api-key': KEYS.beta } });
      assert.equal(query.status, 200);
      await query.arrayBuffer();
    } finally {
      await t.close();
    }
  });

  it('/readyz takes GET only and needs no credentials', async () => {
    const t = await startTestGuard({ auth: { apiKeys: [] } });
    try {
      assert.equal((await probe(`${t.guard.url}/readyz`)).status, 200);
      const post = await fetch(`${t.guard.url}/readyz`, { method: 'POST' });
      assert.equal(post.status, 405);
      assert.equal(post.headers.get('allow'), 'GET');
      await post.arrayBuffer();
    } finally {
      await t.close();
    }
  });
});
