// Shared caches: whatever Cache-Control the store sends, no answer of the guard may be kept by a cache shared between callers.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { composeCacheControl } from '../../src/http/cache-control.js';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startStubStore, STUB_ANSWER, type StubStore } from '../helpers/start-stub-store.js';

const SELECT = 'SELECT * WHERE { ?s ?p ?o }';

/** True when `value` lets a shared cache or any cache keep the answer. */
function cacheable(value: string | null): boolean {
  const directives = (value ?? '').split(',').map((part) => part.trim().toLowerCase());
  return (
    !directives.includes('private') ||
    !directives.includes('no-store') ||
    directives.some((d) => d === 'public' || d.startsWith('s-maxage') || d.startsWith('max-age'))
  );
}

describe('a store that asks shared caches to keep its answers', () => {
  let store: StubStore;
  let t: TestGuard;
  before(async () => {
    store = await startStubStore({ headers: { 'cache-control': 'public, max-age=600, s-maxage=600, immutable' } });
    t = await startTestGuard({ upstream: store.url });
  });
  after(async () => {
    await t.close();
    await store.close();
  });

  it('the answer reaches the caller whole, as private, no-store', async () => {
    const response = await fetch(`${t.endpoint}?query=${encodeURIComponent(SELECT)}`, { headers: { 'x-api-key': KEYS.beta } });
    assert.equal(response.status, 200);
    assert.equal(await response.text(), STUB_ANSWER);
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
    assert.ok(
      store.queries.some((query) => !query.startsWith('ASK\nFROM <urn:x-sparql-guard:empty>')),
      'the query reached the store',
    );
  });

  it('an anonymous refusal, a probe and a preflight are private, no-store too', async () => {
    for (const response of [
      await fetch(`${t.endpoint}?query=${encodeURIComponent(SELECT)}`),
      await fetch(`${t.guard.url}/healthz`),
      await fetch(`${t.guard.url}/readyz`),
      await fetch(t.endpoint, { method: 'OPTIONS', headers: { origin: 'https://app.example' } }),
      await fetch(`${t.guard.url}/nope`),
    ]) {
      await response.arrayBuffer();
      assert.equal(
        cacheable(response.headers.get('cache-control')),
        false,
        `${response.url} ${response.status}: ${response.headers.get('cache-control')}`,
      );
    }
  });
});

describe('a store error answer that asks to be cached', () => {
  let store: StubStore;
  let t: TestGuard;
  before(async () => {
    store = await startStubStore({
      status: 500,
      body: 'store error\n',
      headers: { 'cache-control': 'public, max-age=600', 'content-type': 'text/plain' },
    });
    t = await startTestGuard({ upstream: store.url });
  });
  after(async () => {
    await t.close();
    await store.close();
  });

  it('keeps the store status (its text goes to the log), not its caching', async () => {
    const response = await fetch(`${t.endpoint}?query=${encodeURIComponent(SELECT)}`, { headers: { 'x-api-key': KEYS.beta } });
    assert.equal(response.status, 500);
    assert.equal(response.headers.get('sparql-guard-error'), 'store_error');
    assert.equal(await response.text(), "the store answered HTTP 500 to the query as forwarded; its message is in the guard's log\n");
    assert.equal(response.headers.get('cache-control'), 'private, no-store');
  });
});

describe('composeCacheControl', () => {
  it('keeps private, no-store and adds only the store directives that restrict further', () => {
    assert.equal(composeCacheControl(undefined), 'private, no-store');
    assert.equal(composeCacheControl('public, max-age=600'), 'private, no-store');
    assert.equal(
      composeCacheControl('PUBLIC, No-Cache, must-revalidate, stale-while-revalidate=30'),
      'private, no-store, no-cache, must-revalidate',
    );
    assert.equal(composeCacheControl('no-cache="set-cookie", no-transform, no-cache'), 'private, no-store, no-cache, no-transform');
    assert.equal(composeCacheControl('private="x", s-maxage=5, proxy-revalidate'), 'private, no-store, proxy-revalidate');
    assert.equal(composeCacheControl(''), 'private, no-store');
  });

  it('never yields public or a lifetime, whatever the store sends', () => {
    for (const value of [
      'public',
      'max-age=1, public',
      'public,,',
      ',public',
      'public\tmax-age=9',
      's-maxage=9',
      'immutable, max-age=31536000',
    ]) {
      assert.equal(cacheable(composeCacheControl(value)), false, value);
    }
  });
});
