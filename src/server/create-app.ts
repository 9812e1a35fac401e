// Assembles the fastify application: connection bounds, the request log, CORS, the query route, probes, 404 / 405 and the one error handler.

import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { DEFAULT_CONFIG } from '../config/read-config.js';
import { errorKind, GuardError } from '../guard-error.js';
import { PRIVATE_NO_STORE } from '../http/cache-control.js';
import { createCorsHeaders } from '../http/cors.js';
import { headerValue } from '../header-value.js';
import { ALLOW_QUERY, createQueryRoute, setIdleBound, type QueryServices } from '../http/query-route.js';
import { decorateRequestState, type RequestOutcome } from '../http/request-state.js';
import { serveQueryPage } from '../http/serve-query-page.js';
import { renderError } from '../http/render-error.js';
import { translateHttpError } from '../http/translate-http-error.js';
import { queryOutcomeOf } from './query-outcome-of.js';
import { createConcurrencyLimiter } from './create-concurrency-limiter.js';

export type { RequestOutcome } from '../http/request-state.js';

/** Request body limit: larger bodies get 413 (README, "Errors"). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** Bounds on what a client controls (GuardConfig `http`, and `timeoutMs` for a slow reader). */
export interface ClientLimits {
  readonly headersTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly idleTimeoutMs: number;
  readonly maxConnections: number;
  /** Longest time a streamed answer may wait for the client to read more. */
  readonly sendIdleMs: number;
}

/** Limits of a guard configured with defaults (the configuration's `http` and `timeoutMs`). */
export const DEFAULT_CLIENT_LIMITS: ClientLimits = { ...DEFAULT_CONFIG.http, sendIdleMs: DEFAULT_CONFIG.timeoutMs };

/** The settings of the HTTP surface (a subset of GuardConfig). */
export interface AppOptions {
  readonly path: string;
  readonly explain: boolean;
  /** Config `cors`: allowed origins (undefined = any) and whether credentials are allowed. */
  readonly cors: { readonly origins: readonly string[] | undefined; readonly credentials: boolean };
  /** Config `ui`: serve the query page at GET {path} to browsers, and redirect / there. */
  readonly ui: boolean;
  /** Default DEFAULT_CLIENT_LIMITS. */
  readonly limits?: ClientLimits;
}

/** The pipeline steps and services the app calls: the query route's, the probes' and the log. */
export interface GuardServices extends QueryServices {
  /** Undefined once the policies are loaded; otherwise why /healthz (liveness) answers 503. */
  readonly notReadyReason: () => string | undefined;
  /** True once the shutdown began: /readyz answers 503 while queries are still served. Absent: never. */
  readonly draining?: () => boolean;
  /** For /readyz: why the store gets no queries, or undefined; may check the store again. */
  readonly upstreamProblem?: () => Promise<string | undefined>;
  /** Writes one structured log line. */
  readonly log: (entry: Readonly<Record<string, unknown>>) => void;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Cuts every connection, logging the requests still under way as `shutdown-cut`. */
    cutAllConnections(): void;
  }
}

/** Connections open beyond `maxConnections` that are still accepted, to be answered 503 and closed. */
const REFUSAL_ROOM = 64;


