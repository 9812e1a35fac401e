// Drives createUpstream against real local HTTP servers that misbehave on purpose.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { after, describe, test } from 'node:test';
import type { Readable } from 'node:stream';
import { GuardError } from '../../src/guard-error.js';
import { createUpstream, UpstreamError, type Upstream } from '../../src/upstream/create-upstream.js';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const servers: Server[] = [];
const upstreams: Upstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close().catch(() => undefined)));
  for (const s of servers) {
    s.closeAllConnections();
    s.close();
  }
});

/** A real HTTP server on a free loopback port; returns its base URL. */
async function serve(handler: Handler): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function upstream(url: string, timeoutMs = 2000, headers: Record<string, string> = {}): Upstream {
  const u = createUpstream({ url, headers, timeoutMs });
  upstreams.push(u);
  return u;
}

async function readAll(body: Readable): Promise<string> {
  let text = '';
  for await (const chunk of body) text += String(chunk);
  return text;
}

async function readBody(req: IncomingMessage): Promise<string> {
  let text = '';
  for await (const chunk of req) text += String(chunk);
  return text;
}

const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;

describe('createUpstream: request shape', () => {
  test('POSTs only query= as a form, with Accept, configured headers and User-Agent', async () => {
    let seen: { method?: string; url?: string; headers: IncomingMessage['headers']; body: string } | undefined;
    const base = await serve(async (req, res) => {
      seen = { method: req.method, url: req.url, headers: req.headers, body: await readBody(req) };
      res.writeHead(200, { 'content-type': 'application/sparql-results+json' });
      res.end('{}');
    });
    const query = 'SELECT * FROM <urn:a> WHERE { ?s ?p "ü & = + % 😀 *-._~!\'()" }\n# end';
    const u = upstream(`${base}/ds/query?x=1`, 2000, { Authorization: 'Basic c2VjcmV0', 'X-Store': 'yes' });
    const res = await u.send({ query }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(await readAll(res.body), '{}');
    assert.ok(seen);
    assert.equal(seen.method, 'POST');
    assert.equal(seen.url, '/ds/query?x=1');
    assert.equal(seen.headers['content-type'], 'application/x-www-form-urlencoded; charset=UTF-8');
    assert.equal(seen.headers.accept, 'text/csv');
    assert.equal(seen.headers.authorization, 'Basic c2VjcmV0');
    assert.equal(seen.headers['x-store'], 'yes');
    assert.equal(seen.headers['user-agent'], `sparql-guard/${version}`);
    // Byte for byte what a form serialiser writes (URL Standard urlencoded serializer).
    assert.equal(seen.body, new URLSearchParams({ query }).toString());
    const params = new URLSearchParams(seen.body);
    assert.deepEqual([...params.keys()], ['query']);
    assert.equal(params.get('query'), query);
    // Nothing beyond what the guard sets, plus what HTTP/1.1 itself needs.
    const allowed = new Set([
      'host',
      'connection',
      'content-length',
      'content-type',
      'accept',
      'accept-encoding',
      'user-agent',
      'authorization',
      'x-store',
    ]);
    // Without Accept-Encoding a store may use any coding (RFC 9110 section 12.5.3): none is asked for.
    assert.equal(seen.headers['accept-encoding'], 'identity');
    for (const name of Object.keys(seen.headers)) assert.ok(allowed.has(name), `unexpected header ${name}`);
  });

  test("the guard's Content-Type, Accept-Encoding and Accept win over configured headers of the same name", async () => {
    let headers: IncomingMessage['headers'] = {};
    const base = await serve((req, res) => {
      headers = req.headers;
      req.resume();
      res.end();
    });
    const u = upstream(`${base}/q`, 2000, { 'Content-Type': 'text/plain', ACCEPT: 'x/y', 'Accept-Encoding': 'gzip' });
    await readAll(
      (await u.send({ query: 'ASK {}' }, { accept: 'application/sparql-results+xml', signal: new AbortController().signal })).body,
    );
    assert.equal(headers['content-type'], 'application/x-www-form-urlencoded; charset=UTF-8');
    assert.equal(headers.accept, 'application/sparql-results+xml');
    assert.equal(headers['accept-encoding'], 'identity');
  });

  test('a coding the store used although asked for none is reported, so the bytes are passed on labelled', async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'application/sparql-results+json', 'content-encoding': 'gzip' });
      res.end(gzipSync('{"head":{},"boolean":true}'));
    });
    const res = await upstream(base).send(
      { query: 'ASK {}' },
      { accept: 'application/sparql-results+json', signal: new AbortController().signal },
    );
    assert.equal(res.contentEncoding, 'gzip');
    res.body.resume();
  });

  test("passes the store's status, Content-Type and Cache-Control through", async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'max-age=60' });
      res.end('bad query');
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(res.status, 400);
    assert.equal(res.contentType, 'text/plain; charset=utf-8');
    assert.equal(res.cacheControl, 'max-age=60');
    assert.equal(await readAll(res.body), 'bad query');
  });

  test('Cache-Control is undefined when the store sends none', async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.end('x');
    });
    const res = await upstream(base).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(res.cacheControl, undefined);
    await readAll(res.body);
  });
});

