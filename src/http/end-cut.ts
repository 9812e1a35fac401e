// How a connection whose answer was cut after its headers went out ends, so that the client can tell the answer is not whole.

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Ends `socket`, whose answer (`response`) is cut short. With a length or chunks the client can
 * tell by itself (too few bytes, no last chunk), and a clean close is kept (it delivers what was
 * already sent); an answer framed by the connection's close (an HTTP/1.0 client, or nginx's
 * default `proxy_http_version 1.0`) would look whole after a clean close, so that connection is
 * reset. Before the headers went out, the connection is closed as usual. Only a live socket is
 * ended here (the stand-in socket of fastify's `inject` is left to fastify).
 */
export function endCut(response: ServerResponse, socket: Socket): void {
  if (socket.destroyed !== false) return;
  if (response.headersSent && !response.chunkedEncoding && !response.hasHeader('content-length')) socket.resetAndDestroy();
  else socket.destroy();
}
