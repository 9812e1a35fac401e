// Graceful shutdown: close() and SIGTERM stop accepting, let requests in flight finish within a bound, and exit 0.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { INTEGRATION_API_KEYS, INTEGRATION_POLICIES, startTestGuard } from '../helpers/start-test-guard.js';

const BIN = fileURLToPath(new URL('../../src/cli.js', import.meta.url));
const ANSWER = '{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://example.org/s"}}]}}\n';

/**
 * A store that holds its answer back until the test releases it (or, for `stall`, sends
 * half an answer and then nothing), so that a request is provably in flight during the
 * shutdown. It answers the guard's start-up ASK checks as a store honouring FROM.
 */
interface HeldStore {
  readonly url: string;
  /** Resolves when a SELECT has arrived and is being held. */
  arrived(): Promise<void>;
  release(): void;
  close(): Promise<void>;
}

async function startHeldStore(mode: 'hold' | 'stall'): Promise<HeldStore> {
  let onArrival: () => void = () => {};
  let arrival = new Promise<void>((resolve) => (onArrival = resolve));
  let onRelease: () => void = () => {};
  const released = new Promise<void>((resolve) => (onRelease = resolve));
  const server: Server = createServer(async (incoming: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of incoming) body += String(chunk);
    const query = new URLSearchParams(body).get('query') ?? '';
    response.setHeader('content-type', 'application/sparql-results+json');
    if (/^\s*ASK\b/i.test(query)) {
      response.end(`{"head":{},"boolean":${/WHERE\s*\{\s*\}\s*$/i.test(query)}}`);
      return;
    }
    onArrival();
    if (mode === 'stall') {
      response.write(ANSWER.slice(0, 20));
      return; // never ends: only a cut connection ends this response
    }
    await released;
    response.end(ANSWER);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`,
    arrived: () => arrival,
    release: onRelease,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        arrival = Promise.resolve();
      }),
  };
}

/** A query over a fresh connection (no keep-alive pool): status, and the body as far as it came. */
function query(endpoint: string): Promise<{ status: number; body: string; complete: boolean }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(
      endpoint,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/sparql-query' } },
      (answer) => {
        let body = '';
        answer.setEncoding('utf8');
        answer.on('data', (text: string) => (body += text));
        answer.on('end', () => resolve({ status: answer.statusCode ?? 0, body, complete: true }));
        answer.on('error', () => resolve({ status: answer.statusCode ?? 0, body, complete: false }));
        answer.on('aborted', () => resolve({ status: answer.statusCode ?? 0, body, complete: false }));
      },
    );
    outgoing.on('error', reject);
    outgoing.end('SELECT ?s WHERE { ?s ?p ?o }');
  });
}

describe('RunningGuard.close()', () => {
  it('stops accepting at once, lets the request in flight finish, then resolves', async () => {
    const store = await startHeldStore('hold');
    const t = await startTestGuard({ upstream: store.url });
    try {
      const inFlight = query(t.endpoint);
      await store.arrived();
      const closed = t.guard.close();
      // A new connection is refused while the old request is still being answered.
      await assert.rejects(query(t.endpoint), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED');
      let closeDone = false;
      void closed.then(() => (closeDone = true));
      await new Promise((resolve) => setTimeout(resolve, 50));
      assert.equal(closeDone, false, 'close() waits for the request in flight');
      store.release();
      const answer = await inFlight;
      assert.deepEqual(answer, { status: 200, body: ANSWER, complete: true });
      await closed;
      assert.equal(t.guard.close(), closed, 'a second close() is the same shutdown');
    } finally {
      await t.close();
      await store.close();
    }
  });

  it('cuts a response that outlives the grace period, so the shutdown is bounded', { timeout: 20_000 }, async () => {
    const store = await startHeldStore('stall');
    const t = await startTestGuard({ upstream: store.url });
    try {
      const inFlight = query(t.endpoint);
      await store.arrived();
      await t.guard.close({ drainMs: 0, graceMs: 200 });
      const answer = await inFlight;
      assert.equal(answer.status, 200);
      assert.equal(answer.complete, false, 'the stalled answer is cut, not completed');
      assert.equal(answer.body, ANSWER.slice(0, 20));
    } finally {
      await t.close();
      await store.close();
    }
  });

  it('cuts an answer framed by the close (an HTTP/1.0 caller) with a reset, so it never looks whole', { timeout: 20_000 }, async () => {
    const store = await startHeldStore('stall');
    const t = await startTestGuard({ upstream: store.url });
    try {
      const { port } = new URL(t.guard.url);
      const inFlight = new Promise<{ text: string; error: string | undefined }>((resolve) => {
        const socket = connect(Number(port), '127.0.0.1');
        let text = '';
        let error: string | undefined;
        socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
        socket.on('error', (each: NodeJS.ErrnoException) => (error = each.code));
        socket.on('close', () => resolve({ text, error }));
        const body = 'SELECT ?s WHERE { ?s ?p ?o }';
        socket.write(`POST /sparql HTTP/1.0\r\nContent-Type: application/sparql-query\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      });
      await store.arrived();
      await t.guard.close({ drainMs: 0, graceMs: 200 });
      const answer = await inFlight;
      assert.match(answer.text, /^HTTP\/1\.1 200 [^]*\r\n\r\n/);
      assert.doesNotMatch(answer.text, /\r\n(content-length|transfer-encoding):/i, 'the answer is framed by the close');
      assert.equal(answer.error, 'ECONNRESET', 'a clean close would pass the cut answer off as whole');
    } finally {
      await t.close();
      await store.close();
    }
  });
});

