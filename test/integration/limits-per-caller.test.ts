// Proves the limits per caller set by policies: result cap (a LIMIT, visible in explain), timeout tier, and concurrency per agent with 429.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KEYS, select, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-limits-'));
const POLICIES = join(folder, 'limits.ttl');
writeFileSync(
  POLICIES,
  `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix g: <http://example.org/graphs/> .
@prefix p: <http://example.org/policies/> .
p:everyone a guard:Policy ; guard:agent guard:Everyone ; guard:readGraph g:a ; guard:resultLimit 2 ; guard:timeoutMs 300 .
p:beta a guard:Policy ; guard:group "beta" ; guard:readGraph g:b ; guard:resultLimit 4 ; guard:maxConcurrent 2 ; guard:timeoutMs 60000 .
p:keeper a guard:Policy ; guard:agent <http://example.org/agents/keeper> ; guard:readGraph g:a, g:b ;
  guard:resultLimit 100 ; guard:timeoutMs 60000 ; guard:maxConcurrent 1 .
`,
);
after(() => rmSync(folder, { recursive: true, force: true }));

const THINGS = 'PREFIX ex: <http://example.org/ns#>\nSELECT ?s WHERE { ?s a ex:Thing }';
const asKey = (key: string) => ({ authorization: `Bearer ${key}` });

