// The query page over HTTP: when it is served, with which headers, and that every asset comes from the guard.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8';

let on: TestGuard;
let off: TestGuard;
before(async () => {
  on = await startTestGuard({ path: '/data/sparql' });
  off = await startTestGuard({ ui: false });
});
after(async () => {
  await Promise.all([on.close(), off.close()]);
});

describe('query page', () => {
  it('answers a browser at GET {path} with the page under a strict CSP, without credentials', async () => {
    const response = await fetch(on.endpoint, { headers: { accept: BROWSER_ACCEPT } });
    const html = await response.text();
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /connect-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
    assert.match(html, /data-endpoint="\/data\/sparql"/);
    assert.doesNotMatch(html, /https?:\/\//, 'no asset from another host');
    assert.doesNotMatch(html, /<script>|<style>|\son[a-z]+=/i, 'no inline script or style');
  });

  it('serves every asset the page names, from the guard', async () => {
    const html = await (await fetch(on.endpoint, { headers: { accept: 'text/html' } })).text();
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.deepEqual(assets.sort(), [
      '/data/sparql/ui/page.css',
      '/data/sparql/ui/page.js',
      '/data/sparql/ui/yasgui.min.css',
      '/data/sparql/ui/yasgui.min.js',
    ]);
    for (const asset of assets) {
      const response = await fetch(new URL(asset, on.guard.url));
      const body = await response.arrayBuffer();
      assert.equal(response.status, 200, asset);
      assert.match(response.headers.get('content-type') ?? '', asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      assert.ok(body.byteLength > 500, asset);
    }
    const missing = await fetch(new URL('/data/sparql/ui/../../../package.json', on.guard.url));
    assert.equal(missing.status, 404);
    assert.equal((await fetch(new URL('/data/sparql/ui/%2e%2e%2fpackage.json', on.guard.url))).status, 404);
  });

  it('redirects / to the page, and leaves protocol requests alone', async () => {
    const root = await fetch(`${on.guard.url}/`, { redirect: 'manual', headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
    assert.equal(root.status, 302);
    assert.equal(root.headers.get('location'), '/data/sparql');
    // Any other client gets the contract's 404 for a path it does not know.
    const plain = await fetch(`${on.guard.url}/`, { redirect: 'manual' });
    assert.equal(plain.status, 404);
    await plain.arrayBuffer();
    const post = await fetch(on.endpoint, { method: 'POST', headers: { accept: 'text/html' } });
    assert.equal(post.status, 415);
    const query = await fetch(`${on.endpoint}?query=${encodeURIComponent('ASK {}')}`, { headers: { accept: 'text/html' } });
    assert.notEqual(query.headers.get('content-type')?.startsWith('text/html'), true, 'a query is never answered with the page');
    await query.arrayBuffer();
  });

  it('with ui false: the 400 and 404 of before, no assets', async () => {
    const page = await fetch(off.endpoint, { headers: { accept: BROWSER_ACCEPT } });
    assert.equal(page.status, 400);
    assert.equal(await page.text(), 'the query parameter is missing\n');
    assert.equal((await fetch(`${off.guard.url}/`)).status, 404);
    assert.equal((await fetch(`${off.endpoint}/ui/page.js`)).status, 404);
  });
});