describe('createUpstream: streaming', () => {
  test('the first chunk reaches the caller before the store has finished', async () => {
    let finish: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (finish = resolve));
    let storeFinished = false;
    const base = await serve(async (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('s\r\n');
      await released;
      storeFinished = true;
      res.end('rest\r\n');
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    const iterator = res.body[Symbol.asyncIterator]();
    const first = await iterator.next();
    assert.equal(String(first.value), 's\r\n');
    assert.equal(storeFinished, false);
    finish();
    let rest = '';
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest += String(r.value);
    assert.equal(rest, 'rest\r\n');
  });
});

describe('createUpstream: faults', () => {
  test('no response headers within timeoutMs gives 502 after about timeoutMs', async () => {
    const base = await serve((req) => req.resume()); // never answers
    const started = Date.now();
    await assert.rejects(
      upstream(base, 300).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) => {
        assert.ok(e instanceof GuardError);
        assert.equal(e.status, 502);
        assert.equal(e.message, 'upstream did not answer within 300 ms');
        return true;
      },
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 280 && elapsed < 1500, `took ${elapsed} ms`);
  });

  test('an idle gap in the body longer than timeoutMs cuts the stream with a one-line error', async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('first\r\n'); // then silence
    });
    const res = await upstream(base, 300).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(res.status, 200);
    const started = Date.now();
    await assert.rejects(readAll(res.body), (e: unknown) => {
      assert.ok(e instanceof GuardError);
      assert.equal(e.message, 'upstream went silent for more than 300 ms');
      return true;
    });
    assert.ok(Date.now() - started < 2000);
  });

  test('a body that keeps trickling within timeoutMs is not cut', async () => {
    const base = await serve(async (req, res) => {
      req.resume();
      res.writeHead(200);
      for (let i = 0; i < 5; i++) {
        res.write(`${i}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      res.end();
    });
    const res = await upstream(base, 300).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(await readAll(res.body), '01234');
  });

  test('connection refused gives 502 upstream unreachable, naming the refusal', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    probe.close();
    await once(probe, 'close');
    await assert.rejects(
      upstream(`http://user:pw@127.0.0.1:${port}/sparql`).send(
        { query: 'ASK {}' },
        { accept: 'text/csv', signal: new AbortController().signal },
      ),
      (e: unknown) => {
        assert.ok(e instanceof GuardError);
        assert.equal(e.status, 502);
        assert.equal(e.message, 'upstream unreachable (connection refused)');
        assert.ok(e instanceof UpstreamError && e.kind === 'refused' && e.failureCause === 'refused');
        // The caller's line never names the store's address, let alone its credential.
        assert.doesNotMatch(e.message, /127\.0\.0\.1|user|pw/);
        return true;
      },
    );
  });

  test('an unknown host gives 502 upstream unreachable, naming the name lookup', async () => {
    await assert.rejects(
      upstream('http://no-such-host.invalid/sparql').send(
        { query: 'ASK {}' },
        { accept: 'text/csv', signal: new AbortController().signal },
      ),
      (e: unknown) =>
        e instanceof UpstreamError &&
        e.status === 502 &&
        e.message === 'upstream unreachable (host name not found)' &&
        e.failureCause === 'dns',
    );
  });

  test('a failed TLS handshake (https to a plain HTTP port) gives 502 naming TLS', async () => {
    const base = await serve((_req, res) => res.end('ok'));
    await assert.rejects(
      upstream(base.replace('http:', 'https:')).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) => e instanceof UpstreamError && e.message === 'upstream unreachable (TLS handshake failed)' && e.failureCause === 'tls',
    );
  });

  test('an answer that is not HTTP gives 502 naming a protocol error, not retried', async () => {
    let connections = 0;
    const server = createNetServer((socket) => {
      connections += 1;
      socket.once('data', () => socket.end('HELLO STORE\r\n\r\n'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as AddressInfo).port;
    try {
      await assert.rejects(
        upstream(`http://127.0.0.1:${port}/sparql`).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
        (e: unknown) =>
          e instanceof UpstreamError && e.message === 'upstream answered with malformed HTTP' && e.failureCause === 'protocol',
      );
      assert.equal(connections, 1);
    } finally {
      server.close();
    }
  });

  test('an interim answer undici cannot take (an unasked 100 Continue, a 101) gives 502 naming it, not a closed connection', async () => {
    for (const interim of [
      'HTTP/1.1 100 Continue\r\n\r\n',
      'HTTP/1.1 101 Switching Protocols\r\nconnection: upgrade\r\nupgrade: h2c\r\n\r\n',
    ]) {
      let connections = 0;
      const server = createNetServer((socket) => {
        connections += 1;
        // The store would go on with its answer: it never closes the connection itself.
        socket.once('data', () => socket.write(interim));
        socket.on('error', () => undefined);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const port = (server.address() as AddressInfo).port;
      try {
        await assert.rejects(
          upstream(`http://127.0.0.1:${port}/sparql`).send(
            { query: 'ASK {}' },
            { accept: 'text/csv', signal: new AbortController().signal },
          ),
          (e: unknown) =>
            e instanceof UpstreamError &&
            e.message === 'upstream sent an interim answer the guard cannot take (100 Continue unasked, or 101)' &&
            e.failureCause === 'protocol' &&
            e.kind === 'failed',
          interim,
        );
        assert.equal(connections, 1, 'not sent again');
      } finally {
        server.close();
      }
    }
  });

  test('a status HTTP has no such code for (600 to 999) gives 502 naming malformed HTTP, not the status passed on', async () => {
    // llhttp takes any three digits; fastify refuses a reply code over 599 and answered its own JSON 500.
    for (const status of [600, 999]) {
      const server = createNetServer((socket) => {
        socket.once('data', () => socket.write(`HTTP/1.1 ${status} Odd\r\ncontent-type: text/plain\r\ncontent-length: 4\r\n\r\nodd\n`));
        socket.on('error', () => undefined);
      });
      server.listen(0, '127.0.0.1');
      await once(server, 'listening');
      const port = (server.address() as AddressInfo).port;
      try {
        await assert.rejects(
          upstream(`http://127.0.0.1:${port}/sparql`).send(
            { query: 'ASK {}' },
            { accept: 'text/csv', signal: new AbortController().signal },
          ),
          (e: unknown) =>
            e instanceof UpstreamError && e.message === 'upstream answered with malformed HTTP' && e.failureCause === 'protocol',
          String(status),
        );
      } finally {
        server.close();
      }
    }
  });

  test('a connection reset before the headers gives 502 naming the reset, not an unreachable store', async () => {
    const base = await serve((req) => req.socket.resetAndDestroy());
    await assert.rejects(
      upstream(base).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) =>
        e instanceof UpstreamError &&
        e.status === 502 &&
        e.kind === 'reset' &&
        e.message === 'upstream reset the connection before answering',
    );
  });

  test('a reset mid-body errors the stream', async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('partial\r\n', () => setTimeout(() => req.socket.destroy(), 50));
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    await assert.rejects(readAll(res.body), (e: unknown) => {
      assert.ok(e instanceof GuardError);
      assert.equal(e.message, 'upstream closed the connection');
      assert.ok(e instanceof UpstreamError && e.kind === 'cut');
      return true;
    });
  });
});

describe('createUpstream: the caller going away', () => {
  test('aborting before the headers closes the upstream request', async () => {
    let storeSawClose: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (storeSawClose = resolve));
    let arrived: () => void = () => undefined;
    const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
    const base = await serve((req, res) => {
      req.resume();
      res.on('close', () => storeSawClose());
      arrived();
    });
    const caller = new AbortController();
    const pending = upstream(base, 5000).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: caller.signal });
    await requestArrived;
    caller.abort();
    await assert.rejects(pending, (e: unknown) => e instanceof GuardError && e.message === 'upstream request aborted by the client');
    await closed;
  });

  test('aborting mid-body closes the upstream request and errors the stream', async () => {
    let storeSawClose: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (storeSawClose = resolve));
    const base = await serve((req, res) => {
      req.resume();
      res.on('close', () => storeSawClose());
      res.writeHead(200);
      res.write('a');
    });
    const caller = new AbortController();
    const res = await upstream(base, 5000).send({ query: 'SELECT' }, { accept: 'text/csv', signal: caller.signal });
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    caller.abort();
    await assert.rejects(iterator.next(), (e: unknown) => e instanceof GuardError);
    await closed;
  });

  test('destroying the body (the consumer went away) closes the upstream request', async () => {
    let storeSawClose: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (storeSawClose = resolve));
    const base = await serve((req, res) => {
      req.resume();
      res.on('close', () => storeSawClose());
      res.writeHead(200);
      res.write('a');
    });
    const res = await upstream(base, 5000).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    res.body.destroy();
    await closed;
  });

  test('an already aborted signal sends nothing', async () => {
    let requests = 0;
    const base = await serve((req, res) => {
      requests++;
      req.resume();
      res.end();
    });
    const caller = new AbortController();
    caller.abort();
    await assert.rejects(upstream(base).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: caller.signal }), GuardError);
    assert.equal(requests, 0);
  });
});

