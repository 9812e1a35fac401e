// Clients that hold a connection on purpose (slow or stalled bodies and headers, readers that stop, too many connections, malformed HTTP) are bounded in time and answered with one line.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { INTEGRATION_POLICIES } from '../helpers/start-test-guard.js';
import { listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';
import { rawRequest, stalledReader } from './raw-request.js';
import { startFaultyStore, type FaultyStore } from './start-faulty-store.js';

const QUERY = encodeURIComponent('SELECT * WHERE { ?s ?p ?o }');
const POST_HEAD = 'POST /sparql HTTP/1.1\r\nHost: guard\r\nContent-Type: application/sparql-query\r\nContent-Length: 100\r\n\r\n';

describe('a guard with tight client bounds, in front of a store that can stream forever', () => {
  let store: FaultyStore;
  let folder: ReturnType<typeof makeFolder>;
  let guard: SpawnedGuard;
  let url: string;
  before(async () => {
    store = await startFaultyStore();
    folder = makeFolder();
    guard = spawnGuard(folder.folder, {
      upstream: store.url,
      policies: [INTEGRATION_POLICIES],
      timeoutMs: 1500,
      http: { headersTimeoutMs: 500, requestTimeoutMs: 2000, idleTimeoutMs: 600, maxConnections: 4 },
    });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard.stop();
    await store.close();
    folder.remove();
  });

  /** The log lines, printed since `from`, of requests the HTTP parser refused (no method could be read). */
  // A request node's parser refused has no request object, hence no request id.
  const parserLines = (from: number) =>
    guard.lines.slice(from).filter((line) => line.outcome !== undefined && line.requestId === undefined);

  it('answers a body that stops after 6 bytes with 408 within the idle bound, and logs it as a timeout', async () => {
    const from = guard.lines.length;
    const answer = await rawRequest(url, `${POST_HEAD}SELECT`);
    assert.equal(answer.status, 408);
    assert.match(answer.headers, /content-type: text\/plain; charset=utf-8/i);
    assert.match(answer.body, /^[^\n]+\n$/);
    assert.ok(answer.closedAfterMs < 5000, `closed after ${answer.closedAfterMs} ms`);
    const line = await guard.waitFor((entry) => entry.outcome === 'timeout', from);
    assert.equal(line.status, 408);
  });

  it('answers a body sent at 5 bytes per second with 408 once the whole-request bound is over', async () => {
    const answer = await rawRequest(url, POST_HEAD, { drip: Array.from({ length: 100 }, () => 'x'), dripEveryMs: 200 });
    assert.equal(answer.status, 408);
    assert.match(answer.body, /did not arrive within 2000 ms/);
    assert.ok(answer.closedAfterMs >= 1500 && answer.closedAfterMs < 6000, `closed after ${answer.closedAfterMs} ms`);
  });

  it('answers headers that never end with 408 within the headers bound', async () => {
    const answer = await rawRequest(url, 'GET /healthz HTTP/1.1\r\nHost: guard\r\n', {
      drip: Array.from({ length: 50 }, () => 'X-A: b\r\n'),
    });
    assert.equal(answer.status, 408);
    assert.ok(answer.closedAfterMs < 4000, `closed after ${answer.closedAfterMs} ms`);
  });

  it(
    'cuts a client that stops reading a streamed answer after timeoutMs of silence, and logs how much it got',
    { timeout: 30_000 },
    async () => {
      store.mode = 'huge';
      const from = guard.lines.length;
      const reader = await stalledReader(url, `GET /sparql?query=${QUERY} HTTP/1.1\r\nHost: guard\r\n\r\n`);
      try {
        const line = await guard.waitFor((entry) => entry.method === 'GET' && entry.path === '/sparql', from, 20_000);
        assert.equal(line.outcome, 'timeout');
        assert.equal(line.status, 200);
        assert.ok(typeof line.bytes === 'number' && line.bytes > 0 && line.bytes < 64 * 1024 * 1024, `bytes ${String(line.bytes)}`);
      } finally {
        reader.close();
        store.mode = 'answer';
      }
    },
  );

  it('refuses connections past maxConnections with one 503 line, and serves again once they close', async () => {
    store.mode = 'drip';
    const held = Array.from({ length: 4 }, () => {
      const outgoing = request(`${url}/sparql?query=${QUERY}`, { agent: false });
      outgoing.on('error', () => undefined);
      outgoing.on('response', (answer) => answer.resume());
      outgoing.end();
      return outgoing;
    });
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const refused = await rawRequest(url, 'GET /healthz HTTP/1.1\r\nHost: guard\r\n\r\n');
      assert.equal(refused.status, 503);
      assert.match(refused.body, /^too many open connections \(limit 4\)[^\n]*\n$/);
    } finally {
      for (const outgoing of held) outgoing.destroy();
      store.mode = 'answer';
    }
    await new Promise((resolve) => setTimeout(resolve, 300));
    const healthy = await fetch(`${url}/healthz`);
    assert.equal(healthy.status, 200);
  });

  it('frees every stalled connection by itself: 20 stalled bodies, then /healthz answers', async () => {
    const stalled = Array.from({ length: 20 }, () => rawRequest(url, `${POST_HEAD}SEL`));
    const answers = await Promise.all(stalled);
    for (const answer of answers) assert.ok(answer.status === 408 || answer.status === 503, `status ${answer.status}`);
    assert.ok(Math.max(...answers.map((answer) => answer.closedAfterMs)) < 5000);
    // A connection counts as free once the guard's side of it has closed, a moment after the client saw it end
    // (a loaded machine once answered the first /healthz with 503 at maxConnections): freed within a second.
    let status = 0;
    for (const deadline = Date.now() + 1000; status !== 200 && Date.now() < deadline;) {
      status = (await fetch(`${url}/healthz`)).status;
      if (status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(status, 200);
  });

  it('answers malformed HTTP with one text/plain line and logs each', async () => {
    const from = guard.lines.length;
    const cases: [string | Buffer, number][] = [
      ['GET /healthz HTTP/1.1\r\nHost: guard\r\nBad\u0001Name: x\r\n\r\n', 400],
      ['POST /sparql HTTP/1.1\r\nHost: guard\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello', 400],
      [`GET /healthz HTTP/1.1\r\nHost: guard\r\nX-Padding: ${'x'.repeat(20_000)}\r\n\r\n`, 431],
      // The request line is the long part: 414, and the line says to POST (RFC 9110 section 15.5.15).
      [`GET /sparql?query=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: guard\r\n\r\n`, 414],
      [`GET http://guard/sparql?query=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: guard\r\n\r\n`, 414],
      // A method name node's parser does not know is still a method other than GET, POST, OPTIONS.
      ['FOO /sparql HTTP/1.1\r\nHost: guard\r\n\r\n', 405],
      ['get /sparql HTTP/1.1\r\nHost: guard\r\n\r\n', 405],
      ['PROPFINDX /sparql HTTP/1.1\r\nHost: guard\r\n\r\n', 405],
      // A TLS handshake names no method: malformed.
      [Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03]), 400],
    ];
    for (const [head, status] of cases) {
      const answer = await rawRequest(url, head);
      assert.equal(answer.status, status, String(head).slice(0, 40));
      assert.match(answer.headers, /content-type: text\/plain; charset=utf-8/i);
      assert.match(answer.body, /^[^\n{]+\n$/);
      if (status === 405) assert.match(answer.headers, /\r\nallow: GET, POST, OPTIONS\r\n/i);
      if (status === 414) assert.match(answer.body, /POST/);
    }
    await guard.waitFor(() => parserLines(from).length >= cases.length, from);
    assert.deepEqual(
      parserLines(from).map((line) => line.status),
      cases.map(([, status]) => status),
    );
    // The contract's fields: the method where one was read, and a duration.
    assert.deepEqual(
      parserLines(from).map((line) => line.method),
      [null, null, null, null, null, 'FOO', 'get', 'PROPFINDX', null],
    );
    for (const line of parserLines(from)) assert.equal(typeof line.durationMs, 'number', JSON.stringify(line));
  });
});
