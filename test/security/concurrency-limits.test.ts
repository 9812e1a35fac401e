// Attacks on guard:maxConcurrent: callers (API key, JWT) that drop their connections at every moment of the pipeline never get more queries running in the store than their limit.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { KEYS, sha256, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startTestIssuer, type TestIssuer } from '../helpers/start-test-issuer.js';

const LIMIT = 2;
const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-concurrency-'));
const POLICIES = join(folder, 'limits.ttl');
writeFileSync(
  POLICIES,
  `@prefix guard: <https://w3id.org/sparql-guard#> .
@prefix g: <http://example.org/graphs/> .
@prefix p: <http://example.org/policies/> .
p:beta a guard:Policy ; guard:group "beta" ; guard:readGraph g:b ; guard:maxConcurrent ${LIMIT} ; guard:timeoutMs 60000 .
p:jwt a guard:Policy ; guard:agent <http://example.org/agents/jwt-user> ; guard:readGraph g:b ; guard:maxConcurrent ${LIMIT} .
`,
);
after(() => rmSync(folder, { recursive: true, force: true }));

const QUERY = 'SELECT ?s WHERE { ?s ?p ?o }';

/**
 * A slow store that counts the guard's queries it is running at once: from the request's
 * arrival until its answer is sent or its connection closes. It answers the guard's dataset
 * check at once, as an honest store. Slowness is the fault forced here; the counting is the point.
 */
interface CountingStore {
  readonly url: string;
  /** Queries received (the dataset check not counted). */
  received: number;
  inFlight: number;
  maxInFlight: number;
  /** How long a query takes to answer. */
  delayMs: number;
  /** Resolves when a query arrives. */
  nextQuery(): Promise<{ closed: Promise<number> }>;
  close(): Promise<void>;
}

