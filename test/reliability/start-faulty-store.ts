// A SPARQL store on loopback whose answers to queries fail on demand: slow, cut, silent, reset or huge.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A small SELECT answer (one binding). */
export const SMALL_ANSWER = '{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://example.org/s"}}]}}\n';

/**
 * How the store answers a query that is not the guard's dataset check: `answer` at once;
 * `huge` streams 64 MiB as fast as it is read; `drip` one small chunk every 100 ms for a
 * minute; `cut` half an answer then a closed connection; `silent` nothing, ever; `reset`
 * destroys the connection on arrival; `drip-error` a 500 whose text comes as `drip` does.
 */
export type StoreMode = 'answer' | 'huge' | 'drip' | 'cut' | 'silent' | 'reset' | 'drip-error';

export interface FaultyStore {
  readonly url: string;
  /** Mode for the queries that follow. */
  mode: StoreMode;
  /** When true, the dataset check's ASK queries get no answer either. */
  silentChecks: boolean;
  /** Queries received (the dataset check's included). */
  received: number;
  close(): Promise<void>;
}

/**
 * Starts the store. Its ASK probes are answered as a store honouring FROM / FROM NAMED would,
 * unless `silentChecks`. A stub only because a real store cannot be made to fail on demand.
 */
export async function startFaultyStore(port = 0): Promise<FaultyStore> {
  const sockets = new Set<Socket>();
  const store: FaultyStore = { url: '', mode: 'answer', silentChecks: false, received: 0, close: async () => {} };
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    const query = new URLSearchParams(body).get('query') ?? '';
    store.received += 1;
    if (/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query)) {
      if (store.silentChecks) return;
      response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
      response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
      return;
    }
    const type = { 'content-type': 'application/sparql-results+json' };
    switch (store.mode) {
      case 'answer':
        response.writeHead(200, type).end(SMALL_ANSWER);
        return;
      case 'silent':
        return;
      case 'reset':
        request.socket.destroy();
        return;
      case 'cut':
        response.writeHead(200, type);
        response.write(SMALL_ANSWER.slice(0, 30), () => setTimeout(() => request.socket.destroy(), 50));
        return;
      case 'drip':
      case 'drip-error': {
        response.writeHead(store.mode === 'drip' ? 200 : 500, store.mode === 'drip' ? type : { 'content-type': 'text/plain' });
        let left = 600;
        const timer = setInterval(() => {
          if ((left -= 1) <= 0 || response.destroyed) {
            clearInterval(timer);
            response.end();
          } else response.write(' ');
        }, 100);
        response.once('close', () => clearInterval(timer));
        return;
      }
      case 'huge': {
        response.writeHead(200, type);
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let left = 1024;
        const pump = (): void => {
          while (left > 0 && !response.destroyed) {
            left -= 1;
            if (!response.write(chunk)) return void response.once('drain', pump);
          }
          if (!response.destroyed) response.end();
        };
        pump();
        return;
      }
    }
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  Object.assign(store, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  });
  return store;
}
