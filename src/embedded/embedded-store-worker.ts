// Worker thread entry: loads the data files into Oxigraph and serves its query endpoint on loopback.
import { closeSync, openSync, readSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parentPort, workerData } from 'node:worker_threads';
import { Store } from 'oxigraph';
import { answerQuery, ProtocolError } from './answer-query.js';
import { firstLine } from './first-line.js';

/** What the parent hands the worker. */
export interface WorkerInput {
  readonly dataFiles: readonly string[];
  /** 0 for an ephemeral port; the previous port when replacing a dead worker. */
  readonly port: number;
}

/**
 * What the worker tells the parent: ready or failed once at start, crashed just before dying, and
 * busy / idle around each evaluation (Oxigraph's is synchronous: the parent times it).
 */
export type StoreWorkerReport =
  | { kind: 'ready'; port: number; quads: number }
  | { kind: 'failed'; message: string }
  | { kind: 'crashed'; message: string }
  | { kind: 'busy' }
  | { kind: 'idle' };

/** The parent's only message: close and exit. */
export type WorkerCommand = { kind: 'stop' };

/** Only the query endpoint exists; the store is read-only (there is no update route). */
const QUERY_PATH = '/query';

/** Oxigraph's format names by file extension; .ttl and .nt triples go to the default graph. */
const FORMAT_BY_EXTENSION: Readonly<Record<string, string>> = {
  '.trig': 'application/trig',
  '.nq': 'application/n-quads',
  '.ttl': 'text/turtle',
  '.nt': 'application/n-triples',
};

const port = parentPort;
if (port === null) throw new Error('embedded-store-worker.js runs only as a worker thread');
const input = workerData as WorkerInput;

let store: Store;
try {
  store = loadStore(input.dataFiles);
} catch (error) {
  port.postMessage({ kind: 'failed', message: (error as Error).message } satisfies StoreWorkerReport);
  process.exit(1);
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?', 1)[0];
  const answered =
    path === QUERY_PATH
      ? answerQuery(store, req, res, baseIri, (running) =>
          port.postMessage({ kind: running ? 'busy' : 'idle' } satisfies StoreWorkerReport),
        )
      : Promise.reject(new ProtocolError(404, `${path ?? ''} is not an endpoint of this store; use ${QUERY_PATH}`));
  answered.catch((error: unknown) => {
    if (error instanceof ProtocolError) {
      if (!res.headersSent) {
        res.writeHead(error.status, { 'content-type': 'text/plain; charset=utf-8', ...error.headers });
        res.end(`${error.message}\n`);
      } else res.destroy();
      return;
    }
    if (!(error instanceof Error && error.name === 'RuntimeError')) {
      // The client went away mid-body, or similar: nothing is wrong with the store.
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('embedded store error\n');
      } else res.destroy();
      return;
    }
    // A WASM trap (stack overflow, out-of-bounds access) leaves Oxigraph's instance unusable:
    // answer 500 if possible, then exit so the parent starts a fresh worker.
    if (!res.headersSent) {
      res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
      res.end('embedded store failed; restarting\n');
    }
    port.postMessage({ kind: 'crashed', message: firstLine(error) } satisfies StoreWorkerReport);
    res.on('finish', () => process.exit(70));
    setTimeout(() => process.exit(70), 100).unref();
  });
});

let baseIri = '';
// Loopback only: the store is reachable by this process (and this host) alone.
server.listen(input.port, '127.0.0.1', () => {
  const address = server.address() as AddressInfo;
  baseIri = `http://127.0.0.1:${address.port}${QUERY_PATH}`;
  port.postMessage({ kind: 'ready', port: address.port, quads: store.size } satisfies StoreWorkerReport);
});
server.on('error', (error) => {
  port.postMessage({
    kind: 'failed',
    message: `embedded store cannot listen on 127.0.0.1:${input.port}: ${error.message}`,
  } satisfies StoreWorkerReport);
  process.exit(1);
});

port.on('message', (command: WorkerCommand) => {
  if (command.kind !== 'stop') return;
  server.close(() => process.exit(0));
  server.closeAllConnections();
});

function loadStore(files: readonly string[]): Store {
  const loaded = new Store();
  for (const file of files) {
    const format = FORMAT_BY_EXTENSION[extname(file).toLowerCase()];
    if (format === undefined) throw new Error(`cannot load ${file}: unknown extension (use .trig, .nq, .ttl or .nt)`);
    let fd: number;
    try {
      fd = openSync(file, 'r');
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      throw new Error(`cannot load ${file}: ${code === 'ENOENT' ? 'no such file' : firstLine(error)}`, { cause: error });
    }
    try {
      // Chunks rather than one string: a large file never exists twice in memory. Relative IRIs
      // in a file resolve against the file's own URL.
      loaded.load(chunksOf(fd), { format, base_iri: pathToFileURL(file).href });
    } catch (error) {
      throw new Error(`cannot load ${file}: ${firstLine(error)}`, { cause: error });
    } finally {
      closeSync(fd);
    }
  }
  return loaded;
}

function* chunksOf(fd: number): Generator<Uint8Array> {
  const buffer = Buffer.allocUnsafe(1 << 20);
  // new Uint8Array(view) copies, so the buffer can be reused for the next read.
  for (let n = readSync(fd, buffer); n > 0; n = readSync(fd, buffer)) yield new Uint8Array(buffer.subarray(0, n));
}