async function startCountingStore(): Promise<CountingStore> {
  const waiting: ((arrived: { closed: Promise<number> }) => void)[] = [];
  let server: Server;
  const store: CountingStore = {
    url: '',
    received: 0,
    inFlight: 0,
    maxInFlight: 0,
    delayMs: 400,
    nextQuery: () => new Promise((resolve) => waiting.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      const query = new URLSearchParams(body).get('query') ?? '';
      if (query.startsWith('ASK') && query.includes('urn:x-sparql-guard:empty')) {
        response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
        response.end(JSON.stringify({ head: {}, boolean: /WHERE \{\s*\}$/.test(query.trim()) }));
        return;
      }
      store.received += 1;
      store.inFlight += 1;
      store.maxInFlight = Math.max(store.maxInFlight, store.inFlight);
      const arrivedAt = performance.now();
      const socket = request.socket;
      // The query ends when its answer is sent, or when the store reads the guard's FIN: the
      // response's 'close' comes a few turns of the event loop after that, so counting until
      // then would count a query the guard has already ended beside the one it sends next.
      const closed = new Promise<number>((resolve) => {
        const ended = () => {
          response.off('close', ended);
          socket.off('end', ended);
          store.inFlight -= 1;
          resolve(performance.now() - arrivedAt);
        };
        response.once('close', ended);
        socket.once('end', ended);
      });
      waiting.shift()?.({ closed });
      setTimeout(() => {
        if (response.destroyed) return;
        response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
        response.end('{"head":{"vars":["s"]},"results":{"bindings":[]}}');
      }, store.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(store, { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql` });
}

/**
 * Sends one query on a raw connection and drops the connection `dropAfterMs` after the last
 * byte is written: with FIN, or with RST when `reset` (both are ways clients leave).
 */
function sendAndDrop(endpoint: string, authorization: string, dropAfterMs: number, reset: boolean): Promise<void> {
  const url = new URL(endpoint);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `GET ${url.pathname}?query=${encodeURIComponent(QUERY)} HTTP/1.1\r\nHost: ${url.host}\r\n` +
          `Authorization: ${authorization}\r\nAccept: application/sparql-results+json\r\n\r\n`,
        () => {
          const drop = () => {
            if (reset) socket.resetAndDestroy();
            else socket.destroy();
            resolve();
          };
          if (dropAfterMs === 0) drop();
          else setTimeout(drop, dropAfterMs);
        },
      );
    });
    socket.on('error', () => resolve());
  });
}

/** The value of the sample `name` (with its labels as written) in a scrape, 0 when absent. */
function sample(scrape: string, name: string): number {
  const line = scrape.split('\n').find((each) => each.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits (bounded) until the store runs none of the guard's queries. */
async function storeIdle(store: CountingStore, boundMs = 5000): Promise<void> {
  const until = performance.now() + boundMs;
  while (store.inFlight > 0 && performance.now() < until) await sleep(20);
  assert.equal(store.inFlight, 0, 'the store still runs queries of clients that left');
}

/**
 * Waits (bounded) until the guard has logged `count` requests on `endpoint` after the first
 * `from` lines of its log: it has read every dropped client's request and seen that client
 * leave. The store being idle does not say so: with an API key nothing is awaited between
 * reading a request and taking its slot, so a client whose FIN or RST the guard has not read
 * yet holds a slot until it does (a few ms), and a storm of them can still be queued in the
 * guard when the test's own connections already came back.
 */
async function guardCaughtUp(t: TestGuard, from: number, count: number, boundMs = 5000): Promise<void> {
  const path = new URL(t.endpoint).pathname;
  const until = performance.now() + boundMs;
  while (t.logs.slice(from).filter((line) => line.path === path).length < count && performance.now() < until) await sleep(20);
}

/** The caller's limit is whole again: LIMIT queries at once all answered (none refused with 429). */
async function limitIsWhole(endpoint: string, authorization: () => Promise<string> | string): Promise<void> {
  const statuses = await Promise.all(
    Array.from({ length: LIMIT }, async () => {
      const response = await fetch(`${endpoint}?query=${encodeURIComponent(QUERY)}`, { headers: { authorization: await authorization() } });
      await response.text();
      return response.status;
    }),
  );
  assert.deepEqual(statuses, Array(LIMIT).fill(200), 'no slot was left taken by a departed client');
}

describe('guard:maxConcurrent holds whatever the client does', () => {
  let store: CountingStore;
  let issuer: TestIssuer;
  let t: TestGuard;
  before(async () => {
    store = await startCountingStore();
    issuer = await startTestIssuer();
    t = await startTestGuard({
      policies: [POLICIES],
      upstream: store.url,
      embedded: undefined,
      timeoutMs: 10_000,
      metrics: { port: 0 },
      auth: {
        apiKeys: [{ agent: 'http://example.org/agents/beta-user', groups: ['beta'], sha256: sha256(KEYS.beta) }],
        jwt: {
          issuer: issuer.issuer,
          audience: issuer.audience,
          jwksUri: issuer.jwksUri,
          agentPrefix: 'http://example.org/agents/',
          // Verification every time: no token is remembered.
          cacheMaxEntries: 0,
          jwksRefreshCooldownMs: 1000,
        },
      },
    });
    // The guard's dataset check runs on the first query; let it pass before the attacks.
    const first = await fetch(`${t.endpoint}?query=${encodeURIComponent(QUERY)}`, { headers: { authorization: `Bearer ${KEYS.beta}` } });
    assert.equal(first.status, 200, await first.text());
    store.received = 0;
    store.maxInFlight = 0;
  });
  after(async () => {
    await t.close();
    await Promise.all([store.close(), issuer.close()]);
  });

  const fresh = () => issuer.sign({ claims: { sub: 'jwt-user', jti: String(Math.random()) } });

  for (const caller of ['API key', 'JWT, a fresh token per request, verified every time'] as const) {
    it(`${caller}: 100 queries dropped 0 to 3 ms after sending never run more than ${LIMIT} at once, and free their slots`, async () => {
      store.maxInFlight = 0;
      const tokens = caller === 'API key' ? [] : await Promise.all(Array.from({ length: 100 }, fresh));
      const authorization = (i: number) => (caller === 'API key' ? `Bearer ${KEYS.beta}` : `Bearer ${tokens[i]}`);
      const logged = t.logs.length;
      await Promise.all(Array.from({ length: 100 }, (_, i) => sendAndDrop(t.endpoint, authorization(i), i % 4, i % 3 === 0)));
      await guardCaughtUp(t, logged, 100);
      await storeIdle(store);
      assert.ok(store.maxInFlight <= LIMIT, `the store ran ${store.maxInFlight} of the caller's queries at once`);
      await limitIsWhole(t.endpoint, caller === 'API key' ? () => `Bearer ${KEYS.beta}` : async () => `Bearer ${await fresh()}`);
    });
  }

  it("a query whose client left while the issuer's key set was being fetched never reaches the store", async () => {
    const rotated = await issuer.rotate();
    issuer.delayJwks(600);
    // Past the refresh cooldown: the unknown kid makes the guard fetch the key set again.
    await sleep(1100);
    const tokens = await Promise.all(Array.from({ length: 20 }, () => issuer.sign({ key: rotated, claims: { sub: 'jwt-user' } })));
    const before = store.received;
    const fetchesBefore = issuer.jwksRequests();
    await Promise.all(tokens.map((token, i) => sendAndDrop(t.endpoint, `Bearer ${token}`, i % 4, i % 2 === 0)));
    await sleep(1500);
    assert.ok(issuer.jwksRequests() > fetchesBefore, 'the key set was fetched while the clients left');
    assert.equal(store.received - before, 0, 'no query of a departed client was forwarded');
    issuer.delayJwks(0);
    await limitIsWhole(t.endpoint, async () => `Bearer ${await issuer.sign({ claims: { sub: 'jwt-user' } })}`);
  });

  it('the metrics count each refusal past the limit, and the requests in flight are the ones the store runs', async () => {
    const scrape = async () => (await fetch(`${t.guard.metricsUrl}/metrics`)).text();
    const refused = 'sparql_guard_queries_total{outcome="too_many_requests"}';
    const answered = 'sparql_guard_queries_total{outcome="answered"}';
    const before = await scrape();
    store.delayMs = 5000;
    const arrivals = [store.nextQuery(), store.nextQuery()];
    const responses = Array.from({ length: 4 * LIMIT }, () =>
      fetch(`${t.endpoint}?query=${encodeURIComponent(QUERY)}`, { headers: { authorization: `Bearer ${KEYS.beta}` } }).then(
        async (response) => {
          await response.text();
          return response.status;
        },
      ),
    );
    await Promise.all(arrivals);
    // The refused ones are answered at once; the two the store holds are still in flight.
    const settled = await Promise.all(responses.map((response) => Promise.race([response, sleep(3000).then(() => 0)])));
    const held = await scrape();
    assert.equal(settled.filter((status) => status === 429).length, 3 * LIMIT, JSON.stringify(settled));
    assert.equal(sample(held, refused) - sample(before, refused), 3 * LIMIT);
    assert.equal(sample(held, 'sparql_guard_in_flight_requests'), LIMIT);
    const statuses = await Promise.all(responses);
    assert.equal(statuses.filter((status) => status === 200).length, LIMIT);
    // Counted when each response closes, a moment after its client has read it: waited for, bounded.
    let after = await scrape();
    for (let tries = 0; tries < 50 && sample(after, 'sparql_guard_in_flight_requests') > 0; tries++) {
      await sleep(20);
      after = await scrape();
    }
    assert.equal(sample(after, answered) - sample(before, answered), LIMIT);
    assert.equal(sample(after, refused) - sample(before, refused), 3 * LIMIT);
    assert.equal(sample(after, 'sparql_guard_in_flight_requests'), 0);
    store.delayMs = 400;
  });

  it('a forwarded query whose client leaves has its store connection closed at once', async () => {
    store.delayMs = 3000;
    const arrived = store.nextQuery();
    const controller = new AbortController();
    const pending = fetch(`${t.endpoint}?query=${encodeURIComponent(QUERY)}`, {
      headers: { authorization: `Bearer ${KEYS.beta}` },
      signal: controller.signal,
    }).catch(() => undefined);
    const { closed } = await arrived;
    const leftAt = performance.now();
    const openFor = closed.then(() => performance.now() - leftAt);
    controller.abort();
    await pending;
    const closedAfterMs = await openFor;
    assert.ok(closedAfterMs < 1000, `the store's connection stayed open ${Math.round(closedAfterMs)} ms after the client left`);
    store.delayMs = 400;
    await limitIsWhole(t.endpoint, () => `Bearer ${KEYS.beta}`);
  });
});