/** The real bin, `serve`, with its JSON log lines collected as they come. */
interface ServeProcess {
  readonly child: ChildProcess;
  readonly lines: Record<string, unknown>[];
  waitFor(test: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  exited: Promise<number | null>;
}

function serve(configFile: string): ServeProcess {
  const { GUARD_CONFIG: _c, GUARD_UPSTREAM: _u, GUARD_WORKERS: _w, PORT: _p, ...env } = process.env;
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, GUARD_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (text) => {
    lines.push(JSON.parse(text) as Record<string, unknown>);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    exited,
    waitFor: (test) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const found = lines.find(test);
          if (found !== undefined) {
            waiters.delete(check);
            resolve(found);
          }
        };
        waiters.add(check);
        void exited.then((code) => reject(new Error(`serve exited with code ${code} first`)));
        check();
      }),
  };
}

describe('sparql-guard serve, on SIGTERM', () => {
  let folder: string;
  before(() => {
    folder = mkdtempSync(join(tmpdir(), 'sparql-guard-shutdown-'));
  });
  after(() => rmSync(folder, { recursive: true, force: true }));

  it('finishes the request in flight, then exits 0', { timeout: 60_000 }, async () => {
    const store = await startHeldStore('hold');
    const configFile = join(folder, 'guard.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        upstream: store.url,
        policies: [INTEGRATION_POLICIES],
        auth: { apiKeys: INTEGRATION_API_KEYS },
        host: '127.0.0.1',
        port: 0,
      }),
    );
    const guard = serve(configFile);
    try {
      const listening = await guard.waitFor((line) => line.event === 'listening');
      const endpoint = `${String(listening.url)}/sparql`;
      const inFlight = query(endpoint);
      await store.arrived();
      guard.child.kill('SIGTERM');
      await guard.waitFor((line) => line.event === 'shutdown' && line.signal === 'SIGTERM');
      store.release();
      assert.deepEqual(await inFlight, { status: 200, body: ANSWER, complete: true });
      assert.equal(await guard.exited, 0);
      const requestLog = guard.lines.find((line) => line.method === 'POST');
      assert.equal(requestLog?.status, 200, 'the request was logged as answered');
    } finally {
      guard.child.kill('SIGKILL');
      await store.close();
    }
  });
});
