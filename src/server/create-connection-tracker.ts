// Follows every connection and request of the app: bounds on connections and silence, one log line per request however it ended, and the shutdown's cut.

import type { FastifyInstance, FastifyReply } from 'fastify';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ERROR_CODE_HEADER, GuardError, type ErrorCode } from '../guard-error.js';
import { PRIVATE_NO_STORE } from '../http/cache-control.js';
import { endCut } from '../http/end-cut.js';
import { pathOf } from '../http/path-of.js';
import { ALLOW_QUERY, setIdleBound } from '../http/query-route.js';
import { renderError } from '../http/render-error.js';
import { secondsSince, type RequestOutcome } from '../http/request-state.js';
import type { GuardMetrics } from '../metrics/create-metrics.js';
import type { AuditLog } from './create-audit-log.js';

/** Bounds on what a client controls (GuardConfig `http`, and `timeoutMs` for a slow reader). */
export interface ClientLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  /** Longest time a streamed answer may wait for the client to read more. */
  readonly sendIdleMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Cuts every connection, logging the requests still under way as `shutdown-cut`. */
    cutAllConnections(): void;
  }
}

/** Connections open beyond `maxConnections` that are still accepted, to be answered 503 and closed. */
const REFUSAL_ROOM = 64;

/** What the app hands to fastify and installs on itself. */
export interface ConnectionTracker {
  /** fastify's `clientErrorHandler`: errors of node's HTTP parser and its time bounds. */
  readonly clientError: (error: ParserError, socket: Socket) => void;
  /**
   * Installs the bounds on the app's server, the request log's onRequest hook (which also
   * answers 503 on a connection past `maxConnections`) and `cutAllConnections`.
   */
  readonly attach: (app: FastifyInstance) => void;
}

/**
 * The status a request's log line, audit record and metrics give when the connection ended before
 * any status was sent: nginx's 499 when the client closed it, its 444 when the guard did (the
 * shutdown's cut). Not statuses of the protocol: no client ever receives them.
 */
export const CLIENT_CLOSED_STATUS = 499;
export const CLOSED_UNANSWERED_STATUS = 444;

/**
 * Creates the tracker of one app; `log` gets one line per request (and per connection ended before
 * a request), `audit` a record, `metrics` the request's end, all with the same status.
 */
