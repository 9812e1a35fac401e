// Every 502 / 503 of the guard names its true cause, and readiness follows the store without traffic.

import assert from 'node:assert/strict';
import { connect, createServer } from 'node:net';
import { after, describe, it } from 'node:test';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { startFaultyStore, type FaultyStore } from './start-faulty-store.js';
import { scrapeSample as sample } from '../helpers/scrape-sample.js';

const QUERY = encodeURIComponent('SELECT * WHERE { ?s ?p ?o }');

/** A loopback port that nothing listens on (bound, then released). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('the cause in each 502 / 503', () => {
  const open: { close(): Promise<void> }[] = [];
  after(async () => {
    for (const item of open.reverse()) await item.close();
  });
  const guardFor = async (config: Record<string, unknown>): Promise<TestGuard> => {
    const t = await startTestGuard(config);
    open.push(t);
    return t;
  };
  const storeIn = async (mode: FaultyStore['mode']): Promise<FaultyStore> => {
    const store = await startFaultyStore();
    store.mode = mode;
    open.push(store);
    return store;
  };
  const answer = async (t: TestGuard) => {
    const response = await fetch(`${t.endpoint}?query=${QUERY}`);
    return { status: response.status, body: await response.text() };
  };
  const loggedError = (t: TestGuard) => t.logs.filter((line) => line.outcome !== undefined).at(-1)?.error;

  it('store unreachable: 502 naming the refusal; the log names the store (no credential) and the cause', async () => {
    const port = await freePort();
    const t = await guardFor({
      upstream: `http://127.0.0.1:${port}/sparql?tenant=x`,
      upstreamHeaders: { authorization: 'Basic c2VjcmV0LWNyZWRlbnRpYWw=' },
      timeoutMs: 2000,
    });
    assert.deepEqual(await answer(t), { status: 502, body: 'upstream unreachable (connection refused)\n' });
    const line = t.logs.findLast((each) => each.status === 502)!;
    assert.equal(line.store, `http://127.0.0.1:${port}/sparql`);
    assert.equal(line.cause, 'refused');
    assert.ok(!JSON.stringify(t.logs).includes('c2VjcmV0'), 'upstreamHeaders never reach the log');
  });

  it('a host name that does not resolve: 502 naming the lookup, cause dns in the log', async () => {
    const t = await guardFor({ upstream: 'http://no-such-store.invalid/sparql', timeoutMs: 2000 });
    assert.deepEqual(await answer(t), { status: 502, body: 'upstream unreachable (host name not found)\n' });
    const line = t.logs.findLast((each) => each.status === 502)!;
    assert.deepEqual([line.store, line.cause], ['http://no-such-store.invalid/sparql', 'dns']);
  });

  it('no answer within timeoutMs: 502 naming the bound, not a client abort', async () => {
    const store = await storeIn('silent');
    const t = await guardFor({ upstream: store.url, timeoutMs: 500 });
    assert.deepEqual(await answer(t), { status: 502, body: 'upstream did not answer within 500 ms\n' });
    assert.equal(loggedError(t), 'upstream did not answer within 500 ms');
    assert.equal(t.logs.findLast((each) => each.status === 502)?.cause, 'timeout');
  });

  it('a store that takes the connection and never answers the dataset check: 502 naming the check, not a client abort', async () => {
    const store = await storeIn('answer');
    store.silentChecks = true;
    const t = await guardFor({ upstream: store.url, timeoutMs: 500 });
    const { status, body } = await answer(t);
    assert.equal(status, 502);
    assert.equal(body, 'upstream did not answer the dataset check within 500 ms\n');
    assert.doesNotMatch(body, /aborted by the client/);
  });

  it('connection reset before the answer: sent once more (the retry counter moves by one), then 502 naming the reset', async () => {
    const store = await storeIn('reset');
    const t = await guardFor({ upstream: store.url, timeoutMs: 2000, metrics: { port: 0 } });
    const retries = async () =>
      sample(await (await fetch(`${t.guard.metricsUrl!}/metrics`)).text(), 'sparql_guard_upstream_retries_total', 'reason="closed"');
    assert.equal(await retries(), 0);
    const before = store.received;
    assert.deepEqual(await answer(t), { status: 502, body: 'upstream closed the connection before answering\n' });
    assert.equal(t.logs.findLast((each) => each.status === 502)?.cause, 'closed');
    assert.equal(store.received - before, 2, 'the query went twice, never more');
    assert.equal(await retries(), 1);
  });

  it("a store's error whose text drips on: its status within timeoutMs, not after the last drop", async () => {
    // The body's bound is on its idle gaps only; a drop every 100 ms for a minute never trips it.
    const store = await storeIn('drip-error');
    const t = await guardFor({ upstream: store.url, timeoutMs: 500 });
    const response = await fetch(`${t.endpoint}?query=${QUERY}`, { signal: AbortSignal.timeout(20_000) });
    assert.equal(response.status, 500);
    assert.equal(await response.text(), "the store answered HTTP 500 to the query as forwarded; its message is in the guard's log\n");
    assert.match(String(t.logs.find((line) => line.event === 'store-error')?.text), /^ +$/, 'what arrived of the text is logged');
  });

  it('an answer cut by the store: a truncated stream logged upstream-cut with the reason', async () => {
    const store = await storeIn('cut');
    const t = await guardFor({ upstream: store.url, timeoutMs: 2000 });
    const response = await fetch(`${t.endpoint}?query=${QUERY}`);
    assert.equal(response.status, 200);
    await assert.rejects(response.text());
    await waitUntil(() => t.logs.some((line) => line.outcome === 'upstream-cut'));
    assert.equal(t.logs.find((line) => line.outcome === 'upstream-cut')?.error, 'upstream closed the connection');
    assert.equal(t.logs.find((line) => line.outcome === 'upstream-cut')?.cause, 'closed');
  });

  it('an answer cut by the store, to an HTTP/1.0 caller (framed by the close): the connection is reset, never closed as if complete', async () => {
    // Without a length or chunks (HTTP/1.0 has none; nginx's default proxy_http_version is 1.0)
    // the end of the answer is the end of the connection: only a reset tells a cut one apart.
    const store = await storeIn('cut');
    const t = await guardFor({ upstream: store.url, timeoutMs: 2000 });
    const { port } = new URL(t.guard.url);
    const ending = await new Promise<{ text: string; error: string | undefined }>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1');
      let text = '';
      let error: string | undefined;
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('error', (each: NodeJS.ErrnoException) => (error = each.code));
      socket.on('close', () => resolve({ text, error }));
      socket.write(`GET /sparql?query=${QUERY} HTTP/1.0\r\nHost: guard\r\n\r\n`);
    });
    assert.match(ending.text, /^HTTP\/1\.1 200 /);
    assert.doesNotMatch(ending.text, /\r\n(content-length|transfer-encoding):/i, 'the answer is framed by the close');
    assert.equal(ending.error, 'ECONNRESET', 'a clean close would pass the cut answer off as whole');
    await waitUntil(() => t.logs.some((line) => line.outcome === 'upstream-cut'));
  });

  it('an answer cut by the store, to an HTTP/1.1 caller: the chunks end without their last one (curl says so)', async () => {
    const store = await storeIn('cut');
    const t = await guardFor({ upstream: store.url, timeoutMs: 2000 });
    const { port } = new URL(t.guard.url);
    const ending = await new Promise<{ text: string; error: string | undefined }>((resolve) => {
      const socket = connect(Number(port), '127.0.0.1');
      let text = '';
      let error: string | undefined;
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('error', (each: NodeJS.ErrnoException) => (error = each.code));
      socket.on('close', () => resolve({ text, error }));
      socket.write(`GET /sparql?query=${QUERY} HTTP/1.1\r\nHost: guard\r\n\r\n`);
    });
    assert.match(ending.text, /\r\ntransfer-encoding: chunked\r\n/i);
    assert.ok(!ending.text.endsWith('0\r\n\r\n'), 'no last chunk: the caller can tell the answer is not whole');
  });

  it('readiness follows a store that comes back within seconds, with only probes arriving', { timeout: 20_000 }, async () => {
    const port = await freePort();
    const t = await guardFor({ upstream: `http://127.0.0.1:${port}/sparql`, timeoutMs: 1000 });
    const before = await fetch(`${t.guard.url}/readyz`);
    assert.equal(before.status, 503);
    assert.match(await before.text(), /^upstream not verified: upstream unreachable \(connection refused\)\n$/);
    const store = await startFaultyStore(port);
    open.push(store);
    const cameBack = performance.now();
    // No query and no probe: the background recheck alone turns the verdict.
    await waitUntil(() => t.logs.some((line) => line.event === 'upstream-dataset-check' && line.verdict === 'honoured'), 10_000);
    const after = await fetch(`${t.guard.url}/readyz`);
    assert.equal(after.status, 200);
    assert.ok(performance.now() - cameBack < 8000);
  });
});

async function waitUntil(check: () => boolean, limitMs = 5000): Promise<void> {
  const end = performance.now() + limitMs;
  while (!check()) {
    if (performance.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