describe('createUpstream: onEnd, the end of the exchange with the store', () => {
  /** Counts the calls of onEnd. */
  function endWatch() {
    const state = { calls: 0 };
    return { state, onEnd: () => (state.calls += 1) };
  }
  const tick = () => new Promise((resolve) => setTimeout(resolve, 50));

  test('is called once when the answer arrived to its last byte, not before', async () => {
    let finish: () => void = () => undefined;
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('a');
      finish = () => res.end('b');
    });
    const { state, onEnd } = endWatch();
    const res = await upstream(base, 5000).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal, onEnd });
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    await tick();
    assert.equal(state.calls, 0, 'the answer is still under way');
    finish();
    assert.equal(await readAll({ [Symbol.asyncIterator]: () => iterator } as unknown as Readable), 'b');
    await tick();
    assert.equal(state.calls, 1);
  });

  test('is called once, with the store connection closed, when the caller goes away before or during the answer', async () => {
    for (const moment of ['before the headers', 'mid-body'] as const) {
      let storeClosed = false;
      let arrived: () => void = () => undefined;
      const requestArrived = new Promise<void>((resolve) => (arrived = resolve));
      const base = await serve((req, res) => {
        req.resume();
        req.socket.on('close', () => (storeClosed = true));
        if (moment === 'mid-body') {
          res.writeHead(200);
          res.write('a');
        }
        arrived();
      });
      const { state, onEnd } = endWatch();
      const caller = new AbortController();
      const pending = upstream(base, 5000).send({ query: 'SELECT' }, { accept: 'text/csv', signal: caller.signal, onEnd });
      await requestArrived;
      if (moment === 'mid-body') {
        const res = await pending;
        res.body.on('error', () => undefined);
        caller.abort();
      } else {
        caller.abort();
        await assert.rejects(pending, GuardError);
      }
      assert.equal(state.calls, 1, moment);
      for (let i = 0; i < 40 && !storeClosed; i++) await tick();
      assert.ok(storeClosed, `the store's connection is closed (${moment})`);
      caller.abort();
      await tick();
      assert.equal(state.calls, 1, `once only (${moment})`);
    }
  });

  test('is called at once, and nothing is sent, for a signal already fired', async () => {
    let requests = 0;
    const base = await serve((req, res) => {
      requests++;
      req.resume();
      res.end();
    });
    const caller = new AbortController();
    caller.abort();
    const { state, onEnd } = endWatch();
    await assert.rejects(upstream(base).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: caller.signal, onEnd }), GuardError);
    assert.equal(state.calls, 1);
    assert.equal(requests, 0);
  });

  test('is called once when the headers deadline ends the exchange', async () => {
    const base = await serve((req) => {
      req.resume();
    });
    const { state, onEnd } = endWatch();
    await assert.rejects(
      upstream(base, 150).send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal, onEnd }),
      GuardError,
    );
    assert.equal(state.calls, 1);
  });
});

