// HTTP tests through the whole app: status codes, headers, CORS, logging, content negotiation.

import assert from 'node:assert/strict';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { ERROR_CODE_HEADER, GUARD_CODES, type GuardCode } from '../../src/guard-error.js';
import { KEYS, startTestGuard, type TestGuard } from '../helpers/start-test-guard.js';
import { rawRequest } from '../reliability/raw-request.js';
import { startStubStore } from '../helpers/start-stub-store.js';

const SELECT = 'SELECT * WHERE { ?s ?p ?o } LIMIT 1';
const CONSTRUCT = 'CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 1';

let t: TestGuard;
before(async () => {
  t = await startTestGuard({ explain: true, cors: { origins: ['https://app.example', 'https://other.example'] } });
});
after(async () => {
  await t.close();
});

const get = (query: string, headers: Record<string, string> = {}) => fetch(`${t.endpoint}?query=${encodeURIComponent(query)}`, { headers });

/** Asserts an error of the guard: its code and that code's status, one line of text/plain. */
async function expectError(response: Response, code: GuardCode): Promise<string> {
  const body = await response.text();
  assert.equal(response.status, GUARD_CODES[code], body);
  assert.equal(response.headers.get(ERROR_CODE_HEADER), code, body);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
  assert.match(body, /^[^\n]+\n$/, 'one line');
  return body;
}

describe('health', () => {
  it('answers 200 ok without credentials and never contacts the store', async () => {
    const response = await fetch(`${t.guard.url}/healthz`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), 'ok');
  });
});