describe('result cap: a LIMIT per caller, the largest of its policies', () => {
  let t: TestGuard;
  before(async () => {
    t = await startTestGuard({ policies: [POLICIES], explain: true });
  });
  after(async () => {
    await t.close();
  });

  it("caps each caller at its policies' largest resultLimit, against the real store", async () => {
    assert.equal((await select(t.endpoint, THINGS)).rows.length, 2, 'anonymous: Everyone caps at 2 of 3');
    assert.equal((await select(t.endpoint, THINGS, { key: KEYS.beta })).rows.length, 4, 'beta: max(2, 4) of 5');
    assert.equal((await select(t.endpoint, THINGS, { key: KEYS.keeper })).rows.length, 5, 'keeper: 100, all 5');
  });

  it('keeps a smaller LIMIT of the query, lowers a larger one, and keeps OFFSET', async () => {
    assert.equal((await select(t.endpoint, `${THINGS} LIMIT 1`)).rows.length, 1);
    assert.equal((await select(t.endpoint, `${THINGS} LIMIT 50`)).rows.length, 2);
    const paged = await select(t.endpoint, `${THINGS} ORDER BY ?s OFFSET 1 LIMIT 3`, { key: KEYS.keeper });
    assert.deepEqual(
      paged.rows.map((row) => row.s),
      ['http://example.org/ns#a2', 'http://example.org/ns#a3', 'http://example.org/ns#b1'],
    );
  });

  it('shows the LIMIT in explain, and the plan cache serves each caller its own cap', async () => {
    const explain = async (query: string, headers: Record<string, string> = {}) => {
      const response = await fetch(`${t.endpoint}/explain?query=${encodeURIComponent(query)}`, { headers });
      assert.equal(response.status, 200);
      return ((await response.json()) as { query: string }).query;
    };
    for (let round = 0; round < 2; round += 1) {
      assert.match(await explain(`${THINGS} LIMIT 50`), /\nLIMIT 2$/);
      assert.match(await explain(`${THINGS} LIMIT 50`, asKey(KEYS.beta)), /\nLIMIT 4$/);
      assert.match(await explain(`${THINGS} LIMIT 50`, asKey(KEYS.keeper)), /\nLIMIT 50$/);
      assert.match(await explain(`${THINGS} OFFSET 1`, asKey(KEYS.keeper)), /OFFSET 1\nLIMIT 100$/);
    }
    const ask = await explain('PREFIX ex: <http://example.org/ns#>\nASK { ?s a ex:Thing }');
    assert.doesNotMatch(ask, /LIMIT/, 'an ASK is not capped');
    const construct = await explain('PREFIX ex: <http://example.org/ns#>\nCONSTRUCT { ?s a ex:Thing } WHERE { ?s a ex:Thing }');
    assert.match(construct, /\nLIMIT 2$/);
  });

  it("caps a DESCRIBE's triples, not its resources (docs/design/policy.md, 'Limits per caller')", async () => {
    const describe = 'PREFIX ex: <http://example.org/ns#>\nDESCRIBE ?s WHERE { ?s a ex:Thing }';
    const capped = await fetch(`${t.endpoint}?query=${encodeURIComponent(describe)}`, { headers: { accept: 'application/n-triples' } });
    assert.equal(capped.status, 200);
    assert.equal((await capped.text()).trim().split('\n').length, 2, 'anonymous: at most 2 triples');
    const whole = await fetch(`${t.endpoint}?query=${encodeURIComponent(describe)}`, {
      headers: { accept: 'application/n-triples', ...asKey(KEYS.keeper) },
    });
    assert.ok((await whole.text()).trim().split('\n').length >= 5, 'keeper: every Thing described');
  });

  it("refuses a capped caller's query that ends in VALUES (no LIMIT can follow it)", async () => {
    const response = await fetch(`${t.endpoint}?query=${encodeURIComponent(`${THINGS} VALUES ?s { <http://example.org/ns#a1> }`)}`);
    assert.equal(response.status, 403);
    assert.match(
      await response.text(),
      /^a query ending in a VALUES clause cannot be held to this caller's result limit of 2; move the VALUES block into WHERE\n$/,
    );
  });
});

describe('timeout tier and concurrency per agent, in front of a slow store', () => {
  let store: Server;
  let t: TestGuard;
  let delayMs = 0;
  let streamForever = false;
  const streaming = new Set<ServerResponse>();
  before(async () => {
    // A store that answers the dataset check at once and every query after `delayMs`: slowness is the fault forced here.
    store = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        const query = new URLSearchParams(body).get('query') ?? '';
        const probe = query.startsWith('ASK') && query.includes('urn:x-sparql-guard:empty');
        const answer = () => {
          if (response.destroyed) return;
          response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
          response.end(
            JSON.stringify(
              probe ? { head: {}, boolean: /WHERE \{\s*\}$/.test(query.trim()) } : { head: { vars: [] }, results: { bindings: [] } },
            ),
          );
        };
        if (streamForever && !probe) {
          // Headers and a first chunk at once, then nothing: an answer under way when the client leaves.
          response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
          response.write('{"head":{"vars":["s"]},"results":{"bindings":[' + ' '.repeat(64 * 1024));
          streaming.add(response);
          return;
        }
        if (probe || delayMs === 0) answer();
        else setTimeout(answer, delayMs);
      });
    });
    await new Promise<void>((done) => store.listen(0, '127.0.0.1', done));
    const upstream = `http://127.0.0.1:${(store.address() as AddressInfo).port}/sparql`;
    t = await startTestGuard({ policies: [POLICIES], upstream, embedded: undefined, timeoutMs: 5000 });
  });
  after(async () => {
    for (const response of streaming) response.destroy();
    await t.close();
    store.closeAllConnections();
    await new Promise<void>((done) => store.close(() => done()));
  });

  const query = (headers: Record<string, string> = {}) => fetch(`${t.endpoint}?query=${encodeURIComponent(THINGS)}`, { headers });
  /**
   * The keeper's status once its one slot is free: the slot is released where the request's end
   * is logged, so the close may take a moment to travel on a loaded machine (bounded: 4 s).
   */
  const keeperStatusOnceFree = async (): Promise<number> => {
    let status = 0;
    for (let attempt = 0; attempt < 40 && status !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      const next = await query(asKey(KEYS.keeper));
      status = next.status;
      await next.text();
    }
    return status;
  };

  it('gives the anonymous caller its 300 ms tier and the keeper its longer one (the global timeoutMs is the ceiling)', async () => {
    delayMs = 1000;
    const [anonymous, keeper] = await Promise.all([query(), query(asKey(KEYS.keeper))]);
    assert.equal(anonymous.status, 502);
    assert.equal(await anonymous.text(), 'upstream did not answer within 300 ms\n');
    assert.equal(keeper.status, 200, await keeper.clone().text());
    await keeper.text();
  });

  it("answers 429 with Retry-After past an agent's maxConcurrent, counts agents apart, and frees the slot when a query ends", async () => {
    delayMs = 600;
    const first = query(asKey(KEYS.keeper));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const [second, beta] = await Promise.all([query(asKey(KEYS.keeper)), query(asKey(KEYS.beta))]);
    assert.equal(second.status, 429);
    assert.equal(second.headers.get('retry-after'), '1');
    assert.match(second.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await second.text(), 'this caller already has 1 query running (its limit); retry later\n');
    assert.equal(beta.status, 200, 'another agent is not counted with the keeper');
    await beta.text();
    assert.equal((await first).status, 200);
    await (await first).text();
    delayMs = 0;
    const third = await query(asKey(KEYS.keeper));
    assert.equal(third.status, 200, 'the slot is free again once the query ended');
    await third.text();
  });

  it('frees the slot when the client goes away mid-query', async () => {
    delayMs = 2000;
    const abort = new AbortController();
    const gone = fetch(`${t.endpoint}?query=${encodeURIComponent(THINGS)}`, { headers: asKey(KEYS.keeper), signal: abort.signal }).catch(
      () => undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    abort.abort();
    await gone;
    delayMs = 0;
    assert.equal(await keeperStatusOnceFree(), 200, 'the slot is free once the client left');
  });

  it('frees the slot when the client goes away while the answer streams', async () => {
    delayMs = 0;
    streamForever = true;
    const abort = new AbortController();
    const gone = await fetch(`${t.endpoint}?query=${encodeURIComponent(THINGS)}`, { headers: asKey(KEYS.keeper), signal: abort.signal });
    assert.equal(gone.status, 200);
    const reader = gone.body!.getReader();
    assert.ok(((await reader.read()).value?.length ?? 0) > 0, 'the answer is under way');
    const busy = await query(asKey(KEYS.keeper));
    assert.equal(busy.status, 429, "the streaming answer holds the keeper's one slot");
    await busy.text();
    abort.abort();
    await reader.read().catch(() => undefined);
    streamForever = false;
    assert.equal(await keeperStatusOnceFree(), 200, 'the slot is free once the client left mid-stream');
  });
});
