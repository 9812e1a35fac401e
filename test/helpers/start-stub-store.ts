// A SPARQL store on loopback that answers the guard's dataset check as an honest store and every other query with a fixed answer.

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A small SELECT answer (one binding). */
export const STUB_ANSWER = '{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://example.org/s"}}]}}\n';

export interface StubStore {
  /** The query URL. */
  readonly url: string;
  /** Every request the store received, in order: the query text ('' when none). */
  readonly queries: string[];
  close(): Promise<void>;
}

export interface StubStoreOptions {
  /** Extra headers of every answer to a query that is not the dataset check. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Status of those answers (default 200). */
  readonly status?: number;
  /** Body of those answers (default STUB_ANSWER); sent in two writes without a length, so it streams. */
  readonly body?: string;
  /** A Server header on every answer, the dataset check's included (the guard names the store by it). */
  readonly server?: string;
}

/**
 * Starts the store. It answers the guard's ASK probes as a store honouring FROM / FROM NAMED
 * (`ASK {}` true, any triple false) so the guard admits queries, and records every request.
 * A stub only because a real store cannot be made to send the headers a test needs.
 */
export async function startStubStore(options: StubStoreOptions = {}): Promise<StubStore> {
  const queries: string[] = [];
  const server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    const query = new URLSearchParams(body).get('query') ?? new URL(request.url ?? '/', 'http://x').searchParams.get('query') ?? '';
    queries.push(query);
    if (/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query)) {
      response.writeHead(200, {
        'content-type': 'application/sparql-results+json',
        ...(options.server !== undefined && { server: options.server }),
      });
      response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
      return;
    }
    response.writeHead(options.status ?? 200, {
      'content-type': 'application/sparql-results+json',
      ...(options.server !== undefined && { server: options.server }),
      ...options.headers,
    });
    const answer = options.body ?? STUB_ANSWER;
    response.write(answer.slice(0, 10));
    setImmediate(() => response.end(answer.slice(10)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`,
    queries,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
