// A link on loopback between the guard and a real store: passes every request on, after a delay when asked, records the headers each carried, and can be made to reset connections.

import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running link; its `url` stands in for the store's query URL. */
export interface StoreLink {
  /** The store's query URL, through the link. */
  readonly url: string;
  /** Headers of every request that reached the link, in order. */
  readonly received: IncomingHttpHeaders[];
  /** The query text of every request that reached the link (form field or URL parameter; '' when none), in order. */
  readonly queries: string[];
  /** Time each request is held before it goes on (changeable between requests). */
  delayMs: number;
  /** When true, every request's connection is reset instead of passed on. */
  reset: boolean;
  close(): Promise<void>;
}

/**
 * Starts a link to `storeUrl` (a real store's query URL): the path and query string of each
 * request are kept, the host and port are the store's. A stand-in for the network, not for the
 * store: every answer is the store's own.
 */
export async function startStoreLink(storeUrl: string): Promise<StoreLink> {
  const target = new URL(storeUrl);
  const link: StoreLink = {
    url: '',
    received: [],
    queries: [],
    delayMs: 0,
    reset: false,
    close: async () => undefined,
  };
  const server = createServer((incoming, outgoing) => {
    link.received.push(incoming.headers);
    if (link.reset) return void incoming.socket.destroy();
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const fromUrl = new URL(incoming.url ?? '/', 'http://link').searchParams.get('query');
      link.queries.push(new URLSearchParams(body).get('query') ?? fromUrl ?? '');
      setTimeout(() => {
        const onward = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            path: incoming.url,
            method: incoming.method,
            headers: { ...incoming.headers, host: target.host },
          },
          (answer) => {
            outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(outgoing);
          },
        );
        onward.on('error', () => outgoing.destroy());
        onward.end(Buffer.concat(chunks));
      }, link.delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(link, {
    url: `http://127.0.0.1:${port}${target.pathname}${target.search}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
