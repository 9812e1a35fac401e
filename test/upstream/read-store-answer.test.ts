// readStoreAnswer against a real loopback HTTP server: whole answers in plain and shared memory, chunked and with a length, and the size bound.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { createUpstream, type Upstream } from '../../src/upstream/create-upstream.js';
import { readStoreAnswer } from '../../src/upstream/read-store-answer.js';

const servers: Server[] = [];
const upstreams: Upstream[] = [];
after(async () => {
  await Promise.all(upstreams.map((u) => u.close().catch(() => undefined)));
  for (const server of servers) {
    server.closeAllConnections();
    server.close();
  }
});

/** An answer of `bytes` bytes whose every byte tells its position, so a misplaced chunk shows. */
function answerOf(bytes: number): Buffer {
  const body = Buffer.alloc(bytes);
  for (let at = 0; at < bytes; at += 1) body[at] = (at * 31 + (at >>> 16)) & 0xff;
  return body;
}

/** A store on loopback sending `body` in 64 KiB writes, with its Content-Length or chunked. */
async function storeSending(body: Buffer, withLength: boolean): Promise<Upstream> {
  const server = createServer((_request, response: ServerResponse) => {
    response.writeHead(200, {
      'content-type': 'application/n-triples; charset=utf-8',
      ...(withLength && { 'content-length': body.length }),
    });
    let at = 0;
    const next = () => {
      while (at < body.length) {
        const end = Math.min(at + 65536, body.length);
        const more = response.write(body.subarray(at, end));
        at = end;
        if (!more) return void response.once('drain', next);
      }
      response.end();
    };
    next();
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const upstream = createUpstream({
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/query`,
    headers: {},
    timeoutMs: 10_000,
  });
  upstreams.push(upstream);
  return upstream;
}

const read = (upstream: Upstream, maxBytes: number, sharedMemory: boolean) =>
  readStoreAnswer(upstream, 'CONSTRUCT WHERE { ?s ?p ?o }', { accept: 'application/n-triples', timeoutMs: 10_000, maxBytes, sharedMemory });

describe('readStoreAnswer', () => {
  // 5 MB: past the first megabyte a shared body reserves when no length is sent, so it grows.
  const body = answerOf(5 * 1024 * 1024 + 17);

  for (const withLength of [false, true]) {
    const how = withLength ? 'with a Content-Length' : 'chunked';
    test(`reads a 5 MB answer sent ${how} whole into shared memory, every byte in place`, async () => {
      const answer = await read(await storeSending(body, withLength), 64 * 1024 * 1024, true);
      assert.equal(answer.contentType, 'application/n-triples');
      assert.ok(answer.body.buffer instanceof SharedArrayBuffer);
      assert.equal(answer.body.length, body.length);
      assert.ok(answer.body.equals(body));
    });

    test(`reads a 5 MB answer sent ${how} whole into plain memory`, async () => {
      const answer = await read(await storeSending(body, withLength), 64 * 1024 * 1024, false);
      assert.ok(!(answer.body.buffer instanceof SharedArrayBuffer));
      assert.ok(answer.body.equals(body));
    });

    for (const sharedMemory of [true, false]) {
      test(`refuses an answer sent ${how} one byte over maxBytes (${sharedMemory ? 'shared' : 'plain'} memory)`, async () => {
        await assert.rejects(read(await storeSending(body, withLength), body.length - 1, sharedMemory), {
          message: `the store's answer is larger than ${body.length - 1} bytes`,
        });
      });
    }

    test(`takes an answer sent ${how} of exactly maxBytes`, async () => {
      const answer = await read(await storeSending(body, withLength), body.length, true);
      assert.ok(answer.body.equals(body));
    });
  }

  test('reads an empty answer into shared memory', async () => {
    const answer = await read(await storeSending(Buffer.alloc(0), false), 1024, true);
    assert.equal(answer.body.length, 0);
  });
});
