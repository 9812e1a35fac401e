// Soak: the real bin under mixed hostile traffic for SOAK_SECONDS; prints RSS over time, failures by kind, and log lines against requests.

import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describeLoad, describeMachine } from './_util/describe-machine.js';
import { tableHeader, tableRow } from './_util/markdown-table.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const CLIENTS = Number(process.env.SOAK_CLIENTS ?? 8);
/** The bin to soak (another build's, to compare): default this build's. */
const BIN = process.env.SOAK_BIN ?? fileURLToPath(new URL('../src/cli.js', import.meta.url));
const QUERY = encodeURIComponent('SELECT * WHERE { ?s ?p ?o }');
const SMALL = '{"head":{"vars":["s"]},"results":{"bindings":[{"s":{"type":"uri","value":"http://example.org/s"}}]}}\n';

/** What a client does in one request, and how often (weights). */
const KINDS = {
  normal: 70,
  'abandon-stream': 8,
  'store-cuts': 6,
  'slow-reader': 2,
  'stalled-body': 6,
  malformed: 4,
  'big-answer': 4,
} as const;
type Kind = keyof typeof KINDS;

/**
 * A store whose answer depends on a marker the test puts in the guard's query: the guard
 * forwards the rewritten query, so the marker is the LIMIT, which the rewriting keeps.
 */