/** Creates the application (not listening); `listen` is the caller's business. */
export function createApp(options: AppOptions, services: GuardServices): FastifyInstance {
  const limits = options.limits ?? DEFAULT_CLIENT_LIMITS;
  /** The request under way on each connection, and how a connection ended when the guard ended it. */
  const current = new WeakMap<Socket, FastifyRequest>();
  const answers = new WeakMap<FastifyRequest, FastifyReply>();
  const endedBy = new WeakMap<Socket, { outcome: RequestOutcome; status: number; failure: string }>();
  let cutting = false;

  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT_BYTES,
    exposeHeadRoutes: false,
    // During the shutdown, requests on connections still open are answered (with
    // `Connection: close`), not refused with fastify's JSON 503.
    return503OnClosing: false,
    // Socket silence while a request arrives and between keep-alive requests; the forwarding
    // lifts it while the store works and sets `sendIdleMs` while the answer streams.
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.idleTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // node checks headersTimeout and requestTimeout every connectionsCheckingInterval (30 s by default).
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs) },
    clientErrorHandler: (error: Error & { code?: string }, socket: Socket) => {
      // Errors of node's HTTP parser and its time bounds (answered like every error: one line of text/plain).
      if (error.code === 'ECONNRESET' || socket.destroyed) return;
      const [status, message] = clientErrorAnswer(error.code, limits);
      endConnection(socket, status === 408 ? 'timeout' : 'completed', status, message);
    },
  });

  /**
   * Ends a connection the guard gives up on: answers `status` with `message` as one line when
   * no answer has started on it, then destroys it. The request under way is logged with
   * `outcome` by its close listener; a connection without one gets its own line here.
   */
  const endConnection = (socket: Socket, outcome: RequestOutcome, status: number, message: string): void => {
    const request = current.get(socket);
    const response = request === undefined ? undefined : answers.get(request)?.raw;
    const answerStarted = response?.headersSent === true;
    if (socket.writable && !answerStarted) socket.write(rawErrorResponse(status, message));
    if (request === undefined) {
      services.log({ method: null, path: null, agent: null, status, outcome, bytes: socket.bytesWritten, error: message });
    } else {
      endedBy.set(socket, { outcome, status: answerStarted ? response!.statusCode : status, failure: message });
    }
    socket.destroy();
  };

  // A connection silent for longer than its bound: a slow body, a client that stopped reading.
  app.server.on('timeout', (socket: Socket) => {
    const request = current.get(socket);
    if (request === undefined) return void socket.destroy(); // idle between requests
    endConnection(socket, 'timeout', 408, `the connection was silent for more than ${socket.timeout ?? limits.idleTimeoutMs} ms`);
  });

  // Connections past maxConnections get one 503 and are closed; past REFUSAL_ROOM more, node drops them.
  let openConnections = 0;
  const overLimit = new WeakSet<Socket>();
  app.server.maxConnections = limits.maxConnections + REFUSAL_ROOM;
  app.server.on('connection', (socket: Socket) => {
    openConnections += 1;
    if (openConnections > limits.maxConnections) overLimit.add(socket);
    socket.once('close', () => (openConnections -= 1));
  });

  app.decorate('cutAllConnections', () => {
    cutting = true;
    app.server.closeAllConnections();
  });
  const cors = createCorsHeaders({
    ...options.cors,
    trustedHeaders: services.credentialHeaders.filter((name) => name !== 'authorization' && name !== 'x-api-key'),
  });
  const vary = ['Origin', 'Accept', ...services.credentialHeaders].join(', ');
  const explainPath = `${options.path}/explain`;
  const concurrency = createConcurrencyLimiter();
  const allowByPath = new Map<string, string>([
    [options.path, ALLOW_QUERY],
    ['/healthz', 'GET'],
    ['/readyz', 'GET'],
  ]);
  if (options.explain) allowByPath.set(explainPath, ALLOW_QUERY);

  decorateRequestState(app);

  const metrics = services.metrics;
  if (metrics !== undefined) {
    // 'close' fires however the response ends (sent whole, cut, or the client gone), where
    // onResponse only sees the finished ones, so the in-flight gauge always comes back down.
    app.addHook('onRequest', (request, reply, done) => {
      metrics.requestStarted();
      reply.raw.once('close', () => {
        metrics.requestEnded(request.method, request.routeOptions.url ?? '', reply.statusCode, reply.elapsedTime / 1000);
        if (request.queryOutcome !== undefined) metrics.queryEnded(request.queryOutcome);
      });
      done();
    });
  }

  // Every body reaches readQueryRequest as raw bytes, so that it, not fastify, decides
  // between 403 (update), 415 and 400, in the order docs/design.md#http gives.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  // Hooks in callback style: an async hook costs a promise per request and hook.
  // Every request gets exactly one log line, written when its response closes, however it ended.
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    const bytesBefore = socket.bytesWritten;
    const started = performance.now();
    current.set(socket, request);
    answers.set(request, reply);
    reply.raw.once('close', () => {
      request.leaveConcurrency?.();
      if (current.get(socket) === request) current.delete(socket);
      const ended = endedBy.get(socket);
      const finished = reply.raw.writableFinished;
      const outcome: RequestOutcome = finished
        ? 'completed'
        : cutting
          ? 'shutdown-cut'
          : (ended?.outcome ?? request.outcome ?? 'client-closed');
      const failure = ended?.failure ?? request.failure;
      services.log({
        method: request.method,
        path: pathOf(request.url),
        agent: request.agent ?? null,
        status: finished || ended === undefined ? reply.statusCode : ended.status,
        durationMs: Math.round((performance.now() - started) * 100) / 100,
        outcome,
        bytes: socket.bytesWritten - bytesBefore,
        ...(failure !== undefined && { error: failure }),
      });
      // The next request on this keep-alive connection starts with the idle bound again.
      setIdleBound(socket, limits.idleTimeoutMs);
    });
    if (overLimit.has(socket)) {
      reply.header('connection', 'close');
      void renderError(reply, new GuardError(503, `too many open connections (limit ${limits.maxConnections}): try again later`));
      return;
    }
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    // Once the shutdown began, every answer closes its connection, so clients reconnect elsewhere.
    if (services.draining?.() === true) reply.header('connection', 'close');
    reply.headers(cors.response(headerValue(request.headers.origin)));
    reply.header('vary', vary);
    // Answers from the store got composeCacheControl already; every other answer is the guard's.
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', PRIVATE_NO_STORE);
    done(null, payload);
  });

  const route = createQueryRoute(
    {
      path: options.path,
      queryPage: options.ui ? serveQueryPage(app, options.path) : undefined,
      cors,
      sendIdleMs: limits.sendIdleMs,
      enterConcurrency: (agent, max) => concurrency.enter(agent, max),
    },
    services,
  );
  const { query, explain, preflight } = route;

  app.route({ method: ['GET', 'POST'], url: options.path, handler: query });
  app.route({ method: 'OPTIONS', url: options.path, handler: preflight });
  if (options.explain) {
    app.route({ method: ['GET', 'POST'], url: explainPath, handler: explain });
    app.route({ method: 'OPTIONS', url: explainPath, handler: preflight });
  }
  if (options.ui) {
    allowByPath.set('/', 'GET');
    app.get('/', async (_request, reply) => reply.redirect(options.path, 302));
  }
  // Liveness: the process itself, never the store, so that a store
  // outage does not make an orchestrator restart every guard.
  app.get('/healthz', async (_request, reply) => probeAnswer(reply, services.notReadyReason()));
  // Readiness: whether this instance should get traffic now (docs/design.md, "Probes").
  app.get('/readyz', async (_request, reply) => {
    const reason =
      services.notReadyReason() ??
      (services.draining?.() === true ? 'draining: the guard is shutting down' : undefined) ??
      (await services.upstreamProblem?.());
    return probeAnswer(reply, reason);
  });

  // fastify answers an unrouted method with 404 by itself; a known path answers 405 with Allow (docs/design.md#http).
  app.setNotFoundHandler(async (request, reply) => {
    const allow = allowByPath.get(pathOf(request.url));
    const error =
      allow === undefined
        ? new GuardError(404, 'not found')
        : new GuardError(405, `method ${request.method} is not allowed here`, { allow });
    return renderError(reply, error);
  });

  app.setErrorHandler(async (error, request, reply) => {
    const guardError = error instanceof GuardError ? error : translateHttpError(error);
    // A query, not the service description or the page served at the same path.
    if (route.isQuery(request)) {
      request.queryOutcome = guardError === undefined ? 'internal_error' : queryOutcomeOf(guardError);
    }
    if (guardError === undefined) {
      // A bug of ours: log what kind of failure it was, never request data.
      services.log({ event: 'internal-error', path: pathOf(request.url), error: errorKind(error) });
      return renderError(reply, new GuardError(500, 'internal error'));
    }
    if (guardError.status >= 500) request.failure = guardError.message;
    return renderError(reply, guardError);
  });

  return app;
}

