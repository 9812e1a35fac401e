// The store's time bounds hold as the docs word them below one second: "no headers within timeoutMs" and "silent for more
// than timeoutMs" (a stub store, since a real one cannot be made to pause on demand).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';

/** Below undici's own timer resolution (one second). */
const TIMEOUT_MS = 900;
/** Each pause of the store: well under TIMEOUT_MS. */
const GAP_MS = 550;

describe(`a store that pauses ${GAP_MS} ms under a bound of ${TIMEOUT_MS} ms`, () => {
  let server: Server;
  let t: TestGuard;
  let mode: 'drip' | 'late' = 'drip';
  before(async () => {
    server = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += String(chunk);
      const query = new URLSearchParams(body).get('query') ?? '';
      if (/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query)) {
        response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
        response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
        return;
      }
      if (mode === 'late') {
        setTimeout(() => response.writeHead(200, { 'content-type': 'text/plain' }).end('late but in time\n'), GAP_MS);
        return;
      }
      response.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const timer = setInterval(() => {
        sent += 1;
        if (sent < 4) response.write(`chunk ${sent}\n`);
        else {
          clearInterval(timer);
          response.end('end\n');
        }
      }, GAP_MS);
      response.once('close', () => clearInterval(timer));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`;
    t = await startTestGuard({ upstream: url, timeoutMs: TIMEOUT_MS });
  });
  after(async () => {
    await t?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });

  const ask = async (): Promise<{ status: number; body: string }> => {
    const response = await fetch(`${t.endpoint}?query=${encodeURIComponent('SELECT * WHERE { ?s ?p ?o }')}`, {
      headers: { 'x-api-key': KEYS.beta },
    });
    return { status: response.status, body: await response.text().catch((error: Error) => `cut: ${String(error.cause)}`) };
  };

  it('passes the whole answer on: the store was never silent for the bound', async () => {
    mode = 'drip';
    // The guard cut it as "upstream went silent for more than 900 ms" after a pause of 550 ms.
    for (let i = 0; i < 2; i += 1) assert.deepEqual(await ask(), { status: 200, body: 'chunk 1\nchunk 2\nchunk 3\nend\n' });
    assert.equal(
      t.logs.filter((line) => line.outcome === 'timeout').length,
      0,
      JSON.stringify(t.logs.filter((line) => line.outcome === 'timeout')),
    );
  });

  it('takes headers that come before the bound', async () => {
    mode = 'late';
    for (let i = 0; i < 2; i += 1) assert.deepEqual(await ask(), { status: 200, body: 'late but in time\n' });
  });
});