describe('paths and methods', () => {
  it('404 for an unknown path, 405 with Allow for another method', async () => {
    await expectError(await fetch(`${t.guard.url}/nope`), 'not_found');
    await expectError(await fetch(`${t.endpoint}/`), 'not_found');
    for (const method of ['PUT', 'DELETE', 'PATCH']) {
      const response = await fetch(t.endpoint, { method });
      await expectError(response, 'method_not_allowed');
      assert.equal(response.headers.get('allow'), 'GET, POST, OPTIONS');
    }
    const head = await fetch(t.endpoint, { method: 'HEAD' });
    assert.equal(head.status, 405);
  });

  it('413 for a body over 1 MiB, 415 for other media types', async () => {
    const big = await fetch(t.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/sparql-query' },
      body: `${SELECT} #${'x'.repeat(1024 * 1024)}`,
    });
    await expectError(big, 'too_large');
    const json = await fetch(t.endpoint, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    await expectError(json, 'unsupported_media_type');
  });

  it('415 with Accept-Encoding: identity for a gzip-compressed body, never read as text', async () => {
    const post = (contentType: string, body: string, contentEncoding: string) =>
      fetch(t.endpoint, {
        method: 'POST',
        headers: { 'x-api-key': KEYS.beta, 'content-type': contentType, 'content-encoding': contentEncoding },
        body: contentEncoding === 'gzip' ? gzipSync(body) : body,
      });
    for (const [type, body] of [
      ['application/sparql-query', SELECT],
      ['application/x-www-form-urlencoded', `query=${encodeURIComponent(SELECT)}`],
    ] as const) {
      const gzipped = await post(type, body, 'gzip');
      assert.equal(gzipped.headers.get('accept-encoding'), 'identity');
      assert.equal(
        await expectError(gzipped, 'unsupported_media_type'),
        'the request body has Content-Encoding gzip: send it without a content coding\n',
      );
      const plain = await post(type, body, 'identity');
      assert.equal(plain.status, 200, await plain.clone().text());
      assert.equal(((await plain.json()) as { results: { bindings: unknown[] } }).results.bindings.length, 1);
    }
  });

  it('405 with Allow for CONNECT, which node would otherwise close unanswered', async () => {
    const answer = await rawRequest(
      t.endpoint,
      `CONNECT ${new URL(t.endpoint).host} HTTP/1.1\r\nHost: ${new URL(t.endpoint).host}\r\n\r\n`,
    );
    assert.equal(answer.status, 405, answer.headers);
    assert.match(answer.headers, /\r\nsparql-guard-error: method_not_allowed\r\n/);
    assert.match(answer.headers, /\r\nallow: GET, POST, OPTIONS\r\n/);
    assert.equal(answer.body, 'method CONNECT is not allowed here\n');
  });

  it("refusals of node's parser (an unknown method, CONNECT, a malformed request) are logged with the contract's fields: method, status, duration", async () => {
    const host = new URL(t.endpoint).host;
    const requests: [string, string | null, number][] = [
      [`FOO /sparql HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 'FOO', 405],
      [`CONNECT ${host} HTTP/1.1\r\nHost: ${host}\r\n\r\n`, 'CONNECT', 405],
      [`GET /healthz HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n`, null, 400],
    ];
    for (const [raw, method, status] of requests) {
      const from = t.logs.length;
      assert.equal((await rawRequest(t.endpoint, raw)).status, status);
      const end = performance.now() + 10_000;
      while (t.logs.length === from && performance.now() < end) await new Promise((done) => setTimeout(done, 20));
      const line = t.logs.at(-1)!;
      assert.equal(line.status, status, JSON.stringify(line));
      assert.equal(line.method, method, JSON.stringify(line));
      assert.ok(typeof line.durationMs === 'number' && line.durationMs >= 0, JSON.stringify(line));
      for (const field of ['path', 'agent']) assert.ok(field in line, `${field}: ${JSON.stringify(line)}`);
    }
  });

  it("an Expect other than 100-continue is ignored (RFC 9110 section 10.1.1), not node's empty 417", async () => {
    const host = new URL(t.endpoint).host;
    const path = new URL(t.endpoint).pathname;
    const answer = await rawRequest(
      t.endpoint,
      `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nX-API-Key: ${KEYS.beta}\r\nExpect: 200-ok\r\nContent-Type: application/sparql-query\r\nContent-Length: ${SELECT.length}\r\nConnection: close\r\n\r\n${SELECT}`,
    );
    assert.equal(answer.status, 200, answer.headers);
    assert.equal((JSON.parse(answer.body) as { results: { bindings: unknown[] } }).results.bindings.length, 1);
  });

  it('400 for a transfer coding node does not decode, or a second Content-Type (which one a proxy read is unknown)', async () => {
    const send = (headers: string, body: string) =>
      rawRequest(
        t.endpoint,
        `POST ${new URL(t.endpoint).pathname} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${KEYS.beta}\r\n${headers}Connection: close\r\n\r\n${body}`,
      );
    const chunked = `${SELECT.length.toString(16)}\r\n${SELECT}\r\n0\r\n\r\n`;
    const cases = [
      [
        'Content-Type: application/sparql-query\r\nTransfer-Encoding: gzip, chunked\r\n',
        chunked,
        'malformed HTTP request: Transfer-Encoding gzip is not supported: send the body chunked or with a Content-Length',
      ],
      [
        `Content-Type: application/sparql-query\r\nContent-Type: application/json\r\nContent-Length: ${SELECT.length}\r\n`,
        SELECT,
        'the Content-Type header was given more than once',
      ],
    ] as const;
    for (const [headers, body, message] of cases) {
      const answer = await send(headers, body);
      assert.equal(answer.status, 400, answer.body);
      assert.match(answer.headers, /\r\nsparql-guard-error: bad_request\r\n/i);
      assert.equal(answer.body, `${message}\n`);
    }
    // Chunked alone, and one Content-Type, are read.
    const plain = await send('Content-Type: application/sparql-query\r\nTransfer-Encoding: chunked\r\n', chunked);
    assert.equal(plain.status, 200, plain.body);
  });

  it('400 for a missing query and for an unparseable one, without echoing it', async () => {
    await expectError(await fetch(t.endpoint), 'bad_request');
    const body = await expectError(await get('SELECT * WHERE { ?s ?p CANARY-ECHO'), 'parse');
    assert.doesNotMatch(body, /CANARY-ECHO/);
  });

  it('403 for SERVICE', async () => {
    await expectError(await get('SELECT * WHERE { SERVICE <http://example.org/sparql> { ?s ?p ?o } }'), 'service');
  });
});

describe('credentials', () => {
  it('401 with WWW-Authenticate for an unknown key, an empty key, or two different keys', async () => {
    // A bearer token that failed is named invalid_token (RFC 6750 section 3.1); the others get the plain challenge.
    const cases: [Record<string, string>, string][] = [
      [{ authorization: 'Bearer not-a-key' }, ', error="invalid_token"'],
      [{ 'x-api-key': '' }, ''],
      [{ authorization: `Bearer ${KEYS.beta}`, 'x-api-key': KEYS.keeper }, ''],
    ];
    for (const [headers, error] of cases) {
      const response = await get(SELECT, headers);
      await expectError(response, 'unauthenticated');
      // Node's fetch sends Sec-Fetch-Mode: cors, as a browser's script would: Bearer first.
      assert.equal(
        response.headers.get('www-authenticate'),
        `Bearer realm="sparql-guard"${error}, Basic realm="sparql-guard", charset="UTF-8"`,
      );
    }
  });

  it('401 for a credential header sent twice, even with the same key (every copy is read, not the first)', async () => {
    for (const [name, value] of [
      ['authorization', `Bearer ${KEYS.beta}`],
      ['X-API-Key', KEYS.beta],
    ] as const) {
      const status = await new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          `${t.endpoint}?query=${encodeURIComponent(SELECT)}`,
          { headers: { [name]: [value, value] } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('error', reject);
        request.end();
      });
      assert.equal(status, 401, name);
    }
  });

  it('accepts the same key in both headers, and X-API-Key alone', async () => {
    assert.equal((await get(SELECT, { authorization: `Bearer ${KEYS.beta}`, 'x-api-key': KEYS.beta })).status, 200);
    assert.equal((await get(SELECT, { 'x-api-key': KEYS.beta })).status, 200);
  });
});

describe('responses', () => {
  it('streams the store answer with its content type, per-form Accept defaults, private caching', async () => {
    const select = await get(SELECT);
    assert.equal(select.status, 200);
    assert.match(select.headers.get('content-type') ?? '', /^application\/sparql-results\+json/);
    assert.equal(select.headers.get('cache-control'), 'private, no-store');
    const vary = (select.headers.get('vary') ?? '').toLowerCase();
    for (const name of ['origin', 'accept', 'authorization', 'x-api-key']) assert.ok(vary.includes(name), vary);
    await select.arrayBuffer();

    const construct = await get(CONSTRUCT, { accept: '*/*' });
    assert.match(construct.headers.get('content-type') ?? '', /^text\/turtle/);
    await construct.arrayBuffer();
  });

  it('passes the caller Accept on, and the store status back', async () => {
    const csv = await get(SELECT, { accept: 'text/csv' });
    assert.equal(csv.status, 200);
    assert.match(csv.headers.get('content-type') ?? '', /^text\/csv/);
    await csv.arrayBuffer();
    const notAcceptable = await get(SELECT, { accept: 'image/png' });
    assert.equal(notAcceptable.status, 406, 'the store status is passed through');
    await notAcceptable.arrayBuffer();
  });
});

describe('CORS', () => {
  it('answers a preflight with 204 and the allowed headers', async () => {
    const response = await fetch(t.endpoint, {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST' },
    });
    assert.equal(response.status, 204);
    assert.equal(response.headers.get('access-control-allow-origin'), 'https://app.example');
    assert.equal(response.headers.get('access-control-allow-methods'), 'GET, POST, OPTIONS');
    assert.equal(response.headers.get('access-control-allow-headers'), 'Authorization, Content-Type, Accept, X-API-Key');
    assert.ok(response.headers.get('access-control-max-age'));
    assert.match(response.headers.get('vary') ?? '', /Origin/);
  });

  it('carries Access-Control-Allow-Origin on answers and on errors, only for listed origins', async () => {
    const ok = await get(SELECT, { origin: 'https://other.example' });
    assert.equal(ok.headers.get('access-control-allow-origin'), 'https://other.example');
    await ok.arrayBuffer();
    const error = await get('nonsense', { origin: 'https://app.example' });
    assert.equal(error.status, 400);
    assert.equal(error.headers.get('access-control-allow-origin'), 'https://app.example');
    await error.arrayBuffer();
    const stranger = await get(SELECT, { origin: 'https://evil.example' });
    assert.equal(stranger.headers.get('access-control-allow-origin'), null);
    await stranger.arrayBuffer();
  });
});

describe('request log', () => {
  it('writes one JSON line per request with method, path, agent, status, duration and never the query', async () => {
    const marker = 'CANARY-LOG-MARKER';
    const before = t.logs.length;
    await (await get(`SELECT * WHERE { ?s ?p "${marker}" }`, { authorization: `Bearer ${KEYS.beta}` })).arrayBuffer();
    const lines = t.logs.slice(before).filter((line) => line.path === '/sparql');
    assert.equal(lines.length, 1);
    const line = lines[0]!;
    assert.equal(line.method, 'GET');
    assert.equal(line.agent, 'http://example.org/agents/beta-user');
    assert.equal(line.status, 200);
    assert.equal(typeof line.durationMs, 'number');
    assert.doesNotMatch(JSON.stringify(t.logs), new RegExp(`${marker}|${KEYS.beta}`));
  });

  it('names the caller on refusals too: an update refused for a valid key logs its agent, a bad key logs none', async () => {
    const agentOf = async (init: RequestInit): Promise<unknown> => {
      const before = t.logs.length;
      const response = await fetch(t.endpoint, init);
      await response.arrayBuffer();
      const line = t.logs.slice(before).find((entry) => entry.path === '/sparql');
      return [response.status, line?.agent];
    };
    const update = 'INSERT DATA { <urn:a> <urn:b> <urn:c> }';
    const beta = 'http://example.org/agents/beta-user';
    assert.deepEqual(
      await agentOf({
        method: 'POST',
        headers: { authorization: `Bearer ${KEYS.beta}`, 'content-type': 'application/sparql-update' },
        body: update,
      }),
      [403, beta],
    );
    assert.deepEqual(
      await agentOf({
        method: 'POST',
        headers: { 'x-api-key': KEYS.beta, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ update }),
      }),
      [403, beta],
    );
    assert.deepEqual(await agentOf({ headers: { authorization: `Bearer ${KEYS.beta}` } }), [400, beta], 'a missing query');
    assert.deepEqual(
      await agentOf({
        method: 'POST',
        headers: { authorization: 'Bearer not-a-key', 'content-type': 'application/sparql-update' },
        body: update,
      }),
      [403, null],
      'invalid credentials identify nobody',
    );
  });
});

describe('explain', () => {
  it('answers the rewritten query as JSON without running it', async () => {
    const response = await fetch(`${t.endpoint}/explain?query=${encodeURIComponent(SELECT)}`, {
      headers: { authorization: `Bearer ${KEYS.beta}` },
    });
    assert.equal(response.status, 200);
    const explain = (await response.json()) as Record<string, unknown>;
    assert.equal(explain.agent, 'http://example.org/agents/beta-user');
    assert.deepEqual(explain.groups, ['beta']);
    assert.deepEqual(explain.policies, ['<http://example.org/policies/everyone>', '<http://example.org/policies/beta>']);
    assert.equal(explain.form, 'select');
    assert.match(String(explain.query), /FROM <http:\/\/example\.org\/graphs\/a>/);
    // The query reads no named graph: FROM NAMED holds only the reserved empty graph.
    assert.match(String(explain.query), /FROM NAMED <urn:x-sparql-guard:empty>/);
    assert.doesNotMatch(String(explain.query), /FROM NAMED <http:/);
  });
});

describe('an identified caller without any policy', () => {
  it('gets 403, an anonymous one 401', async () => {
    const lonely = await startTestGuard({ policies: [resolve('test/fixtures/integration/no-policies.ttl')] });
    try {
      await expectError(await fetch(`${lonely.endpoint}?query=${encodeURIComponent(SELECT)}`), 'unauthenticated');
      const response = await fetch(`${lonely.endpoint}?query=${encodeURIComponent(SELECT)}`, {
        headers: { 'x-api-key': KEYS.lonely },
      });
      await expectError(response, 'forbidden');
    } finally {
      await lonely.close();
    }
  });
});

describe('a store that fails', () => {
  let stub: Server;
  let stubUrl: string;
  const seen: { closed: boolean }[] = [];
  before(async () => {
    stub = createServer((request, response) => {
      if (request.url === '/reset') return request.socket.destroy();
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const query = new URLSearchParams(Buffer.concat(chunks).toString()).get('query') ?? '';
        // The guard's dataset check (two ASKs over the reserved empty graph) is answered as a
        // store that honours FROM would; every other query is recorded and never answered.
        if (query.startsWith('ASK') && query.includes('urn:x-sparql-guard:empty')) {
          response.setHeader('content-type', 'application/sparql-results+json');
          return response.end(JSON.stringify({ head: {}, boolean: /WHERE \{ \}$/.test(query) }));
        }
        const record = { closed: false };
        seen.push(record);
        response.on('close', () => (record.closed = true));
      });
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => stub.close(() => resolve())));

  it('502 when the store is unreachable, resets, or does not answer within timeoutMs', async () => {
    const closed = await startTestGuard({ upstream: 'http://127.0.0.1:1/sparql' });
    const reset = await startTestGuard({ upstream: `${stubUrl}/reset` });
    const slow = await startTestGuard({ upstream: `${stubUrl}/slow`, timeoutMs: 300 });
    try {
      for (const guard of [closed, reset, slow]) {
        const started = Date.now();
        const response = await fetch(`${guard.endpoint}?query=${encodeURIComponent(SELECT)}`);
        await expectError(response, 'upstream_failed');
        assert.ok(Date.now() - started < 5000);
      }
    } finally {
      await Promise.all([closed.close(), reset.close(), slow.close()]);
    }
  });

  it("a store's 304 keeps its status and the guard's code, with no content: no Content-Length a 304 may not carry", async () => {
    const store = await startStubStore({ status: 304 });
    const guard = await startTestGuard({ upstream: store.url });
    try {
      const answer = await rawRequest(
        guard.endpoint,
        `GET /sparql?query=${encodeURIComponent(SELECT)} HTTP/1.1\r\nHost: guard\r\nConnection: close\r\n\r\n`,
      );
      assert.equal(answer.status, 304);
      assert.match(answer.headers, new RegExp(`\\r\\n${ERROR_CODE_HEADER}: store_error\\r\\n`, 'i'));
      // RFC 9110 section 8.6: a 304's Content-Length is the length of the 200 it stands for, or absent.
      assert.doesNotMatch(answer.headers, /\r\ncontent-(length|type):/i);
      assert.equal(answer.body, '');
    } finally {
      await guard.close();
      await store.close();
    }
  });

  it('aborts the upstream request when the client goes away', async () => {
    const slow = await startTestGuard({ upstream: `${stubUrl}/slow` });
    try {
      const before = seen.length;
      const client = new AbortController();
      const pending = fetch(`${slow.endpoint}?query=${encodeURIComponent(SELECT)}`, { signal: client.signal }).catch(() => undefined);
      while (seen.length === before) await new Promise((resolve) => setTimeout(resolve, 10));
      client.abort();
      await pending;
      const deadline = Date.now() + 3000;
      while (!seen[before]!.closed && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.ok(seen[before]!.closed, 'the store saw its request closed');
    } finally {
      await slow.close();
    }
  });
});

describe('answer framing', () => {
  let stub: Server;
  let stubUrl: string;
  const big = 'z'.repeat(300_000);
  before(async () => {
    // A store that honours dataset clauses (the start-up check's ASKs) and answers SELECTs by path.
    stub = createServer(async (request, response) => {
      let body = '';
      for await (const chunk of request) body += String(chunk);
      const query = new URLSearchParams(body).get('query') ?? '';
      if (/^\s*ASK/.test(query)) {
        response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
        return response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
      }
      if (request.url === '/fixed' || request.url === '/small') {
        const answer = request.url === '/fixed' ? big : 's\r\n1\r\n';
        response.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(answer.length) });
        return response.end(answer);
      }
      response.writeHead(200, { 'content-type': 'text/csv' });
      response.write('s\r\n');
      setTimeout(() => response.end('x\r\n'), 20);
    });
    await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
    stubUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
  });
  after(() => new Promise<void>((resolve) => stub.close(() => resolve())));

  /** Status, headers and body as they come off the wire. */
  const raw = (endpoint: string) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const request = httpRequest(`${endpoint}?query=${encodeURIComponent(SELECT)}`, { headers: { accept: 'text/csv' } }, (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }));
      });
      request.on('error', reject);
      request.end();
    });

  it("passes the store's Content-Length on (small and large answers), and streams an answer without one in chunks", async () => {
    const fixed = await startTestGuard({ upstream: `${stubUrl}/fixed` });
    const chunked = await startTestGuard({ upstream: `${stubUrl}/chunked` });
    const small = await startTestGuard({ upstream: `${stubUrl}/small` });
    try {
      const tiny = await raw(small.endpoint);
      assert.equal(tiny.headers['content-length'], '6');
      assert.equal(tiny.headers['content-type'], 'text/csv');
      assert.equal(tiny.body, 's\r\n1\r\n');
      const whole = await raw(fixed.endpoint);
      assert.equal(whole.status, 200);
      assert.equal(whole.headers['content-length'], String(big.length));
      assert.equal(whole.headers['transfer-encoding'], undefined);
      assert.equal(whole.body, big);
      assert.equal(whole.headers['cache-control'], 'private, no-store');
      const streamed = await raw(chunked.endpoint);
      assert.equal(streamed.headers['transfer-encoding'], 'chunked');
      assert.equal(streamed.body, 's\r\nx\r\n');
      assert.match(String(streamed.headers.vary), /Accept/);
    } finally {
      await Promise.all([fixed.close(), chunked.close(), small.close()]);
    }
  });
});