describe('createUpstream: keep-alive', () => {
  test('consecutive requests reuse connections instead of opening one each', async () => {
    const sockets = new Set<unknown>();
    const base = await serve((req, res) => {
      sockets.add(req.socket);
      req.resume();
      res.end('ok');
    });
    const u = upstream(base);
    for (let i = 0; i < 20; i++)
      assert.equal(
        await readAll((await u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal })).body),
        'ok',
      );
    // undici may open a second connection while the first is being handed back; never 20.
    assert.ok(sockets.size <= 2, `${sockets.size} connections for 20 requests`);
  });
});

describe('createUpstream: length and whole answers', () => {
  test("passes the store's Content-Length on; a finished answer is taken whole, once", async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': '100' });
      res.end('x'.repeat(100));
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(res.contentLength, 100);
    await new Promise((resolve) => setTimeout(resolve, 50)); // let all of it arrive
    const whole = res.takeWhole();
    assert.ok(whole);
    assert.equal(whole.toString(), 'x'.repeat(100));
    assert.equal(res.takeWhole(), undefined, 'taken once');
  });

  test('an answer still arriving is not taken whole, and its body stays intact; no length under chunked framing', async () => {
    let finish: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (finish = resolve));
    const base = await serve(async (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('first,');
      await released;
      res.end('last');
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    assert.equal(res.contentLength, undefined);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(res.takeWhole(), undefined);
    finish();
    assert.equal(await readAll(res.body), 'first,last');
  });

  test('a large answer read late arrives whole (the socket pauses at the bound and resumes when read)', async () => {
    const block = Buffer.alloc(64 * 1024, 'y');
    const base = await serve(async (req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv', 'content-length': String(block.length * 32) });
      for (let i = 0; i < 32; i++) if (!res.write(block)) await once(res, 'drain');
      res.end();
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    await new Promise((resolve) => setTimeout(resolve, 100)); // nobody reads meanwhile
    assert.equal(res.takeWhole(), undefined, 'not all of it can have arrived while nobody read');
    let bytes = 0;
    for await (const chunk of res.body) bytes += (chunk as Buffer).length;
    assert.equal(bytes, block.length * 32);
  });

  test('a failure after the headers, before the body is asked for, reaches the body when it is', async () => {
    const base = await serve((req, res) => {
      req.resume();
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('partial\r\n', () => setTimeout(() => req.socket.destroy(), 20));
    });
    const res = await upstream(base).send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    await new Promise((resolve) => setTimeout(resolve, 100)); // the reset has happened
    assert.equal(res.takeWhole(), undefined);
    await assert.rejects(readAll(res.body), (e: unknown) => e instanceof GuardError && e.message === 'upstream closed the connection');
  });
});

describe('createUpstream: a connection the store dropped unanswered is tried once more', () => {
  /** An upstream whose retries are counted by reason. */
  function counted(url: string, timeoutMs = 2000) {
    const retries: string[] = [];
    const failures: string[] = [];
    const u = createUpstream({
      url,
      headers: {},
      timeoutMs,
      onRetry: (reason) => retries.push(reason),
      onFailure: (kind) => failures.push(kind),
    });
    upstreams.push(u);
    return { u, retries, failures };
  }

  test('a reset before any byte of the answer: sent once more, on a fresh connection, and answered', async () => {
    const sockets: unknown[] = [];
    let queries = 0;
    const base = await serve(async (req, res) => {
      await readBody(req);
      queries += 1;
      sockets.push(req.socket);
      // A TCP reset (RST), not a close.
      if (queries === 1) return void req.socket.resetAndDestroy();
      res.end('ok');
    });
    const { u, retries, failures } = counted(base);
    assert.equal(
      await readAll((await u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal })).body),
      'ok',
    );
    assert.equal(queries, 2);
    assert.ok(sockets[0] !== sockets[1]);
    assert.deepEqual(retries, ['reset']);
    assert.deepEqual(failures, []);
  });

  test('a pooled connection the store closed as the query arrived: retried on a new connection, never on another pooled one', async () => {
    const seen: unknown[] = [];
    let queries = 0;
    const base = await serve(async (req, res) => {
      await readBody(req);
      queries += 1;
      seen.push(req.socket);
      // The second query arrives on the kept-alive connection of the first, and finds it closed.
      if (queries === 2) return void req.socket.end();
      res.end('ok');
    });
    const { u, retries } = counted(base);
    assert.equal(
      await readAll((await u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal })).body),
      'ok',
    );
    // The first connection is back in the pool, idle.
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(
      await readAll((await u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal })).body),
      'ok',
    );
    assert.equal(queries, 3);
    assert.ok(seen[0] === seen[1], 'the second query went on the pooled connection');
    assert.ok(seen[2] !== seen[1]);
    assert.deepEqual(retries, ['closed']);
  });

  test('never more than once: a store that drops every query gives 502 after two tries', async () => {
    let queries = 0;
    const base = await serve(async (req) => {
      await readBody(req);
      queries += 1;
      req.socket.destroy();
    });
    const { u, retries, failures } = counted(base);
    await assert.rejects(
      u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) =>
        e instanceof UpstreamError &&
        e.kind === 'reset' &&
        e.failureCause === 'closed' &&
        e.message === 'upstream closed the connection before answering',
    );
    assert.equal(queries, 2);
    assert.equal(retries.length, 1);
    assert.deepEqual(failures, ['reset']);
  });

  test('never after a byte of the answer: a status line then a reset is not sent again', async () => {
    let queries = 0;
    const base = await serve(async (req) => {
      await readBody(req);
      queries += 1;
      req.socket.write('HTTP/1.1 200 OK\r\n', () => setTimeout(() => req.socket.destroy(), 20));
    });
    const { u, retries } = counted(base);
    await assert.rejects(
      u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) => e instanceof UpstreamError && e.status === 502,
    );
    assert.equal(queries, 1);
    assert.deepEqual(retries, []);
  });

  test('never after the answer began: a reset mid-body cuts the stream, nothing is sent again', async () => {
    let queries = 0;
    const base = await serve(async (req, res) => {
      await readBody(req);
      queries += 1;
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('partial\r\n', () => setTimeout(() => req.socket.destroy(), 20));
    });
    const { u, retries } = counted(base);
    const res = await u.send({ query: 'SELECT' }, { accept: 'text/csv', signal: new AbortController().signal });
    await assert.rejects(readAll(res.body), (e: unknown) => e instanceof UpstreamError && e.kind === 'cut');
    assert.equal(queries, 1);
    assert.deepEqual(retries, []);
  });

  test('a refused connection is not retried, and fails at once', async () => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1');
    await once(probe, 'listening');
    const port = (probe.address() as AddressInfo).port;
    probe.close();
    await once(probe, 'close');
    const { u, retries } = counted(`http://127.0.0.1:${port}/sparql`, 5000);
    const started = performance.now();
    await assert.rejects(
      u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) => e instanceof UpstreamError && e.kind === 'refused',
    );
    assert.ok(performance.now() - started < 5000);
    assert.deepEqual(retries, []);
  });

  test('a store that takes the query and never answers is not retried: 502 at the deadline', async () => {
    let queries = 0;
    const base = await serve((req) => {
      req.resume();
      queries += 1;
    });
    const { u, retries } = counted(base, 300);
    await assert.rejects(
      u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) => e instanceof UpstreamError && e.kind === 'timeout',
    );
    assert.equal(queries, 1);
    assert.deepEqual(retries, []);
  });

  test('the deadline bounds both tries together', async () => {
    let queries = 0;
    const base = await serve(async (req) => {
      await readBody(req);
      queries += 1;
      // The first is dropped after 200 ms, the second never answered.
      if (queries === 1) setTimeout(() => req.socket.destroy(), 200);
    });
    const { u } = counted(base, 500);
    const started = performance.now();
    await assert.rejects(
      u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal }),
      (e: unknown) => e instanceof UpstreamError && e.kind === 'timeout',
    );
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 450 && elapsed < 900, `${elapsed} ms`);
    assert.equal(queries, 2);
  });

  test('a caller gone while the query is retried ends the retry', async () => {
    let queries = 0;
    let closedSecond: Promise<unknown> | undefined;
    const base = await serve(async (req) => {
      await readBody(req);
      queries += 1;
      if (queries === 1) return void req.socket.destroy();
      closedSecond = once(req.socket, 'close');
    });
    const controller = new AbortController();
    const { u } = counted(base);
    const sent = u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: controller.signal });
    while (queries < 2) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await assert.rejects(sent, (e: unknown) => e instanceof UpstreamError && e.kind === 'aborted');
    await closedSecond;
  });
});