export function createConnectionTracker(
  limits: ClientLimits,
  log: (entry: Readonly<Record<string, unknown>>) => void,
  audit?: Pick<AuditLog, 'record'>,
  metrics?: Pick<GuardMetrics, 'requestStarted' | 'requestEnded' | 'queryEnded'>,
): ConnectionTracker {
  /** The answer under way on each connection (its request is `reply.request`), and how a connection ended when the guard ended it. */
  const current = new WeakMap<Socket, FastifyReply>();
  const endedBy = new WeakMap<Socket, { outcome: RequestOutcome; status: number; code: ErrorCode; failure: string }>();
  let cutting = false;
  /** The requests not yet ended, for the shutdown's cut. */
  const underway = new Set<FastifyReply>();
  /**
   * performance.now() when each connection was accepted or its last answer closed: the start of a
   * request node's parser refused, which has no request object (its log line's durationMs).
   */
  const waitingSince = new WeakMap<Socket, number>();
  const waitedMs = (socket: Socket): number =>
    Math.round((performance.now() - (waitingSince.get(socket) ?? performance.now())) * 100) / 100;

  /**
   * Ends a connection the guard gives up on: answers `error` as one line when no answer has
   * started on it, then destroys it. The request under way is logged with `outcome` by its
   * close listener; a connection without one gets its own line here.
   */
  const endConnection = (socket: Socket, outcome: RequestOutcome, error: GuardError, method?: string): void => {
    const { status, code, message } = error;
    const reply = current.get(socket);
    const request = reply?.request;
    const response = reply?.raw;
    const answerStarted = response?.headersSent === true;
    if (socket.writable && !answerStarted) socket.write(rawErrorResponse(error));
    // The response object never sends now: its status is the one written above, so the metrics
    // (which read it when the response closes) count what the client got, as the log line does.
    if (response !== undefined && !answerStarted) response.statusCode = status;
    if (request === undefined) {
      const durationMs = waitedMs(socket);
      log({
        method: method ?? null,
        path: null,
        agent: null,
        status,
        durationMs,
        outcome,
        bytes: socket.bytesWritten,
        code,
        error: message,
      });
    } else {
      endedBy.set(socket, { outcome, status: answerStarted ? response!.statusCode : status, code, failure: message });
    }
    // An answer under way is cut so that its client can tell (a reset when it is framed by the close).
    if (answerStarted) endCut(response!, socket);
    else socket.destroy();
  };

  const clientError = (error: ParserError, socket: Socket): void => {
    // Answered like every error: one line of text/plain.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const answer = clientErrorAnswer(error, limits);
    endConnection(socket, answer.status === 408 ? 'timeout' : 'completed', answer, unknownMethodOf(error));
  };

  const attach = (app: FastifyInstance): void => {
    // A connection silent for longer than its bound: a slow body, a client that stopped reading.
    app.server.on('timeout', (socket: Socket) => {
      if (!current.has(socket)) return void socket.destroy(); // idle between requests
      const silent = `the connection was silent for more than ${socket.timeout ?? limits.idleTimeoutMs} ms`;
      endConnection(socket, 'timeout', new GuardError(408, 'request_timeout', silent));
    });

    // node hands CONNECT to this event and, with no listener, closes the connection unanswered:
    // it gets the 405 of any other method (the contract's list), then the connection ends.
    app.server.on('connect', (_request: unknown, socket: Socket) => {
      const error = new GuardError(405, 'method_not_allowed', 'method CONNECT is not allowed here', { allow: ALLOW_QUERY });
      if (socket.writable) socket.write(rawErrorResponse(error));
      log({
        method: 'CONNECT',
        path: null,
        agent: null,
        status: 405,
        durationMs: waitedMs(socket),
        outcome: 'completed',
        bytes: socket.bytesWritten,
        code: error.code,
        error: error.message,
      });
      socket.destroy();
    });

    // An Expect other than 100-continue: node answers 417 itself, empty and outside the contract's
    // statuses and error shape, unless listened for; RFC 9110 section 10.1.1 lets a server ignore it.
    app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
      app.server.emit('request', request, response);
    });

    // Connections past maxConnections get one 503 and are closed; past REFUSAL_ROOM more, node drops them.
    let openConnections = 0;
    const overLimit = new WeakSet<Socket>();
    app.server.maxConnections = limits.maxConnections + REFUSAL_ROOM;
    app.server.on('connection', (socket: Socket) => {
      openConnections += 1;
      waitingSince.set(socket, performance.now());
      if (openConnections > limits.maxConnections) overLimit.add(socket);
      socket.once('close', () => (openConnections -= 1));
    });

    app.decorate('cutAllConnections', () => {
      cutting = true;
      // An answer under way is cut so that its client can tell (a reset when it is framed by the close).
      for (const reply of underway) if (reply.raw.headersSent) endCut(reply.raw, reply.request.raw.socket);
      app.server.closeAllConnections();
    });

    // A hook in callback style: an async hook costs a promise per request and hook.
    // Every request gets exactly one log line, written when its response closes, however it ended.
    // 'close' fires however the response ends (sent whole, cut, or the client gone), where
    // onResponse only sees the finished ones, so the in-flight gauge always comes back down.
    app.addHook('onRequest', (request, reply, done) => {
      const socket = request.raw.socket;
      const bytesBefore = socket.bytesWritten;
      current.set(socket, reply);
      underway.add(reply);
      metrics?.requestStarted();
      reply.raw.once('close', () => {
        if (current.get(socket) === reply) current.delete(socket);
        underway.delete(reply);
        const ended = endedBy.get(socket);
        const finished = reply.raw.writableFinished;
        const outcome: RequestOutcome = finished
          ? 'completed'
          : cutting
            ? 'shutdown-cut'
            : (ended?.outcome ?? request.outcome ?? 'client-closed');
        const failure = ended?.failure ?? request.failure;
        const code = ended?.code ?? request.errorCode;
        // Nothing was sent (the client left, or the shutdown cut, while the store was still asked):
        // no status of the handler's is what the client got.
        const unsent = !finished && ended === undefined && !reply.raw.headersSent;
        const status = unsent
          ? outcome === 'shutdown-cut'
            ? CLOSED_UNANSWERED_STATUS
            : CLIENT_CLOSED_STATUS
          : finished || ended === undefined
            ? reply.statusCode
            : ended.status;
        if (request.operation === 'query' && request.queryOutcome === undefined) {
          if (unsent) request.queryOutcome = outcome === 'shutdown-cut' ? 'shutdown_cut' : 'client_closed';
          // Refused before the handler ran (a body too slow: 408; past maxConnections: 503): the audit record names it a
          // query with its code, so the query count does too.
          else if (code !== undefined) request.queryOutcome = code;
        }
        const bytes = socket.bytesWritten - bytesBefore;
        audit?.record(request, { status, outcome, bytes, code, unsent });
        if (metrics !== undefined) {
          metrics.requestEnded(request.method, request.routeOptions.url ?? '', status, secondsSince(request));
          if (request.queryOutcome !== undefined) metrics.queryEnded(request.queryOutcome);
        }
        log({
          method: request.method,
          path: pathOf(request.url),
          agent: request.agent ?? null,
          requestId: request.requestId,
          traceId: request.trace.traceId,
          status,
          durationMs: Math.round((performance.now() - request.startedAt) * 100) / 100,
          outcome,
          bytes,
          ...(code !== undefined && { code }),
          ...(failure !== undefined && { error: failure }),
          ...(request.upstreamFailure !== undefined && request.upstreamFailure),
          ...(request.partial !== undefined && { partial: request.partial }),
        });
        // The next request on this keep-alive connection starts with the idle bound again.
        setIdleBound(socket, limits.idleTimeoutMs);
        waitingSince.set(socket, performance.now());
      });
      if (overLimit.has(socket)) {
        reply.header('connection', 'close');
        void renderError(
          reply,
          new GuardError(503, 'too_many_connections', `too many open connections (limit ${limits.maxConnections}): try again later`),
        );
        return;
      }
      done();
    });
  };

  return { clientError, attach };
}

