// The metrics listener: GET /metrics on its own port, apart from the SPARQL port.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A running metrics listener. */
export interface MetricsListener {
  /** Base URL to reach it from this host, e.g. `http://127.0.0.1:9464`; the scrape is at `${url}/metrics`. */
  readonly url: string;
  /** The address and port really bound, e.g. `0.0.0.0:9464`: who else can reach it. */
  readonly address: string;
  close(): Promise<void>;
}

/** Where to listen, and how to make the text of a scrape. */
export interface ServeMetricsOptions {
  readonly port: number;
  readonly host: string;
  readonly scrape: () => Promise<string>;
  readonly contentType: string;
  /** One line when a scrape fails (a worker that did not answer the primary, for instance). */
  readonly log: (entry: Readonly<Record<string, unknown>>) => void;
}

/**
 * Listens for scrapes: `GET /metrics` answers the text format; anything else is a one-line
 * 404 / 405. No credentials: the metrics carry no agent, key or query (docs/design/metrics.md,
 * "Metrics"), and the listener belongs on an address only the metrics stack reaches.
 */
export async function serveMetrics(options: ServeMetricsOptions): Promise<MetricsListener> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '/').split('?')[0];
    const plain = (status: number, text: string, headers: Record<string, string> = {}) => {
      response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
      response.end(`${text}\n`);
    };
    if (path !== '/metrics') return plain(404, 'not found: the metrics are at /metrics');
    if (request.method !== 'GET') return plain(405, `method ${request.method} is not allowed here`, { allow: 'GET' });
    options.scrape().then(
      (text) => {
        response.writeHead(200, { 'content-type': options.contentType, 'cache-control': 'no-store' });
        response.end(text);
      },
      (error: unknown) => {
        options.log({ event: 'metrics-scrape-failed', error: error instanceof Error ? error.message : String(error) });
        plain(503, 'metrics are not available right now');
      },
    );
  });
  // Scrapes are rare and small: no keep-alive connection is held open for long.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host === '[::]' ? '[::1]' : host}:${address.port}`,
    address: `${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
