// The baseline of the load benchmark: a plain Node reverse proxy that forwards each request as it is, with keep-alive.

import { Agent, createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';

const target = new URL(process.argv[2] ?? '');
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
/** Hop-by-hop headers (RFC 9110 section 7.6.1) are not forwarded. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'host']);

const server = createServer({ keepAliveTimeout: 60_000 }, (incoming, outgoing) => {
  const headers: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(incoming.headers)) if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
  const upstream = httpRequest(
    { host: target.hostname, port: target.port, path: target.pathname, method: incoming.method, headers, agent },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, { 'content-type': answer.headers['content-type'] ?? 'application/octet-stream' });
      answer.pipe(outgoing);
    },
  );
  upstream.on('error', () => {
    if (!outgoing.headersSent) outgoing.writeHead(502);
    outgoing.end();
  });
  incoming.pipe(upstream);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
