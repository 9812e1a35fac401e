// Exactly one log line per request, however it ended, under a mixed load with disconnects, cuts and timeouts.

import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { INTEGRATION_POLICIES } from '../helpers/start-test-guard.js';
import { listeningUrl, makeFolder, spawnGuard, type SpawnedGuard } from '../helpers/spawn-guard.js';
import { rawRequest } from './raw-request.js';
import { startFaultyStore, type FaultyStore } from './start-faulty-store.js';

const QUERY = encodeURIComponent('SELECT * WHERE { ?s ?p ?o }');

/** A GET that the client abandons once `afterBytes` bytes of the answer have arrived. */
function abandonedGet(url: string, afterBytes: number): Promise<void> {
  return new Promise((resolve) => {
    let seen = 0;
    const outgoing = request(url, { agent: false }, (answer) => {
      answer.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (seen >= afterBytes) outgoing.destroy();
      });
      answer.on('close', () => resolve());
    });
    outgoing.on('error', () => resolve());
    outgoing.end();
  });
}

describe('the request log under a mixed load', () => {
  let store: FaultyStore;
  const folder = makeFolder();
  let guard: SpawnedGuard;
  let url: string;
  before(async () => {
    store = await startFaultyStore();
    guard = spawnGuard(folder.folder, {
      upstream: store.url,
      policies: [INTEGRATION_POLICIES],
      timeoutMs: 2000,
      http: { idleTimeoutMs: 500 },
    });
    url = await listeningUrl(guard);
  });
  after(async () => {
    await guard.stop();
    await store.close();
    folder.remove();
  });

  it(
    'writes one line per request with its outcome and bytes: completed, client-closed, upstream-cut, timeout, refused by the parser, CONNECT',
    { timeout: 60_000 },
    async () => {
      const from = guard.lines.length;
      const endpoint = `${url}/sparql?query=${QUERY}`;
      store.mode = 'answer';
      await Promise.all(Array.from({ length: 30 }, async () => (await fetch(endpoint)).text()));
      store.mode = 'drip';
      await Promise.all(Array.from({ length: 8 }, () => abandonedGet(endpoint, 3)));
      store.mode = 'cut';
      await Promise.all(
        Array.from({ length: 6 }, () =>
          fetch(endpoint)
            .then((r) => r.text())
            .catch(() => undefined),
        ),
      );
      store.mode = 'answer';
      const stalled = 'POST /sparql HTTP/1.1\r\nHost: guard\r\nContent-Type: application/sparql-query\r\nContent-Length: 50\r\n\r\nSEL';
      await Promise.all(Array.from({ length: 5 }, () => rawRequest(url, stalled)));
      await Promise.all(
        Array.from({ length: 4 }, () =>
          rawRequest(url, 'GET /healthz HTTP/1.1\r\nHost: guard\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n'),
        ),
      );
      // CONNECT, which node hands to its own event: a 405 and one line each.
      await Promise.all(Array.from({ length: 3 }, () => rawRequest(url, 'CONNECT store:7878 HTTP/1.1\r\nHost: store:7878\r\n\r\n')));
      // Requests that are not aborted by the test: 30 + 8 + 6 + 5 + 4 + 3 = 56.
      const requestLines = () => guard.lines.slice(from).filter((line) => line.outcome !== undefined);
      const end = performance.now() + 10_000;
      while (requestLines().length < 56 && performance.now() < end) await new Promise((resolve) => setTimeout(resolve, 100));
      await new Promise((resolve) => setTimeout(resolve, 500)); // and no extra line after them
      const counts: Record<string, number> = {};
      for (const line of requestLines()) counts[String(line.outcome)] = (counts[String(line.outcome)] ?? 0) + 1;
      assert.deepEqual(counts, { completed: 37, 'client-closed': 8, 'upstream-cut': 6, timeout: 5 });
      const connects = requestLines().filter((line) => line.method === 'CONNECT');
      assert.deepEqual(
        connects.map((line) => [line.status, line.code]),
        Array.from({ length: 3 }, () => [405, 'method_not_allowed']),
      );
      for (const line of requestLines()) assert.equal(typeof line.bytes, 'number');
      const cut = requestLines().filter((line) => line.outcome !== 'completed');
      for (const line of cut.filter((entry) => entry.outcome !== 'timeout')) assert.ok((line.bytes as number) > 0, 'the answer had begun');
    },
  );
});