async function startStore(): Promise<{ url: string; close(): void }> {
  const server = createServer(async (incoming: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of incoming) body += String(chunk);
    const query = new URLSearchParams(body).get('query') ?? '';
    response.setHeader('content-type', 'application/sparql-results+json');
    if (/^ASK\nFROM <urn:x-sparql-guard:empty>/.test(query))
      return void response.end(`{"head":{},"boolean":${/WHERE \{ \}$/.test(query)}}`);
    const limit = Number(/LIMIT\s+(\d+)/i.exec(query)?.[1] ?? 0);
    if (limit === 2) {
      // drip for 3 s
      let n = 30;
      const timer = setInterval(() => (--n <= 0 || response.destroyed ? (clearInterval(timer), response.end()) : response.write(' ')), 100);
      return;
    }
    if (limit === 3) return void response.write(SMALL.slice(0, 30), () => setTimeout(() => incoming.socket.destroy(), 20));
    if (limit === 4) return void response.end(Buffer.alloc(8 * 1024 * 1024, 0x20));
    response.end(SMALL);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sparql`, close: () => server.close() };
}

function pick(): Kind {
  const total = Object.values(KINDS).reduce((a, b) => a + b, 0);
  let r = Math.random() * total;
  for (const [kind, weight] of Object.entries(KINDS) as [Kind, number][]) if ((r -= weight) < 0) return kind;
  return 'normal';
}

/** One request of `kind`; resolves with how it ended as the client saw it. */
function run(base: string, kind: Kind): Promise<string> {
  const { hostname, port } = new URL(base);
  const limitFor: Partial<Record<Kind, number>> = { 'abandon-stream': 2, 'store-cuts': 3, 'slow-reader': 4, 'big-answer': 4 };
  const limit = limitFor[kind];
  const path = `/sparql?query=${limit === undefined ? QUERY : encodeURIComponent(`SELECT * WHERE { ?s ?p ?o } LIMIT ${limit}`)}`;
  return new Promise((done) => {
    const guardTimer = setTimeout(() => done('client-gave-up-60s'), 60_000);
    const finish = (how: string) => {
      clearTimeout(guardTimer);
      done(how);
    };
    if (kind === 'stalled-body' || kind === 'malformed' || kind === 'slow-reader') {
      const socket = connect(Number(port), hostname);
      let text = '';
      socket.on('error', () => undefined);
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      socket.on('close', () => finish(`${kind}:${/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 'closed-without-answer'}`));
      socket.on('connect', () => {
        if (kind === 'stalled-body')
          socket.write('POST /sparql HTTP/1.1\r\nHost: g\r\nContent-Type: application/sparql-query\r\nContent-Length: 40\r\n\r\nSELECT');
        else if (kind === 'malformed') socket.write('GET /healthz HTTP/1.1\r\nHost: g\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n');
        else {
          socket.pause();
          socket.write(`GET ${path} HTTP/1.1\r\nHost: g\r\n\r\n`);
        }
      });
      // A client only waits so long: then it leaves, which ends the soak's view of it.
      setTimeout(() => socket.destroy(), kind === 'slow-reader' ? 70_000 : 30_000).unref();
      return;
    }
    const outgoing = request({ hostname, port, path, agent: false }, (answer) => {
      let seen = 0;
      answer.on('data', (chunk: Buffer) => {
        seen += chunk.length;
        if (kind === 'abandon-stream' && seen >= 3) outgoing.destroy();
      });
      answer.on('close', () => finish(`${kind}:${answer.statusCode}${answer.complete ? '' : '-cut'}`));
    });
    outgoing.on('error', (error: Error & { code?: string }) => finish(`${kind}:error-${error.code ?? 'unknown'}`));
    outgoing.end();
  });
}

function rssMb(pid: number): number {
  const match = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round(Number(match?.[1] ?? 0) / 1024);
}

async function main(): Promise<void> {
  process.stdout.write(
    `### Soak: mixed hostile traffic\n\nmachine: ${describeMachine()}\nload: ${describeLoad()}\nsoak: \`${BIN}\`, ${SECONDS} s, ${CLIENTS} clients\n\n`,
  );
  const store = await startStore();
  const folder = mkdtempSync(join(tmpdir(), 'sparql-guard-soak-'));
  const configFile = join(folder, 'guard.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      upstream: store.url,
      policies: [resolve('test/fixtures/integration/policies.ttl')],
      host: '127.0.0.1',
      port: 0,
      timeoutMs: 10_000,
    }),
  );
  const { GUARD_UPSTREAM: _u, PORT: _p, GUARD_WORKERS: _w, ...env } = process.env;
  const guard = spawn(process.execPath, [BIN, 'serve'], {
    env: { ...env, GUARD_CONFIG: configFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: Record<string, unknown>[] = [];
  let pending = '';
  let onLine: () => void = () => {};
  guard.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const parts = (pending + chunk).split('\n');
    pending = parts.pop() ?? '';
    for (const part of parts) if (part.trim() !== '') lines.push(JSON.parse(part) as Record<string, unknown>);
    onLine();
  });
  const base = await new Promise<string>((done) => {
    onLine = () => {
      const listening = lines.find((line) => line.event === 'listening');
      if (listening !== undefined) done(String(listening.url));
    };
  });

  const ended: Record<string, number> = {};
  let sent = 0;
  let finished = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const rss: string[] = [];
  const sampler = setInterval(
    () => rss.push(`${Math.round((performance.now() - deadline) / 1000 + SECONDS)}s ${rssMb(guard.pid!)} MB`),
    10_000,
  );
  rss.push(`0s ${rssMb(guard.pid!)} MB`);
  const client = async () => {
    while (performance.now() < deadline) {
      sent += 1;
      const how = await run(base, pick());
      finished += 1;
      ended[how] = (ended[how] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, client));
  clearInterval(sampler);
  rss.push(`end ${rssMb(guard.pid!)} MB`);
  await new Promise((done) => setTimeout(done, 2000)); // the last batch of log lines
  const requestLines = lines.filter((line) => line.status !== undefined && line.event === undefined);
  const outcomes: Record<string, number> = {};
  for (const line of requestLines) {
    const key = String(line.outcome ?? 'no outcome field');
    outcomes[key] = (outcomes[key] ?? 0) + 1;
  }
  guard.kill('SIGTERM');
  await new Promise((done) => guard.once('exit', done));
  store.close();
  rmSync(folder, { recursive: true, force: true });
  process.stdout.write(
    [
      `- RSS: ${rss.join(', ')}`,
      `- requests sent ${sent}, finished ${finished}`,
      `- request log lines: ${requestLines.length} for ${sent} requests (${sent - requestLines.length} without a line)`,
      '',
      tableHeader(['ended as the client saw it', 'requests'], 'lr'),
      ...Object.entries(ended)
        .sort()
        .map(([how, n]) => tableRow([how, n])),
      '',
      tableHeader(['log lines by outcome', 'lines'], 'lr'),
      ...Object.entries(outcomes)
        .sort()
        .map(([outcome, n]) => tableRow([outcome, n])),
      '',
    ].join('\n') + '\n',
  );
}

await main();