/**
 * An error of node's HTTP parser: its code, and (node 20 to 24) the chunk it was reading (a Buffer,
 * whatever fastify's type says) and the offset in it where it stopped.
 */
export type ParserError = Error & { code?: string; rawPacket?: unknown; bytesParsed?: number };

/** A token (RFC 9110 section 5.6.2), such as a method name. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * A request line that had not ended where the header limit was reached: a method, a space and a
 * request target (origin-form or absolute-form, RFC 9112 section 3.2), nothing else, up to where
 * the parser stopped. Seen only when that line started in the chunk the parser failed on: a URL
 * long enough to arrive in several reads is still 431.
 */
const UNENDED_REQUEST_LINE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+ (?:\/|[A-Za-z][A-Za-z0-9+.-]*:\/\/)\S*(?: HTTP\/\d\.\d\r?)?$/;

/**
 * The line the parser stopped on, as latin1 text: from its start (after a line feed in the chunk
 * it was reading, or the chunk's start) up to where it stopped (`before`) and on for up to `more`
 * bytes (`from`); undefined when node gave no chunk.
 */
function failedLine({ rawPacket, bytesParsed }: ParserError, more: number): { before: string; from: string } | undefined {
  if (!Buffer.isBuffer(rawPacket)) return undefined;
  const at = Math.min(bytesParsed ?? rawPacket.length, rawPacket.length);
  const start = at === 0 ? 0 : rawPacket.lastIndexOf(0x0a, at - 1) + 1;
  return {
    before: rawPacket.toString('latin1', start, at),
    from: rawPacket.toString('latin1', start, Math.min(rawPacket.length, at + more)),
  };
}

/**
 * The method name of a request line node's parser stopped on for its method, or undefined. node's
 * parser knows a fixed list of methods (the same on node 20, 22 and 24) and stops at any other
 * name with one code; the contract's 405 covers every method but GET, POST and OPTIONS. A line
 * that does not start with a token and a space (a TLS handshake, binary) names no method:
 * malformed. The name is read only to the space after it, at most 32 bytes on.
 */
function unknownMethodOf(error: ParserError): string | undefined {
  if (error.code !== 'HPE_INVALID_METHOD') return undefined;
  const line = failedLine(error, 32)?.from ?? '';
  const space = line.indexOf(' ');
  const name = space < 0 ? line : line.slice(0, space);
  return TOKEN.test(name) && (space > 0 || line.length < 32) ? name : undefined;
}

/** The answer to an error of node's HTTP parser or its time bounds, by the error's code. */
function clientErrorAnswer(error: ParserError, limits: ClientLimits): GuardError {
  const { code } = error;
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new GuardError(408, 'request_timeout', `the request did not arrive within ${limits.requestTimeoutMs} ms`);
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    // node counts the request line in the header section's limit: a target longer than the server
    // reads is 414 (RFC 9110 section 15.5.15), and a query that long belongs in a POST's body.
    const line = failedLine(error, 0);
    if (line !== undefined && UNENDED_REQUEST_LINE.test(line.before)) {
      return new GuardError(414, 'uri_too_long', 'the URL is too long: send the query with POST, in the body');
    }
    return new GuardError(431, 'header_too_large', 'request header section too large');
  }
  const name = unknownMethodOf(error);
  if (name !== undefined) {
    const what = name.length <= 20 ? `method ${name}` : 'this method';
    return new GuardError(405, 'method_not_allowed', `${what} is not allowed here`, { allow: ALLOW_QUERY });
  }
  if (code === 'HPE_UNEXPECTED_CONTENT_LENGTH' || code === 'HPE_INVALID_CONTENT_LENGTH') {
    return new GuardError(400, 'bad_request', 'malformed HTTP request: invalid or repeated Content-Length');
  }
  return new GuardError(400, 'bad_request', 'malformed HTTP request');
}

/** A complete error response written straight to a socket (no response object exists for it). */
function rawErrorResponse({ status, code, message, headers }: GuardError): string {
  const body = `${message}\n`;
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncache-control: ${PRIVATE_NO_STORE}\r\n${ERROR_CODE_HEADER}: ${code}\r\n${extra}` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}