/** Status and one-line message for an error of node's HTTP parser or its time bounds, by code. */
function clientErrorAnswer(code: string | undefined, limits: ClientLimits): [number, string] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return [408, `the request did not arrive within ${limits.requestTimeoutMs} ms`];
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'request header section too large'];
  if (code === 'HPE_UNEXPECTED_CONTENT_LENGTH' || code === 'HPE_INVALID_CONTENT_LENGTH') {
    return [400, 'malformed HTTP request: invalid or repeated Content-Length'];
  }
  return [400, 'malformed HTTP request'];
}

/** A complete error response written straight to a socket (no response object exists for it). */
function rawErrorResponse(status: number, message: string): string {
  const body = `${message}\n`;
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    `content-type: text/plain; charset=utf-8\r\ncache-control: ${PRIVATE_NO_STORE}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`
  );
}

/** A probe's answer: 200 `ok`, or 503 with the reason as one line. */
function probeAnswer(reply: FastifyReply, reason: string | undefined): FastifyReply {
  reply.header('content-type', 'text/plain; charset=utf-8');
  return reason === undefined ? reply.send('ok\n') : reply.code(503).send(`${reason}\n`);
}

function pathOf(url: string): string {
  const queryStart = url.indexOf('?');
  return queryStart < 0 ? url : url.slice(0, queryStart);
}