describe('createUpstream: idle connections are dropped before the store drops them', () => {
  test("a store's Keep-Alive: timeout= hint shortens the pool's idle time (hint less a 2 s margin)", async () => {
    const sockets = new Set<unknown>();
    const base = await serve((req, res) => {
      sockets.add(req.socket);
      req.resume();
      res.end('ok');
    });
    // Node's server announces its idle time: `Keep-Alive: timeout=3`.
    servers.at(-1)!.keepAliveTimeout = 3_000;
    const retries: string[] = [];
    const u = createUpstream({ url: base, headers: {}, timeoutMs: 2000, onRetry: (reason) => retries.push(reason) });
    upstreams.push(u);
    const ask = async () =>
      assert.equal(
        await readAll((await u.send({ query: 'ASK {}' }, { accept: 'text/csv', signal: new AbortController().signal })).body),
        'ok',
      );
    await ask();
    await new Promise((resolve) => setTimeout(resolve, 200));
    await ask();
    assert.equal(sockets.size, 1, 'reused within the idle time');
    // 1.3 s idle: past the guard's 1 s (3 s less the margin), within the store's 3 s.
    await new Promise((resolve) => setTimeout(resolve, 1_300));
    await ask();
    assert.equal(sockets.size, 2, 'the guard dropped the idle connection before the store would have');
    assert.deepEqual(retries, []);
  });
});
