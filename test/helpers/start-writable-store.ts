// A real Oxigraph store on loopback with a query and an update endpoint, as an application's store is, plus switches that force faults.

import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Store } from 'oxigraph';
import { answerQuery, ProtocolError } from '../../src/embedded/answer-query.js';

/** A fault forced on CONSTRUCT queries (the guard's own dataset probes are still answered). */
export type StoreFault =
  | 'none'
  /** Never answers. */
  | 'hang'
  /** 200 with an HTML page. */
  | 'html'
  /** 200 `text/turtle` holding an N3 formula. */
  | 'formula'
  /** 500 with a message. */
  | 'status-500';

export interface WritableStore {
  /** The query endpoint. */
  readonly queryUrl: string;
  /** The update endpoint (SPARQL 1.1 Update, form `update=` or `application/sparql-update`). */
  readonly updateUrl: string;
  /** CONSTRUCT queries received so far. */
  readonly constructs: () => number;
  /** Runs a SPARQL Update through the update endpoint over HTTP, as an application would. */
  update(text: string): Promise<void>;
  fault(kind: StoreFault): void;
  /** Stops listening and cuts every connection (connections are refused until `up`). */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts Oxigraph (the npm package the embedded store runs) in this process, loaded with
 * `dataFiles` (TriG), serving `/query` exactly as the embedded store does and `/update`.
 * Faults are switches because a real store cannot be told to send garbage.
 */
export async function startWritableStore(dataFiles: readonly string[] = []): Promise<WritableStore> {
  const store = new Store();
  for (const file of dataFiles) store.load(readFileSync(file, 'utf8'), { format: 'application/trig' });
  let fault: StoreFault = 'none';
  let constructs = 0;
  const hanging = new Set<ServerResponse>();

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (path === '/update') {
      let body = '';
      for await (const chunk of req) body += String(chunk);
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
      const text = type === 'application/sparql-update' ? body : (new URLSearchParams(body).get('update') ?? '');
      try {
        store.update(text);
      } catch (error) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`);
        return;
      }
      res.writeHead(204).end();
      return;
    }
    if (path !== '/query') throw new ProtocolError(404, 'no such endpoint');
    // Peek at the query to apply a fault to CONSTRUCT only; answerQuery reads the body again.
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const query = new URLSearchParams(body.toString('utf8')).get('query') ?? '';
    const construct = /\bCONSTRUCT\b/i.test(query);
    if (construct) constructs += 1;
    if (construct && fault !== 'none') {
      if (fault === 'hang') {
        hanging.add(res);
        return;
      }
      if (fault === 'html') res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>maintenance</body></html>');
      if (fault === 'formula') {
        res
          .writeHead(200, { 'content-type': 'text/turtle' })
          .end(
            '<https://example.org/a> <https://example.org/b> { <https://example.org/c> <https://example.org/d> <https://example.org/e> } .\n',
          );
      }
      if (fault === 'status-500') res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
      return;
    }
    const replay = Object.assign(
      (async function* () {
        yield body;
      })(),
      { method: req.method, url: req.url, headers: req.headers },
    ) as unknown as IncomingMessage;
    await answerQuery(store, replay, res, 'http://localhost/');
  };

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (res.headersSent) return void res.destroy();
      const status = error instanceof ProtocolError ? error.status : 500;
      res.writeHead(status, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  const base = `http://127.0.0.1:${port}`;

  return {
    queryUrl: `${base}/query`,
    updateUrl: `${base}/update`,
    constructs: () => constructs,
    async update(text) {
      const response = await fetch(`${base}/update`, {
        method: 'POST',
        headers: { 'content-type': 'application/sparql-update' },
        body: text,
      });
      if (response.status !== 204) throw new Error(`update failed: ${response.status} ${await response.text()}`);
    },
    fault(kind) {
      fault = kind;
      if (kind !== 'hang') for (const res of hanging) res.destroy();
      if (kind !== 'hang') hanging.clear();
    },
    async down() {
      for (const res of hanging) res.destroy();
      hanging.clear();
      const closed = new Promise<void>((done) => server.close(() => done()));
      server.closeAllConnections();
      await closed;
    },
    async up() {
      await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      if (server.listening) await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
