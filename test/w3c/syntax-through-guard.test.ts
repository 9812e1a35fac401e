// W3C syntax suites over HTTP through a real guard: positives accepted and their rewrite re-parses, negatives 400, every update file 403; the store sees none of the refused ones.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parseQuery } from '../../src/sparql/parse-query.js';
import { SECURITY_DATA, send } from '../helpers/rig-stores.js';
import { startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { W3C_SKIP, W3C_SUITE, readW3cTests } from './w3c-evaluation.js';
import { EXTENSION_FUNCTION_TESTS, W3C_ALLOWED_FUNCTIONS } from './w3c-extension-functions.js';

const tests = readW3cTests();
const read = (path: string) => readFileSync(join(W3C_SUITE ?? '', path), 'utf8');
const POSITIVE = new Set(['PositiveSyntaxTest', 'PositiveSyntaxTest11']);
const NEGATIVE = new Set(['NegativeSyntaxTest', 'NegativeSyntaxTest11']);

/** An update file holding only a prologue or comments: nothing to refuse, an empty request (400). */
const EMPTY_UPDATES = ['syntax-update-1/manifest#test_38', 'syntax-update-1/manifest#test_39', 'syntax-update-1/manifest#test_40'];

/** Counts the requests that reach the store: a pass-through proxy in front of the embedded store. */
function startCountingProxy(target: () => string): Promise<{ server: Server; url: string; seen: string[] }> {
  const seen: string[] = [];
  const server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push(new URLSearchParams(body.toString()).get('query') ?? '');
      const url = new URL(target());
      const forward = httpRequest(url, { method: 'POST', headers: incoming.headers }, (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      });
      forward.end(body);
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/query`, seen })),
  );
}

describe('W3C syntax suites through the guard', { skip: W3C_SKIP }, () => {
  let store: TestGuard;
  let proxy: Awaited<ReturnType<typeof startCountingProxy>>;
  let guard: TestGuard;
  before(async () => {
    // A guard whose embedded store holds the data; a second guard goes through the counting proxy to it.
    store = await startTestGuard({ embedded: { data: [SECURITY_DATA] } });
    proxy = await startCountingProxy(() => store.guard.upstreamUrl);
    guard = await startTestGuard({ upstream: proxy.url, embedded: undefined, explain: true, allowedFunctions: W3C_ALLOWED_FUNCTIONS });
  });
  after(async () => {
    await guard?.close();
    await new Promise<void>((resolve) => proxy?.server.close(() => resolve()));
    await store?.close();
  });

  it('every positive query is accepted (SERVICE refused with 403) and its rewrite re-parses', async () => {
    const failures: string[] = [];
    const positives = tests.filter((t) => POSITIVE.has(t.type) && t.query?.endsWith('.rq'));
    for (const test of positives) {
      const text = read(test.query ?? '');
      const explained = await send(guard.endpoint, text, { suffix: '/explain', accept: 'application/json' });
      if (explained.status === 403 && /SERVICE/.test(explained.body)) continue;
      if (explained.status !== 200) {
        failures.push(`${test.id}: ${explained.status} ${explained.body.trim()}`);
        continue;
      }
      try {
        parseQuery((JSON.parse(explained.body) as { query: string }).query);
      } catch {
        failures.push(`${test.id}: the rewrite does not parse`);
      }
      const answered = await send(guard.endpoint, text);
      if (answered.status >= 500) failures.push(`${test.id}: ${answered.status} from the store`);
    }
    assert.ok(positives.length > 200, `${positives.length} positive tests`);
    assert.deepEqual(failures, []);
  });

  it('without allowedFunctions the positives calling made-up functions are 400 and never reach the store; with it they are forwarded once', async () => {
    const closed = await startTestGuard({ upstream: proxy.url, embedded: undefined });
    try {
      const before = proxy.seen.length;
      const calling = tests.filter(
        (t) => POSITIVE.has(t.type) && t.query?.endsWith('.rq') && EXTENSION_FUNCTION_TESTS.some((name) => t.id.endsWith(name)),
      );
      assert.equal(new Set(calling.map((t) => t.query)).size, EXTENSION_FUNCTION_TESTS.length);
      const failures: string[] = [];
      for (const test of calling) {
        const answer = await send(closed.endpoint, read(test.query ?? ''));
        if (answer.status !== 400) failures.push(`${test.id}: ${answer.status}`);
      }
      assert.equal(proxy.seen.length, before, 'the store saw a refused query');
      for (const test of calling) {
        // With the allow-list the query is forwarded; Oxigraph itself answers 400 for a function it lacks.
        const explained = await send(guard.endpoint, read(test.query ?? ''), { suffix: '/explain', accept: 'application/json' });
        if (explained.status !== 200) failures.push(`${test.id} with allowedFunctions: explain ${explained.status}`);
        const answered = await send(guard.endpoint, read(test.query ?? ''));
        if (answered.status >= 500) failures.push(`${test.id} with allowedFunctions: ${answered.status} from the store`);
      }
      assert.deepEqual(failures, []);
      assert.equal(proxy.seen.length, before + calling.length, 'the store saw each allowed query once');
    } finally {
      await closed.close();
    }
  });

  it('every negative query is 400 and never reaches the store', async () => {
    const before = proxy.seen.length;
    const failures: string[] = [];
    const negatives = tests.filter((t) => NEGATIVE.has(t.type) && t.query?.endsWith('.rq'));
    for (const test of negatives) {
      const answer = await send(guard.endpoint, read(test.query ?? ''));
      if (answer.status !== 400) failures.push(`${test.id}: ${answer.status}`);
    }
    assert.ok(negatives.length > 70, `${negatives.length} negative tests`);
    assert.deepEqual(failures, []);
    assert.equal(proxy.seen.length, before, 'the store saw a request');
  });

  it('every update file is 403 as query=, as application/sparql-update and as update=, and never reaches the store', async () => {
    const before = proxy.seen.length;
    const files = [
      ...new Set(
        tests
          .filter((t) => t.query?.endsWith('.ru'))
          .map((t) => [t.id, t.query ?? ''] as const)
          .map(([id, q]) => JSON.stringify([id, q])),
      ),
    ].map((entry) => JSON.parse(entry) as [string, string]);
    const failures: string[] = [];
    for (const [id, file] of files) {
      const text = read(file);
      const asQuery = await send(guard.endpoint, text);
      const expected = EMPTY_UPDATES.some((suffix) => id.endsWith(suffix)) ? 400 : 403;
      if (asQuery.status !== expected) failures.push(`${id} as query=: ${asQuery.status}`);
      const direct = await send(guard.endpoint, text, { method: 'direct', headers: { 'content-type': 'application/sparql-update' } });
      if (direct.status !== 403) failures.push(`${id} as sparql-update: ${direct.status}`);
      const asUpdate = await send(guard.endpoint, undefined, { params: { update: [text] } });
      if (asUpdate.status !== 403) failures.push(`${id} as update=: ${asUpdate.status}`);
    }
    assert.ok(files.length > 140, `${files.length} update tests`);
    assert.deepEqual(failures, []);
    assert.equal(proxy.seen.length, before, 'the store saw a request');
  });
});
