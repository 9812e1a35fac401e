// A SPARQL store in a process of its own: Node's HTTP server with its defaults (5 s keep-alive) that now and then blocks its event loop past that keep-alive.

import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

/** A small SELECT answer (one binding). */
const ANSWER = '{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://example.org/s"}}]}}\n';

/** What the parent learns from the store process. */
interface Report {
  readonly port?: number;
  readonly answered?: number;
}

export interface StallingStore {
  readonly url: string;
  /** Queries the store has answered so far (not counting the guard's dataset checks), asked of its process. */
  answered(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Starts the store in a child process (a stall of its event loop must not stall the guard):
 * every `stallEvery`-th query that is not the guard's dataset check blocks the process for
 * `stallMs` before it is answered. The server keeps Node's defaults, so idle connections close
 * after 5 s, and after a stall every connection idle since before it is closed at once, while the
 * guard may have just sent a query on it: the race a pooled client meets in front of such a store.
 */
export async function startStallingStore(options: { stallEvery: number; stallMs: number }): Promise<StallingStore> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [String(options.stallEvery), String(options.stallMs)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('message', (report: Report) => resolve(report.port!));
    child.once('exit', (code) => reject(new Error(`the stalling store exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/sparql`,
    answered: () =>
      new Promise<number>((resolve) => {
        child.once('message', (report: Report) => resolve(report.answered!));
        child.send('count');
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill();
      }),
  };
}

/** The store itself, when this file runs as the child process. */
function serve(stallEvery: number, stallMs: number): void {
  let queries = 0;
  const server = createServer(async (request, response) => {
    let body = '';
    for await (const chunk of request) body += String(chunk);
    const query = new URLSearchParams(body).get('query') ?? '';
    // The guard's dataset check, answered as a store honouring FROM / FROM NAMED would.
    if (/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query)) {
      response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
      response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
      return;
    }
    queries += 1;
    if (queries % stallEvery === 0) {
      // A long query, as a store whose query engine runs on its event loop has them.
      const until = Date.now() + stallMs;
      while (Date.now() < until);
    }
    response.writeHead(200, { 'content-type': 'application/sparql-results+json' });
    response.end(ANSWER);
  });
  server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port } satisfies Report));
  process.on('message', () => process.send!({ answered: queries } satisfies Report));
  process.on('disconnect', () => process.exit(0));
}

if (process.send !== undefined && process.argv[1] === fileURLToPath(import.meta.url)) {
  serve(Number(process.argv[2]), Number(process.argv[3]));
}
